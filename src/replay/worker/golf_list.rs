//! Golf on completion lists (methodology §10, `--golf` on token cases): a token written
//! the way a user writes it with a completion list's help, in one session. The editor
//! asks where it has no list for what is typed (at the token's start, with the case's
//! trigger character; after a pick, which closes the list; when the list in hand shows
//! nothing for the typed prefix, as quick suggestions reopen it) and after each key
//! while the list in hand is incomplete (`TriggerForIncompleteCompletions`); else it
//! filters the list in hand (`editor::ranking::shown`). After each key the user picks
//! the item at rank `r` for `r` keys or types one character (`replay::golf::pick`).
//!
//! The invariant of token cases holds: the document and the disk copy hold the token's
//! typed characters only, never the whole token (nothing is sent once it is written),
//! and a server is reused only when it has seen no further than the token's start.
//! One record per token: the first list's completion record (exactly the token case at
//! prefix 0) with the tally in its `golf` object, `typed` included. A failed request is
//! no list for the user and counted apart (`failures`); a server that exits is
//! restarted with the editor's state and asked once more, as for any case.

use anyhow::{Result, bail};
use serde_json::Value;

use super::{Next, Worker};
use crate::dataset::Case;
use crate::dataset::token::{Action, TokenCase, TokenContext};
use crate::editor::options::Timed;
use crate::editor::ranking::{self, ListAnswer};
use crate::editor::{Document, EditorError, ListAsk, SessionError};
use crate::replay::golf::{Golf, GolfTally, pick};
use crate::replay::outcome::{self, TokenAsk};
use crate::replay::records::Record;
use crate::replay::typing;
use crate::replay::units::Unit;

impl Worker {
    /// Plays token case `case` (typed prefix 0) as §10 says and sends its record.
    pub(super) async fn golf_token(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        case: &Case,
        token: &TokenCase,
        golf: Golf,
    ) -> Result<()> {
        let name = self.profile(unit.assistant).name.clone();
        let latency = self.shared.cond.latency;
        let rule = self.shared.cond.list_rule;
        let record =
            |ask| outcome::completion_record(case, token, &name, unit.pass, latency, rule, ask);
        let line = case.line as usize;
        let column = token.column as usize;
        let Some((base, cursor)) =
            typing::token_document(lines, line, column, &case.expected, token.context)
        else {
            let why = format!(
                "line {line} does not hold {:?} at character {column}",
                case.expected
            );
            let r = record(TokenAsk::Invalid(why));
            return self.send(r).await;
        };
        let chars: Vec<char> = case.expected.chars().collect();
        let n = chars.len();
        let trigger_character = token.actions.iter().find_map(|a| match a {
            Action::Complete { trigger_character } => Some(trigger_character.clone()),
            _ => None,
        });
        let mut tally = GolfTally {
            mode: golf.mode,
            n: n as u32,
            typed: Some(0),
            ..GolfTally::default()
        };
        // What the document holds at `sent` characters typed; a server that has seen
        // past the token's start is replaced.
        let mut sent: Option<usize> = None;
        if self
            .live
            .as_ref()
            .is_none_or(|l| l.seen > (line - 1, column))
        {
            self.start_session(unit, &base).await?;
            sent = Some(0);
        }
        let mut first: Option<Record> = None;
        let mut list: Option<Value> = None;
        // What was typed of the token when `list` was asked for.
        let mut list_asked = String::new();
        let mut ask_now = true;
        let mut p = 0usize;
        while p < n {
            let typed: String = chars[..p].iter().collect();
            let mut text = base.clone();
            text.insert_str(cursor, &typed);
            let at = cursor + typed.len();
            if self.live.is_none() {
                // Retired after timeouts: a fresh server with the editor's state.
                self.start_session(unit, &text).await?;
                sent = Some(p);
            }
            if sent != Some(p) {
                self.set_text(unit, &text)?;
                sent = Some(p);
            }
            if let Some(live) = self.live.as_mut() {
                live.seen = match token.context {
                    TokenContext::Prefix => live.seen.max((line - 1, column + p)),
                    TokenContext::Full => (usize::MAX, usize::MAX),
                };
            }
            if ask_now {
                if tally.requests >= golf.max_requests.max(1) {
                    let rest = (n - p) as u32;
                    tally.keys += rest;
                    tally.typed = tally.typed.map(|t| t + rest);
                    tally.capped = true;
                    break;
                }
                let trigger = if tally.requests == 0 {
                    Some(trigger_character.clone().flatten())
                } else if list.as_ref().is_some_and(ranking::is_incomplete) {
                    None
                } else {
                    Some(None)
                };
                let asked = self.golf_complete(unit, case, &text, at, trigger).await?;
                tally.requests += 1;
                if first.is_none() {
                    let hash = self
                        .live
                        .as_ref()
                        .and_then(|l| l.session.last_request_hash())
                        .map(str::to_string);
                    let ask = match &asked {
                        Ok(answer) => TokenAsk::Got {
                            answer: Timed {
                                value: ListAnswer::Server(answer.value.clone()),
                                latency_ms: answer.latency_ms,
                            },
                            typed: String::new(),
                            asked: String::new(),
                        },
                        Err(e) => TokenAsk::Failed(e.clone()),
                    };
                    let mut r = record(ask);
                    r.request_hash = hash;
                    first = Some(r);
                }
                list_asked = typed.clone();
                list = match asked {
                    Ok(answer) => Some(answer.value),
                    Err(_) => {
                        tally.failures += 1;
                        None
                    }
                };
            }
            let shown: Vec<String> = list
                .as_ref()
                .map(|l| {
                    ranking::shown_by(rule, l, &typed, &list_asked)
                        .into_iter()
                        .take(n - p)
                        .map(|it| it.insert)
                        .collect()
                })
                .unwrap_or_default();
            let step = pick(&case.expected, p, &shown);
            tally.keys += step.keys;
            p = step.to;
            if step.accepted {
                tally.accepts += 1;
                list = None;
                ask_now = true;
            } else {
                tally.typed = tally.typed.map(|t| t + 1);
                let now: String = chars[..p.min(n)].iter().collect();
                ask_now = match &list {
                    None => true,
                    Some(l) => {
                        ranking::is_incomplete(l)
                            || ranking::shown_by(rule, l, &now, &list_asked).is_empty()
                    }
                };
            }
        }
        let Some(mut r) = first else {
            bail!("golf: no request made for {}", case.case)
        };
        r.golf = Some(tally);
        self.send(r).await
    }

