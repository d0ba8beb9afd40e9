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
use crate::editor::ranking::{self, ListAnswer, ListRule};
use crate::editor::{Document, EditorError, ListAsk, SessionError};
use crate::replay::golf::{Golf, GolfTally, pick};
use crate::replay::outcome::{self, TokenAsk};
use crate::replay::records::Record;
use crate::replay::typing;
use crate::replay::units::Unit;

/// A token's golf under way: the document's parts, what the user has in hand, the
/// tally.
struct TokenGolf {
    golf: Golf,
    chars: Vec<char>,
    /// The document without the token, and the token's start in it.
    base: String,
    cursor: usize,
    /// The case's trigger character, for the first request.
    trigger_character: Option<String>,
    tally: GolfTally,
    /// What the document holds at `sent` characters typed.
    sent: Option<usize>,
    /// The first list's completion record.
    first: Option<Record>,
    /// The list in hand, and what was typed of the token when it was asked for.
    list: Option<Value>,
    list_asked: String,
    ask_now: bool,
}

impl TokenGolf {
    /// The token's first `p` characters, the document holding them and the cursor
    /// after them.
    fn typed(&self, p: usize) -> (String, String, usize) {
        let typed: String = self.chars[..p].iter().collect();
        let mut text = self.base.clone();
        text.insert_str(self.cursor, &typed);
        let at = self.cursor + typed.len();
        (typed, text, at)
    }

    /// Out of requests: the rest is typed. True when capped.
    fn cap(&mut self, p: usize) -> bool {
        if self.tally.requests < self.golf.max_requests.max(1) {
            return false;
        }
        let rest = (self.chars.len() - p) as u32;
        self.tally.keys += rest;
        self.tally.typed = self.tally.typed.map(|t| t + rest);
        self.tally.capped = true;
        true
    }

    /// How the next request is asked: the case's trigger character first, again for
    /// an incomplete list in hand (`None`), else as invoked.
    fn trigger(&self) -> Option<Option<String>> {
        if self.tally.requests == 0 {
            Some(self.trigger_character.clone())
        } else if self.list.as_ref().is_some_and(ranking::is_incomplete) {
            None
        } else {
            Some(None)
        }
    }

    /// The user's move at `p` characters typed with the list in hand (shown by
    /// `rule`): a pick or a character; whether the editor asks before the next move.
    /// Returns how many characters are written after it.
    fn step(&mut self, expected: &str, p: usize, typed: &str, rule: ListRule) -> usize {
        let n = self.chars.len();
        let shown: Vec<String> = self
            .list
            .as_ref()
            .map(|l| {
                ranking::shown_by(rule, l, typed, &self.list_asked)
                    .into_iter()
                    .take(n - p)
                    .map(|it| it.insert)
                    .collect()
            })
            .unwrap_or_default();
        let step = pick(expected, p, &shown);
        self.tally.keys += step.keys;
        if step.accepted {
            self.tally.accepts += 1;
            self.list = None;
            self.ask_now = true;
        } else {
            self.tally.typed = self.tally.typed.map(|t| t + 1);
            let now: String = self.chars[..step.to.min(n)].iter().collect();
            self.ask_now = match &self.list {
                None => true,
                Some(l) => {
                    ranking::is_incomplete(l)
                        || ranking::shown_by(rule, l, &now, &self.list_asked).is_empty()
                }
            };
        }
        step.to
    }
}

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
        let line = case.line as usize;
        let column = token.column as usize;
        let Some((base, cursor)) =
            typing::token_document(lines, line, column, &case.expected, token.context)
        else {
            let why = format!(
                "line {line} does not hold {:?} at character {column}",
                case.expected
            );
            let r = self.token_record(unit, case, token, TokenAsk::Invalid(why));
            return self.send(r).await;
        };
        let chars: Vec<char> = case.expected.chars().collect();
        let mut g = TokenGolf {
            golf,
            tally: GolfTally {
                mode: golf.mode,
                n: chars.len() as u32,
                typed: Some(0),
                ..GolfTally::default()
            },
            chars,
            base,
            cursor,
            // The first `Complete` action's character.
            trigger_character: token
                .actions
                .iter()
                .find_map(|a| match a {
                    Action::Complete { trigger_character } => Some(trigger_character.clone()),
                    _ => None,
                })
                .flatten(),
            sent: None,
            first: None,
            list: None,
            list_asked: String::new(),
            ask_now: true,
        };
        // A server that has seen past the token's start is replaced.
        if self
            .live
            .as_ref()
            .is_none_or(|l| l.seen > (line - 1, column))
        {
            self.start_session(unit, &g.base).await?;
            g.sent = Some(0);
        }
        let mut p = 0usize;
        while p < g.chars.len() {
            let (typed, text, at) = g.typed(p);
            self.golf_document(unit, token, &mut g, (line - 1, column), p, &text)
                .await?;
            if g.ask_now {
                if g.cap(p) {
                    break;
                }
                self.golf_ask_list(unit, case, token, &mut g, (&text, at, &typed))
                    .await?;
            }
            p = g.step(&case.expected, p, &typed, self.shared.cond.list_rule);
        }
        let Some(mut r) = g.first else {
            bail!("golf: no request made for {}", case.case)
        };
        r.golf = Some(g.tally);
        self.send(r).await
    }

    /// The case's completion record for `ask`.
    fn token_record(&self, unit: &Unit, case: &Case, token: &TokenCase, ask: TokenAsk) -> Record {
        let name = &self.profile(unit.assistant).name;
        let cond = &self.shared.cond;
        outcome::completion_record(case, token, name, unit.pass, cond, ask)
    }

    /// The session holds `text` (`p` characters of the token typed): a fresh server
    /// after a retirement, the change otherwise; the server's view noted.
    async fn golf_document(
        &mut self,
        unit: &Unit,
        token: &TokenCase,
        g: &mut TokenGolf,
        (row, column): (usize, usize),
        p: usize,
        text: &str,
    ) -> Result<()> {
        if self.live.is_none() {
            // Retired: a fresh server with the editor's state.
            self.start_session(unit, text).await?;
            g.sent = Some(p);
        }
        if g.sent != Some(p) {
            self.set_text(unit, text)?;
            g.sent = Some(p);
        }
        if let Some(live) = self.live.as_mut() {
            live.seen = match token.context {
                TokenContext::Prefix => live.seen.max((row, column + p)),
                TokenContext::Full => (usize::MAX, usize::MAX),
            };
        }
        Ok(())
    }

    /// One request of the golf: the list in hand from now on (none after a failure,
    /// counted apart); the first one's completion record kept.
    async fn golf_ask_list(
        &mut self,
        unit: &Unit,
        case: &Case,
        token: &TokenCase,
        g: &mut TokenGolf,
        (text, at, typed): (&str, usize, &str),
    ) -> Result<()> {
        let asked = self
            .golf_complete(unit, case, text, at, g.trigger())
            .await?;
        g.tally.requests += 1;
        if g.first.is_none() {
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
            let mut r = self.token_record(unit, case, token, ask);
            r.request_hash = self
                .live
                .as_ref()
                .and_then(|l| l.session.last_request_hash())
                .map(str::to_string);
            g.first = Some(r);
        }
        g.list_asked = typed.to_string();
        g.list = match asked {
            Ok(answer) => Some(answer.value),
            Err(_) => {
                g.tally.failures += 1;
                None
            }
        };
        Ok(())
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
