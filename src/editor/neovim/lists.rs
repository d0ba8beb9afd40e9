//! Completion lists through Neovim's popup (token cases): the case's document is placed
//! in the buffer, the cursor put at the token's start in insert mode, and each action
//! done as a person does it in Neovim. Asking is `vim.lsp.completion.get()` with the
//! same `CompletionContext` typist's own client sends (a trigger character the server
//! declared, else `Invoked`); typing is `nvim_input`, one key per interval, and while
//! the popup is shown from an incomplete list Neovim asks again on its own
//! (`TriggerForIncompleteCompletions`). What is read is the popup
//! (`complete_info().matches`): the items Neovim kept after its own filtering (a
//! case-sensitive prefix match on `filterText` or the label) and sorting (by `sortText`),
//! then narrowed by the popup as keys are typed, in display order. The answer of the
//! request sent for the case's buffer version and row is the case's, as with ghost text,
//! so errors and timeouts stay apart from empty lists.

use std::time::{Duration, Instant};

use rmpv::Value as Mp;

use super::NeovimSession;
use super::documents::READY_POLL;
use super::list_state::{ListPhase, ListState};
use super::protocol::{COMPLETION, Popup, Readiness, json_to_mp};
use super::requests::Wanted;
use super::suggest::STATE_WAIT;
use crate::editor::conditions::Trigger;
use crate::editor::document::Position;
use crate::editor::error::{EditorError, SessionError};
use crate::editor::options::Timed;
use crate::editor::profile::ReadinessRule;
use crate::editor::ranking::{self, ShownList};

/// The pause before asking again under the `stable` readiness rule (as typist's own
/// client pauses).
const RETRY_INTERVAL: Duration = crate::editor::options::RETRY_INTERVAL;
/// How long a server has to begin its `$/progress` under the `progress` rule.
const PROGRESS_START_WAIT: Duration = crate::editor::options::PROGRESS_START_WAIT;

impl NeovimSession {
    /// The server's declared completion trigger characters.
    pub fn trigger_characters(&self) -> &[String] {
        &self.triggers
    }

    /// Places what the editor is to hold in `rel` in its buffer and puts the cursor at
    /// `cursor` (a byte column) in insert mode: a completion session begins.
    pub async fn list_open(&mut self, rel: &str, cursor: Position) -> Result<(), SessionError> {
        let case = self.begin_case(rel, cursor)?;
        let (buf, col, row) = (case.buf, case.col() as i64, cursor.line as i64);
        let new_lines = case.lines();
        let epoch = self
            .place_lines(rel, buf, &new_lines, (row, 0), new_lines.clone())
            .await?;
        self.input("i").await?;
        self.wait_state(buf, STATE_WAIT, |s| s.mode == "i").await?;
        self.lua("typist.cursor(...)", vec![Mp::from(row), Mp::from(col)])
            .await?;
        self.wait_state(buf, STATE_WAIT, |s| {
            s.mode == "i" && s.row == row && s.col == col
        })
        .await?;
        self.list = Some(ListState {
            rel: rel.to_string(),
            buf,
            row,
            epoch,
            phase: ListPhase::Placed,
        });
        Ok(())
    }

    /// Leaves insert mode (and the popup): Neovim drops its pending completion and the
    /// ghost text.
    pub(super) async fn leave_insert_mode(&mut self, buf: i64) -> Result<(), SessionError> {
        let state = self.state(buf).await?;
        if state.mode.starts_with('i') {
            // A shown popup is closed first (`<C-e>`, only then: it types otherwise).
            let keys = if state.pum { "<C-e><Esc>" } else { "<Esc>" };
            self.input(keys).await?;
            self.wait_state(buf, STATE_WAIT, |s| s.mode == "n").await?;
        }
        Ok(())
    }

    /// Asks for the popup at the cursor with `trigger`'s context and reads it once the
    /// server answered. `when_ready`: the session's first ask, after the profile's
    /// readiness rule (progress ended, rust-analyzer quiescent, or asked again until two
    /// popups in a row list the same items).
    pub async fn list_ask(
        &mut self,
        trigger: &Trigger,
        when_ready: bool,
    ) -> Result<Timed<ShownList>, SessionError> {
        if !when_ready {
            return self.ask_once(trigger).await;
        }
        let deadline = self.wait_for_readiness().await;
        let r = self.profile.readiness.clone();
        let mut last = self.ask_once(trigger).await?;
        if r.rule == ReadinessRule::Stable {
            let sig = |l: &ShownList| {
                ranking::signature(&serde_json::json!({
                    "items": l.items, "isIncomplete": l.incomplete
                }))
            };
            for _ in 1..r.max_tries {
                if Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(RETRY_INTERVAL).await;
                self.close_popup().await?;
                let next = self.ask_once(trigger).await?;
                let same = sig(&next.value) == sig(&last.value);
                last = next;
                if same {
                    break;
                }
            }
        }
        Ok(last)
    }

    /// Closes a shown popup with `<C-e>` (Neovim asks nothing while a complete list is
    /// shown); `<C-e>` with no popup would insert a character, so only then.
    async fn close_popup(&mut self) -> Result<(), SessionError> {
        let buf = self.list_state()?.buf;
        let state = self.state(buf).await?;
        if state.pum {
            self.input("<C-e>").await?;
            self.wait_state(buf, STATE_WAIT, |s| !s.pum).await?;
        }
        Ok(())
    }

