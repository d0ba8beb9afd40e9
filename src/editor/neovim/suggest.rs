//! A line case through Neovim: the case's lines placed in the buffer without the
//! case's line, the line reached as a person does ([`arrival`]), its characters typed
//! at the run's key interval, then the suggestion read: the ghost text Neovim drew for
//! the request it sent after the last key (waited for as sent, then answered), a
//! plugin's ghost text from its own namespaces until the display deadline, or lsp-ai's
//! first popup entry. The readiness rule is waited for first when asked.

use std::time::{Duration, Instant};

use rmpv::Value as Mp;
use serde_json::Value;

use super::NeovimSession;
use super::protocol::{Answer, COMPLETION, Drawn, INLINE, State, json_to_mp};
use super::requests::Wanted;
use super::shown::Shown;
use crate::editor::conditions::Trigger;
use crate::editor::document::{Document, Position, PositionEncoding};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::options::{RETRY_INTERVAL, Timed};
use crate::editor::profile::{DialectKind, ReadinessRule};
use crate::editor::suggestions::{InlineSuggestion, Suggestions};

/// How long Neovim has to reach a state it was put in (a mode, the typed text), on top
/// of the keys' own interval.
pub(super) const STATE_WAIT: Duration = Duration::from_secs(5);
/// The pause between two reads of a plugin's ghost text before the display deadline.
const SHOWN_POLL: Duration = Duration::from_millis(10);

/// Where a case stands in its document: `rel`'s text, its buffer, the cursor's byte
/// offset and the start of its line.
pub(super) struct CaseAt {
    pub text: String,
    pub buf: i64,
    pub at: usize,
    pub line_start: usize,
}

impl CaseAt {
    /// The cursor's byte column.
    pub fn col(&self) -> usize {
        self.at - self.line_start
    }

    /// The document's lines.
    pub fn lines(&self) -> Vec<String> {
        self.text.split('\n').map(str::to_string).collect()
    }
}

/// Where an inline request was asked: the buffer, the placement's epoch, the cursor's
/// row, its line as it stands and the cursor's byte column in it.
pub(super) struct Asked {
    pub buf: i64,
    pub epoch: u64,
    pub row: usize,
    pub line: String,
    pub col: usize,
}

/// A line case placed in its buffer, to be typed.
struct LineCase {
    /// The document's text with the line.
    text: String,
    buf: i64,
    /// The placement's epoch.
    epoch: u64,
    row: usize,
    /// The line's characters before the cursor (typed) and after it (placed).
    typed: String,
    rest: String,
    /// The keys that open the line, and the number of lines placed without it.
    keys: &'static str,
    placed: usize,
}

impl LineCase {
    /// The line as it stands once typed.
    fn line(&self) -> String {
        format!("{}{}", self.typed, self.rest)
    }

    /// Typing reached the case's line: insert mode, the cursor after the typed text.
    fn typed_in(&self, s: &State) -> bool {
        s.mode.starts_with('i')
            && s.row == self.row as i64
            && s.col == self.typed.len() as i64
            && s.line == self.line()
            && s.lines == self.placed as i64 + i64::from(self.keys != "i")
    }
}

