//! Edit sessions through VS Code (methodology §13): the session's changes are what the
//! editor is to hold ([`VscodeSession::set_text`]); before each ask the files the
//! session changed since VS Code last loaded them are brought up to date (Quick Open,
//! the disk copy written, File: Revert File: VS Code sends the change to its
//! extensions and servers). The inline suggestion is then asked by typing the asked
//! file's line as a line case's; the next edit by the fixture's command `Typist: Ask
//! Next Edit` at the cursor, read once VS Code draws it as an inline edit.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::drawn::request_timed_out;
use super::instance::PAGE_POLL;
use super::page::{Fate, Page};
use super::scripts::expand_tabs;
use super::{VscodeSession, failed};
use crate::editor::document::{Position, PositionEncoding};
use crate::editor::error::{COPILOT_NO_TOKEN, EditorError, SessionError};
use crate::editor::next_edit::{NextEdits, read_inline_edits};
use crate::editor::options::Timed;
use crate::editor::profile::DialectKind;
use crate::editor::suggestions::Suggestions;
use crate::editor::workspace;

/// The fixture's command that asks the next edit at the cursor.
const ASK_NEXT_EDIT: &str = "Typist: Ask Next Edit";

/// The error of a next edit asked of a profile whose server gives completion lists.
pub const NOT_ASKED_LISTS: &str =
    "not asked: the profile's server gives completion lists (its fixture asks no next edits)";

/// The error of a next edit asked of extensions measured alone.
pub const NOT_ASKED_ALONE: &str = "not asked: VS Code's next edits are read through typist's fixture extension (a profile with a server); extensions measured alone draw their own, which typist does not read";

impl VscodeSession {
    /// The inline suggestion where an edit session stands in `rel`, the cursor at
    /// `cursor`: every other file the session changed reloaded first, `rel` made the
    /// editor typed into, then the cursor's line typed (see [`Self::suggest`]).
    pub async fn suggest_here(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if let Some(why) = &self.broken {
            return Err(failed(why.clone()));
        }
        self.bring_up_to_date(rel).await?;
        let r = self.suggest(rel, cursor).await;
        // The case placed the whole text (its line typed): what VS Code holds now.
        if r.is_ok()
            && let Some(t) = self.texts.get(rel).cloned()
        {
            self.loaded.insert(rel.to_string(), t);
        }
        r
    }

    /// Every file but `rel` the session changed since VS Code loaded it reloaded, and
    /// `rel` made the active editor.
    async fn bring_up_to_date(&mut self, rel: &str) -> Result<(), SessionError> {
        let stale: Vec<String> = self
            .texts
            .iter()
            .filter(|(f, t)| f.as_str() != rel && self.loaded.get(*f) != Some(*t))
            .map(|(f, _)| f.clone())
            .collect();
        for f in stale {
            tracing::debug!(
                file = f,
                "vscode: the session changed it since it was loaded"
            );
            self.bring_back_focus().await?;
            self.quick_open(&f).await?;
            self.reload(&f).await?;
            self.current = Some(f);
        }
        if self.current.as_deref() != Some(rel) {
            tracing::debug!(file = rel, "vscode: the asked file made the active one");
            self.bring_back_focus().await?;
            self.quick_open(rel).await?;
            self.current = Some(rel.to_string());
        }
        Ok(())
    }

    /// The active editor, `rel`, made to hold what the session says: its disk copy
    /// written and File: Revert File.
    async fn reload(&mut self, rel: &str) -> Result<(), SessionError> {
        let text = self.texts[rel].clone();
        let path = self.root.join(rel);
        workspace::write_creating(&path, &text).map_err(SessionError::file(&path))?;
        self.revert(rel, &text).await?;
        self.wait_line_count(text.split('\n').count()).await?;
        self.loaded.insert(rel.to_string(), text);
        Ok(())
    }