    /// One completion request at byte `at` of `text` (the document the session holds).
    /// `trigger`: `Some(c)` asks as invoked, at trigger character `c` when the server
    /// declares it; `None` asks again for an incomplete list. Under the restart policy
    /// (`restart.rs`).
    async fn golf_complete(
        &mut self,
        unit: &Unit,
        case: &Case,
        text: &str,
        at: usize,
        trigger: Option<Option<String>>,
    ) -> Result<Result<Timed<Value>, SessionError>> {
        let mut again = false;
        loop {
            let outcome = self.complete_once(unit, text, at, &trigger).await;
            match self.judge(unit, &case.case, outcome.as_ref().err(), again)? {
                Next::Keep => return Ok(outcome),
                Next::Restart(_) => {
                    self.start_session(unit, text).await?;
                    again = true;
                }
            }
        }
    }

    async fn complete_once(
        &mut self,
        unit: &Unit,
        text: &str,
        at: usize,
        trigger: &Option<Option<String>>,
    ) -> Result<Timed<Value>, SessionError> {
        let live = self.live.as_mut().ok_or(SessionError::NoSession)?;
        let pos = Document::position_of(text, at, live.session.encoding());
        let ask = match trigger {
            Some(c) => ListAsk::Invoked(c.clone()),
            None => ListAsk::Incomplete,
        };
        let answer = live
            .session
            .list_ask(&unit.file, pos, &ask, !live.warmed)
            .await?;
        live.warmed = true;
        match answer.value {
            ListAnswer::Server(value) => Ok(Timed {
                value,
                latency_ms: answer.latency_ms,
            }),
            // Refused before the run (`replay/checks.rs`): golf ranks the server's list.
            ListAnswer::Shown(_) => Err(SessionError::Editor(EditorError::Failed(
                "golf on completion lists reads the server's own list (--editor typist)".into(),
            ))),
        }
    }
}
