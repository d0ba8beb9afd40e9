//! What a real Neovim refuses before a run: dialects its LSP client does not show
//! (line suggestions from `textDocument/inlineCompletion`, or lsp-ai's through the
//! completion popup; token plans through the popup), golf, and a list rule of typist's.

use anyhow::Result;

use crate::editor::kind::EditorKind;
use crate::editor::profile::DialectKind;
use crate::editor::run_asks::{RunAsks, refuse_dialects, refuse_golf, refuse_list_rule};

/// Whether Neovim shows line suggestions of `dialect`.
pub fn shows_lines(dialect: DialectKind) -> bool {
    matches!(
        dialect,
        DialectKind::Inline | DialectKind::Copilot | DialectKind::LspAi
    )
}

pub fn refuse(asks: &RunAsks) -> Result<()> {
    refuse_golf(EditorKind::Neovim, asks)?;
    refuse_list_rule(EditorKind::Neovim, asks)?;
    refuse_dialects(
        asks,
        shows_lines,
        "--editor neovim asks through textDocument/inlineCompletion or, for lsp-ai, \
         the completion popup (lines), and the completion popup (token plans)",
    )
}
