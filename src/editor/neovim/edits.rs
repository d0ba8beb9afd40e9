//! Edit sessions through Neovim (methodology §13): each change of a session made in its
//! buffer as the person made it (`nvim_buf_set_text` at the change's range, so Neovim's
//! own client sends the `didChange` it computes), the inline suggestion asked where
//! the session stands (insert mode entered at the cursor: Neovim asks on
//! `InsertEnter`), and the next edit asked as copilot-lsp, a Neovim plugin for Copilot's
//! next edits, asks it (`textDocument/copilotInlineEdit`).

use std::time::{Duration, Instant};

use rmpv::Value as Mp;
use serde_json::Value;

use super::NeovimSession;
use super::protocol::mp_to_json;
use super::shown::Shown;
use super::suggest::{Asked, STATE_WAIT};
use crate::editor::document::{Position, PositionEncoding};
use crate::editor::error::{COPILOT_NO_TOKEN, EditorError, SessionError};
use crate::editor::next_edit::{NextEdits, read_inline_edits};
use crate::editor::options::Timed;
use crate::editor::profile::DialectKind;
use crate::editor::request_hash::request_hash_of;
use crate::editor::suggestions::Suggestions;
use crate::lsp::uri;

/// The pause between two looks for a next edit's answer.
const ANSWER_POLL: Duration = Duration::from_millis(5);

/// The (row, byte column) of byte offset `at` of `text`.
fn row_col(text: &str, at: usize) -> (i64, i64) {
    let before = &text[..at];
    let row = before.matches('\n').count();
    let col = at - before.rfind('\n').map_or(0, |i| i + 1);
    (row as i64, col as i64)
}

impl NeovimSession {
    /// Replaces bytes `start..end` of `rel` by `text` in its buffer (in normal mode),
    /// and on disk.
    pub async fn edit(
        &mut self,
        rel: &str,
        start: usize,
        end: usize,
        text: &str,
    ) -> Result<(), SessionError> {
        if let Some(why) = &self.broken {
            return Err(EditorError::Failed(why.clone()).into());
        }
        let old = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        if start > end
            || end > old.len()
            || !old.is_char_boundary(start)
            || !old.is_char_boundary(end)
        {
            return Err(EditorError::Failed(format!(
                "neovim: an edit of {rel} at bytes {start}..{end} lies outside its text"
            ))
            .into());
        }
        let buf = self.bufs[rel];
        self.leave_insert_mode(buf).await?;
        let (srow, scol) = row_col(&old, start);
        let (erow, ecol) = row_col(&old, end);
        let lines: Vec<Mp> = text.split('\n').map(Mp::from).collect();
        self.lua(
            "return typist.edit(...)",
            vec![
                Mp::from(buf),
                Mp::from(srow),
                Mp::from(scol),
                Mp::from(erow),
                Mp::from(ecol),
                Mp::Array(lines),
            ],
        )
        .await?;
        let new = format!("{}{text}{}", &old[..start], &old[end..]);
        self.lines.insert(
            rel.to_string(),
            new.split('\n').map(str::to_string).collect(),
        );
        self.set_text(rel, &new)
    }

    /// The inline suggestion where the session stands in `rel`: the buffer shown, the
    /// cursor placed and insert mode entered there (`i`, or `a` after the line's last
    /// character), and what Neovim shows for the request it sends on `InsertEnter`.
    /// Normal mode again after it, the buffer unchanged.
    pub async fn suggest_here(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let r = self.suggest_here_shown(rel, cursor).await;
        let r = self.signed_in_or(r).await;
        if let Some(&buf) = self.bufs.get(rel)
            && self.broken.is_none()
        {
            self.leave_insert_mode(buf).await?;
        }
        r
    }

