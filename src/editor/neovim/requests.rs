//! The requests Neovim sends and their answers, as `driver.lua` reports them: the
//! notifications taken in ([`Requests`], pure), and the waits of a case for the request
//! Neovim sent at the case's buffer version and row (counted in Neovim's free time:
//! under load the request is late, not missing), then for its answer within the
//! profile's deadline. A malformed notification breaks the session.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmpv::Value as Mp;

use super::NeovimSession;
use super::protocol::{Answer, Note, Request};
use super::rpc::Notification;
use crate::editor::error::{EditorError, SessionError};
use crate::editor::request_hash::request_hash_of;
use crate::lsp::uri;

/// Neovim asks 200 ms after the last key (its fixed debounce); a request not sent
/// within this much of Neovim's free time after typing ended is a failure of the
/// editor, not a timeout of the server. Time Neovim spends busy (a round trip through
/// its event loop slower than [`NVIM_BUSY`]) is not counted: under load the request is
/// late, not missing.
const REQUEST_SENT_WITHIN: Duration = Duration::from_millis(3000);
/// The slices the wait for a request is counted in: each ends with a round trip.
const SENT_SLICE: Duration = Duration::from_millis(250);
/// A round trip through Neovim's event loop slower than this: Neovim was busy.
const NVIM_BUSY: Duration = Duration::from_millis(50);
/// However busy Neovim is, a request not sent within this long is the editor's failure.
const REQUEST_SENT_CAP: Duration = Duration::from_secs(30);
/// Only the requests of the current case can be the answer: the last few are kept.
const KEPT: usize = 64;

/// What Neovim told typist about the requests it sent.
#[derive(Debug, Default)]
pub(super) struct Requests {
    sent: Vec<Request>,
    answers: BTreeMap<u64, Answer>,
    cancelled: Vec<u64>,
    /// The server left (`LspDetach`).
    detached: bool,
}

/// The request a case waits for: its method, sent in placement `epoch` at the
/// buffer's `version` with the cursor on `row`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wanted {
    pub method: &'static str,
    pub epoch: u64,
    pub version: i64,
    pub row: i64,
}

impl Wanted {
    /// `r` is the case's request (sent after request `after`: the same place may be
    /// asked again).
    fn is(&self, r: &Request, after: u64) -> bool {
        r.seq > after
            && r.method == self.method
            && r.epoch == self.epoch
            && r.version == self.version
            && r.row == self.row
    }
}

impl Requests {
    pub fn take(&mut self, note: Note) {
        match note {
            Note::Request(r) => self.sent.push(r),
            Note::Answer(a) => {
                self.answers.insert(a.seq, a);
            }
            Note::Cancel { seq } => self.cancelled.push(seq),
            Note::Detach => self.detached = true,
        }
        if self.sent.len() > KEPT {
            self.sent.drain(..self.sent.len() - KEPT);
        }
    }

    /// The first request sent for `want` after request `after`.
    fn find(&self, want: &Wanted, after: u64) -> Option<&Request> {
        self.sent.iter().find(|r| want.is(r, after))
    }

    /// The last request Neovim was seen to send.
    pub fn last_seq(&self) -> u64 {
        self.sent.last().map_or(0, |s| s.seq)
    }

    /// Request `seq`'s answer, once; older requests' answers can no longer be a case's.
    fn answer(&mut self, seq: u64) -> Option<Answer> {
        let a = self.answers.remove(&seq)?;
        self.answers.retain(|&k, _| k > seq);
        self.cancelled.retain(|&k| k > seq);
        Some(a)
    }
}

impl NeovimSession {
    /// The first request Neovim sent for `want` (after request `after`); its hash is
    /// the case's request hash (`text`: the document as placed).
    pub(super) async fn wait_sent(
        &mut self,
        want: Wanted,
        text: &str,
        after: u64,
    ) -> Result<u64, SessionError> {
        let started = Instant::now();
        let mut free = Duration::ZERO;
        let mut slice_end = started + SENT_SLICE;
        loop {
            if let Some(r) = self.requests.find(&want, after) {
                let root_uri = uri::from_path(&self.root);
                self.last_request_hash = Some(request_hash_of(
                    want.method,
                    &r.params,
                    &root_uri,
                    &crate::digest::sha256_hex(text.as_bytes()),
                ));
                return Ok(r.seq);
            }
            self.refuse_detached().await?;
            if self.next_note(slice_end).await? {
                continue;
            }
            // A slice passed without the request: count it only if Neovim was free.
            let asked = Instant::now();
            self.lua("return 0", vec![]).await?;
            let took = asked.elapsed();
            self.drain()?;
            if took < NVIM_BUSY {
                free += SENT_SLICE;
            }
            slice_end = Instant::now() + SENT_SLICE;
            let over = free >= REQUEST_SENT_WITHIN || started.elapsed() >= REQUEST_SENT_CAP;
            if over && self.requests.find(&want, after).is_none() {
                return Err(EditorError::Failed(format!(
                    "neovim sent no {} within {} ms after the last key ({} ms of it \
                     with neovim free)",
                    want.method,
                    started.elapsed().as_millis(),
                    free.as_millis()
                ))
                .into());
            }
        }
    }

