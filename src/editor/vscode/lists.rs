//! Completion lists through VS Code's suggest widget (token cases). The case's document
//! is placed as for a line (the disk copy, File: Revert File) and the cursor put at the
//! token's start with Go to Line; asking is the command Trigger Suggest from the palette
//! (VS Code sends it as `Invoked`: with `editor.suggestOnTriggerCharacters` off, as the
//! conditions have it, no request is ever sent as a trigger character's); typing is key
//! events, one per interval, and VS Code filters the widget (and asks again for an
//! incomplete list) on its own.
//!
//! The fixture extension (dialect `completion`) shows each completion request's fate in
//! the status bar as for inline requests, and the server's own items in its label, so
//! the case's answer is the first request at the cursor after the ask, an error the
//! case's error and no status within the request deadline a timeout. What is read is
//! the widget: its rows in display order (after VS Code's own filtering and sorting),
//! paged through with Page Down, since only the rows in view exist in the page. Each row
//! is named by the server's item of that label (the first not yet named, in the
//! server's order); a row no item of the server's answer has (another provider's) is the
//! case's error, never dropped.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::drawn::{editor_silent, request_failed, request_timed_out};
use super::instance::PAGE_POLL;
use super::keys::{CTRL, PAGE_DOWN, PAGE_UP, SPACE};
use super::page::{Fate, UI_WITHIN};
use super::scripts::expand_tabs;
use super::scripts::{AFTER_RENDER, LIST, WIDGET};
use super::ui::LINE_SHOWS_WITHIN;
use super::{EDITOR_DELAY, ListState, VscodeSession, failed};
use crate::editor::conditions::Trigger;
use crate::editor::document::Position;
use crate::editor::error::{EditorError, SessionError};
use crate::editor::options::Timed;
use crate::editor::profile::ReadinessRule;
use crate::editor::ranking::ShownList;
use crate::editor::workspace;

/// Ctrl+Space is pressed at most this many times for one ask.
const TRIGGER_TRIES: u32 = 3;
/// The pause before asking again under the `stable` readiness rule (as typist's own
/// client pauses).
const RETRY_INTERVAL: Duration = crate::editor::options::RETRY_INTERVAL;

impl VscodeSession {
    /// The completion trigger characters VS Code's requests are sent with: none, since
    /// Trigger Suggest asks as `Invoked` (the conditions turn off asking on a typed
    /// trigger character, which would open the widget while a line is typed).
    pub fn trigger_characters(&self) -> &[String] {
        &[]
    }

    fn list_state(&self) -> Result<&ListState, SessionError> {
        self.list
            .as_ref()
            .ok_or_else(|| failed("vscode: no completion session is open".into()))
    }

    /// Places what the editor is to hold in `rel` and puts the cursor at `cursor` (a
    /// byte column): a completion session begins.
    pub async fn list_open(&mut self, rel: &str, cursor: Position) -> Result<(), SessionError> {
        let (text, at, line_start) = self.case_text(rel, cursor)?;
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let row = cursor.line as usize;
        let col16 = text[line_start..at].encode_utf16().count();
        // Go to Line's column and the status bar's are visible columns (a tab up to the
        // next stop), since VS Code 1.108.
        let visible = expand_tabs(&text[line_start..at]).chars().count();
        let path = self.root.join(rel);
        workspace::write_creating(&path, &text).map_err(SessionError::file(&path))?;
        self.escape().await?;
        self.revert(rel, &text).await?;
        self.wait_line_count(text.split('\n').count()).await?;
        self.go_to(row + 1, visible + 1).await?;
        let line = text[line_start..line_end].to_string();
        self.wait_line(row, &line).await?;
        self.list = Some(ListState {
            row,
            line,
            col16,
            asked: false,
            items: Vec::new(),
            incomplete: false,
        });
        self.wait_client_ready().await
    }

    /// Asks for the suggest widget at the cursor and reads it once the server answered.
    /// `when_ready`: the session's first ask, under the profile's readiness rule (only
    /// `none` and `stable` can be followed from the page: the others wait on the
    /// server's own notifications, which VS Code does not show).
    pub async fn list_ask(
        &mut self,
        _trigger: &Trigger,
        when_ready: bool,
    ) -> Result<Timed<ShownList>, SessionError> {
        let r = self.profile.readiness.clone();
        let mut last = self.ask_once(when_ready).await?;
        if !when_ready || r.rule != ReadinessRule::Stable {
            return Ok(last);
        }
        let deadline = Instant::now() + Duration::from_millis(r.max_wait_ms);
        for _ in 1..r.max_tries {
            if Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(RETRY_INTERVAL).await;
            self.escape().await?;
            let next = self.ask_once(true).await?;
            let same = next.value == last.value;
            last = next;
            if same {
                break;
            }
        }
        Ok(last)
    }

