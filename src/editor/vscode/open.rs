//! A file opened in an editor tab (Quick Open), and made ready for its first case: with
//! the fixture, asked until VS Code asks the extension for it; with extensions alone,
//! warmed up and every measured extension seen activated.

use std::time::{Duration, Instant};

use super::instance::{PAGE_POLL, PAGE_WITHIN};
use super::keys::{CTRL, END, ENTER, KEY_P};
use super::page::Fate;
use super::scripts::{
    QUICK_OPEN_ROWS, TAB_SIZES, file_active, indentation_shows, quick_open_lists,
};
use super::ui::{LINE_SHOWS_WITHIN, TRIGGER};
use super::{VscodeSession, failed, file_name};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::profile::DialectKind;
use crate::editor::workspace;

/// With extensions alone: how long a freshly opened file is asked at its end before its
/// first case (see `VscodeSession::warm_up`).
const WARM_UP: Duration = Duration::from_secs(4);
/// The project's fixture extension's id.
const FIXTURE_ID: &str = "typist.typist-inline";
/// How many times a file is opened with Quick Open before the session fails.
const OPEN_FILE_TRIES: usize = 3;

/// Whether `text` indents with tabs: more of its indented lines begin with a tab than
/// with a space.
fn indents_with_tabs(text: &str) -> bool {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for l in text.lines().filter(|l| !l.trim_start().is_empty()) {
        match l.as_bytes().first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => spaces += 1,
            _ => {}
        }
    }
    tabs > spaces
}

