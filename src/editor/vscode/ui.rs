//! VS Code's own commands as a user reaches them: the command palette, Go to Line, File:
//! Revert File, each through its quick-input box; and the waits on where the cursor is
//! and what its line holds.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::instance::PAGE_POLL;
use super::keys::{CTRL, END, ENTER, KEY_G, Key, SHIFT, SHIFTED_P};
use super::page::UI_WITHIN;
use super::scripts::expand_tabs;
use super::scripts::{
    DUMP, FOCUS, QUICK_INPUT_FOCUSED, REVERTED, WHERE, cursor_at, line_is, palette_lists,
    status_shows,
};
use super::{VscodeSession, failed};
use crate::editor::error::SessionError;

/// The inline-suggest command's title in the command palette.
pub(super) const TRIGGER: &str = "Trigger Inline Suggestion";
/// How long a placed line may take to show before Go to Line is asked again.
pub(super) const LINE_SHOWS_WITHIN: Duration = Duration::from_millis(500);
/// The pause after a quick-input box opens before typing into it.
const QUICK_INPUT_SETTLE: Duration = Duration::from_millis(50);
/// How many times a command is looked for in the palette.
const PALETTE_TRIES: usize = 3;

/// How long a key's effect takes to show before typist looks for what an extension
/// may have opened over the document meanwhile.
const OVER_DOCUMENT_WITHIN: Duration = Duration::from_secs(5);

impl VscodeSession {
    /// Opens a quick-input box with `k` and `modifiers`, waits until it has the focus
    /// (else the error names `what`) and types `text` into it.
    pub(super) async fn quick_input(
        &mut self,
        (k, modifiers): (Key, u32),
        what: &str,
        text: &str,
    ) -> Result<(), SessionError> {
        self.press(k, modifiers).await?;
        self.wait_page(what, QUICK_INPUT_FOCUSED).await?;
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.insert_text(text).await
    }

    /// Runs a command by its title from the command palette (Ctrl+Shift+P). A palette
    /// that does not open, or does not list the command (a dialog or a page an extension
    /// opened meanwhile holds the keys or took the editor's place), is closed and opened
    /// again once what is over the document is closed.
    pub(super) async fn palette(&mut self, title: &str) -> Result<(), SessionError> {
        for _ in 1..PALETTE_TRIES {
            if self.try_palette(title).await? {
                return Ok(());
            }
            // A dialog is dismissed (and named) here; else the palette is closed first.
            if !self.dismiss_dialog().await? {
                self.escape().await?;
            }
            self.bring_back_focus().await?;
        }
        self.run_in_palette(title).await
    }

    /// [`Self::palette`] once: false when the palette or the command did not show.
    async fn try_palette(&mut self, title: &str) -> Result<bool, SessionError> {
        self.press(SHIFTED_P, CTRL | SHIFT).await?;
        if !self.page_shows(QUICK_INPUT_FOCUSED, UI_WITHIN).await? {
            return Ok(false);
        }
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.insert_text(title).await?;
        if !self.page_shows(&palette_lists(title), UI_WITHIN).await? {
            return Ok(false);
        }
        self.press(ENTER, 0).await?;
        Ok(true)
    }