    /// Ctrl+Space, the answer of the request it made, and the widget read. `first`: the
    /// session's first asks (under the readiness rule), whose widget may take as long as
    /// the request deadline to show (a fresh window's extension host is busy with the
    /// server's first analysis), not only the display deadline.
    async fn ask_once(&mut self, first: bool) -> Result<Timed<ShownList>, SessionError> {
        let seq0 = self.status_seq().await?;
        let t0 = self.trigger_suggest(seq0).await?;
        let answer = self.answered(seq0, t0).await?;
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let within = if first {
            self.profile.request_timeout()
        } else {
            Duration::from_millis(self.app.display_deadline_ms)
        };
        let list = self.shown_list(answer, Some(within)).await?;
        Ok(Timed {
            value: list,
            latency_ms,
        })
    }

    /// Types `text` as keys; then, once something was asked in this session, the widget
    /// as shown and, when VS Code asked again for an incomplete list, that request's
    /// latency (else the widget only filtered what it had).
    pub async fn list_type(
        &mut self,
        text: &str,
    ) -> Result<Option<(ShownList, Option<f64>)>, SessionError> {
        let st = self.list_state()?.clone();
        let seq0 = self.status_seq().await?;
        let interval = Duration::from_millis(self.app.key_interval_ms);
        for c in text.chars() {
            tokio::time::sleep(interval).await;
            self.type_char(c).await?;
        }
        let t0 = Instant::now();
        let col16 = st.col16 + text.encode_utf16().count();
        let (before, after) = st.line.split_at(byte_of(&st.line, st.col16));
        let line = format!("{before}{text}{after}");
        self.wait_line(st.row, &line).await?;
        if let Some(l) = self.list.as_mut() {
            l.line = line;
            l.col16 = col16;
        }
        if !st.asked {
            return Ok(None);
        }
        // VS Code asks again while an incomplete list is shown.
        let open = self.widget_visible().await?;
        if st.incomplete && open {
            let answer = self.answered(seq0, t0).await?;
            let latency = t0.elapsed().as_secs_f64() * 1000.0;
            let list = self.shown_list(answer, None).await?;
            return Ok(Some((list, Some(latency))));
        }
        let list = self.shown_list((st.items, st.incomplete), None).await?;
        Ok(Some((list, None)))
    }