impl VscodeSession {
    /// Opens `rel` in an editor tab (Quick Open: Ctrl+P, its absolute path, Enter); the last one
    /// opened is where typing goes.
    pub async fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        workspace::write_creating(&path, text).map_err(SessionError::file(&path))?;
        // What an extension opens on its first start (llama.vscode: a page in the editor
        // area, a terminal, a modal question) may come while the file is being opened:
        // Quick Open then does not show, or lists the extension's page, and is tried again
        // once that is closed. (The file counts as the session's from now: its tab is
        // never taken for the extension's.)
        self.texts.insert(rel.to_string(), text.to_string());
        let mut tries = 0;
        loop {
            tries += 1;
            match self.quick_open(rel).await {
                Ok(()) => break,
                Err(e) if tries >= OPEN_FILE_TRIES => return Err(e),
                Err(e) => {
                    tracing::warn!(
                        file = rel,
                        "vscode: {e}; closing what is over the page and opening it again"
                    );
                    self.broken = None;
                    if !self.dismiss_dialog().await? {
                        self.escape().await?;
                    }
                    self.bring_back_focus().await?;
                }
            }
        }
        // A fresh editor indents with spaces; one opened again keeps what it had.
        self.indent_as(rel, text).await?;
        self.texts.insert(rel.to_string(), text.to_string());
        self.loaded.insert(rel.to_string(), text.to_string());
        self.current = Some(rel.to_string());
        self.list = None;
        if self.profile.dialect == DialectKind::Completion {
            // Completion lists are asked with Trigger Suggest, which VS Code serves at
            // once in a fresh editor.
            return Ok(());
        }
        self.wait_asked(rel).await?;
        Ok(())
    }

    /// Quick Open (Ctrl+P), `rel`'s absolute path, Enter, until its editor is the active,
    /// focused one.
    pub(super) async fn quick_open(&mut self, rel: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        // The absolute path: Quick Open shows an existing file's own entry at once,
        // without waiting for the workspace's file search.
        self.quick_input((KEY_P, CTRL), "quick open", &path.display().to_string())
            .await?;
        let name = file_name(rel);
        if let Err(e) = self
            .wait_page("the file in quick open", &quick_open_lists(&name))
            .await
        {
            let rows = self
                .vs
                .eval(&self.tab, QUICK_OPEN_ROWS)
                .await
                .unwrap_or_default();
            return Err(failed(format!("{e} (quick open shows {rows})")));
        }
        self.press(ENTER, 0).await?;
        self.wait_page("the file's editor", &file_active(&name))
            .await
    }

    /// The active editor, `rel`'s, indents as `text` does: with tabs when most of its
    /// indented lines begin with one, else with spaces (VS Code's Indent Using Tabs or
    /// Indent Using Spaces from the palette when it changes, the tab size kept at 4, then
    /// the status bar says `Tab Size: 4` or `Spaces: 4`). VS Code writes the
    /// indentation it makes in the editor's style: a `}` typed where only indentation
    /// precedes it on its line is an electric character, its line given the opening
    /// bracket's line's indentation in that style, so in an editor indenting with spaces
    /// (VS Code's default) `\t\t}` would become eight spaces, and in one indenting with
    /// tabs `    ]` would become a tab. (VS Code's own detection, `editor.detectIndentation`,
    /// would change the tab size too, which typist keeps at 4 to read what is drawn.)
    pub(super) async fn indent_as(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let tabs = indents_with_tabs(text);
        if self.tabs.contains(rel) == tabs {
            return Ok(());
        }
        let (command, shows) = if tabs {
            ("Indent Using Tabs", "Tab Size: 4")
        } else {
            ("Indent Using Spaces", "Spaces: 4")
        };
        tracing::debug!(file = rel, "vscode: {command}");
        self.palette(command).await?;
        self.wait_page(&format!("the tab sizes of {command}"), TAB_SIZES)
            .await?;
        // 4, the configured size, is the one focused.
        self.press(ENTER, 0).await?;
        self.wait_page(
            &format!("the status bar's {shows}"),
            &indentation_shows(shows),
        )
        .await?;
        if tabs {
            self.tabs.insert(rel.to_string());
        } else {
            self.tabs.remove(rel);
        }
        // The quick pick gives the focus back to the editor it was opened over, which
        // may be another file's than the one typed into (an edit session's other file
        // brought up to date): the caller goes on from there.
        Ok(())
    }

    /// Waits until VS Code asks the extension for the opened file: a freshly opened
    /// editor does not ask its inline providers for a while (0.4 to 4 s here), so Trigger
    /// Inline Suggestion is run at the file's end until the fixture's status shows a
    /// request (its answer is not read; the next case hides it with Escape).
    async fn wait_asked(&mut self, rel: &str) -> Result<(), SessionError> {
        if !self.fixture {
            return self.warm_up().await;
        }
        let seq0 = self.status_seq().await?;
        let within = self.init_within();
        let deadline = Instant::now() + within;
        self.press(END, CTRL).await?;
        loop {
            self.bring_back_focus().await?;
            self.palette(TRIGGER).await?;
            let mut next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                match self.read().await?.status() {
                    // Asked, and its answer in: it does not overlap the next case.
                    Some(s) if s.seq > seq0 && s.fate != Fate::Asking => return Ok(()),
                    // Asked, the answer still coming: wait for it. Asking again would
                    // cancel it and queue one more request behind it at a server that
                    // answers one at a time (lsp-ai before llama-server, each answer
                    // over 0.5 s on a busy machine), so no answer would ever be the
                    // newest request's.
                    Some(s) if s.seq > seq0 => {
                        next = (Instant::now() + PAGE_POLL * 2).min(deadline)
                    }
                    _ => {}
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Err(EditorError::Timeout(format!(
                    "{}: vscode did not ask the extension for {rel} within {} ms",
                    self.profile.name,
                    within.as_millis()
                ))
                .into());
            }
        }
    }

    /// With extensions alone, whose requests typist cannot see: Trigger Inline
    /// Suggestion at the file's end until something is shown there, or `WARM_UP` has
    /// passed (an extension may rightly show nothing at a file's end).
    async fn warm_up(&mut self) -> Result<(), SessionError> {
        self.press(END, CTRL).await?;
        let deadline = Instant::now() + WARM_UP;
        while Instant::now() < deadline {
            self.bring_back_focus().await?;
            self.palette(TRIGGER).await?;
            let next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                if self.read().await?.shown().is_some() {
                    return Ok(());
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            self.still_running()?;
        }
        self.wait_activated().await?;
        // Nothing shown, and an extension asks to be signed in: it cannot answer, and a
        // run of empty records would say it had nothing to suggest.
        let asks = self.sign_in_prompts(Duration::ZERO).await;
        if !asks.is_empty() {
            return Err(SessionError::NotSignedIn {
                server: self.profile.name.clone(),
                message: format!(
                    "VS Code shows {}; run `{}` (or check `typist doctor --editor vscode`)",
                    asks.join("; "),
                    self.login_command()
                ),
            });
        }
        Ok(())
    }

    /// With extensions alone, after a file is open: every measured extension has
    /// activated (its extension host logged it), else the session fails naming it, so
    /// an extension that cannot work never yields a run of `empty` records.
    async fn wait_activated(&mut self) -> Result<(), SessionError> {
        let within = self.init_within();
        let deadline = Instant::now() + within;
        loop {
            let states = self.vs.extension_states();
            let measured: Vec<_> = states
                .iter()
                .filter(|x| !x.id.eq_ignore_ascii_case(FIXTURE_ID))
                .collect();
            if let Some(x) = measured.iter().find(|x| x.activation_error.is_some()) {
                return Err(EditorError::Exited(format!(
                    "{}: VS Code extension {} {} failed to activate: {}",
                    self.profile.name,
                    x.id,
                    x.version,
                    x.activation_error.as_deref().unwrap_or("")
                ))
                .into());
            }
            if measured.iter().all(|x| x.activated) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let ids: Vec<&str> = measured
                    .iter()
                    .filter(|x| !x.activated)
                    .map(|x| x.id.as_str())
                    .collect();
                return Err(EditorError::Timeout(format!(
                    "{}: VS Code extension {} not activated within {} ms of opening a file (check `typist doctor --editor vscode`: its sign-in, its activation events)",
                    self.profile.name,
                    ids.join(", "),
                    within.as_millis()
                ))
                .into());
            }
            tokio::time::sleep(PAGE_POLL * 10).await;
        }
    }

    /// The `typist login` that signs this profile's assistant in.
    pub(super) fn login_command(&self) -> String {
        if self.profile.signin.as_ref().is_some_and(|s| s.github) {
            "typist login copilot".into()
        } else {
            format!(
                "typist login --editor vscode --assistant {}",
                self.profile.name
            )
        }
    }

    /// How long the profile gives its server to start (at least [`PAGE_WITHIN`]).
    pub(super) fn init_within(&self) -> Duration {
        Duration::from_millis(self.profile.init_timeout_ms).max(PAGE_WITHIN)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_indents_with_tabs_when_most_indented_lines_begin_with_one() {
        use super::indents_with_tabs;
        assert!(indents_with_tabs(
            "int f() {\n\tif (x) {\n\t\ty();\n\t}\n}\n"
        ));
        assert!(!indents_with_tabs("def f():\n    if x:\n        y()\n"));
        // GNU style: two-space levels, a tab for eight columns.
        assert!(!indents_with_tabs(
            "f ()\n{\n  if (x)\n    {\n      y ();\n\t  z ();\n    }\n}\n"
        ));
        // Blank lines, with or without whitespace, do not count.
        assert!(indents_with_tabs("a\n\tb\n    \n\n\tc\n    d\n"));
        assert!(!indents_with_tabs(""));
    }
}