    fn list_state(&self) -> Result<&ListState, SessionError> {
        self.list.as_ref().ok_or_else(|| {
            EditorError::Failed("neovim: no completion session is open".into()).into()
        })
    }

    async fn ask_once(&mut self, trigger: &Trigger) -> Result<Timed<ShownList>, SessionError> {
        self.drain()?;
        let (buf, row, epoch) = {
            let l = self.list_state()?;
            (l.buf, l.row, l.epoch)
        };
        let state = self.state(buf).await?;
        let version = state.version;
        let after = self.requests.last_seq();
        let t0 = Instant::now();
        self.lua("typist.complete(...)", vec![json_to_mp(&trigger.context())])
            .await?;
        self.answered_list(buf, row, epoch, version, t0, after)
            .await
    }

    /// The popup read with the answer to the request Neovim sent at `version`.
    async fn answered_list(
        &mut self,
        buf: i64,
        row: i64,
        epoch: u64,
        version: i64,
        t0: Instant,
        after: u64,
    ) -> Result<Timed<ShownList>, SessionError> {
        let rel = self.list_state()?.rel.clone();
        let text = self.texts.get(&rel).cloned().unwrap_or_default();
        let want = Wanted {
            method: COMPLETION,
            buf,
            epoch,
            version,
            row,
        };
        let (answer, latency_ms) = self.answered(buf, want, &text, after, t0).await?;
        let list = ShownList {
            items: answer.shown.items().to_vec(),
            listed: answer.items as usize,
            incomplete: answer.incomplete,
        };
        if let Some(l) = self.list.as_mut() {
            l.phase = ListPhase::Asked {
                listed: list.listed,
                incomplete: list.incomplete,
            };
        }
        Ok(Timed {
            value: list,
            latency_ms,
        })
    }

    /// Types `text` at the cursor, one key per interval. Returns the popup as shown
    /// after the last key, with the latency of the request Neovim sent for it when the
    /// popup was incomplete (`None`: no request, the popup narrowed by what was typed);
    /// `None` when nothing was asked yet in this session.
    pub async fn list_type(
        &mut self,
        text: &str,
    ) -> Result<Option<(ShownList, Option<f64>)>, SessionError> {
        let (buf, row, epoch, phase, rel) = {
            let l = self.list_state()?;
            (l.buf, l.row, l.epoch, l.phase, l.rel.clone())
        };
        self.drain()?;
        let after = self.requests.last_seq();
        let before = self.state(buf).await?;
        let col0 = before.col;
        // Neovim asks again only while an incomplete list is shown.
        let asks_again = matches!(
            phase,
            ListPhase::Asked {
                incomplete: true,
                ..
            }
        ) && before.pum;
        let interval = Duration::from_millis(self.app.key_interval_ms);
        self.type_chars(text, interval).await?;
        let col = col0 + text.len() as i64;
        let state = self
            .wait_state(buf, STATE_WAIT, |s| {
                s.col == col && s.row == row && s.mode.starts_with('i')
            })
            .await?;
        self.check_errors(&state)?;
        if let Some(l) = self
            .lines
            .get_mut(&rel)
            .and_then(|lines| lines.get_mut(row as usize))
        {
            *l = state.line.clone();
        }
        let ListPhase::Asked { listed, incomplete } = phase else {
            return Ok(None);
        };
        if asks_again {
            let version = state.version;
            let t0 = Instant::now();
            let got = self
                .answered_list(buf, row, epoch, version, t0, after)
                .await?;
            return Ok(Some((got.value, Some(got.latency_ms))));
        }
        let popup: Popup = self.reply("typist.popup", vec![]).await?;
        Ok(Some((
            ShownList {
                items: popup.items,
                listed,
                incomplete,
            },
            None,
        )))
    }

    /// Waits for the profile's readiness rule (`progress`: the server's `$/progress`
    /// begun and ended; `server-status`: rust-analyzer quiescent), at most its
    /// `max_wait_ms`; returns that deadline (the `stable` rule asks until it).
    pub(super) async fn wait_for_readiness(&mut self) -> Instant {
        let r = self.profile.readiness.clone();
        let deadline = Instant::now() + Duration::from_millis(r.max_wait_ms);
        match r.rule {
            ReadinessRule::None | ReadinessRule::Stable => {}
            ReadinessRule::Progress => {
                let start_by = deadline.min(Instant::now() + PROGRESS_START_WAIT);
                self.readiness_until(start_by, |r| r.seen).await;
                self.readiness_until(deadline, |r| r.active == 0).await;
            }
            ReadinessRule::ServerStatus => {
                self.readiness_until(deadline, |r| r.quiescent == Some(true))
                    .await;
            }
        }
        deadline
    }

    /// Polls `typist.readiness` until `done` or `by`; a failed call ends the wait (the
    /// editor is then broken, and the case refused).
    async fn readiness_until(&mut self, by: Instant, done: fn(&Readiness) -> bool) {
        loop {
            let Ok(r) = self.reply::<Readiness>("typist.readiness", vec![]).await else {
                return;
            };
            if done(&r) || Instant::now() >= by {
                return;
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }
}
