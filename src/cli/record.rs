//! `typist record`: an edit session recorded from a person in their own Neovim, or in a
//! VS Code (code-server) opened in their browser (`editor::record`), turned into a
//! session (`dataset::edits::recorded`) and written as an edits plan that `typist run
//! --plan` replays.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use typist::dataset::edits::recorded::session_from_log;
use typist::dataset::edits::{EditsHeader, write_edits_plan};
use typist::editor::EditorKind;
use typist::editor::record::{RecordOptions, record as record_in};

/// `typist record` (see `--help`).
#[derive(clap::Args, Debug, Clone)]
pub struct RecordArgs {
    /// The editor the person types in: neovim (their own `nvim` on this terminal, not
    /// headless) or vscode (code-server at an address on 127.0.0.1 for their browser,
    /// with typist's recorder extension and nothing else of theirs).
    #[arg(long, default_value = "neovim", value_name = "EDITOR")]
    pub editor: String,
    /// The edits plan written: a header and the recorded session.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The workspace: the editor's working folder; only its files are recorded.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub workspace: PathBuf,
    /// A pause at least this long, with an edit after it before the next pause, is a
    /// moment (where an assistant is asked).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub pause_ms: u64,
    /// Start Neovim with no configuration, swap or shada file (`nvim --clean -n -i NONE`).
    /// VS Code always starts with user data of its own.
    #[arg(long)]
    pub clean: bool,
    /// VS Code: the port on 127.0.0.1 that code-server listens at (0: a free one, printed).
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,
    /// Replace --out when it exists.
    #[arg(long)]
    pub force: bool,
    /// Files to open (relative to the workspace, or absolute inside it).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

pub fn record(a: RecordArgs) -> Result<ExitCode> {
    let kind = match a.editor.as_str() {
        "neovim" => EditorKind::Neovim,
        "vscode" => EditorKind::Vscode,
        other => bail!("--editor {other}: typist record takes neovim or vscode"),
    };
    if a.out.exists() && !a.force {
        bail!(
            "{} exists: choose another --out, or add --force to replace it",
            a.out.display()
        );
    }
    if !a.workspace.is_dir() {
        bail!("--workspace {} is not a folder", a.workspace.display());
    }
    let opts = RecordOptions {
        workspace: a.workspace.clone(),
        files: a.files.clone(),
        clean: a.clean,
        port: a.port,
    };
    let rt = super::runtime()?;
    let got = rt.block_on(record_in(kind, &opts))?;
    let root = std::path::absolute(&a.workspace).unwrap_or_else(|_| a.workspace.clone());
    let repo = root
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "workspace".into());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let id = format!("{repo}@rec-{stamp}");
    let r = session_from_log(&got.log, &id, &repo, &got.editor, a.pause_ms)
        .context("the recording could not be made a session")?;
    let s = r.session;
    if s.events.is_empty() {
        bail!(
            "nothing recorded: no file inside {} was opened in {}; nothing written",
            root.display(),
            kind.display_name()
        );
    }
    if !r.checked {
        eprintln!(
            "typist record: {} did not end normally; the session is kept as recorded, unchecked against its last text",
            kind.display_name()
        );
    }
    let header = EditsHeader {
        edits_plan: "edits".into(),
        pause_ms: a.pause_ms,
        seed: 0,
    };
    write_edits_plan(&a.out, &header, std::slice::from_ref(&s))?;
    out!(
        "{} and {} ({} of them silence) in {} -> {}",
        typist::score::count(s.events.len() as u64, "event"),
        typist::score::count(s.moments.len() as u64, "moment"),
        s.moments.iter().filter(|m| m.silence).count(),
        typist::score::count(s.files.len() as u64, "file"),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
