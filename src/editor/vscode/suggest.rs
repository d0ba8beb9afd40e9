//! A line case (see the module's doc in `mod.rs`): the case placed in the editor, its
//! characters typed, the fate of its request waited for (with the fixture), then the
//! drawing of its answer ([`Drawn`]).

use std::time::{Duration, Instant};

use super::drawn::{Drawn, editor_silent, empty, request_failed, request_timed_out};
use super::instance::PAGE_POLL;
use super::keys::{END, RETURN};
use super::page::{Fate, Page, Status};
use super::scripts::expand_tabs;
use super::scripts::{AFTER_RENDER, cursor_at};
use super::ui::{LINE_SHOWS_WITHIN, TRIGGER};
use super::{EDITOR_DELAY, VscodeSession, failed};
use crate::editor::document::Position;
use crate::editor::error::SessionError;
use crate::editor::options::Timed;
use crate::editor::suggestions::{InlineSuggestion, Suggestions};
use crate::editor::workspace;

/// How long Enter may take to open the case's line before typist looks whether it was
/// lost.
const ENTER_SHOWS_WITHIN: Duration = Duration::from_secs(2);
/// Go to Line at most this many times for a case.
const PLACE_TRIES: usize = 3;

impl VscodeSession {
    /// A line case, as a person types it: the context placed, the line reached by Enter
    /// at the end of the line above ([`crate::editor::Arrival::EnterAbove`]), the typed
    /// characters as keys, then what VS Code shows read (see the module's doc).
    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let (text, at, line_start) = self.case_text(rel, cursor)?;
        let typed = text[line_start..at].to_string();
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let rest = text[at..line_end].to_string();
        let row = cursor.line as usize;
        self.bring_back_focus().await?;
        let (seq0, by_enter) = self
            .place_case(rel, &text, row, (line_start, at), &rest)
            .await?;
        // The user types the line's characters as key events.
        let interval = Duration::from_millis(self.app.key_interval_ms);
        for c in typed.chars() {
            tokio::time::sleep(interval).await;
            self.type_char(c).await?;
        }
        let by_palette = typed.is_empty() && !by_enter;
        if by_palette {
            // Nothing typed and no Enter (the first line, or text after the cursor): ask
            // as a user does, with the inline-suggest command (its keybinding, Alt+\,
            // does not reach it from DevTools key events).
            self.palette(TRIGGER).await?;
        }
        let t0 = Instant::now();
        let at_cursor = (row as u64, typed.encode_utf16().count() as u64);
        let typed_line = expand_tabs(&format!("{typed}{rest}"));
        let display = Duration::from_millis(self.app.display_deadline_ms);
        if !self.fixture {
            // Extensions alone: their requests are not seen, only what the page shows.
            let drawn = Drawn::alone(t0, display, by_palette);
            let r = self.wait_drawn(drawn, row, &typed_line).await;
            return self.signed_in_after(r).await;
        }
        let (status, page) = self
            .wait_status(seq0, at_cursor, t0, "inline", Page::status)
            .await?;
        let first = page.answer_lines(status.seq);
        let drawn = Drawn::answered(status.seq, at_cursor, first, t0, display, by_palette);
        match status.fate {
            Fate::Error(m) => Err(request_failed(&self.profile.name, &m)),
            Fate::Timeout => Err(request_timed_out(&self.profile, "inline")),
            Fate::Items(0) => Ok(empty(t0)),
            _ => self.wait_drawn(drawn, row, &typed_line).await,
        }
    }

    /// A case that showed nothing while the page asks to sign in (a token that expired
    /// mid-run): the run stops with [`SessionError::NotSignedIn`], naming the `typist
    /// login` to run, never a run of `empty` records. An answered case costs nothing.
    async fn signed_in_after(
        &mut self,
        r: Result<Timed<Suggestions>, SessionError>,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if !matches!(&r, Ok(t) if t.value.is_empty()) {
            return r;
        }
        let asks = self.sign_in_prompts(Duration::ZERO).await;
        if asks.is_empty() {
            return r;
        }
        Err(SessionError::NotSignedIn {
            server: self.profile.name.clone(),
            message: format!(
                "VS Code shows {}; run `{}`",
                asks.join("; "),
                self.login_command()
            ),
        })
    }

    /// Puts the case's context in the editor and the cursor where typing begins: with
    /// nothing after the cursor on a line below the first, the context without the line
    /// (the disk copy, reloaded by File: Revert File), the cursor at the end of the line
    /// above (where Ctrl+End leaves it when no line follows, else Go to Line and End),
    /// and Enter (an edit: VS Code asks its inline providers on its own, as after a
    /// person's Enter); else the line without its typed characters and the cursor at its
    /// start. Returns the fixture's last request before the case's keys, and whether the
    /// line was opened by Enter.
    async fn place_case(
        &mut self,
        rel: &str,
        text: &str,
        row: usize,
        (line_start, at): (usize, usize),
        rest: &str,
    ) -> Result<(u64, bool), SessionError> {
        let by_enter = rest.is_empty() && row > 0;
        let placed = if by_enter {
            format!("{}{}", &text[..line_start - 1], &text[at..])
        } else {
            format!("{}{}", &text[..line_start], &text[at..])
        };
        let path = self.root.join(rel);
        workspace::write_creating(&path, &placed).map_err(SessionError::file(&path))?;
        // Escape clears what the last case left (a ghost text, a widget); a modal dialog
        // an extension raised meanwhile (llama.vscode's first-start question comes while
        // the first file opens) is dismissed and named instead, never closed unnoticed by
        // that Escape.
        if !self.dismiss_dialog().await? {
            self.escape().await?;
        }
        self.revert(rel, &placed).await?;
        let lines = placed.split('\n').count();
        self.wait_line_count(lines).await?;
        if !by_enter {
            self.place_on_line(row, rest).await?;
            return Ok((self.status_seq().await?, false));
        }
        let above = text[..line_start - 1]
            .rsplit('\n')
            .next()
            .unwrap_or("")
            .to_string();
        // Nothing after the case's line (the default prefix context): Ctrl+End, which
        // waited for the reverted text, left the cursor at the end of the line above.
        let seq0 = self.enter_below(row, &above, at < text.len()).await?;
        Ok((seq0, true))
    }

    /// The cursor at the start of line `row` (0-based), which holds `rest`: Go to Line,
    /// again when the line does not show (it did every time once the reverted text had
    /// arrived; kept as a guard).
    async fn place_on_line(&mut self, row: usize, rest: &str) -> Result<(), SessionError> {
        let mut tries = 0;
        loop {
            tries += 1;
            self.go_to(row + 1, 1).await?;
            if tries == PLACE_TRIES {
                self.wait_line(row, rest).await?;
                break;
            }
            if self.line_shows(row, rest, LINE_SHOWS_WITHIN).await? {
                break;
            }
        }
        self.wait_client_ready().await
    }

    /// Enter at the end of line `row - 1` (0-based; it holds `above`), reached by Go to
    /// Line and End when lines `follow`: the case's line opened. Returns the fixture's
    /// last request before Enter.
    async fn enter_below(
        &mut self,
        row: usize,
        above: &str,
        follow: bool,
    ) -> Result<u64, SessionError> {
        let above_end = expand_tabs(above).chars().count() + 1;
        if follow {
            self.go_to(row, 1).await?;
            self.press(END, 0).await?;
        }
        self.wait_cursor(row, above_end).await?;
        self.wait_client_ready().await?;
        let seq0 = self.status_seq().await?;
        self.type_key(RETURN, "\r").await?;
        // Now and then on a loaded machine an Enter right after Go to Line (the line above
        // empty: End moves nothing, so nothing is waited for) does nothing at all; the
        // cursor still at the end of the line above, once the page has rendered what it
        // had pending, says so, and Enter is pressed again.
        if !self
            .page_shows(&cursor_at(row + 1, 1), ENTER_SHOWS_WITHIN)
            .await?
            && self.vs.eval(&self.tab, AFTER_RENDER).await.map(|_| true)?
            && self
                .page_shows(&cursor_at(row, above_end), Duration::ZERO)
                .await?
        {
            tracing::warn!(
                line = row,
                "vscode: Enter at the end of the line above did nothing; pressing it again"
            );
            self.type_key(RETURN, "\r").await?;
        }
        self.wait_cursor(row + 1, 1).await?;
        Ok(seq0)
    }

    /// The fixture's status of the first request at `at` (row, UTF-16 column) sent after
    /// request `seq0` that has a fate (not asking, not cancelled), and the reading of the
    /// page it was seen in (its answer is there). `status` picks the status item read:
    /// the inline requests' ([`Page::status`]) or the next edits' ([`Page::next_status`],
    /// which an inline request VS Code sends on its own meanwhile never touches). The
    /// fixture keeps the request deadline itself: typist waits past it for VS Code's own
    /// delays, and nothing said by then is the editor's failure, never a timeout (naming
    /// the `what` request).
    pub(super) async fn wait_status(
        &mut self,
        seq0: u64,
        (row, col16): (u64, u64),
        t0: Instant,
        what: &str,
        status: fn(&Page) -> Option<Status>,
    ) -> Result<(Status, Page), SessionError> {
        let deadline = t0 + self.profile.request_timeout() + EDITOR_DELAY;
        loop {
            let r = self.read().await?;
            if let Some(s) = status(&r)
                && s.seq > seq0
                && (s.line, s.character) == (row, col16)
                && !matches!(s.fate, Fate::Asking | Fate::Cancelled)
            {
                return Ok((s, r));
            }
            self.still_running()?;
            if Instant::now() >= deadline {
                return Err(editor_silent(&self.profile, what, &r));
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// Reads the page until it draws the case's answer at the cursor's line (`row`,
    /// holding `typed_line` as typed): with the fixture, a ghost text drawing one of the
    /// answers at the cursor since the case began (a later request at the cursor is the
    /// case's answer too, and typist waits for it); with extensions alone, any ghost
    /// text there. Nothing drawn by the display deadline is an `empty` with its reason
    /// (an answer with no items, or a ghost text VS Code does not draw); a ghost text
    /// that is not an answer is the case's error (a stale suggestion).
    async fn wait_drawn(
        &mut self,
        mut d: Drawn,
        row: usize,
        typed_line: &str,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let display = Duration::from_millis(self.app.display_deadline_ms);
        let deadline = d.t0 + self.profile.request_timeout() + EDITOR_DELAY;
        loop {
            let r = self.read().await?;
            let later = d.later(&r, display, deadline);
            if r.row == Some(row as u64 + 1)
                && let Some(s) = r.shown()
            {
                if r.cur.as_deref() != Some(typed_line) {
                    let e = failed(format!(
                        "vscode: line {} shows {} as typed, not {typed_line:?} (the page shows {r})",
                        row + 1,
                        serde_json::json!(r.cur)
                    ));
                    // Extensions alone: a ghost text drawn after an earlier key, before
                    // the page drew the last ones, is not read; the fixture's answer is
                    // at the cursor typing ended at, so its line must hold what was typed.
                    if d.with_fixture() || Instant::now() >= d.shown_by {
                        return Err(e);
                    }
                    tokio::time::sleep(PAGE_POLL / 4).await;
                    continue;
                }
                if let Some(s) = self.answer_of(&mut d, s).await? {
                    let latency_ms = d.t0.elapsed().as_secs_f64() * 1000.0;
                    return Ok(Timed {
                        value: Suggestions::Inline(vec![s]),
                        latency_ms,
                    });
                }
            }
            match later {
                Some(Fate::Error(m)) => return Err(request_failed(&self.profile.name, &m)),
                Some(Fate::Timeout) if d.answers.is_empty() => {
                    return Err(request_timed_out(&self.profile, "inline"));
                }
                _ => {}
            }
            if Instant::now() >= d.shown_by {
                return d.nothing_drawn(&self.profile, &self.app, &r);
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// The case's answer a ghost text `s` read at the cursor's line draws, if any.
    /// Extensions alone: what is drawn is read once the page has rendered what it had
    /// pending (VS Code draws a multi-line ghost text's view zone and its first line in
    /// separate frames), the same in two readings; a ghost text still changing at the
    /// display deadline is not read.
    async fn answer_of(
        &mut self,
        d: &mut Drawn,
        s: InlineSuggestion,
    ) -> Result<Option<InlineSuggestion>, SessionError> {
        if !d.with_fixture() && !self.settled(&s).await? {
            return Ok(None);
        }
        Ok(d.answer_drawn(s))
    }

    /// Whether the page still shows the ghost text `s` after two animation frames (the
    /// page's pending rendering done).
    async fn settled(&mut self, s: &InlineSuggestion) -> Result<bool, SessionError> {
        self.vs.eval(&self.tab, AFTER_RENDER).await?;
        Ok(self.read().await?.shown().as_ref() == Some(s))
    }
}
