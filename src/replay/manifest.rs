//! `manifest.json`: what a run was (plan, dataset, conditions, assistants and their
//! servers, services) and how it ended. One typed struct, read and written here only;
//! `merge`, `--resume`, `report`, `bench` and `drill` use it.
//!
//! Written through `serde_json::Value`, so every object's keys come out sorted (the
//! file's bytes do not depend on the order of the fields below), and scrubbed of
//! secrets. Fields a later version adds are kept as they are (`extra`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::options::RunSettings;
use super::shard::Shard;
use super::{RunConditions, RunStatus};
use crate::dataset::{Dataset, Skipped};
use crate::editor::{EditorApp, EditorKind, Profile};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub typist_version: String,
    pub status: RunStatus,
    /// When the run first started (a resume keeps it; each start is in `history`).
    pub started_at: String,
    pub ended_at: Option<String>,
    pub plan: PlanInfo,
    pub dataset: DatasetInfo,
    pub shard: Option<Shard>,
    pub passes: u32,
    pub jobs: usize,
    pub conditions: RunConditions,
    pub assistants: Vec<AssistantEntry>,
    /// The model services started for the run (`service::Services::describe`).
    #[serde(default)]
    pub services: Vec<Value>,
    /// Cases an assistant was not asked, by assistant and reason (counted per pass).
    #[serde(default)]
    pub skipped_cases: BTreeMap<String, BTreeMap<String, u64>>,
    /// Records in the file when the run ended (null while it runs).
    pub records: Option<usize>,
    /// Why the run failed.
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<CpuSeconds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Sessions>,
    /// Peak resident memory of typist itself and of the largest server it reaped, in
    /// MiB: the highest over the run's starts (absent from manifests made before it was
    /// kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mb: Option<PeakMb>,
    /// The real editor the run typed into (absent for typist's own client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<EditorEntry>,
    /// The shards a merged run was joined from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedPart>>,
    /// The sign-in vault entries the run's sessions started from: each by name and when
    /// `typist login` saved it (never its content, nor a hash of it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vault: Vec<crate::vault::Used>,
    /// How the run was asked for: what `--resume` reads instead of the flags (absent
    /// from manifests made before it was kept, and from merged ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<RunSettings>,
    /// Each start of the run, the first and every resume, oldest first (absent from
    /// manifests made before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Start>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInfo {
    pub hash: String,
    pub cases: usize,
    /// A path, or how the plan was sampled.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub path: String,
    pub repositories: usize,
    pub files: usize,
    pub skipped: Vec<Skipped>,
    /// Files whose text was normalized (BOM, CRLF, lone CR), with what was done.
    pub normalized: Vec<Normalized>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Normalized {
    pub path: String,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantEntry {
    pub name: String,
    /// The profile as run, secrets redacted, with the file it came from.
    pub profile: Value,
    /// What the dialect's request carries for the run's trigger kind.
    pub trigger_on_wire: Value,
    /// What the server said about itself in `initialize` (null until one started).
    pub server: Option<ServerEntry>,
}

/// The real editor of a run: its kind, version, Lua configuration and that
/// configuration's sha256 (also in `conditions.app`, which `--resume` compares).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditorEntry {
    pub kind: String,
    pub version: Option<String>,
    pub key_interval_ms: u64,
    pub config: Option<String>,
    pub config_sha256: Option<String>,
    /// A plugin's namespaces read (empty: Neovim's own inline completion).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// With namespaces: the highlight groups of the suggestion's chunks (empty: every
    /// chunk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub highlights: Vec<String>,
    /// How typing reaches the case's line (the keys and the events they fire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<crate::editor::Arrival>,
    /// With namespaces: the display deadline (nothing new shown by then: `empty` with
    /// its reason).
    #[serde(default)]
    pub display_deadline_ms: u64,
    /// VS Code: each extension installed, its version, and whether it activated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<crate::editor::ExtensionState>,
    /// VS Code: what extensions opened over the document that typist closed to bring
    /// the focus back to it (a first-start page, a modal question, a panel).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerEntry {
    pub name: Option<String>,
    pub version: Option<String>,
}

