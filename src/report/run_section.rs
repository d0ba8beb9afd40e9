//! The run's conditions, from the `manifest.json` beside the records. The manifest is
//! read as untyped JSON here and nowhere else in the report, so this one file changes
//! when the replay's manifest gets a type.

use std::path::PathBuf;

use serde_json::Value;

use crate::score::Summary;

pub(super) struct RunView {
    pub status: String,
    pub dataset: String,
    pub repositories: String,
    pub files: String,
    pub skipped: usize,
    pub cases: String,
    pub plan_hash: String,
    pub plan_source: String,
    pub started: String,
    pub ended: String,
    pub typist: String,
    /// Records per hour, when both ends of the run are known.
    pub per_hour: Option<String>,
    pub assistants: Vec<RunAssistant>,
    /// The editor conditions, pretty JSON.
    pub conditions: String,
}

pub(super) struct RunAssistant {
    pub name: String,
    pub server: String,
    pub version: String,
    pub dialect: String,
    pub command: String,
    pub args: String,
    /// "p50 / p95" in ms, "–" without latencies.
    pub latency: String,
}

/// The manifest beside the first records file, if there is one and it is JSON.
pub(super) fn read_manifest(records: &[PathBuf]) -> Option<Value> {
    records
        .first()
        .and_then(|p| p.parent())
        .map(|d| d.join("manifest.json"))
        .and_then(|m| std::fs::read_to_string(m).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// A value as text: a string as it is, anything else as JSON.
fn txt(v: &Value) -> String {
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string())
}

pub(super) fn run_view(m: &Value, s: &Summary) -> RunView {
    let time = |k: &str| m[k].as_str().and_then(|t| humantime::parse_rfc3339(t).ok());
    let hours = match (time("started_at"), time("ended_at")) {
        (Some(a), Some(b)) => b
            .duration_since(a)
            .ok()
            .map(|d| d.as_secs_f64().max(1.0) / 3600.0),
        _ => None,
    };
    RunView {
        status: txt(&m["status"]),
        dataset: txt(&m["dataset"]["path"]),
        repositories: txt(&m["dataset"]["repositories"]),
        files: txt(&m["dataset"]["files"]),
        skipped: m["dataset"]["skipped"].as_array().map_or(0, |a| a.len()),
        cases: txt(&m["plan"]["cases"]),
        plan_hash: txt(&m["plan"]["hash"]),
        plan_source: txt(&m["plan"]["source"]),
        started: txt(&m["started_at"]),
        ended: txt(&m["ended_at"]),
        typist: txt(&m["typist_version"]),
        per_hour: hours.map(|hr| format!("{:.0}", s.records as f64 / hr)),
        assistants: m["assistants"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| assistant(a, s))
            .collect(),
        conditions: serde_json::to_string_pretty(&m["conditions"]).unwrap_or_default(),
    }
}

fn assistant(a: &Value, s: &Summary) -> RunAssistant {
    let name = txt(&a["name"]);
    let latency = s
        .assistants
        .get(&name)
        .and_then(|x| x.latency_ms.as_ref())
        .map(|l| format!("{:.1} / {:.1}", l.p50, l.p95))
        .unwrap_or_else(|| "–".into());
    RunAssistant {
        server: a["server"]["name"].as_str().unwrap_or("").to_string(),
        version: a["server"]["version"].as_str().unwrap_or("").to_string(),
        dialect: txt(&a["profile"]["dialect"]),
        command: txt(&a["profile"]["command"]),
        args: a["profile"]["args"]
            .as_array()
            .map(|v| v.iter().map(txt).collect::<Vec<_>>().join(" "))
            .unwrap_or_default(),
        latency,
        name,
    }
}