    /// Ctrl+Shift+P and `title` run from the palette, which must show and list it (the
    /// error says what is over the document).
    pub(super) async fn run_in_palette(&mut self, title: &str) -> Result<(), SessionError> {
        self.press(SHIFTED_P, CTRL | SHIFT).await?;
        let shown = match self
            .wait_page("the command palette", QUICK_INPUT_FOCUSED)
            .await
        {
            Ok(()) => {
                tokio::time::sleep(QUICK_INPUT_SETTLE).await;
                self.insert_text(title).await?;
                self.wait_page(
                    &format!("{title} in the command palette"),
                    &palette_lists(title),
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = shown {
            let f = self.vs.eval(&self.tab, FOCUS).await.unwrap_or_default();
            return Err(failed(format!("{e} (over the document: {f})")));
        }
        self.press(ENTER, 0).await
    }

    /// Go to Line (Ctrl+G), `line:column` (1-based; the column a visible one, as VS Code
    /// 1.108 and later read it), Enter, until the status bar shows both.
    pub(super) async fn go_to(&mut self, line: usize, column: usize) -> Result<(), SessionError> {
        self.quick_input((KEY_G, CTRL), "go to line", &format!("{line}:{column}"))
            .await?;
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.press(ENTER, 0).await?;
        // The status bar's line and column, once they have followed (the case before
        // may have left the cursor on the same line).
        self.wait_cursor(line, column).await
    }

    /// File: Revert File from the command palette: the editor holds the disk copy again
    /// (VS Code reloads it exactly, and the tab is no longer dirty), `text` of `rel`,
    /// and indents as it does.
    ///
    /// An extension's first-start page or question (activated by the file's language,
    /// late on a busy machine) may come over the document after the focus was brought
    /// back: when the reverted editor does not show within [`OVER_DOCUMENT_WITHIN`], what
    /// is over it is closed (and named) and the file reverted again.
    pub(super) async fn revert(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        self.palette("File: Revert File").await?;
        if !self.page_shows(REVERTED, OVER_DOCUMENT_WITHIN).await? {
            self.bring_back_focus().await?;
            self.palette("File: Revert File").await?;
        }
        self.wait_page("the reverted editor", REVERTED).await?;
        self.indent_as(rel, text).await
    }

    /// Waits until the status bar shows the cursor at `line`, `column` (1-based, the
    /// column a visible one) in a focused editor.
    pub(super) async fn wait_cursor(
        &mut self,
        line: usize,
        column: usize,
    ) -> Result<(), SessionError> {
        let at = cursor_at(line, column);
        if let Err(e) = self
            .wait_page(&format!("the cursor at line {line}, column {column}"), &at)
            .await
        {
            let page = self.vs.eval(&self.tab, WHERE).await.unwrap_or_default();
            return Err(failed(format!("{e} (the page shows {page})")));
        }
        Ok(())
    }

    /// Whether the page shows the cursor on `row` holding `want` within `within`.
    pub(super) async fn line_shows(
        &mut self,
        row: usize,
        want: &str,
        within: Duration,
    ) -> Result<bool, SessionError> {
        self.page_shows(&line_is(row, want), within).await
    }

    /// Waits until the editor holds `lines` lines: Ctrl+End, again until the status
    /// bar's line is the last one (the reverted text has arrived). What came over the
    /// document meanwhile (a modal dialog takes the keys) is closed once, after
    /// [`OVER_DOCUMENT_WITHIN`].
    pub(super) async fn wait_line_count(&mut self, lines: usize) -> Result<(), SessionError> {
        let expr = status_shows(&format!("Ln {lines}, Col "));
        let t0 = Instant::now();
        let deadline = t0 + UI_WITHIN;
        let mut looked = false;
        loop {
            if !looked && t0.elapsed() >= OVER_DOCUMENT_WITHIN {
                looked = true;
                self.bring_back_focus().await?;
            }
            self.press(END, CTRL).await?;
            let next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                if self.vs.eval(&self.tab, &expr).await? == Value::Bool(true) {
                    return Ok(());
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            if Instant::now() >= deadline {
                let why = format!(
                    "vscode: the reverted text ({lines} lines) did not show within {} ms",
                    UI_WITHIN.as_millis()
                );
                self.broken = Some(why.clone());
                return Err(failed(why));
            }
        }
    }

    /// Waits until the page shows the cursor on `row` (0-based) holding `want` (ghost
    /// text aside, tabs as drawn); the error says what the page shows instead.
    pub(super) async fn wait_line(&mut self, row: usize, want: &str) -> Result<(), SessionError> {
        if let Err(e) = self
            .wait_page(
                &format!(
                    "line {} as the case has it ({:?})",
                    row + 1,
                    expand_tabs(want)
                ),
                &line_is(row, want),
            )
            .await
        {
            let r = self
                .read()
                .await
                .map_or_else(|_| "null".to_string(), |r| r.to_string());
            let dom = self.vs.eval(&self.tab, DUMP).await.unwrap_or_default();
            return Err(failed(format!("{e}; the page shows {r}; {dom}")));
        }
        Ok(())
    }
}