/// CPU time of typist itself and of the servers it ran (reaped children); null when
/// the system does not say.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuSeconds {
    pub typist: Option<f64>,
    pub servers: Option<f64>,
}

/// Peak resident memory (the system's `ru_maxrss`) in MiB: of typist itself, and of
/// the largest of the children it reaped (a server, or an editor and its server); null
/// when the system does not say.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PeakMb {
    pub typist: Option<f64>,
    pub servers: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sessions {
    pub started: u64,
    /// Servers restarted because they exited, and because they stopped answering.
    pub restarted_after_exit: u64,
    pub restarted_after_timeouts: u64,
    /// Seconds spent starting sessions (each one's workspace, editor and server, to the
    /// server's answer to `initialize` with typist's own client; a real editor starts
    /// its server at the first file opened, after this), summed over sessions and
    /// workers (absent from manifests made before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_seconds: Option<f64>,
}

/// One start of a run (the first, or a resume) and how it ended. A start still
/// `running` in a later manifest was killed: its end, CPU and sessions are unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    /// A resume (`--resume`) rather than the run's first start.
    pub resumed: bool,
    pub typist_version: String,
    pub jobs: usize,
    /// Records this start wrote (null while it runs).
    pub new_records: Option<usize>,
    pub cpu_seconds: Option<CpuSeconds>,
    pub sessions: Option<Sessions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mb: Option<PeakMb>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedPart {
    pub path: String,
    pub status: RunStatus,
    pub shard: Option<Shard>,
    pub records: Option<usize>,
}

/// What a run is, before it starts: the caller's part of the manifest.
pub struct RunIdentity<'a> {
    pub plan: PlanInfo,
    pub ds: &'a Dataset,
    pub shard: Option<Shard>,
    pub passes: u32,
    pub jobs: usize,
    pub conditions: &'a RunConditions,
    pub profiles: &'a [Profile],
    pub services: Vec<Value>,
    pub skipped_cases: BTreeMap<String, BTreeMap<String, u64>>,
    pub settings: Option<RunSettings>,
}

impl Manifest {
    /// The manifest of a run that starts now.
    pub fn start(id: RunIdentity<'_>) -> Manifest {
        let ds = id.ds;
        let files = ds.repos.iter().flat_map(|r| r.files.iter());
        let started_at = now_rfc3339();
        Manifest {
            typist_version: env!("CARGO_PKG_VERSION").to_string(),
            status: RunStatus::Running,
            history: vec![Start {
                started_at: started_at.clone(),
                ended_at: None,
                status: RunStatus::Running,
                resumed: false,
                typist_version: env!("CARGO_PKG_VERSION").to_string(),
                jobs: id.jobs,
                new_records: None,
                cpu_seconds: None,
                sessions: None,
                peak_mb: None,
            }],
            started_at,
            ended_at: None,
            plan: id.plan,
            dataset: DatasetInfo {
                path: ds.root.display().to_string(),
                repositories: ds.repos.len(),
                files: files.clone().count(),
                skipped: ds.skipped.clone(),
                normalized: files
                    .filter(|f| !f.notes.is_empty())
                    .map(|f| Normalized {
                        path: format!("{}/{}", f.repo, f.rel),
                        notes: f.notes.clone(),
                    })
                    .collect(),
            },
            shard: id.shard,
            passes: id.passes,
            jobs: id.jobs,
            conditions: id.conditions.clone(),
            assistants: id
                .profiles
                .iter()
                .map(|p| AssistantEntry {
                    name: p.name.clone(),
                    profile: profile_json(p),
                    trigger_on_wire: id.conditions.editor.trigger.on_wire(p.dialect),
                    server: None,
                })
                .collect(),
            services: id.services,
            skipped_cases: id.skipped_cases,
            records: None,
            message: None,
            cpu_seconds: None,
            sessions: None,
            peak_mb: None,
            editor: None,
            merged_from: None,
            vault: Vec::new(),
            settings: id.settings,
            extra: Map::new(),
        }
    }

