//! What a line case waits to see drawn once its request has a fate ([`Drawn`]): the
//! answers at the cursor (a later request there is the case's answer too), the display
//! deadline, and what the page showed instead; and the case's errors named by the
//! fixture's fates.

use std::time::{Duration, Instant};

use super::page::{Fate, Page, draws};
use super::{EDITOR_DELAY, failed};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::kind::EditorApp;
use crate::editor::options::Timed;
use crate::editor::profile::Profile;
use crate::editor::suggestions::{InlineSuggestion, Suggestions};

/// Whose requests a case follows.
pub(super) enum Watch {
    /// Extensions alone, whose requests are not seen: only what the page shows counts.
    Alone,
    /// The fixture: the cursor (row, UTF-16 column) its requests are matched by, and the
    /// last request at it that typist took into account.
    Fixture { cursor: (u64, u64), current: u64 },
}

/// What the display deadline waits for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Awaiting {
    /// An answer drawn.
    Drawing,
    /// A later request at the cursor is still asked: typist waits for it (nothing said
    /// of it by the deadline is the editor's failure).
    LaterAnswer,
}

/// What the page showed so far that is no answer drawn: it settles the case when the
/// display deadline passes with nothing drawn. A stale suggestion outranks an answer
/// with no items.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seen {
    Nothing,
    /// A later answer had no items while none had any.
    NoItems,
    /// A ghost text that is no answer (an older suggestion still on screen).
    Stale(String),
}

/// What a line case waits to see drawn, and what it has seen so far.
pub(super) struct Drawn {
    /// The last key (the case's latency counts from it).
    pub t0: Instant,
    pub watch: Watch,
    /// Every answer with items at the cursor since the case began, as the lines accepting
    /// its first item leaves: only a ghost text drawing one of them is read.
    pub answers: Vec<String>,
    /// Nothing drawn by then: the case is settled as nothing shown.
    pub shown_by: Instant,
    pub awaiting: Awaiting,
    pub seen: Seen,
    /// The case was asked by Trigger Inline Suggestion (nothing typed, no Enter reached
    /// it): said in the reason when nothing is shown.
    pub by_palette: bool,
}

impl Drawn {
    /// Extensions alone: the display deadline counts from the last key.
    pub fn alone(t0: Instant, display: Duration, by_palette: bool) -> Drawn {
        Drawn {
            t0,
            watch: Watch::Alone,
            answers: Vec::new(),
            shown_by: t0 + display,
            awaiting: Awaiting::Drawing,
            seen: Seen::Nothing,
            by_palette,
        }
    }

    /// The fixture answered request `seq` at `cursor` with items (`first`: the lines its
    /// first item leaves): the display deadline counts from now (a model's answer may
    /// take longer than the deadline to come).
    pub fn answered(
        seq: u64,
        cursor: (u64, u64),
        first: Option<String>,
        t0: Instant,
        display: Duration,
        by_palette: bool,
    ) -> Drawn {
        Drawn {
            watch: Watch::Fixture {
                cursor,
                current: seq,
            },
            answers: first.into_iter().collect(),
            shown_by: Instant::now() + display,
            ..Drawn::alone(t0, display, by_palette)
        }
    }

    /// Whether the fixture's requests are followed (else extensions alone).
    pub fn with_fixture(&self) -> bool {
        matches!(self.watch, Watch::Fixture { .. })
    }

    /// Takes in a later request at the cursor from reading `r`, if the fixture shows one:
    /// VS Code may ask again at the same cursor (the same document) before it draws, and
    /// then draws that later answer, which is the case's answer too (the display deadline
    /// then counts from it; while it is asked, typist waits up to `deadline`). Returns a
    /// later request's failure: an error is the case's unless this reading draws an
    /// earlier answer, a timeout is the case's when no answer had items.
    pub fn later(&mut self, r: &Page, display: Duration, deadline: Instant) -> Option<Fate> {
        let Watch::Fixture { cursor, current } = &mut self.watch else {
            return None;
        };
        let st = r.status()?;
        if st.seq <= *current || (st.line, st.character) != *cursor {
            return None;
        }
        match &st.fate {
            Fate::Error(_) => return Some(st.fate),
            Fate::Asking => {
                self.awaiting = Awaiting::LaterAnswer;
                self.shown_by = self.shown_by.max(deadline);
                return None;
            }
            Fate::Items(n) => {
                if *n > 0 {
                    self.answers.extend(r.answer_lines(st.seq));
                }
                // No items: what is drawn now, if anything, is an earlier answer VS Code
                // keeps; nothing drawn by the deadline is an empty.
                if *n == 0 && self.answers.is_empty() && self.seen == Seen::Nothing {
                    self.seen = Seen::NoItems;
                }
            }
            Fate::Timeout | Fate::Cancelled => {}
        }
        *current = st.seq;
        self.awaiting = Awaiting::Drawing;
        self.shown_by = Instant::now() + display;
        (st.fate == Fate::Timeout).then_some(Fate::Timeout)
    }

