//! Token cases (completion-list sessions, methodology §6): each case's actions replayed
//! on the document its context puts in the editor, the last list ranked into a
//! completion record.
//!
//! The invariant of line cases holds: the target file's disk copy mirrors the document
//! from before the server starts, so nothing after the cursor (context `prefix`) and
//! never the token itself (both contexts) is on the server's disk or in a document. A
//! server is reused for the next case of its unit only in context `prefix`, and only
//! when everything it has been shown (up to the last token's start plus the characters
//! typed of it) lies within what the next case shows (its token's start plus the
//! characters it types): cases are taken in file order and, for one token, by typed
//! prefix, so a server never completes a token it has seen more of than the case
//! types, and the sessions of one token (prefix 0, 1, 2, 3) share one server instead of
//! starting one each. With context `full` every case gets a fresh server (it has been
//! shown every other token of the file). Under `--golf` each case is played as
//! `worker/golf_list.rs` says instead.

use anyhow::Result;

use super::{Next, Worker};
use crate::dataset::Case;
use crate::dataset::token::{Action, TokenCase, TokenContext};
use crate::editor::options::Timed;
use crate::editor::ranking::ListAnswer;
use crate::editor::{Document, ListAsk, SessionError};
use crate::replay::outcome::{self, TokenAsk};
use crate::replay::typing;
use crate::replay::units::Unit;

/// A session's state while replaying one case's actions.
struct Typing {
    text: String,
    cursor: usize,
    typed: String,
    last: Option<Timed<ListAnswer>>,
    /// What was typed of the token when `last` was asked for.
    asked: String,
}

impl Worker {
    /// Replays the token cases of `unit` in file order.
    pub(super) async fn replay_tokens(&mut self, unit: &Unit, lines: &[&str]) -> Result<()> {
        let mut cases: Vec<(&Case, &TokenCase)> = unit
            .cases
            .iter()
            .filter_map(|c| c.token.as_ref().map(|t| (c, t)))
            .collect();
        cases.sort_by_key(|(c, t)| (c.line, t.column, t.prefix_len, c.case.clone()));
        for (case, token) in cases {
            if self.shared.cancel.load(std::sync::atomic::Ordering::SeqCst) {
                return Ok(());
            }
            if let Some(golf) = self.shared.cond.golf {
                self.golf_token(unit, lines, case, token, golf).await?;
                continue;
            }
            let outcome = self.token_case(unit, lines, case, token).await?;
            let name = self.profile(unit.assistant).name.clone();
            let mut record = outcome::completion_record(
                case,
                token,
                &name,
                unit.pass,
                &self.shared.cond,
                outcome,
            );
            record.request_hash = self
                .live
                .as_ref()
                .and_then(|l| l.session.last_request_hash())
                .map(str::to_string);
            self.mark_editor(&mut record);
            self.send(record).await?;
        }
        Ok(())
    }

    /// One case: the document, a server that has seen nothing beyond what the case shows,
    /// the actions, under the restart policy (`restart.rs`: after a restart the case is
    /// replayed once more).
    async fn token_case(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        case: &Case,
        token: &TokenCase,
    ) -> Result<TokenAsk> {
        let line = case.line as usize;
        let column = token.column as usize;
        let Some((text, cursor)) =
            typing::token_document(lines, line, column, &case.expected, token.context)
        else {
            return Ok(TokenAsk::Invalid(format!(
                "line {line} does not hold {:?} at character {column}",
                case.expected
            )));
        };
        // What this case shows the server: up to the token's start plus its typed
        // characters. A server that has seen no further may take it.
        let shows = (line - 1, column + token.prefix_len as usize);
        let mut again = false;
        loop {
            let fresh = self.live.as_ref().is_none_or(|l| l.seen > shows);
            if fresh || again {
                self.start_session(unit, &text).await?;
            } else {
                self.set_text(unit, &text)?;
            }
            if let Some(live) = self.live.as_mut() {
                live.seen = match token.context {
                    TokenContext::Prefix => shows,
                    TokenContext::Full => (usize::MAX, usize::MAX),
                };
            }
            let outcome = self.run_actions(unit, text.clone(), cursor, token).await;
            let failure = match &outcome {
                TokenAsk::Failed(e) => Some(e),
                _ => None,
            };
            match self.judge(unit, &case.case, failure, again)? {
                Next::Keep => return Ok(outcome),
                Next::Restart(_) => again = true,
            }
        }
    }

    /// The case's actions on the live session, from the document `text` with the
    /// cursor at byte `cursor` (the token's start).
    async fn run_actions(
        &mut self,
        unit: &Unit,
        text: String,
        cursor: usize,
        token: &TokenCase,
    ) -> TokenAsk {
        let mut t = Typing {
            text,
            cursor,
            typed: String::new(),
            last: None,
            asked: String::new(),
        };
        for action in &token.actions {
            if let Err(e) = self.act(unit, &mut t, action).await {
                return TokenAsk::Failed(e);
            }
        }
        match t.last {
            Some(answer) => TokenAsk::Got {
                answer,
                typed: t.typed,
                asked: t.asked,
            },
            None => TokenAsk::Invalid("the case's actions ask for no completion".into()),
        }
    }

    /// One action on the live session: the document placed with the cursor at the
    /// token's start (`Open`), the list asked for (`Complete`), a key typed (`Type`).
    async fn act(
        &mut self,
        unit: &Unit,
        t: &mut Typing,
        action: &Action,
    ) -> Result<(), SessionError> {
        let live = self.live.as_mut().ok_or(SessionError::NoSession)?;
        let session = &mut live.session;
        let enc = session.encoding();
        let pos = |t: &Typing| Document::position_of(&t.text, t.cursor, enc);
        match action {
            Action::Open => session.list_open(&unit.file, pos(t)).await,
            Action::Type { text } => {
                t.text.insert_str(t.cursor, text);
                t.cursor += text.len();
                t.typed.push_str(text);
                let incomplete = t.last.as_ref().is_some_and(|a| a.value.is_incomplete());
                let typed = session
                    .list_type(&unit.file, &t.text, pos(t), text, incomplete)
                    .await?;
                if let Some((value, latency)) = typed {
                    let latency_ms = latency
                        .or(t.last.as_ref().map(|l| l.latency_ms))
                        .unwrap_or(0.0);
                    t.last = Some(Timed { value, latency_ms });
                    t.asked = t.typed.clone();
                }
                Ok(())
            }
            Action::Complete { trigger_character } => {
                let ask = ListAsk::Invoked(trigger_character.clone());
                let answer = session
                    .list_ask(&unit.file, pos(t), &ask, !live.warmed)
                    .await?;
                live.warmed = true;
                t.last = Some(answer);
                t.asked = t.typed.clone();
                Ok(())
            }
        }
    }
}
