//! What a run refuses before asking any case: a plan that does not match its dataset or
//! mixes line and token cases, assistants that cannot answer the plan's kind of case
//! (line suggestions, completion lists) or do not declare the capability their dialect
//! needs, and the cases an assistant is not asked.

use anyhow::{Result, bail};

use super::RunConditions;
use crate::dataset::{Case, Dataset};
use crate::editor::{Conditions, DialectKind, EditorApp, EditorKind, Profile, SessionOptions};

/// Files of the plan whose repository or file is missing from the dataset, or changed.
pub fn check_plan(ds: &Dataset, plan: &[Case]) -> Result<()> {
    let changed = crate::dataset::changed_files(ds, plan);
    if !changed.is_empty() {
        bail!(
            "the plan does not match the dataset: {} file(s) changed or missing since it was made:\n  {}",
            changed.len(),
            changed.join("\n  ")
        );
    }
    Ok(())
}

/// What a real editor cannot be asked yet: dialects other than
/// `textDocument/inlineCompletion` (Neovim's inline completion) for line cases, and other
/// than `textDocument/completion` (Neovim's popup) for token cases.
pub fn check_editor(profiles: &[Profile], plan: &[Case], app: &EditorApp) -> Result<()> {
    if !app.extensions.is_empty() && app.kind != EditorKind::Vscode {
        bail!("--extension installs a VS Code extension: it runs only with --editor vscode");
    }
    for e in &app.extensions {
        crate::editor::profile::resolve_extension(e, None)?;
    }
    for p in profiles {
        match p.plugin_editor() {
            Some(only) if only != app.kind.as_str() => bail!(
                "{}: {} with no server runs only with --editor {only}",
                p.name,
                if only == "neovim" {
                    "a Neovim plugin"
                } else {
                    "a VS Code extension"
                }
            ),
            Some(_)
                if app.kind == EditorKind::Vscode
                    && app.extensions.is_empty()
                    && p.vscode.as_ref().is_none_or(|v| v.extensions.is_empty()) =>
            {
                bail!(
                    "{}: an extension-only assistant with no extension: name one with --extension FILE.vsix|ID",
                    p.name
                )
            }
            None if app.kind == EditorKind::Vscode
                && p.vscode.as_ref().is_some_and(|v| !v.extensions.is_empty()) =>
            {
                bail!(
                    "{}: a profile with a server cannot name VS Code extensions too (typist's fixture extension serves its server); give the extensions a profile with no command",
                    p.name
                )
            }
            None if app.kind == EditorKind::Vscode && !app.extensions.is_empty() => bail!(
                "{}: --extension measures an extension alone, and {} has a server (typist's fixture extension serves it inside VS Code); use an extension-only assistant (--assistant vscode-extension, or a profile with [vscode] and no command)",
                p.name,
                p.name
            ),
            _ => {}
        }
    }
    if app.kind == EditorKind::Typist {
        return Ok(());
    }
    let tokens = plan.iter().any(|c| c.token.is_some());
    for p in profiles {
        if tokens
            && app.kind == EditorKind::Vscode
            && matches!(
                p.readiness.rule,
                crate::editor::ReadinessRule::Progress | crate::editor::ReadinessRule::ServerStatus
            )
        {
            bail!(
                "{}: its readiness rule ({}) follows the server's own notifications, which VS Code's page does not show; run it with --editor neovim or typist",
                p.name,
                serde_json::json!(p.readiness.rule).as_str().unwrap_or("")
            );
        }
        let fits = if tokens {
            p.dialect == DialectKind::Completion
        } else if app.kind == EditorKind::Vscode {
            crate::editor::vscode::fixture_dialect(p.dialect).is_some()
        } else {
            matches!(
                p.dialect,
                DialectKind::Inline | DialectKind::Copilot | DialectKind::LspAi
            )
        };
        if !fits {
            let how = if app.kind == EditorKind::Vscode {
                "--editor vscode shows line suggestions from textDocument/inlineCompletion or, \
                 through typist's fixture extension, lsp-ai's completion item or generation, \
                 and completion lists (token plans) in its suggest widget"
            } else {
                "--editor neovim asks through textDocument/inlineCompletion or, for lsp-ai, \
                 the completion popup (lines), and the completion popup (token plans)"
            };
            bail!(
                "{}: {how} only; the {} dialect runs with --editor typist",
                p.name,
                serde_json::json!(p.dialect).as_str().unwrap_or("")
            );
        }
    }
    Ok(())
}

