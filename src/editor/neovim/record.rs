//! `typist record --editor neovim`: the person's own Neovim on their terminal (not
//! headless; their configuration unless `--clean`), with typist's recorder
//! (`recorder.lua`, loaded with `--cmd` before the configuration) logging every change,
//! cursor move and save of the workspace's files with its time. The log is turned into
//! a session by `dataset::edits::recorded`. Ctrl-C goes to Neovim (a key there), not to
//! typist, which waits for Neovim to end.

use std::path::Path;

use crate::editor::error::{EditorError, SessionError};
use crate::editor::options::{RecordLog, RecordOptions};

/// The recorder, written next to the log at start.
const RECORDER: &str = include_str!("recorder.lua");

/// Neovim's version line (`NVIM v0.12.0-dev`) as `neovim 0.12.0-dev`.
async fn version(nvim: &Path) -> String {
    let out = tokio::process::Command::new(nvim)
        .arg("--version")
        .output()
        .await;
    let first = out
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_default();
    match first.strip_prefix("NVIM v") {
        Some(v) => format!("neovim {v}"),
        None => "neovim".into(),
    }
}

/// Runs Neovim on the person's terminal until they quit it, and returns the log (what
/// was written of it, also when Neovim crashed).
pub async fn record(opts: &RecordOptions) -> Result<RecordLog, SessionError> {
    let nvim = super::program().ok_or_else(|| {
        EditorError::Failed(
            "neovim (nvim) is not installed: put it on PATH, set TYPIST_NVIM, or run scripts/install-servers.sh".into(),
        )
    })?;
    let root = std::path::absolute(&opts.workspace).map_err(SessionError::file(&opts.workspace))?;
    let dir = tempfile::Builder::new()
        .prefix("typist-record-")
        .tempdir()
        .map_err(SessionError::file(Path::new("typist-record")))?;
    let recorder = dir.path().join("recorder.lua");
    std::fs::write(&recorder, RECORDER).map_err(SessionError::file(&recorder))?;
    let log = dir.path().join("log.jsonl");
    std::fs::write(&log, "").map_err(SessionError::file(&log))?;
    let mut cmd = tokio::process::Command::new(&nvim);
    if opts.clean {
        cmd.args(["--clean", "-n", "-i", "NONE"]);
    }
    cmd.args(["--cmd", "lua dofile(vim.env.TYPIST_RECORDER)"])
        .args(&opts.files)
        .env("TYPIST_RECORDER", &recorder)
        .env("TYPIST_RECORD_LOG", &log)
        .env("TYPIST_RECORD_ROOT", &root)
        .current_dir(&root);
    // Ctrl-C on the terminal reaches typist too: it is Neovim's key, never typist's end.
    let ignore = tokio::spawn(async { while tokio::signal::ctrl_c().await.is_ok() {} });
    let status = cmd.status().await;
    ignore.abort();
    let status =
        status.map_err(|e| EditorError::Failed(format!("cannot start {}: {e}", nvim.display())))?;
    if !status.success() {
        tracing::warn!(%status, "neovim (recording) ended");
    }
    let text = std::fs::read_to_string(&log).map_err(SessionError::file(&log))?;
    Ok(RecordLog {
        log: text,
        editor: version(&nvim).await,
    })
}
