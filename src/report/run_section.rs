//! The run's conditions, from the `manifest.json` beside the records (the replay's typed
//! `Manifest`, the only place the report reads it).

use std::path::PathBuf;

use serde_json::Value;

use crate::replay::manifest::{AssistantEntry, Manifest};
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
    /// Resumes of the run (its starts after the first).
    pub resumes: usize,
    pub typist: String,
    /// Records per hour of the run's work (every start that ended, `Manifest::work`).
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

/// The manifest beside the first records file, if there is one and it reads.
pub(super) fn read_manifest(records: &[PathBuf]) -> Option<Manifest> {
    records.first().and_then(|p| Manifest::beside(p))
}

/// A value as JSON text, a string without its quotes (as the manifest file has it).
fn txt<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v).unwrap_or(Value::Null) {
        Value::String(s) => s,
        v => v.to_string(),
    }
}

pub(super) fn run_view(m: &Manifest, s: &Summary) -> RunView {
    // Written as a `Value`, so the keys come out sorted as in the file.
    let conditions = serde_json::to_value(&m.conditions).unwrap_or(Value::Null);
    RunView {
        status: txt(&m.status),
        dataset: m.dataset.path.clone(),
        repositories: crate::score::table::count(m.dataset.repositories as u64, "repository"),
        files: crate::score::table::count(m.dataset.files as u64, "file"),
        skipped: m.dataset.skipped.len(),
        cases: m.plan.cases.to_string(),
        plan_hash: m.plan.hash.clone(),
        plan_source: m.plan.source.clone(),
        started: m.started_at.clone(),
        ended: txt(&m.ended_at),
        resumes: m.history.iter().filter(|h| h.resumed).count(),
        typist: m.typist_version.clone(),
        per_hour: m
            .work()
            .map(|(records, secs)| format!("{:.0}", records as f64 * 3600.0 / secs)),
        assistants: m.assistants.iter().map(|a| assistant(a, s)).collect(),
        conditions: serde_json::to_string_pretty(&conditions).unwrap_or_default(),
    }
}

fn assistant(a: &AssistantEntry, s: &Summary) -> RunAssistant {
    let latency = s
        .assistants
        .get(&a.name)
        .and_then(|x| x.latency_ms.as_ref())
        .map(|l| format!("{:.1} / {:.1}", l.p50, l.p95))
        .unwrap_or_else(|| "–".into());
    let server = a.server.as_ref();
    let p = &a.profile;
    RunAssistant {
        server: server.and_then(|s| s.name.clone()).unwrap_or_default(),
        version: server.and_then(|s| s.version.clone()).unwrap_or_default(),
        dialect: txt(&p["dialect"]),
        command: txt(&p["command"]),
        args: p["args"]
            .as_array()
            .map(|v| v.iter().map(txt).collect::<Vec<_>>().join(" "))
            .unwrap_or_default(),
        latency,
        name: a.name.clone(),
    }
}
