//! What every editor's session shares, whichever editor types: the options it starts
//! with, an answer with its latency, and the waits every driver keeps.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// How long a profile whose readiness rule is `progress` may take to begin its work
/// (its first `$/progress`) before typist stops waiting for one.
pub const PROGRESS_START_WAIT: Duration = Duration::from_secs(2);
/// The pause between two tries of a readiness probe (`max_tries` in the profile).
pub const RETRY_INTERVAL: Duration = Duration::from_millis(150);
/// How long a session's orderly shutdown (`shutdown`, `exit`, the process's end) may
/// take when it is retired by a worker, doctor or the checks; then it is killed.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// A suggestion and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct Timed<T> {
    pub value: T,
    pub latency_ms: f64,
}

#[derive(Debug, Default, Clone)]
pub struct SessionOptions {
    /// Folder the files are copied from (the repository).
    pub source_root: Option<PathBuf>,
    /// Files (relative to `source_root`) copied into the workspace.
    pub files: Vec<PathBuf>,
    /// Files written into the workspace with these contents (path relative to it).
    pub contents: Vec<(String, String)>,
    /// JSONL transcript of the session's messages.
    pub transcript: Option<PathBuf>,
    /// The vault entry the session starts from (set by `EditorSession::start` from the
    /// run's editors host): its `home` part is copied into the sandbox `HOME`.
    pub signin: Option<crate::vault::Entry>,
}

/// How the sign-in is done.
#[derive(Debug, Clone, Default)]
pub struct LoginScript {
    /// Commands run in order (`--command`): a palette command's title or id in VS
    /// Code, an Ex command in Neovim. Empty: the profile's `[signin] command`.
    pub commands: Vec<String>,
    /// Answers typed, in order, into the prompts the commands open (`--answer`).
    pub answers: Vec<String>,
    /// The person completes the sign-in at the terminal (no `--command`/`--answer`
    /// given, and standard input is a terminal).
    pub interactive: bool,
    /// How long the whole sign-in may take.
    pub timeout: Duration,
}

/// What a sign-in left: the entry saved, and what the editor showed on the way
/// (prompts, notifications, addresses to open), for the terminal.
#[derive(Debug, Clone)]
pub struct LoginDone {
    pub meta: crate::vault::Meta,
    pub shown: Vec<String>,
}

/// How the editor is started for a recording.
pub struct RecordOptions {
    /// The workspace: the editor's working folder; only its files are recorded.
    pub workspace: std::path::PathBuf,
    /// Files to open, relative to the workspace or absolute.
    pub files: Vec<std::path::PathBuf>,
    /// No configuration of the person's (Neovim: `nvim --clean -n -i NONE`; VS Code
    /// never has theirs).
    pub clean: bool,
    /// VS Code: the port code-server listens at on 127.0.0.1 (0: one it picks).
    pub port: u16,
}

/// What a recording gave: the recorder's log, and the editor's name and version.
pub struct RecordLog {
    pub log: String,
    pub editor: String,
}