    /// The suggestion a ghost text `s` read at the cursor's line stands for: with the
    /// fixture, the answer it draws (its lines, tabs as tabs), else none (it is kept as
    /// the stale suggestion seen); with extensions alone, what the page shows.
    pub fn answer_drawn(&mut self, s: InlineSuggestion) -> Option<InlineSuggestion> {
        if !self.with_fixture() {
            return Some(s);
        }
        match self.answers.iter().find(|l| draws(&s.text, l)) {
            Some(lines) => Some(InlineSuggestion {
                line: lines.split('\n').next().unwrap_or("").to_string(),
                text: lines.clone(),
            }),
            None => {
                self.seen = Seen::Stale(s.text);
                None
            }
        }
    }

    /// The display deadline passed with no answer drawn: a later request still asked is
    /// the editor's failure; a stale suggestion seen is the case's error; an answer with
    /// no items an `empty`; else nothing shown (an `empty` with its reason).
    pub fn nothing_drawn(
        &self,
        profile: &Profile,
        app: &EditorApp,
        r: &Page,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if self.awaiting == Awaiting::LaterAnswer {
            return Err(editor_silent(profile, "inline", r));
        }
        match &self.seen {
            // Never an answer, never an empty: the user saw a suggestion that is not the
            // one asked for.
            Seen::Stale(seen) => Err(failed(format!(
                "vscode: {} answered {:?} and the page still shows {seen:?} at the display deadline ({} ms): a stale suggestion",
                profile.name,
                self.answers
                    .last()
                    .map_or("(no answer text from the fixture)", String::as_str),
                app.display_deadline_ms
            ))),
            Seen::NoItems => Ok(empty(self.t0)),
            Seen::Nothing => {
                tracing::debug!(page = %r, answers = ?self.answers, "vscode: nothing shown within the display deadline");
                let asked = if self.by_palette {
                    "; asked by Trigger Inline Suggestion (nothing typed and no Enter reaches this \
                     line): an extension that answers automatic triggers only shows nothing here"
                } else {
                    ""
                };
                Err(EditorError::NothingShown(format!(
                    "nothing shown within the display deadline ({} ms){asked}",
                    app.display_deadline_ms
                ))
                .into())
            }
        }
    }
}

/// No suggestion, timed from `t0`.
pub(super) fn empty(t0: Instant) -> Timed<Suggestions> {
    Timed {
        value: Suggestions::Inline(Vec::new()),
        latency_ms: t0.elapsed().as_secs_f64() * 1000.0,
    }
}

/// The profile's request deadline passed with no answer, as the fixture counted it from
/// the request's sending: the assistant's timeout.
pub(super) fn request_timed_out(profile: &Profile, what: &str) -> SessionError {
    EditorError::Timeout(format!(
        "{}: the {what} request not answered within {} ms (through vscode)",
        profile.name, profile.request_timeout_ms
    ))
    .into()
}

/// The fixture said nothing of a request at the cursor within the request deadline and
/// [`EDITOR_DELAY`]: VS Code did not ask, or its extension host or page did not get on.
/// The editor's failure, never the assistant's timeout.
pub(super) fn editor_silent(profile: &Profile, what: &str, r: &Page) -> SessionError {
    failed(format!(
        "vscode: no fate of the {what} request at the cursor within {} ms of the last key ({} ms request deadline and {} s for the editor; the fixture's status: {}); vscode did not get on, the assistant {} is not to blame",
        profile.request_timeout_ms + EDITOR_DELAY.as_millis() as u64,
        profile.request_timeout_ms,
        EDITOR_DELAY.as_secs(),
        r.status_json(),
        profile.name,
    ))
}

/// The fixture's request failed: the case's error.
pub(super) fn request_failed(name: &str, m: &str) -> SessionError {
    failed(format!(
        "{name}: the inline request failed (through vscode): {m}"
    ))
}
