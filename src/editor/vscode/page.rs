//! The page as typist reads it: what `read.js` returns, typed ([`Page`], read once per
//! look), the fixture's status-bar text about the last request ([`Status`], [`Fate`])
//! and its answer, the ghost text shown, and the waits on what the page shows.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::instance::PAGE_POLL;
use super::scripts::{READ, expand_tabs};
use super::{EDITOR_DELAY, VscodeSession, failed};
use crate::editor::error::SessionError;
use crate::editor::suggestions::InlineSuggestion;

/// How long a key's effect (a quick-open list, the cursor at its line, a reverted
/// file's text) may take to show. Each wait ends as soon as the page shows it; on two
/// cores busy with a second test beside VS Code, File: Revert File's text once took
/// over 10 s to show (the whole suite, 2026-11-29).
pub(super) const UI_WITHIN: Duration = Duration::from_secs(20);

/// What the page shows (`read.js`), read in one script.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub(super) struct Page {
    /// The fixture's status bar text (`typist-inline ...`; empty when not shown).
    pub status: String,
    /// The fixture's language client's state (`N STATE`).
    pub client: Option<String>,
    /// The fixture's last answer: JSON `{seq, lines}` (its status item's label).
    pub answer: Option<String>,
    /// The fixture's status of its last next-edit request (`typist-next ...`, an item of
    /// its own; empty before the first).
    pub next_status: String,
    /// The fixture's last next edit's answer: JSON `{seq, kind, uri, version, result}`.
    pub next_answer: Option<String>,
    /// The cursor's line and column (1-based) in the status bar.
    pub row: Option<u64>,
    pub col: Option<u64>,
    /// A ghost text is shown in the focused editor.
    pub ghost: bool,
    /// The view line holding the ghost text, as shown.
    pub line: String,
    /// The lines of the ghost text's view zone below.
    pub further: Vec<String>,
    /// The cursor's line as typed (the ghost text left out); `None` without a focused
    /// editor or when its line is not drawn.
    pub cur: Option<String>,
    /// The lines (1-based, as numbers drawn) the focused editor's inline-edit gutter
    /// indicators name: an inline edit is shown there.
    pub edit_lines: Vec<String>,
}

impl std::fmt::Display for Page {
    /// The reading as JSON, for errors and logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = serde_json::to_value(self).unwrap_or_default();
        write!(f, "{v}")
    }
}

impl Page {
    /// The fixture's status, when it shows one about a request.
    pub fn status(&self) -> Option<Status> {
        parse_status(INLINE, &self.status)
    }

    /// The fixture's status about its last next-edit request, once it has had one.
    pub fn next_status(&self) -> Option<Status> {
        parse_status(NEXT, &self.next_status)
    }

    /// The newest request's number either status names (0 before any): a request asked
    /// after this reading has a larger one.
    pub fn last_seq(&self) -> u64 {
        let seq = |s: Option<Status>| s.map_or(0, |s| s.seq);
        seq(self.status()).max(seq(self.next_status()))
    }

    /// The fixture's answer for next-edit request `seq` (JSON), from its own item.
    pub fn next_answer_of(&self, seq: u64) -> Option<Value> {
        label_of(self.next_answer.as_deref(), seq).filter(|a| a["kind"] == "next_edit")
    }

    /// The fixture's status (and its next edits', once it has had one) as JSON (a
    /// string), for errors.
    pub fn status_json(&self) -> Value {
        if self.next_status.is_empty() {
            return Value::String(self.status.clone());
        }
        Value::String(format!("{}; {}", self.status, self.next_status))
    }

    /// The fixture's answer for request `seq`: the lines that accepting its first item
    /// would leave (the item's label, `{"seq": N, "lines": ...}`).
    pub fn answer_lines(&self, seq: u64) -> Option<String> {
        self.answer_of(seq)?["lines"].as_str().map(str::to_string)
    }

    /// The fixture's last answer when it is request `seq`'s (JSON).
    pub fn answer_of(&self, seq: u64) -> Option<Value> {
        label_of(self.answer.as_deref(), seq)
    }

    /// The line as shown and its further lines; `None` when no ghost text is shown at
    /// the cursor's line.
    pub fn shown(&self) -> Option<InlineSuggestion> {
        let further: Vec<String> = self.further.iter().map(|l| nbsp(l)).collect();
        if !self.ghost && further.is_empty() {
            return None;
        }
        let first = nbsp(&self.line);
        let mut text = first.clone();
        for l in &further {
            text.push('\n');
            text.push_str(l);
        }
        Some(InlineSuggestion { line: first, text })
    }
}

/// What the fixture's status bar item says about the last request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Status {
    pub seq: u64,
    pub line: u64,
    pub character: u64,
    pub fate: Fate,
}