    /// A resume of the run `previous` describes: its starts come first (a manifest
    /// made before they were kept gives one, from its own fields), the run's first
    /// start time is kept, and this start is marked a resume.
    pub fn continues(&mut self, previous: &Manifest) {
        let mut history = previous.history.clone();
        if history.is_empty() {
            history.push(Start {
                started_at: previous.started_at.clone(),
                ended_at: previous.ended_at.clone(),
                status: previous.status,
                resumed: false,
                typist_version: previous.typist_version.clone(),
                jobs: previous.jobs,
                new_records: previous.records,
                cpu_seconds: previous.cpu_seconds,
                sessions: previous.sessions,
                peak_mb: previous.peak_mb,
            });
        }
        let mut now = self
            .history
            .pop()
            .expect("a started manifest has its start");
        now.resumed = true;
        history.push(now);
        self.started_at = history[0].started_at.clone();
        self.history = history;
        self.totals();
    }

    /// The work of the run's starts that ended: records written and seconds taken
    /// (at least one); a manifest without history gives its own ends and records.
    pub fn work(&self) -> Option<(usize, f64)> {
        let time = |t: &str| humantime::parse_rfc3339(t).ok();
        let seconds = |a: &str, b: Option<&str>| {
            let (a, b) = (time(a)?, time(b?)?);
            b.duration_since(a).ok().map(|d| d.as_secs_f64())
        };
        if self.history.is_empty() {
            let s = seconds(&self.started_at, self.ended_at.as_deref())?;
            return Some((self.records?, s.max(1.0)));
        }
        let mut work = None;
        for h in &self.history {
            if let (Some(n), Some(s)) =
                (h.new_records, seconds(&h.started_at, h.ended_at.as_deref()))
            {
                let (records, secs) = work.unwrap_or((0, 0.0));
                work = Some((records + n, secs + s));
            }
        }
        work.map(|(n, s): (usize, f64)| (n, s.max(1.0)))
    }

    /// The run's CPU seconds and sessions: the sums over its starts (of those known);
    /// its peak memory: the highest of its starts'.
    fn totals(&mut self) {
        let sum = |f: &dyn Fn(&Start) -> Option<f64>| {
            let known: Vec<f64> = self.history.iter().filter_map(f).collect();
            (!known.is_empty()).then(|| known.iter().sum())
        };
        let cpu = CpuSeconds {
            typist: sum(&|h| h.cpu_seconds.and_then(|c| c.typist)),
            servers: sum(&|h| h.cpu_seconds.and_then(|c| c.servers)),
        };
        self.cpu_seconds = (cpu.typist.is_some() || cpu.servers.is_some()).then_some(cpu);
        let known: Vec<Sessions> = self.history.iter().filter_map(|h| h.sessions).collect();
        self.sessions = (!known.is_empty()).then(|| Sessions {
            started: known.iter().map(|s| s.started).sum(),
            restarted_after_exit: known.iter().map(|s| s.restarted_after_exit).sum(),
            restarted_after_timeouts: known.iter().map(|s| s.restarted_after_timeouts).sum(),
            start_seconds: {
                let secs: Vec<f64> = known.iter().filter_map(|s| s.start_seconds).collect();
                (!secs.is_empty()).then(|| secs.iter().sum())
            },
        });
        let max = |f: &dyn Fn(&PeakMb) -> Option<f64>| {
            self.history
                .iter()
                .filter_map(|h| h.peak_mb.as_ref().and_then(f))
                .reduce(f64::max)
        };
        let peak = PeakMb {
            typist: max(&|p| p.typist),
            servers: max(&|p| p.servers),
        };
        self.peak_mb = (peak.typist.is_some() || peak.servers.is_some()).then_some(peak);
    }