    /// Ctrl+Space, again while VS Code neither asks nor shows the widget (now and then
    /// the first press right after the cursor was placed asks nothing); returns when the
    /// first press was sent.
    async fn trigger_suggest(&mut self, seq0: u64) -> Result<Instant, SessionError> {
        let mut tries = 0;
        let first = Instant::now();
        loop {
            tries += 1;
            self.press(SPACE, CTRL).await?;
            let t0 = Instant::now();
            if tries == TRIGGER_TRIES {
                return Ok(first);
            }
            while t0.elapsed() < LINE_SHOWS_WITHIN {
                if self.status_seq().await? > seq0 || self.widget_visible().await? {
                    // Timed from the first press: its request may be the one answered.
                    return Ok(first);
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            tracing::debug!(tries, "vscode: Ctrl+Space asked nothing; pressing it again");
        }
    }

    /// The server's answer (its items, in its order, and whether it is incomplete) to
    /// the first completion request at the cursor after `seq0`: an error is the case's,
    /// no answer within the request deadline a timeout.
    async fn answered(
        &mut self,
        seq0: u64,
        t0: Instant,
    ) -> Result<(Vec<Value>, bool), SessionError> {
        let st = self.list_state()?.clone();
        let deadline = t0 + self.profile.request_timeout() + EDITOR_DELAY;
        loop {
            let r = self.read().await?;
            if let Some(s) = r.status()
                && s.seq > seq0
                && s.line == st.row as u64
                && s.character == st.col16 as u64
            {
                match s.fate {
                    Fate::Error(m) => return Err(request_failed(&self.profile.name, &m)),
                    Fate::Timeout => {
                        return Err(request_timed_out(&self.profile, "completion"));
                    }
                    Fate::Items(_) => {
                        // The status and the list in one reading: a newer request may
                        // change both between two.
                        let both = self.vs.eval(&self.tab, LIST).await?;
                        if both["status"].as_str() != Some(r.status.as_str()) {
                            continue;
                        }
                        let text = both["list"].as_str().unwrap_or("");
                        let list: Value = match serde_json::from_str(text) {
                            Ok(v) => v,
                            Err(e) => {
                                return Err(failed(format!(
                                    "vscode: the fixture's list for completion request {} is not JSON ({e}; {} bytes: {:?}…)",
                                    s.seq,
                                    text.len(),
                                    text.chars().take(200).collect::<String>()
                                )));
                            }
                        };
                        if list["seq"].as_u64() != Some(s.seq) {
                            return Err(failed(format!(
                                "vscode: the fixture showed no list for completion request {} (its list is request {}'s; the page shows {r})",
                                s.seq, list["seq"]
                            )));
                        }
                        let items = list["items"].as_array().cloned().unwrap_or_default();
                        let incomplete = list["incomplete"].as_bool().unwrap_or(false);
                        if let Some(l) = self.list.as_mut() {
                            l.asked = true;
                            l.items = items.clone();
                            l.incomplete = incomplete;
                        }
                        return Ok((items, incomplete));
                    }
                    // Cancelled (VS Code asks again) or still asking: wait.
                    Fate::Cancelled | Fate::Asking => {}
                }
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Err(editor_silent(&self.profile, "completion", &r));
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// The widget once it has settled (two looks in a row the same), its rows named by
    /// the server's `items`. `fresh`: the widget was just opened for this answer, so it
    /// must show within that time unless the answer had no items (else within the
    /// display deadline, or it is closed: nothing left matches what was typed).
    async fn shown_list(
        &mut self,
        (items, incomplete): (Vec<Value>, bool),
        fresh: Option<Duration>,
    ) -> Result<ShownList, SessionError> {
        let display = Duration::from_millis(self.app.display_deadline_ms);
        let within = fresh.unwrap_or(display);
        let deadline = Instant::now() + within;
        loop {
            let settled = self
                .settled_widget(&items, fresh.is_some(), within, deadline)
                .await?;
            // Asked by hand, VS Code keeps the earlier rows (dimmed, "frozen") once nothing
            // matches what was typed: the user is shown no entry for it, as Neovim's popup
            // and typist's own client show none.
            let labels = if settled["frozen"] == Value::Bool(true) {
                Vec::new()
            } else {
                self.widget_labels(settled).await?
            };
            match name_rows(&labels, items.clone()) {
                Ok(shown) => {
                    return Ok(ShownList {
                        items: shown,
                        listed: items.len(),
                        incomplete,
                    });
                }
                // On a loaded machine the widget may still show the rows it had before
                // the last keys filtered them: read again until the display deadline.
                Err(_) if Instant::now() < deadline => {
                    self.vs.eval(&self.tab, AFTER_RENDER).await?;
                }
                Err(label) => {
                    return Err(failed(format!(
                        "vscode: the suggest widget shows {label:?}, which {} did not list (another provider's entry)",
                        self.profile.name
                    )));
                }
            }
        }
    }

    /// The widget once it has settled: two looks in a row the same, each after the page
    /// rendered what it had pending. `fresh`: the widget was just opened for this answer,
    /// so it must show by `deadline` unless the answer had no items.
    async fn settled_widget(
        &mut self,
        items: &[Value],
        fresh: bool,
        within: Duration,
        deadline: Instant,
    ) -> Result<Value, SessionError> {
        let mut last: Option<Value> = None;
        loop {
            let w = self.vs.eval(&self.tab, WIDGET).await?;
            let visible = w["visible"] == Value::Bool(true);
            let rows = w["rows"].as_array().map_or(0, Vec::len);
            // "Loading..." until every provider has answered; "No suggestions." is a
            // settled empty widget.
            let message = w["message"].as_str().unwrap_or("");
            let loading =
                visible && rows == 0 && (message.is_empty() || message.starts_with("Loading"));
            let waiting = loading || (fresh && !visible && !items.is_empty());
            if !waiting && last.as_ref() == Some(&w) {
                return Ok(w);
            }
            if Instant::now() >= deadline {
                if waiting && !items.is_empty() {
                    return Err(EditorError::NothingShown(format!(
                        "the suggest widget did not show the server's {} items within {} ms",
                        items.len(),
                        within.as_millis()
                    ))
                    .into());
                }
                return Ok(w);
            }
            last = Some(w);
            tokio::time::sleep(PAGE_POLL * 2).await;
            self.vs.eval(&self.tab, AFTER_RENDER).await?;
        }
    }

    /// Whether the suggest widget is shown now.
    async fn widget_visible(&mut self) -> Result<bool, SessionError> {
        Ok(self.vs.eval(&self.tab, WIDGET).await?["visible"] == Value::Bool(true))
    }

    /// Every entry's label of the widget's virtual list, in display order (none when it
    /// is not shown), from `page` (the widget as last read) and paged through with Page
    /// Down and Page Up (the focus moves; the next key typed filters from the top again).
    async fn widget_labels(&mut self, mut page: Value) -> Result<Vec<String>, SessionError> {
        if page["visible"] != Value::Bool(true) {
            return Ok(Vec::new());
        }
        // A list still filling in (another answer of an incomplete list, on a loaded
        // machine) changes its size while it is paged through: it is read again from
        // where it stands, at most `WIDGET_REREADS` times.
        let mut rereads = 0;
        'read: loop {
            let size = page["size"].as_u64().unwrap_or(0) as usize;
            let mut labels: Vec<Option<String>> = vec![None; size];
            let mut deadline = Instant::now() + UI_WITHIN;
            let mut progress = 0;
            loop {
                let mut lowest = usize::MAX;
                for r in page["rows"].as_array().into_iter().flatten() {
                    let Some(i) = r["i"].as_u64().map(|i| i as usize) else {
                        continue;
                    };
                    lowest = lowest.min(i);
                    if let (Some(l), Some(slot)) = (r["label"].as_str(), labels.get_mut(i)) {
                        *slot = Some(l.to_string());
                    }
                }
                let Some(missing) = labels.iter().position(Option::is_none) else {
                    return Ok(labels.into_iter().flatten().collect());
                };
                let seen = labels.iter().filter(|l| l.is_some()).count();
                if seen > progress {
                    // A long list is read page by page: the deadline is for each page.
                    progress = seen;
                    deadline = Instant::now() + UI_WITHIN;
                }
                if Instant::now() >= deadline {
                    return Err(failed(format!(
                        "vscode: the suggest widget's {size} entries could not be read ({seen} seen, none more in {} ms)",
                        UI_WITHIN.as_millis()
                    )));
                }
                if missing < lowest {
                    self.press(PAGE_UP, 0).await?;
                } else {
                    self.press(PAGE_DOWN, 0).await?;
                }
                tokio::time::sleep(PAGE_POLL).await;
                page = self.vs.eval(&self.tab, WIDGET).await?;
                let visible = page["visible"] == Value::Bool(true);
                if !visible || page["size"].as_u64().unwrap_or(0) as usize != size {
                    if visible && rereads < WIDGET_REREADS {
                        rereads += 1;
                        tracing::debug!(
                            was = size,
                            now = %page["size"],
                            "vscode's suggest widget changed while it was read; reading it again"
                        );
                        continue 'read;
                    }
                    return Err(failed(
                        "vscode: the suggest widget changed while it was read".into(),
                    ));
                }
            }
        }
    }
}

/// How many times a suggest widget whose size changed while it was paged through is
/// read again before the case is an error.
const WIDGET_REREADS: usize = 3;

/// The byte offset of UTF-16 column `col16` in `line`.
fn byte_of(line: &str, col16: usize) -> usize {
    let mut n = 0;
    for (i, c) in line.char_indices() {
        if n >= col16 {
            return i;
        }
        n += c.len_utf16();
    }
    line.len()
}

/// The label VS Code draws for an LSP item (a string, or `CompletionItemLabel`'s).
fn label_of(item: &Value) -> Option<&str> {
    item["label"].as_str()
}

/// The server's item for each row label, in display order: the first item of that
/// label not yet named, in the server's order. `Err(label)`: a row no item has.
fn name_rows(labels: &[String], items: Vec<Value>) -> Result<Vec<Value>, String> {
    let mut left: Vec<Option<Value>> = items.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(labels.len());
    for l in labels {
        let slot = left
            .iter_mut()
            .find(|s| s.as_ref().and_then(label_of) == Some(l.as_str()))
            .ok_or_else(|| l.clone())?;
        out.extend(slot.take());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_row_is_named_by_the_servers_item_of_its_label_in_the_servers_order() {
        let items = vec![
            json!({"label": "print", "insertText": "print"}),
            json!({"label": "path", "insertText": "path"}),
            json!({"label": "print", "insertText": "print()"}),
        ];
        let rows = ["path", "print", "print"].map(String::from);
        let named = name_rows(&rows, items.clone()).unwrap();
        assert_eq!(
            named,
            vec![items[1].clone(), items[0].clone(), items[2].clone()]
        );
        // A row the server did not list: another provider's, never dropped.
        let rows = ["path", "pass"].map(String::from);
        assert_eq!(name_rows(&rows, items), Err("pass".to_string()));
    }

    #[test]
    fn utf16_columns_are_byte_offsets_of_the_line() {
        assert_eq!(byte_of("aé𝄞b", 0), 0);
        assert_eq!(byte_of("aé𝄞b", 2), 3);
        assert_eq!(byte_of("aé𝄞b", 4), 7);
        assert_eq!(byte_of("ab", 9), 2);
    }
}