/// What became of a request, as the fixture (where it is sent and answered) tells.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fate {
    /// Sent, not answered yet.
    Asking,
    /// Answered with this many items.
    Items(u64),
    /// The server's error, or its exit while asked.
    Error(String),
    /// Not answered within the profile's request deadline, counted by the fixture from
    /// the request's sending (the editor's delays before and after are not in it).
    Timeout,
    /// VS Code cancelled it (it asks again).
    Cancelled,
}

/// A status item's label (JSON) when it is request `seq`'s answer.
fn label_of(label: Option<&str>, seq: u64) -> Option<Value> {
    let a: Value = serde_json::from_str(label?).ok()?;
    (a["seq"].as_u64() == Some(seq)).then_some(a)
}

/// The name the fixture's status of inline requests (and completion lists) begins with.
const INLINE: &str = "typist-inline ";
/// The name the fixture's status of next-edit requests begins with.
const NEXT: &str = "typist-next ";

/// The fixture's status bar text: `NAME SEQ LINE:CHARACTER FATE`, `NAME` being `name`.
fn parse_status(name: &str, s: &str) -> Option<Status> {
    let rest = s.trim().strip_prefix(name)?;
    let mut w = rest.splitn(3, ' ');
    let seq = w.next()?.parse().ok()?;
    let (line, character) = w.next()?.split_once(':')?;
    let fate = w.next()?;
    let fate = if fate == "cancelled" {
        Fate::Cancelled
    } else if fate == "asking" {
        Fate::Asking
    } else if fate.starts_with("timeout") {
        Fate::Timeout
    } else if let Some(m) = fate.strip_prefix("error") {
        Fate::Error(m.trim().to_string())
    } else {
        Fate::Items(fate.parse().ok()?)
    };
    Some(Status {
        seq,
        line: line.parse().ok()?,
        character: character.parse().ok()?,
        fate,
    })
}

/// Whether the ghost text read (`shown`: the cursor's line and the further lines, as
/// drawn) draws `lines`: each line with its tabs drawn as spaces.
pub(super) fn draws(shown: &str, lines: &str) -> bool {
    let drawn: Vec<&str> = shown.split('\n').collect();
    let want: Vec<String> = lines.split('\n').map(expand_tabs).collect();
    drawn.len() == want.len() && drawn.iter().zip(&want).all(|(a, b)| *a == b)
}

fn nbsp(s: &str) -> String {
    s.replace('\u{a0}', " ")
}

impl VscodeSession {
    /// What the page shows now.
    pub(super) async fn read(&mut self) -> Result<Page, SessionError> {
        let v = self.vs.eval(&self.tab, READ).await?;
        serde_json::from_value(v).map_err(|e| failed(format!("vscode: reading the page: {e}")))
    }

    /// The sequence number of the fixture's last request (0 before any).
    pub(super) async fn status_seq(&mut self) -> Result<u64, SessionError> {
        Ok(self.read().await?.last_seq())
    }

