//! What a run asks of its editor (plan kind, golf, a list rule, the assistants), and
//! the refusals real editors share, for each editor's own refusal check.

use anyhow::{Result, bail};

use super::kind::EditorKind;
use super::profile::{DialectKind, Profile};
use super::ranking::ListRule;

/// What a run asks of its editor.
pub struct RunAsks<'a> {
    pub profiles: &'a [Profile],
    /// The plan's cases are tokens (completion lists), not lines.
    pub tokens: bool,
    /// `--golf`.
    pub golf: bool,
    /// `--list-rule`.
    pub list_rule: ListRule,
}

/// A real editor's refusal of `--golf`, which typist's own client plays alone.
pub(crate) fn refuse_golf(kind: EditorKind, asks: &RunAsks) -> Result<()> {
    if asks.golf {
        bail!(
            "--golf is played through typist's own client for now: drop --editor {}",
            kind.as_str()
        );
    }
    Ok(())
}

/// A real editor's refusal of `--list-rule`: it shows lists by its own rule.
pub(crate) fn refuse_list_rule(kind: EditorKind, asks: &RunAsks) -> Result<()> {
    if !asks.list_rule.is_default() {
        bail!(
            "--list-rule {} is how typist's own client shows lists; --editor {} shows them by its own rule: drop one of the two",
            asks.list_rule.as_str(),
            kind.as_str()
        );
    }
    Ok(())
}

/// A real editor's refusal of the assistants whose dialect it cannot show: a token
/// plan needs completion lists, a line plan a dialect `shows_lines`; `how` says what
/// it shows.
pub(crate) fn refuse_dialects(
    asks: &RunAsks,
    shows_lines: fn(DialectKind) -> bool,
    how: &str,
) -> Result<()> {
    for p in asks.profiles {
        let fits = if asks.tokens {
            p.dialect == DialectKind::Completion
        } else {
            shows_lines(p.dialect)
        };
        if !fits {
            refuse_dialect(p, how)?;
        }
    }
    Ok(())
}

/// A real editor's refusal of a dialect it cannot show: `how` says what it shows.
fn refuse_dialect(p: &Profile, how: &str) -> Result<()> {
    bail!(
        "{}: {how} only; the {} dialect runs with --editor typist",
        p.name,
        serde_json::json!(p.dialect).as_str().unwrap_or("")
    )
}
