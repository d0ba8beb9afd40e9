//! What a run is told and what it tells back: the editor conditions of a run (recorded
//! in the manifest, the same for a resumed run), the run's options, its status and its
//! report. Plain values every file of the layer reads; this file uses none of them but
//! the shard and the typing modes.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shard::Shard;
use super::typing::{ContextMode, Granularity, TypingMode};
use crate::editor::ranking::ListRule;
use crate::editor::{Conditions, EditorApp};

/// The editor conditions of a run beyond the client's own (`editor`): all recorded in
/// the manifest, and a resumed run must use the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConditions {
    pub context: ContextMode,
    /// With `context = prefix`: lines below the target also in the document.
    pub suffix_lines: u32,
    pub typing: TypingMode,
    pub granularity: Granularity,
    /// Characters of the expected line typed before asking.
    pub typed_prefix: u32,
    /// Wait this long after the last change before asking.
    pub settle_ms: u64,
    /// Neighbouring files of the same repository opened first.
    pub open_tabs: u32,
    /// Record `latency_ms` (off: null, for byte-identical records across runs).
    pub latency: bool,
    pub editor: Conditions,
    /// Which editor types (typist's own client by default, then absent from the
    /// manifest) and its own conditions: the key interval, the Lua configuration.
    #[serde(skip_serializing_if = "EditorApp::is_default")]
    pub app: EditorApp,
    /// `--golf`: each line case played key by key (methodology §10); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub golf: Option<super::golf::Golf>,
    /// `--list-rule`: how typist's own client filters and sorts completion lists
    /// (VS Code's rule by default, then absent from the manifest).
    #[serde(skip_serializing_if = "ListRule::is_default")]
    pub list_rule: ListRule,
    /// `--list-cap N`: a completion record keeps the inserted texts of the first N
    /// items shown (absent: the whole list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_cap: Option<u32>,
    /// `--pace`: how fast an edit session's events reach the editor (as fast as it
    /// takes them by default, then absent from the manifest).
    #[serde(skip_serializing_if = "Pace::is_default")]
    pub pace: Pace,
}

/// How fast an edit session's events are made in the editor (a condition of edits runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pace {
    /// Each event as soon as the editor took the one before.
    #[default]
    Asap,
    /// Each event as long after the one before as the person made it (recorded or
    /// imported times), a gap over [`Pace::RECORDED_GAP_CAP_MS`] shortened to it.
    Recorded,
    /// Each event this many milliseconds after the one before.
    Fixed(u64),
}

impl Pace {
    /// A recorded gap longer than this (a pause: typist asks there anyway, or the
    /// person was away) is waited this long.
    pub const RECORDED_GAP_CAP_MS: u64 = 5000;

    pub fn is_default(&self) -> bool {
        *self == Pace::Asap
    }

    /// How long after the event made before (at time `before`, ms) the event at `t`
    /// is made; `None`: at once.
    pub fn gap(&self, before: u64, t: u64) -> Option<std::time::Duration> {
        let ms = match *self {
            Pace::Asap => return None,
            Pace::Recorded => t.saturating_sub(before).min(Self::RECORDED_GAP_CAP_MS),
            Pace::Fixed(ms) => ms,
        };
        (ms > 0).then(|| std::time::Duration::from_millis(ms))
    }

    /// `asap`, `recorded`, or a number of milliseconds.
    pub fn parse(s: &str) -> Result<Pace, String> {
        match s {
            "asap" => Ok(Pace::Asap),
            "recorded" => Ok(Pace::Recorded),
            ms => ms.parse().map(Pace::Fixed).map_err(|_| {
                format!("{s:?}: a pace is asap, recorded, or milliseconds between events")
            }),
        }
    }
}

impl Default for RunConditions {
    fn default() -> Self {
        RunConditions {
            context: ContextMode::Prefix,
            suffix_lines: 0,
            typing: TypingMode::Paste,
            granularity: Granularity::Line,
            typed_prefix: 0,
            settle_ms: 0,
            open_tabs: 0,
            latency: true,
            editor: Conditions::default(),
            app: EditorApp::default(),
            golf: None,
            list_rule: ListRule::Vscode,
            list_cap: None,
            pace: Pace::Asap,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub out: PathBuf,
    pub jobs: usize,
    pub passes: u32,
    pub resume: bool,
    pub shard: Option<Shard>,
    pub quiet: bool,
    /// Server restarts a worker may make in a row before the run stops.
    pub max_restarts: u32,
    /// Where the plan came from (a path, or how it was sampled), for the manifest.
    pub plan_source: String,
    /// Write each session's LSP transcript (secrets redacted) into this folder.
    pub transcripts: Option<PathBuf>,
    /// With `resume`: ask again the cases recorded as `error` or `timeout`.
    pub retry_errors: bool,
    /// The model services started for the run (`service::Services::describe`).
    pub services: Vec<Value>,
    /// For the interruption drills only: a worker panics when the run has recorded this
    /// many cases (`--drill-panic-at`, hidden from `--help`).
    pub panic_at: Option<u64>,
    /// How the run was asked for, kept in the manifest for `--resume` (none: not kept).
    pub settings: Option<RunSettings>,
}

/// How a run was asked for, beyond what the manifest says of it anyway (plan, passes,
/// shard, conditions): what `typist run --resume --out DIR` reads instead of the flags.
/// Paths are absolute.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSettings {
    pub dataset: Option<String>,
    pub single_repo: bool,
    /// The plan file the run read (none: the run sampled its dataset, `sampling`).
    pub plan: Option<String>,
    pub sampling: Option<Sampling>,
    /// The assistants named (profiles of `editors`, or the built-in ones).
    pub assistants: Vec<String>,
    pub editors: Option<String>,
    /// The server the flags described or attached (`--server`, `--connect`, …).
    pub server: Option<ServerSpec>,
}

/// How a dataset was sampled into the run's plan, defaults filled in.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sampling {
    pub rate: f64,
    pub seed: u64,
    pub all_lines: bool,
    pub max_per_file: Option<usize>,
    pub max_per_repo: Option<usize>,
}

/// The flags that describe a server without a profile file, or attach one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerSpec {
    pub server: Option<String>,
    pub dialect: Option<crate::editor::DialectKind>,
    pub languages: Vec<String>,
    pub name: Option<String>,
    pub readiness: Option<crate::editor::ReadinessRule>,
    pub connect: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone)]
pub struct RunReport {
    pub status: RunStatus,
    pub records: usize,
    pub new_records: usize,
    pub message: Option<String>,
    /// Seconds spent starting sessions (workspace, editor and server, up to the server's
    /// answer to `initialize`), summed over sessions and workers.
    pub server_start_seconds: f64,
}