    /// Reads `path`, naming it in every error.
    pub fn read(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("malformed {}", path.display()))
    }

    /// The manifest beside a records file, if there is one that can be read.
    pub fn beside(records: &Path) -> Option<Manifest> {
        let path = records.parent()?.join("manifest.json");
        path.is_file().then(|| Manifest::read(&path).ok()).flatten()
    }

    /// Writes it atomically (a temporary file renamed over `path`), secrets scrubbed.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_json(path, &serde_json::to_value(self)?)
    }

    /// Records each assistant's server where one is known.
    pub fn set_servers(&mut self, servers: &BTreeMap<String, ServerEntry>) {
        for a in &mut self.assistants {
            if let Some(s) = servers.get(&a.name) {
                a.server = Some(s.clone());
            }
        }
    }

    /// Records the real editor, when the run has one.
    pub fn set_editor(
        &mut self,
        app: &EditorApp,
        version: Option<String>,
        closed: crate::editor::Closed,
    ) {
        if app.kind == EditorKind::Typist {
            return;
        }
        self.editor = Some(EditorEntry {
            kind: app.kind.as_str().to_string(),
            version,
            key_interval_ms: app.key_interval_ms,
            config: app.config.clone(),
            config_sha256: app.config_sha256.clone(),
            namespaces: app.namespaces.clone(),
            highlights: app.highlights.clone(),
            arrival: app.arrival,
            display_deadline_ms: app.display_deadline_ms,
            extensions: closed.extensions,
            closed: closed.closed,
        });
    }

    /// Ends this start of the run: status, time, CPU, peak memory, sessions (when known)
    /// and records; the run's CPU seconds and sessions are the sums over its starts, its
    /// peak memory the highest of theirs.
    pub fn finish(
        &mut self,
        status: RunStatus,
        records: usize,
        new_records: Option<usize>,
        sessions: Option<Sessions>,
        message: Option<String>,
    ) {
        let ended_at = now_rfc3339();
        self.status = status;
        self.ended_at = Some(ended_at.clone());
        self.records = Some(records);
        self.message = message;
        if let Some(h) = self.history.last_mut() {
            h.ended_at = Some(ended_at);
            h.status = status;
            h.new_records = new_records;
            h.cpu_seconds = Some(CpuSeconds::now());
            h.peak_mb = Some(PeakMb::now());
            h.sessions = sessions;
            self.totals();
        } else {
            self.cpu_seconds = Some(CpuSeconds::now());
            self.peak_mb = Some(PeakMb::now());
            self.sessions = sessions;
        }
    }
}

impl CpuSeconds {
    /// typist's own CPU time so far and that of the children it has reaped.
    pub fn now() -> CpuSeconds {
        use crate::os::{Who, usage};
        CpuSeconds {
            typist: usage(Who::This).map(|u| u.cpu_seconds),
            servers: usage(Who::Children).map(|u| u.cpu_seconds),
        }
    }
}

impl PeakMb {
    /// typist's own peak resident memory so far, and the largest of the children it
    /// has reaped.
    pub fn now() -> PeakMb {
        use crate::os::{Who, usage};
        PeakMb {
            typist: usage(Who::This).map(|u| u.peak_mb),
            servers: usage(Who::Children).map(|u| u.peak_mb),
        }
    }
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn profile_json(p: &Profile) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    v["source"] = Value::from(p.source.display().to_string());
    crate::secrets::redact(&v)
}

/// Writes `v` pretty-printed to `path` atomically, secrets scrubbed.
fn write_json(path: &Path, v: &Value) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(v)?;
    std::fs::write(&tmp, crate::secrets::scrub(&text).into_owned() + "\n")
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