    /// The next edit where an edit session stands in `rel`, the cursor at `cursor`, as a
    /// person asks it in VS Code: the files brought up to date (`rel` too), what is shown
    /// hidden (Escape), the cursor put there (Go to Line), then the fixture's command
    /// `Typist: Ask Next Edit` from the palette. The fixture asks the server
    /// (`textDocument/copilotInlineEdit`, as Copilot's editors ask it) and gives VS Code
    /// the answer's edits as inline edits; its status tells the request's fate and its
    /// label the answer as it came. An answer with edits counts once VS Code draws the
    /// first (the one it shows): its gutter indicator names the edit's line. The
    /// record holds that edit, the one a person sees. Nothing drawn by the display
    /// deadline is the case's error (nothing shown), never an empty; an error, a
    /// timeout, Copilot's "not signed in" as on typist's own client.
    pub async fn next_edit(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<NextEdits>, SessionError> {
        if let Some(why) = &self.broken {
            return Err(failed(why.clone()));
        }
        if !self.fixture {
            return Err(failed(NOT_ASKED_ALONE.into()));
        }
        if self.profile.dialect == DialectKind::Completion {
            return Err(failed(NOT_ASKED_LISTS.into()));
        }
        self.bring_up_to_date(rel).await?;
        if self.loaded.get(rel) != self.texts.get(rel) {
            self.bring_back_focus().await?;
            self.reload(rel).await?;
        }
        let (text, at, line_start) = self.case_text(rel, cursor)?;
        let prefix = &text[line_start..at];
        let row = cursor.line as usize;
        let col16 = prefix.encode_utf16().count();
        // What the last ask left shown (a ghost text, an inline edit) hidden, and no
        // inline edit shown before this one is asked.
        self.bring_back_focus().await?;
        self.escape().await?;
        self.wait_no_inline_edit().await?;
        self.go_to(row + 1, expand_tabs(prefix).chars().count() + 1)
            .await?;
        self.wait_client_ready().await?;
        let seq0 = self.status_seq().await?;
        self.palette(ASK_NEXT_EDIT).await?;
        let t0 = Instant::now();
        let at = (row as u64, col16 as u64);
        let (status, page) = self
            .wait_status(seq0, at, t0, "next edit", Page::next_status)
            .await?;
        match status.fate {
            Fate::Error(m) => return Err(self.next_edit_failed(&m)),
            Fate::Timeout => return Err(request_timed_out(&self.profile, "next edit")),
            _ => {}
        }
        // The label must be this request's, and a next edit's (never an inline answer's).
        let Some(answer) = page
            .next_answer_of(status.seq)
            .filter(|a| a.get("result").is_some())
        else {
            return Err(failed(format!(
                "vscode: the fixture's label holds no next-edit answer of request {} (the page shows {page})",
                status.seq
            )));
        };
        let (value, lines) = shown_edit(&answer, &text);
        if let Some(lines) = lines {
            self.wait_edit_drawn(lines, &answer).await?;
        }
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        Ok(Timed { value, latency_ms })
    }

    /// Waits until VS Code shows the edit of the 0-based lines `first..=last`: its gutter
    /// indicator names one of them (VS Code names the first line the edit changes, which
    /// may lie below the range's start when the edit rewrites lines it keeps). Not shown
    /// by the display deadline: the case's error (nothing shown).
    async fn wait_edit_drawn(
        &mut self,
        (first, last): (u64, u64),
        answer: &Value,
    ) -> Result<(), SessionError> {
        let display = Duration::from_millis(self.app.display_deadline_ms);
        let shown_by = Instant::now() + display;
        loop {
            let r = self.read().await?;
            if r.edit_lines
                .iter()
                .filter_map(|l| l.parse::<u64>().ok())
                .any(|l| (first + 1..=last + 1).contains(&l))
            {
                return Ok(());
            }
            self.still_running()?;
            if Instant::now() >= shown_by {
                tracing::debug!(page = %r, answer = %answer, "vscode: no inline edit drawn");
                return Err(EditorError::NothingShown(format!(
                    "{} proposed an edit of lines {}-{} and VS Code drew no inline edit there within the display deadline ({} ms)",
                    self.profile.name,
                    first + 1,
                    last + 1,
                    self.app.display_deadline_ms
                ))
                .into());
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// Waits until no inline edit is shown (its gutter indicator names no line).
    async fn wait_no_inline_edit(&mut self) -> Result<(), SessionError> {
        let deadline = Instant::now() + super::page::UI_WITHIN;
        loop {
            let r = self.read().await?;
            if r.edit_lines.is_empty() {
                return Ok(());
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Err(failed(format!(
                    "vscode: an inline edit was still shown {} ms after Escape (the page shows {r})",
                    super::page::UI_WITHIN.as_millis()
                )));
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// The fixture's next-edit request failed with `m` (the server's code last, as
    /// `(error N)`): Copilot's "not signed in" stops the run, as on typist's own client;
    /// anything else is the case's error.
    fn next_edit_failed(&self, m: &str) -> SessionError {
        if self.profile.dialect == DialectKind::Copilot
            && m.ends_with(&format!("(error {COPILOT_NO_TOKEN})"))
        {
            return SessionError::NotSignedIn {
                server: self.profile.name.clone(),
                message: format!("{m}; run `{}`", self.login_command()),
            };
        }
        failed(format!(
            "{}: textDocument/copilotInlineEdit: {m} (through vscode)",
            self.profile.name
        ))
    }
}

/// What VS Code shows of the fixture's answer `{uri, version, result}` for a document
/// holding `text`: the first of the answer's edits for the document that has a range
/// (VS Code shows one inline edit at a time; the others wait behind it), read as typist's
/// own client reads an answer, with the answer's edits for other documents counted and
/// its version checked; and the lines (0-based, first and last) the edit covers, before
/// or after it, `None` when there is none. An edit that changes nothing is not shown by
/// VS Code: none is proposed.
fn shown_edit(answer: &Value, text: &str) -> (NextEdits, Option<(u64, u64)>) {
    let uri = answer["uri"].as_str().unwrap_or_default();
    let version = answer["version"].as_i64().unwrap_or(-1);
    let edits = answer
        .pointer("/result/edits")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let here = |e: &Value| {
        e.pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .is_none_or(|u| u == uri)
    };
    let first = edits
        .iter()
        .find(|e| here(e) && e.get("range").is_some())
        .cloned();
    let line_of = |e: &Value, at: &str| e.pointer(at).and_then(Value::as_u64);
    let lines = first.as_ref().and_then(|e| {
        let start = line_of(e, "/range/start/line")?;
        let end = line_of(e, "/range/end/line")?.max(start);
        let added = e["text"].as_str().unwrap_or_default().matches('\n').count() as u64;
        // An edit from a line's start may be drawn as one from the end of the line above
        // (lines inserted before line N are VS Code's insertion after line N - 1).
        let from_line_start = line_of(e, "/range/start/character") == Some(0);
        let first = if from_line_start {
            start.saturating_sub(1)
        } else {
            start
        };
        Some((first, end.max(start + added)))
    });
    let mut value = read_inline_edits(
        &json!({"edits": first.into_iter().collect::<Vec<_>>()}),
        uri,
        version,
        text,
        PositionEncoding::Utf16,
    );
    value.elsewhere = edits.iter().filter(|e| !here(e)).count();
    let no_change = value
        .edits
        .first()
        .is_some_and(|e| text.get(e.start..e.end) == Some(e.text.as_str()));
    if no_change {
        value.edits.clear();
        return (value, None);
    }
    // The version of every edit for the document, not only the one shown.
    value.stale |= edits.iter().filter(|e| here(e)).any(|e| {
        e.pointer("/textDocument/version")
            .and_then(Value::as_i64)
            .is_some_and(|v| v != version)
    });
    (value, lines)
}

#[cfg(test)]
mod tests {
    use super::shown_edit;
    use serde_json::json;

    fn edit(uri: &str, line: u64, a: u64, b: u64, text: &str) -> serde_json::Value {
        json!({"text": text, "textDocument": {"uri": uri, "version": 3},
               "range": {"start": {"line": line, "character": a}, "end": {"line": line, "character": b}}})
    }

    #[test]
    fn the_edit_shown_is_the_first_for_the_document_with_a_range() {
        let text = "x = 1\ny = x\nz = x\n";
        let answer = json!({"uri": "file:///a.py", "version": 3, "result": {"edits": [
            edit("file:///b.py", 0, 0, 1, "q"),
            {"text": "no range", "textDocument": {"uri": "file:///a.py", "version": 3}},
            edit("file:///a.py", 1, 4, 5, "value"),
            edit("file:///a.py", 2, 4, 5, "value"),
        ]}});
        let (v, lines) = shown_edit(&answer, text);
        assert_eq!(lines, Some((1, 1)));
        // Lines inserted at a line's start: VS Code may name the line above.
        let (_, lines) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 3, "result": {"edits": [edit("file:///a.py", 2, 0, 0, "w = 1\n")]}}),
            text,
        );
        assert_eq!(lines, Some((1, 3)));
        assert_eq!(v.edits.len(), 1);
        assert_eq!((v.edits[0].start, v.edits[0].end), (10, 11));
        assert_eq!(v.edits[0].text, "value");
        assert_eq!(v.elsewhere, 1);
        assert!(!v.stale);
    }

    #[test]
    fn no_edits_is_nothing_shown_and_another_version_is_stale() {
        let (v, lines) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 3, "result": {"edits": []}}),
            "",
        );
        assert_eq!((v.edits.len(), lines), (0, None));
        // An edit that changes nothing is not shown: none proposed.
        let (v, lines) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 3, "result": {"edits": [edit("file:///a.py", 0, 0, 1, "x")]}}),
            "x\n",
        );
        assert_eq!((v.edits.len(), lines), (0, None));
        // An edit rewriting lines 1-2 with three: any of lines 1 to 3 may be named.
        let mut e = edit("file:///a.py", 1, 0, 0, "a\nb\nc\n");
        e["range"]["end"]["line"] = json!(2);
        let (_, lines) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 3, "result": {"edits": [e]}}),
            "0\n1\n2\n3\n",
        );
        assert_eq!(lines, Some((0, 4)));
        let (v, _) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 4, "result": {"edits": [edit("file:///a.py", 0, 0, 0, "a")]}}),
            "x\n",
        );
        assert!(v.stale);
        let (v, _) = shown_edit(
            &json!({"uri": "file:///a.py", "version": 3, "result": null}),
            "x\n",
        );
        assert_eq!(v, Default::default());
    }
}