impl NeovimSession {
    /// [`Self::suggest`] after the profile's readiness rule: progress ended or the
    /// server quiescent, or (rule `stable`) asked again until two answers in a row are
    /// the same, as typist's own client does.
    pub async fn suggest_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let deadline = self.wait_for_readiness().await;
        let r = self.profile.readiness.clone();
        let mut last = self.suggest(rel, cursor).await?;
        if r.rule == ReadinessRule::Stable {
            for _ in 1..r.max_tries {
                if Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(RETRY_INTERVAL).await;
                let next = self.suggest(rel, cursor).await?;
                let same = next.value == last.value;
                last = next;
                if same {
                    break;
                }
            }
        }
        Ok(last)
    }

    /// What every case begins with: a broken editor refused, old notifications
    /// taken in, and where the case stands in `rel`.
    pub(super) fn begin_case(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<CaseAt, SessionError> {
        if let Some(why) = &self.broken {
            return Err(EditorError::Failed(why.clone()).into());
        }
        self.drain()?;
        let text = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        let buf = self.bufs[rel];
        let at = Document::offset_of(&text, cursor, PositionEncoding::Utf8);
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        Ok(CaseAt {
            text,
            buf,
            at,
            line_start,
        })
    }

    /// Leaves insert mode and puts `new_lines` in `buf` (`typist.place`), sending only
    /// the lines from the first that differs from what `rel`'s buffer holds, with the
    /// cursor at byte `col` of `row` in normal mode; returns the placement's epoch.
    /// `rel`'s buffer is then taken to hold `lines`.
    pub(super) async fn place_lines(
        &mut self,
        rel: &str,
        buf: i64,
        new_lines: &[String],
        (row, col): (i64, i64),
        lines: Vec<String>,
    ) -> Result<u64, SessionError> {
        let start = self.lines.get(rel).map_or(0, |old| {
            old.iter()
                .zip(new_lines)
                .take_while(|(a, b)| a == b)
                .count()
        });
        let start = start.min(new_lines.len().saturating_sub(1));
        self.leave_insert_mode(buf).await?;
        let tail: Vec<Mp> = new_lines[start..]
            .iter()
            .map(|l| Mp::from(l.as_str()))
            .collect();
        let epoch = self
            .lua(
                "return typist.place(...)",
                vec![
                    Mp::from(buf),
                    Mp::from(start as i64),
                    Mp::Array(tail),
                    Mp::from(row),
                    Mp::from(col),
                ],
            )
            .await?;
        let epoch = epoch
            .as_u64()
            .ok_or_else(|| self.broke(format!("neovim: typist.place gave no epoch: {epoch}")))?;
        self.lines.insert(rel.to_string(), lines);
        Ok(epoch)
    }

    /// Places the case in the buffer, arrives at its line as a person does (see
    /// [`arrival`]), types the line's characters, and reads the ghost text Neovim shows
    /// for the request sent after the last key. Nothing shown by a plugin that signs
    /// in: its sign-in is asked (`signed_in.rs`).
    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let r = self.suggest_shown(rel, cursor).await;
        self.signed_in_or(r).await
    }

    async fn suggest_shown(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let case = self.place_case(rel, cursor).await?;
        // A plugin's ghost text is told from an old one by its extmarks: what is shown
        // before typing is not the answer.
        let before = if self.app.namespaces.is_empty() {
            Shown::default()
        } else {
            self.shown_now(case.buf).await?
        };
        let state = self.type_line(&case).await?;
        let t0 = Instant::now();
        let asked = Asked {
            buf: case.buf,
            epoch: case.epoch,
            row: case.row,
            line: case.line(),
            col: case.typed.len(),
        };
        self.read_inline(&asked, &state, &case.text, &before, t0)
            .await
    }

    /// What Neovim shows for the inline request sent once `state` was reached (the
    /// keys typed, insert mode entered): a plugin's ghost text (compared with `before`),
    /// lsp-ai's first popup entry, or Neovim's own ghost text for the request of
    /// `asked`'s placement.
    pub(super) async fn read_inline(
        &mut self,
        asked: &Asked,
        state: &State,
        text: &str,
        before: &Shown,
        t0: Instant,
    ) -> Result<Timed<Suggestions>, SessionError> {
        self.check_errors(state)?;
        if !self.app.namespaces.is_empty() {
            return self.wait_shown(asked.buf, t0, before).await;
        }
        let want = Wanted {
            method: INLINE,
            buf: asked.buf,
            epoch: asked.epoch,
            version: state.version,
            row: asked.row as i64,
        };
        if self.profile.dialect == DialectKind::LspAi {
            let want = Wanted {
                method: COMPLETION,
                ..want
            };
            return self
                .ask_lsp_ai(asked.buf, want, &asked.line, asked.col, t0)
                .await;
        }
        let (answer, latency_ms) = self.answered(asked.buf, want, text, 0, t0).await?;
        let value = if answer.null || answer.items == 0 {
            Suggestions::Inline(Vec::new())
        } else {
            let Drawn::Ghost(shown) = answer.shown else {
                return Err(EditorError::Failed(
                    "neovim: typist_answer's shown: no ghost text read".into(),
                )
                .into());
            };
            // Neovim's own namespace: one highlight, nothing else drawn in it.
            let drawn = shown.compose(true).map_err(EditorError::Failed)?;
            Suggestions::Inline(drawn.into_iter().collect())
        };
        Ok(Timed { value, latency_ms })
    }

    /// The case's lines placed without its line (normal mode first: leaving insert
    /// mode clears the old ghost text and cancels Neovim's pending requests), the
    /// cursor where the keys that open the line are typed.
    async fn place_case(&mut self, rel: &str, cursor: Position) -> Result<LineCase, SessionError> {
        let case = self.begin_case(rel, cursor)?;
        let row = cursor.line as usize;
        let rest = case.text[case.at..]
            .split('\n')
            .next()
            .unwrap_or("")
            .to_string();
        let lines = case.lines();
        let (placed, at_place, keys) = arrival(&lines, row, &rest);
        let epoch = self
            .place_lines(rel, case.buf, &placed, at_place, lines)
            .await?;
        Ok(LineCase {
            typed: case.text[case.line_start..case.at].to_string(),
            buf: case.buf,
            text: case.text,
            epoch,
            row,
            rest,
            keys,
            placed: placed.len(),
        })
    }

    /// Typing as a person: the keys that open the line, then one key per interval;
    /// the state once Neovim holds the typed line.
    async fn type_line(&mut self, case: &LineCase) -> Result<State, SessionError> {
        self.input(case.keys).await?;
        let interval = Duration::from_millis(self.app.key_interval_ms);
        self.type_chars(&case.typed, interval).await?;
        let typed_wait = STATE_WAIT + interval * case.typed.chars().count() as u32;
        self.wait_state(case.buf, typed_wait, |s| case.typed_in(s))
            .await
    }

    /// lsp-ai through Neovim: the popup asked for at once after the last key (as
    /// `<C-x><C-o>` does; `Invoked`, the trigger typist's own client sends lsp-ai), and
    /// its first entry as shown, inserted at byte `col` of `line`. Nothing shown is
    /// `empty`.
    async fn ask_lsp_ai(
        &mut self,
        buf: i64,
        want: Wanted,
        line: &str,
        col: usize,
        t0: Instant,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let after = self.requests.last_seq();
        self.lua(
            "typist.complete(...)",
            vec![json_to_mp(&Trigger::Invoked.context())],
        )
        .await?;
        let text = self.placed_text(buf);
        let (answer, latency_ms) = self.answered(buf, want, &text, after, t0).await?;
        let first = answer.shown.items().first();
        let value = Suggestions::Inline(
            first
                .and_then(|it| {
                    it.get("textEdit")
                        .and_then(|e| e.get("newText"))
                        .or_else(|| it.get("insertText"))
                        .and_then(Value::as_str)
                })
                .map(|t| inserted_at(line, col, t))
                .into_iter()
                .collect(),
        );
        Ok(Timed { value, latency_ms })
    }

    /// The answer to the request Neovim sent for `want` (the first after request
    /// `after`), with its latency from `t0`; the editor's state is checked, and a
    /// failed handler (the editor is then broken) or the server's error is the case's
    /// error.
    pub(super) async fn answered(
        &mut self,
        buf: i64,
        want: Wanted,
        text: &str,
        after: u64,
        t0: Instant,
    ) -> Result<(Answer, f64), SessionError> {
        let seq = self.wait_sent(want, text, after).await?;
        let answer = self.wait_answer(want.method, seq).await?;
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let state = self.state(buf).await?;
        self.check_errors(&state)?;
        if let Some(e) = &answer.handler_error {
            let what = if want.method == INLINE {
                "inline completion"
            } else {
                "completion"
            };
            return Err(self.broke(format!("neovim: {what} handler failed: {e}")));
        }
        if let Some(e) = &answer.error {
            return Err(EditorError::Failed(format!(
                "{}: {} failed (through neovim): {e}",
                self.profile.name, want.method
            ))
            .into());
        }
        Ok((answer, latency_ms))
    }

    /// The document's text as the case placed it (for the request's hash).
    pub(super) fn placed_text(&self, buf: i64) -> String {
        self.bufs
            .iter()
            .find(|(_, b)| **b == buf)
            .and_then(|(rel, _)| self.texts.get(rel))
            .cloned()
            .unwrap_or_default()
    }

    /// What Neovim shows at the cursor now, in the namespaces read.
    pub(super) async fn shown_now(&mut self, buf: i64) -> Result<Shown, SessionError> {
        self.reply("typist.shown", vec![Mp::from(buf)]).await
    }

    /// A plugin's ghost text: the first suggestion drawn at the cursor by marks other than
    /// those shown before typing, polled until the display deadline.
    async fn wait_shown(
        &mut self,
        buf: i64,
        t0: Instant,
        before: &Shown,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let deadline = t0 + Duration::from_millis(self.app.display_deadline_ms);
        let filtered = !self.app.highlights.is_empty();
        loop {
            let now = self.shown_now(buf).await?;
            if now.draws() && now.marks != before.marks {
                let drawn = now.compose(filtered);
                let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
                let state = self.state(buf).await?;
                self.check_errors(&state)?;
                if let Some(s) = drawn.map_err(EditorError::Failed)? {
                    return Ok(Timed {
                        value: Suggestions::Inline(vec![s]),
                        latency_ms,
                    });
                }
            }
            if Instant::now() >= deadline {
                let state = self.state(buf).await?;
                self.check_errors(&state)?;
                return Err(EditorError::NothingShown(format!(
                    "nothing shown within the display deadline ({} ms)",
                    self.app.display_deadline_ms
                ))
                .into());
            }
            tokio::time::sleep(SHOWN_POLL).await;
        }
    }
}

