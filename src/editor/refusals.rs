//! What an editor refuses before a run asks any case: the shared part (`--extension`
//! with another editor, a plugin or an extension given to the wrong editor) here, and
//! what each editor supports (plan kinds, dialects, golf, a list rule; `run_asks.rs`)
//! answered by the editor itself (`neovim/refuse.rs`, `vscode/refuse.rs`; typist's own
//! client takes every dialect and flag). Also the capability check, which starts each assistant's
//! server once in typist's own client.

use anyhow::{Result, bail};

use super::conditions::Conditions;
use super::kind::{EditorApp, EditorKind};
use super::options::{SHUTDOWN_WAIT, SessionOptions};
use super::profile::{DialectKind, Profile};
use super::run_asks::RunAsks;
use super::typist::TypistSession;

/// Refuses what `app`'s editor cannot be asked under `asks`.
pub fn refuse(app: &EditorApp, asks: &RunAsks) -> Result<()> {
    if !app.extensions.is_empty() && app.kind != EditorKind::Vscode {
        bail!("--extension installs a VS Code extension: it runs only with --editor vscode");
    }
    for e in &app.extensions {
        super::profile::resolve_extension(e, None)?;
    }
    for p in asks.profiles {
        if let Some(only) = p.plugin_editor()
            && only != app.kind.as_str()
        {
            bail!(
                "{}: {} with no server runs only with --editor {only}",
                p.name,
                if only == "neovim" {
                    "a Neovim plugin"
                } else {
                    "a VS Code extension"
                }
            );
        }
    }
    match app.kind {
        EditorKind::Typist => Ok(()),
        EditorKind::Neovim => super::neovim::refuse::refuse(asks),
        EditorKind::Vscode => super::vscode::refuse::refuse(app, asks),
    }
}

/// Whether `kind` of editor shows line suggestions of `dialect` (typist's own client
/// asks every dialect).
pub fn shows_lines(kind: EditorKind, dialect: DialectKind) -> bool {
    match kind {
        EditorKind::Typist => true,
        EditorKind::Neovim => super::neovim::refuse::shows_lines(dialect),
        EditorKind::Vscode => super::vscode::refuse::shows_lines(dialect),
    }
}

/// Starts each assistant once in an empty workspace (typist's own client) and refuses
/// one whose server does not declare the capability its dialect's request needs (a
/// server that cannot start is refused here too, before any case is asked).
pub async fn check_capabilities(profiles: &[Profile], cond: &Conditions) -> Result<()> {
    for p in profiles {
        let Some(needed) = p.dialect.required_capability() else {
            continue;
        };
        if p.is_plugin_only() {
            continue;
        }
        let session = TypistSession::start(p, cond, SessionOptions::default())
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.name))?;
        let declared = session.capabilities().declares(needed);
        let server = session
            .server_info()
            .name
            .clone()
            .unwrap_or_else(|| p.command.clone());
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, session.shutdown()).await;
        if !declared {
            bail!(
                "profile {} (dialect {:?}) needs the server capability {needed}, which {server} does not declare in its initialize answer",
                p.name,
                p.dialect
            );
        }
    }
    Ok(())
}
