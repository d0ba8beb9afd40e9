//! The waits of a case for the request Neovim sent at the case's buffer version and
//! row (counted in Neovim's free time: under load the request is late, not missing),
//! then for its answer within the profile's deadline. A malformed notification breaks
//! the session.

use std::time::{Duration, Instant};

use rmpv::Value as Mp;

use super::NeovimSession;
use super::protocol::{Answer, COMPLETION, Note};
use super::requests::Wanted;
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
// Neovim asks again for an incomplete completion list after a key only once its
// average round trip since its last request has passed (`next_debounce` in
// `vim/lsp/completion.lua`): a server slow earlier in the session (pyright's first
// answers, seconds on a loaded machine) delays the request by up to its slowest round
// trip so far, which both waits above are lengthened by.

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
        // Neovim's own wait before it asks (read once the usual allowance is spent).
        let mut debounce: Option<Duration> = None;
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
            let extra = debounce.unwrap_or_default();
            let over = free >= REQUEST_SENT_WITHIN + extra
                || started.elapsed() >= REQUEST_SENT_CAP + extra;
            if over && debounce.is_none() && want.method == COMPLETION {
                let ms = self
                    .lua("return typist.slowest_ms(...)", vec![Mp::from(want.method)])
                    .await?;
                let ms = match ms.as_u64().or_else(|| ms.as_f64().map(|f| f as u64)) {
                    Some(ms) => ms,
                    None => return Err(self.broke(format!("neovim: typist.slowest_ms gave {ms}"))),
                };
                debounce = Some(Duration::from_millis(ms));
                if ms > 0 {
                    continue;
                }
            }
            if over && self.requests.find(&want, after).is_none() {
                let waits = match debounce {
                    Some(d) if !d.is_zero() => {
                        format!(", allowing {} ms for Neovim's own debounce", d.as_millis())
                    }
                    _ => String::new(),
                };
                return Err(EditorError::Failed(format!(
                    "neovim sent no {} within {} ms after the last key ({} ms of it \
                     with neovim free{waits})",
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