/// How typing reaches line `row` of `lines` (what the buffer holds after typing; `rest`:
/// the line's text after the cursor), as a person typing the file from the top does
/// ([`crate::editor::kind::Arrival::EnterAbove`]): the lines placed, the cursor's place
/// in normal mode, and the keys that open the line in insert mode. The line is left out
/// and opened by Enter at the end of the line above (`A<CR>`: `InsertEnter`, then
/// `CursorMovedI` and `TextChangedI`), or above the first line (`O`); the only line of a
/// file, or a line with text after the cursor, is placed without the typed characters
/// and typed into from its start (`i`).
fn arrival(lines: &[String], row: usize, rest: &str) -> (Vec<String>, (i64, i64), &'static str) {
    let row = row.min(lines.len().saturating_sub(1));
    if rest.is_empty() && row > 0 {
        let mut placed = lines.to_vec();
        placed.remove(row);
        return (placed, (row as i64 - 1, 0), "A<CR>");
    }
    if rest.is_empty() && lines.len() > 1 {
        return (lines[1..].to_vec(), (0, 0), "O");
    }
    let mut placed = lines.to_vec();
    if let Some(l) = placed.get_mut(row) {
        *l = rest.to_string();
    }
    (placed, (row as i64, 0), "i")
}

/// `insert` put at byte `col` of `line`: the line as it would stand after accepting,
/// and the lines below it.
fn inserted_at(line: &str, col: usize, insert: &str) -> InlineSuggestion {
    let col = col.min(line.len());
    let text = format!(
        "{}{}{}",
        &line[..col],
        insert.replace("\r\n", "\n"),
        &line[col..]
    );
    let first = text.split('\n').next().unwrap_or("").to_string();
    InlineSuggestion { line: first, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_reached_by_enter_at_the_end_of_the_line_above() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The typed prefix on its own line, below two lines and above one.
        let (placed, at, keys) = arrival(&l(&["a", "b", "pr", "c"]), 2, "");
        assert_eq!((placed, at, keys), (l(&["a", "b", "c"]), (1, 0), "A<CR>"));
        // The first line, with lines after it: opened above them.
        let (placed, at, keys) = arrival(&l(&["pr", "c"]), 0, "");
        assert_eq!((placed, at, keys), (l(&["c"]), (0, 0), "O"));
        // The only line: typed into from its start.
        let (placed, at, keys) = arrival(&l(&["pr"]), 0, "");
        assert_eq!((placed, at, keys), (l(&[""]), (0, 0), "i"));
        // Text after the cursor stays; the typed characters go before it.
        let (placed, at, keys) = arrival(&l(&["a", "pr)"]), 1, ")");
        assert_eq!((placed, at, keys), (l(&["a", ")"]), (1, 0), "i"));
    }

    #[test]
    fn an_entry_is_inserted_at_the_cursor() {
        let s = inserted_at("let x = ;", 8, "a +\r\nb");
        assert_eq!(s.line, "let x = a +");
        assert_eq!(s.text, "let x = a +\nb;");
    }
}