    /// Whether the page's `expr` becomes true within `within`.
    pub(super) async fn page_shows(
        &mut self,
        expr: &str,
        within: Duration,
    ) -> Result<bool, SessionError> {
        let deadline = Instant::now() + within;
        loop {
            if self.vs.eval(&self.tab, expr).await? == Value::Bool(true) {
                return Ok(true);
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
    }

    /// Waits until the page's `expr` is true (within [`UI_WITHIN`]); else the session is
    /// broken, the error naming `what`.
    pub(super) async fn wait_page(&mut self, what: &str, expr: &str) -> Result<(), SessionError> {
        if self.page_shows(expr, UI_WITHIN).await? {
            return Ok(());
        }
        let why = format!(
            "vscode: {what} did not show within {} ms",
            UI_WITHIN.as_millis()
        );
        self.broken = Some(why.clone());
        Err(failed(why))
    }

    /// With the fixture: waits until its language client can be asked (its client item
    /// says `ready`). A server that exited (a crash, after its answer or in the middle
    /// of one) is started again by the client, which drops its providers meanwhile and
    /// registers them once the new server is initialized; VS Code asks no one in between
    /// and does not ask again once they are back, so a case's keys typed then would be
    /// asked of no one. typist's own client likewise starts a server again before the
    /// next case. A fixture that shows no client item is taken as ready.
    pub(super) async fn wait_client_ready(&mut self) -> Result<(), SessionError> {
        if !self.fixture {
            return Ok(());
        }
        let within = Duration::from_millis(self.profile.init_timeout_ms) + EDITOR_DELAY;
        let deadline = Instant::now() + within;
        loop {
            let r = self.read().await?;
            let state = r.client.as_deref().unwrap_or("ready");
            if state.ends_with(" ready") || state == "ready" {
                return Ok(());
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Err(failed(format!(
                    "vscode: the fixture's language client was not ready to be asked within {} ms of the case (it shows {state:?}: the server it starts again did not come up)",
                    within.as_millis()
                )));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(v: Value) -> Page {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_fixture_status_says_seq_position_and_fate() {
        let s = parse_status(INLINE, "typist-inline 7 3:12 2").unwrap();
        assert_eq!((s.seq, s.line, s.character), (7, 3, 12));
        assert_eq!(s.fate, Fate::Items(2));
        let e = parse_status(INLINE, "typist-inline 8 0:0 error boom now").unwrap();
        assert_eq!(e.fate, Fate::Error("boom now".into()));
        let f = |t: &str| parse_status(INLINE, t).unwrap().fate;
        assert_eq!(f("typist-inline 9 1:1 cancelled"), Fate::Cancelled);
        assert_eq!(f("typist-inline 10 1:1 asking"), Fate::Asking);
        assert_eq!(f("typist-inline 11 1:1 timeout 300"), Fate::Timeout);
        assert_eq!(parse_status(INLINE, "typist-inline 0 ready"), None);
        assert_eq!(parse_status(NEXT, "typist-inline 7 3:12 2"), None);
    }

    #[test]
    fn a_next_edit_is_read_from_its_own_item_whatever_inline_request_came_after() {
        // Request 2 asked the next edit at 0:16; VS Code then asked the inline provider
        // on its own (request 3, at 1:0), which the inline item shows.
        let r = page(json!({
            "status": "typist-inline 3 1:0 1",
            "answer": r#"{"seq":3,"lines":"x = 1"}"#,
            "next_status": "typist-next 2 0:16 1",
            "next_answer": r#"{"seq":2,"kind":"next_edit","uri":"file:///a.py","version":4,"result":{"edits":[]}}"#,
        }));
        let n = r.next_status().unwrap();
        assert_eq!(
            (n.seq, n.line, n.character, n.fate),
            (2, 0, 16, Fate::Items(1))
        );
        assert_eq!(r.next_answer_of(2).unwrap()["version"], 4);
        assert_eq!(r.next_answer_of(3), None, "another request's");
        assert_eq!(r.last_seq(), 3);
        // An inline answer is never a next edit's, even in the next edits' item.
        let odd = page(
            json!({"next_status": "typist-next 5 0:1 1", "next_answer": r#"{"seq":5,"lines":"x"}"#}),
        );
        assert_eq!(odd.next_answer_of(5), None);
        assert_eq!(page(json!({})).last_seq(), 0);
        assert_eq!(
            page(json!({"next_status": "typist-next 9 0:0 asking"})).last_seq(),
            9
        );
    }

    #[test]
    fn only_a_ghost_text_drawing_this_requests_answer_is_read() {
        let r = page(json!({"answer": r#"{"seq":4,"lines":"\tx = f(1)\n\treturn x"}"#}));
        let lines = r.answer_lines(4).unwrap();
        assert_eq!(lines, "\tx = f(1)\n\treturn x");
        // An older request's answer is not this one's.
        assert_eq!(r.answer_lines(5), None);
        assert_eq!(page(json!({"answer": "null"})).answer_lines(4), None);
        assert_eq!(page(json!({})).answer_lines(4), None);
        // Tabs are drawn as spaces to the next stop of 4.
        assert!(draws("    x = f(1)\n    return x", &lines));
        assert!(!draws("    x = f(1)", &lines), "a line missing");
        assert!(!draws("    x = f(2)\n    return x", &lines), "another text");
        assert!(draws("ab  c", "ab\tc"));
    }

    #[test]
    fn the_shown_line_joins_the_view_zone_lines_with_spaces_restored() {
        let r = page(
            json!({"ghost": true, "line": "x\u{a0}=\u{a0}f(1)", "further": ["\u{a0}\u{a0}return"]}),
        );
        let s = r.shown().unwrap();
        assert_eq!(s.line, "x = f(1)");
        assert_eq!(s.text, "x = f(1)\n  return");
        assert_eq!(
            page(json!({"ghost": false, "line": "x", "further": []})).shown(),
            None
        );
    }

    #[test]
    fn a_reading_of_the_page_is_typed_and_shown_as_read() {
        let v = json!({"status": "typist-inline 3 1:2 1", "client": "1 ready", "answer": null,
            "row": 2, "col": 3, "ghost": false, "line": "", "further": [], "cur": "x",
            "edit_lines": [], "next_status": "", "next_answer": null});
        let r = page(v.clone());
        assert_eq!(r.row, Some(2));
        assert_eq!(r.status().map(|s| s.fate), Some(Fate::Items(1)));
        assert_eq!(r.to_string(), v.to_string());
    }
}