/// Refuses a plan mixing line and token cases, assistants that cannot give line
/// suggestions for a plan of lines, and assistants that give no completion lists for a
/// plan of tokens.
pub fn check_assistants(profiles: &[Profile], plan: &[Case]) -> Result<()> {
    let tokens = plan.iter().filter(|c| c.token.is_some()).count();
    if tokens > 0 && tokens < plan.len() {
        bail!(
            "the plan mixes {} line case(s) and {tokens} token case(s); run them as two plans",
            plan.len() - tokens
        );
    }
    for p in profiles {
        if tokens > 0 {
            if p.dialect != DialectKind::Completion {
                bail!(
                    "{} gives inline suggestions (dialect {:?}); a plan of token cases needs a \
                     completion-list server (dialect \"completion\")",
                    p.name,
                    p.dialect
                );
            }
        } else if p.dialect == DialectKind::Completion {
            bail!(
                "{} answers completion lists only (dialect \"completion\"); a line-level run needs an \
                 inline-completion assistant (dialects inline, copilot, lsp-ai, llm-ls)",
                p.name
            );
        }
    }
    Ok(())
}

/// Refuses a plan of block cases (methodology §9) under conditions that show the
/// server lines of the expected block: a block case keeps the study's set-up, the upper
/// context only (`context = "prefix"`, `suffix_lines = 0`).
pub fn check_blocks(plan: &[Case], cond: &RunConditions) -> Result<()> {
    if !plan.iter().any(|c| c.block.is_some()) {
        return Ok(());
    }
    if cond.context != super::typing::ContextMode::Prefix || cond.suffix_lines > 0 {
        bail!(
            "a plan of block cases is replayed with the upper context only (context = \"prefix\", \
             suffix_lines = 0): the lines below the cursor are the block to predict"
        );
    }
    Ok(())
}

/// Why `profile` is not asked `case` under `cond`, if it is not: a line no longer than
/// the typed prefix leaves nothing to suggest, and a case in a language the profile does
/// not list is never sent as another language.
pub fn skip_reason(case: &Case, profile: &Profile, cond: &RunConditions) -> Option<&'static str> {
    if case.token.is_none()
        && cond.typed_prefix > 0
        && case.expected.chars().count() <= cond.typed_prefix as usize
    {
        return Some("line not longer than the typed prefix");
    }
    if !profile.languages.iter().any(|l| l == &case.language) {
        return Some("language not served by the profile");
    }
    None
}

/// Starts each assistant once in an empty workspace before the run and refuses one
/// whose server does not declare the capability its dialect's request needs (a server
/// that cannot start is refused here too, before any case is asked).
pub async fn check_capabilities(profiles: &[Profile], cond: &Conditions) -> Result<()> {
    for p in profiles {
        let Some(needed) = p.dialect.required_capability() else {
            continue;
        };
        if p.is_plugin_only() {
            continue;
        }
        let session =
            crate::editor::typist::TypistSession::start(p, cond, SessionOptions::default())
                .await
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.name))?;
        let declared = session.capabilities().declares(needed);
        let server = session
            .server_info()
            .name
            .clone()
            .unwrap_or_else(|| p.command.clone());
        let _ =
            tokio::time::timeout(crate::editor::options::SHUTDOWN_WAIT, session.shutdown()).await;
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

/// Refuses `--golf` where §10 cannot be played as it says: token cases with characters
/// typed (golf on a completion list starts each token from nothing typed), file typing
/// from the top (golf pastes each state of the line), or a typed prefix (golf starts
/// from nothing typed).
pub fn check_golf(plan: &[crate::dataset::Case], cond: &RunConditions) -> anyhow::Result<()> {
    let Some(g) = cond.golf else { return Ok(()) };
    if let Some(c) = plan
        .iter()
        .find(|c| c.token.as_ref().is_some_and(|t| t.prefix_len > 0))
    {
        anyhow::bail!(
            "--golf plays each token from nothing typed, one record per token; case {} types {} characters first: sample the plan with --prefix 0",
            c.case,
            c.token.as_ref().map_or(0, |t| t.prefix_len)
        );
    }
    let tokens = plan.iter().any(|c| c.token.is_some());
    if !tokens && cond.typing != super::typing::TypingMode::Paste {
        anyhow::bail!(
            "--golf needs typing = \"paste\" (each state of the line is set in one change)"
        );
    }
    if cond.typed_prefix > 0 {
        anyhow::bail!("--golf starts from nothing typed: it cannot go with --typed-prefix");
    }
    if g.max_requests == 0 {
        anyhow::bail!("--golf-max-requests must be at least 1");
    }
    if cond.app.kind != EditorKind::Typist {
        anyhow::bail!(
            "--golf is played through typist's own client for now: drop --editor {}",
            cond.app.kind.as_str()
        );
    }
    Ok(())
}

/// Refuses `--list-rule` with a real editor, which shows lists by its own rule.
pub fn check_list_rule(cond: &RunConditions) -> anyhow::Result<()> {
    if !cond.list_rule.is_default() && cond.app.kind != EditorKind::Typist {
        anyhow::bail!(
            "--list-rule {} is how typist's own client shows lists; --editor {} shows them by its own rule: drop one of the two",
            cond.list_rule.as_str(),
            cond.app.kind.as_str()
        );
    }
    Ok(())
}
