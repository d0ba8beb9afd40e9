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
use serde_json::Value;

use super::{ListState, NeovimSession, READY_POLL, STATE_WAIT, json_to_mp, mp_to_json};
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
        let (text, buf, at, line_start) = self.begin_case(rel, cursor)?;
        let col = (at - line_start) as i64;
        let row = cursor.line as i64;
        let new_lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let epoch = self.place_lines(rel, buf, &new_lines, (row, 0)).await?;
        self.lines.insert(rel.to_string(), new_lines);
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
            listed: 0,
            incomplete: false,
            asked: false,
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
        self.drain();
        let (buf, row, epoch) = {
            let l = self.list_state()?;
            (l.buf, l.row, l.epoch)
        };
        let state = self.state(buf).await?;
        let version = state.version;
        let after = self.last_seq();
        let t0 = Instant::now();
        self.lua("typist.complete(...)", vec![json_to_mp(&trigger.context())])
            .await?;
        self.answered_list(buf, row, epoch, version, t0, after)
            .await
    }

    /// The last request Neovim was seen to send.
    pub(super) fn last_seq(&self) -> u64 {
        self.sent.last().map_or(0, |s| s.seq)
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
        let (answer, latency_ms) = self
            .completion_answer(buf, epoch, version, row, &text, after, t0)
            .await?;
        let items = answer.shown["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let list = ShownList {
            items,
            listed: answer.items as usize,
            incomplete: answer.incomplete,
        };
        if let Some(l) = self.list.as_mut() {
            l.listed = list.listed;
            l.incomplete = list.incomplete;
            l.asked = true;
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
        let (buf, row, epoch, asked, listed, incomplete, rel) = {
            let l = self.list_state()?;
            (
                l.buf,
                l.row,
                l.epoch,
                l.asked,
                l.listed,
                l.incomplete,
                l.rel.clone(),
            )
        };
        self.drain();
        let after = self.last_seq();
        let before = self.state(buf).await?;
        let col0 = before.col;
        // Neovim asks again only while an incomplete list is shown.
        let asks_again = asked && incomplete && before.pum;
        let interval = Duration::from_millis(self.app.key_interval_ms);
        for c in text.chars() {
            tokio::time::sleep(interval).await;
            let key = if c == '<' {
                "<lt>".to_string()
            } else {
                c.to_string()
            };
            self.input(&key).await?;
        }
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
        if !asked {
            return Ok(None);
        }
        if asks_again {
            let version = state.version;
            let t0 = Instant::now();
            let got = self
                .answered_list(buf, row, epoch, version, t0, after)
                .await?;
            return Ok(Some((got.value, Some(got.latency_ms))));
        }
        let popup = mp_to_json(&self.lua("return typist.popup()", vec![]).await?);
        let items = popup["items"].as_array().cloned().unwrap_or_default();
        Ok(Some((
            ShownList {
                items,
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
                self.readiness_until(start_by, |v| v["seen"] == Value::Bool(true))
                    .await;
                self.readiness_until(deadline, |v| v["active"] == 0).await;
            }
            ReadinessRule::ServerStatus => {
                self.readiness_until(deadline, |v| v["quiescent"] == Value::Bool(true))
                    .await;
            }
        }
        deadline
    }

    async fn readiness_until(&mut self, by: Instant, done: fn(&Value) -> bool) {
        loop {
            let Ok(v) = self.lua("return typist.readiness()", vec![]).await else {
                return;
            };
            if done(&mp_to_json(&v)) || Instant::now() >= by {
                return;
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }
}