    async fn suggest_here_shown(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let case = self.begin_case(rel, cursor)?;
        let row = cursor.line as usize;
        let line = case.text[case.line_start..]
            .split('\n')
            .next()
            .unwrap_or("")
            .to_string();
        let col = case.col();
        self.leave_insert_mode(case.buf).await?;
        // Normal mode's cursor stands on a character: at the line's end it stands on
        // the last one and `a` enters insert mode after it.
        let (place, keys) = match line[..col].char_indices().next_back() {
            Some((last, _)) if col == line.len() => (last, "a"),
            _ => (col, "i"),
        };
        let before = if self.app.namespaces.is_empty() {
            Shown::default()
        } else {
            self.shown_now(case.buf).await?
        };
        let epoch = self
            .lua(
                "return typist.at(...)",
                vec![
                    Mp::from(case.buf),
                    Mp::from(row as i64),
                    Mp::from(place as i64),
                ],
            )
            .await?;
        let epoch = epoch
            .as_u64()
            .ok_or_else(|| self.broke(format!("neovim: typist.at gave no epoch: {epoch}")))?;
        self.input(keys).await?;
        let state = self
            .wait_state(case.buf, STATE_WAIT, |s| {
                s.mode.starts_with('i') && s.row == row as i64 && s.col == col as i64
            })
            .await?;
        let t0 = Instant::now();
        let asked = Asked {
            buf: case.buf,
            epoch,
            row,
            line,
            col,
        };
        self.read_inline(&asked, &state, &case.text, &before, t0)
            .await
    }

    /// The next edit at `cursor` in `rel`, asked through Neovim's client as copilot-lsp
    /// asks it (`typist.next_edit` in `driver.lua`), in normal mode. Not answered within
    /// the profile's request timeout: cancelled, a timeout. Copilot's "not signed in"
    /// error stops the run, as on typist's own client.
    pub async fn next_edit(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<NextEdits>, SessionError> {
        let case = self.begin_case(rel, cursor)?;
        self.leave_insert_mode(case.buf).await?;
        let at = case.at - case.line_start;
        let asked = self
            .lua(
                "return typist.next_edit(...)",
                vec![
                    Mp::from(case.buf),
                    Mp::from(cursor.line as i64),
                    Mp::from(at as i64),
                ],
            )
            .await?;
        let asked = mp_to_json(&asked);
        let t0 = Instant::now();
        let seq = asked.get("seq").and_then(Value::as_i64).unwrap_or(-1);
        if seq < 0 {
            return Err(self.exited("the server exited").await.into());
        }
        let params = asked.get("params").cloned().unwrap_or(Value::Null);
        let root_uri = uri::from_path(&self.root);
        self.last_request_hash = Some(request_hash_of(
            "textDocument/copilotInlineEdit",
            &params,
            &root_uri,
            &crate::digest::sha256_hex(case.text.as_bytes()),
        ));
        let timeout = self.profile.request_timeout();
        let answer = loop {
            let a = self
                .lua("return typist.next_edit_answer(...)", vec![Mp::from(seq)])
                .await?;
            if !a.is_nil() {
                break mp_to_json(&a);
            }
            if t0.elapsed() >= timeout {
                self.lua("typist.next_edit_cancel(...)", vec![Mp::from(seq)])
                    .await?;
                return Err(EditorError::Timeout(format!(
                    "{}: no next edit within {} ms (inside neovim)",
                    self.profile.name,
                    timeout.as_millis()
                ))
                .into());
            }
            tokio::time::sleep(ANSWER_POLL).await;
        };
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        if let Some(message) = answer.get("error").and_then(Value::as_str) {
            let code = answer.get("code").and_then(Value::as_i64);
            if self.profile.dialect == DialectKind::Copilot && code == Some(COPILOT_NO_TOKEN) {
                return Err(SessionError::NotSignedIn {
                    server: self.profile.name.clone(),
                    message: format!("{message}; run `typist login copilot`"),
                });
            }
            return Err(EditorError::Failed(format!(
                "{}: textDocument/copilotInlineEdit: {message}{}",
                self.profile.name,
                code.map(|c| format!(" (error {c})")).unwrap_or_default()
            ))
            .into());
        }
        let enc = match asked.get("encoding").and_then(Value::as_str) {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        };
        let result = answer.get("result").cloned().unwrap_or(Value::Null);
        let doc_uri = asked.get("uri").and_then(Value::as_str).unwrap_or_default();
        let version = asked.get("version").and_then(Value::as_i64).unwrap_or(-1);
        let value = read_inline_edits(&result, doc_uri, version, &case.text, enc);
        Ok(Timed { value, latency_ms })
    }
}

#[cfg(test)]
mod tests {
    use super::row_col;

    #[test]
    fn a_byte_offset_is_a_row_and_a_byte_column() {
        let t = "ab\né = 1\n";
        assert_eq!(row_col(t, 0), (0, 0));
        assert_eq!(row_col(t, 2), (0, 2));
        assert_eq!(row_col(t, 3), (1, 0));
        assert_eq!(row_col(t, 5), (1, 2));
        assert_eq!(row_col(t, t.len()), (2, 0));
    }
}