    /// The answer to request `seq` within the profile's request deadline (a timeout
    /// cancels the request).
    pub(super) async fn wait_answer(
        &mut self,
        method: &str,
        seq: u64,
    ) -> Result<Answer, SessionError> {
        let deadline = Instant::now() + self.profile.request_timeout();
        loop {
            if let Some(a) = self.requests.answer(seq) {
                return Ok(a);
            }
            if self.requests.cancelled.contains(&seq) {
                return Err(EditorError::Failed(format!("neovim cancelled its {method}")).into());
            }
            self.refuse_detached().await?;
            if !self.next_note(deadline).await? {
                let _ = self.lua("typist.cancel(...)", vec![Mp::from(seq)]).await;
                return Err(EditorError::Timeout(format!(
                    "{}: {method} not answered within {} ms (through neovim)",
                    self.profile.name, self.profile.request_timeout_ms
                ))
                .into());
            }
        }
    }

    /// The server's exit inside Neovim is the case's error.
    async fn refuse_detached(&mut self) -> Result<(), SessionError> {
        if self.requests.detached {
            return Err(self
                .exited("the server exited inside neovim (LspDetach)")
                .await
                .into());
        }
        Ok(())
    }

    /// Waits for one notification until `deadline`; false when none came.
    async fn next_note(&mut self, deadline: Instant) -> Result<bool, SessionError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.notes.recv()).await {
            Err(_) => Ok(false),
            Ok(None) => Err(self.exited("neovim exited").await.into()),
            Ok(Some(n)) => {
                self.absorb(n)?;
                Ok(true)
            }
        }
    }

    /// Takes in the notifications that came.
    pub(super) fn drain(&mut self) -> Result<(), SessionError> {
        while let Ok(n) = self.notes.try_recv() {
            self.absorb(n)?;
        }
        Ok(())
    }

    /// One notification taken in; a malformed one breaks the session.
    fn absorb(&mut self, (method, params): Notification) -> Result<(), SessionError> {
        match Note::decode(&method, &params) {
            Ok(Some(note)) => self.requests.take(note),
            Ok(None) => {}
            Err(why) => return Err(self.broke(why)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::neovim::protocol::{Drawn, INLINE};

    fn sent(seq: u64, version: i64) -> Note {
        Note::Request(Request {
            seq,
            method: INLINE.into(),
            epoch: 1,
            version,
            row: 2,
            params: serde_json::Value::Null,
        })
    }

    fn answer(seq: u64) -> Note {
        Note::Answer(Answer {
            seq,
            error: None,
            null: true,
            items: 0,
            incomplete: false,
            shown: Drawn::Nothing,
            handler_error: None,
        })
    }

    #[test]
    fn the_cases_request_is_the_first_at_its_version_and_row() {
        let mut r = Requests::default();
        for n in [sent(1, 4), sent(2, 5), sent(3, 5)] {
            r.take(n);
        }
        let want = Wanted {
            method: INLINE,
            epoch: 1,
            version: 5,
            row: 2,
        };
        assert_eq!(r.find(&want, 0).map(|s| s.seq), Some(2));
        assert_eq!(r.find(&want, 2).map(|s| s.seq), Some(3));
        assert_eq!(r.last_seq(), 3);
    }

    #[test]
    fn an_answer_is_taken_once_and_older_ones_are_dropped() {
        let mut r = Requests::default();
        for n in [answer(1), answer(2), Note::Cancel { seq: 1 }, answer(3)] {
            r.take(n);
        }
        assert!(r.answer(2).is_some());
        assert!(r.answer(2).is_none());
        assert!(r.answer(1).is_none() && r.cancelled.is_empty());
        assert!(r.answer(3).is_some());
    }
}
