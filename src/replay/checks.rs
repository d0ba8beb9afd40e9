//! What a run refuses before asking any case: a plan that does not match its dataset or
//! mixes line and token cases, assistants that cannot answer the plan's kind of case
//! (line suggestions, completion lists), conditions a plan's kind cannot be replayed
//! under, and the cases an assistant is not asked. What the editor refuses (dialects,
//! flags, capabilities) the editor says itself (`editor::refusals`).

use anyhow::{Result, bail};

use super::RunConditions;
use crate::dataset::{Case, Dataset};
use crate::editor::{DialectKind, Profile};

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
    Ok(())
}
