//! The requests Neovim sends and their answers, as `driver.lua` reports them: the
//! notifications taken in ([`Requests`], pure), and the request a case waits for
//! ([`Wanted`]; the waits are `waits.rs`).
use std::collections::BTreeMap;

use super::protocol::{Answer, Note, Request};

/// Only the requests of the current case can be the answer: the last few are kept.
const KEPT: usize = 64;

/// What Neovim told typist about the requests it sent.
#[derive(Debug, Default)]
pub(super) struct Requests {
    sent: Vec<Request>,
    answers: BTreeMap<u64, Answer>,
    pub cancelled: Vec<u64>,
    /// The server left (`LspDetach`).
    pub detached: bool,
}

/// The request a case waits for: its method, for buffer `buf`, sent in placement
/// `epoch` at the buffer's `version` with the cursor on `row`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wanted {
    pub method: &'static str,
    pub buf: i64,
    pub epoch: u64,
    pub version: i64,
    pub row: i64,
}

impl Wanted {
    /// `r` is the case's request (sent after request `after`: the same place may be
    /// asked again).
    pub(super) fn is(&self, r: &Request, after: u64) -> bool {
        r.seq > after
            && r.method == self.method
            && r.buf == self.buf
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
    pub(super) fn find(&self, want: &Wanted, after: u64) -> Option<&Request> {
        self.sent.iter().find(|r| want.is(r, after))
    }

    /// The last request Neovim was seen to send.
    pub fn last_seq(&self) -> u64 {
        self.sent.last().map_or(0, |s| s.seq)
    }

    /// Request `seq`'s answer, once; older requests' answers can no longer be a case's.
    pub(super) fn answer(&mut self, seq: u64) -> Option<Answer> {
        let a = self.answers.remove(&seq)?;
        self.answers.retain(|&k, _| k > seq);
        self.cancelled.retain(|&k| k > seq);
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::neovim::protocol::{Drawn, INLINE};

    fn sent(seq: u64, buf: i64, version: i64) -> Note {
        Note::Request(Request {
            seq,
            method: INLINE.into(),
            buf,
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
    fn the_cases_request_is_the_first_for_its_buffer_at_its_version_and_row() {
        let mut r = Requests::default();
        // Request 2 is for another buffer (Neovim asks for each attached one).
        for n in [sent(1, 1, 4), sent(2, 2, 5), sent(3, 1, 5), sent(4, 1, 5)] {
            r.take(n);
        }
        let want = Wanted {
            method: INLINE,
            buf: 1,
            epoch: 1,
            version: 5,
            row: 2,
        };
        assert_eq!(r.find(&want, 0).map(|s| s.seq), Some(3));
        assert_eq!(r.find(&want, 3).map(|s| s.seq), Some(4));
        assert_eq!(r.last_seq(), 4);
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
