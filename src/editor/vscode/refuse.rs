//! What a real VS Code refuses before a run: an extension-only assistant with no
//! extension, a profile with a server that names extensions too, `--extension` beside
//! a server, a token plan under a readiness rule the page cannot follow, dialects the
//! fixture extension cannot show, golf, and a list rule of typist's.

use anyhow::{Result, bail};

use super::fixture_dialect;
use crate::editor::kind::{EditorApp, EditorKind};
use crate::editor::profile::{DialectKind, Profile, ReadinessRule};
use crate::editor::run_asks::{RunAsks, refuse_dialects, refuse_golf, refuse_list_rule};

/// Whether VS Code (through typist's fixture extension) shows line suggestions of
/// `dialect`.
pub fn shows_lines(dialect: DialectKind) -> bool {
    fixture_dialect(dialect).is_some()
}

pub fn refuse(app: &EditorApp, asks: &RunAsks) -> Result<()> {
    for p in asks.profiles {
        refuse_extensions(app, p)?;
    }
    refuse_golf(EditorKind::Vscode, asks)?;
    refuse_list_rule(EditorKind::Vscode, asks)?;
    for p in asks.profiles {
        if asks.tokens
            && matches!(
                p.readiness.rule,
                ReadinessRule::Progress | ReadinessRule::ServerStatus
            )
        {
            bail!(
                "{}: its readiness rule ({}) follows the server's own notifications, which VS Code's page does not show; run it with --editor neovim or typist",
                p.name,
                serde_json::json!(p.readiness.rule).as_str().unwrap_or("")
            );
        }
    }
    refuse_dialects(
        asks,
        shows_lines,
        "--editor vscode shows line suggestions from textDocument/inlineCompletion or, \
         through typist's fixture extension, lsp-ai's completion item or generation, \
         and completion lists (token plans) in its suggest widget",
    )
}

/// The extensions `p` and `--extension` name, against whether `p` has a server.
fn refuse_extensions(app: &EditorApp, p: &Profile) -> Result<()> {
    let named = p.vscode.as_ref().is_some_and(|v| !v.extensions.is_empty());
    match p.plugin_editor() {
        Some(_) if app.extensions.is_empty() && !named => bail!(
            "{}: an extension-only assistant with no extension: name one with --extension FILE.vsix|ID",
            p.name
        ),
        None if named => bail!(
            "{}: a profile with a server cannot name VS Code extensions too (typist's fixture extension serves its server); give the extensions a profile with no command",
            p.name
        ),
        None if !app.extensions.is_empty() => bail!(
            "{}: --extension measures an extension alone, and {} has a server (typist's fixture extension serves it inside VS Code); use an extension-only assistant (--assistant vscode-extension, or a profile with [vscode] and no command)",
            p.name,
            p.name
        ),
        _ => Ok(()),
    }
}
