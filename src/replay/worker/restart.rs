//! The restart policy, one for line, token, golf and list cases: a server that exits is
//! restarted with the editor's state and asked once more; `restart_after_timeouts`
//! timeouts in a row restart it too, and it is asked once more; `max_restarts`
//! restarts after exits in a row stop the run. A server typist attached to (`connect`)
//! is never restarted: its crash or hang is the case's error or timeout. An answer
//! ends both runs of failures.
//!
//! The callers ask, hand the result to [`Supervisor::judge`], and do what it says:
//! keep the result, or start a fresh session holding the editor's state and ask once
//! more (never twice: the second result is kept whatever it is).

use anyhow::{Result, bail};

use crate::editor::{Profile, SessionError};

/// The runs of failures the live server has had, and the limit on restarts.
#[derive(Debug)]
pub(super) struct Supervisor {
    /// Restarts after exits in a row (an answer ends the run).
    exits_in_row: u32,
    /// Timeouts in a row from the live server (a fresh server starts at 0).
    timeouts_in_row: u32,
    /// Restarts after exits in a row that stop the run when passed.
    max_restarts: u32,
}

/// What the caller does with an ask's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// The result is the case's.
    Keep,
    /// Start a fresh session with the editor's state and ask once more.
    Restart(Why),
}

/// Why the server is restarted (the manifest counts them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// It exited.
    Exited,
    /// It did not answer this many times in a row.
    TimedOut(u32),
}

impl Supervisor {
    pub(super) fn new(max_restarts: u32) -> Supervisor {
        Supervisor {
            exits_in_row: 0,
            timeouts_in_row: 0,
            max_restarts,
        }
    }

    /// A fresh server has started: it has not timed out yet.
    pub(super) fn fresh_server(&mut self) {
        self.timeouts_in_row = 0;
    }

    /// Judges one ask's result: `failure` is its error (`None`: answered); `again`,
    /// whether this was the ask once more after a restart. Errs when the server keeps
    /// exiting (`max_restarts` passed).
    pub(super) fn judge(
        &mut self,
        profile: &Profile,
        failure: Option<&SessionError>,
        again: bool,
    ) -> Result<Next> {
        let Some(e) = failure else {
            self.exits_in_row = 0;
            self.timeouts_in_row = 0;
            return Ok(Next::Keep);
        };
        // A credential that expired mid-run: the run stops naming the assistant and
        // the `typist login` to run, never a run of errors or empties.
        if matches!(e, SessionError::NotSignedIn { .. }) {
            bail!("{e}");
        }
        let restartable = profile.can_restart() && !again;
        if e.is_exit() && restartable {
            self.exits_in_row += 1;
            if self.exits_in_row > self.max_restarts {
                bail!(
                    "{} keeps failing ({} restarts in a row); last error: {e}",
                    profile.name,
                    self.exits_in_row - 1
                );
            }
            return Ok(Next::Restart(Why::Exited));
        }
        if e.is_timeout() {
            self.timeouts_in_row += 1;
            let limit = profile.restart_after_timeouts;
            if restartable && limit > 0 && self.timeouts_in_row >= limit {
                return Ok(Next::Restart(Why::TimedOut(self.timeouts_in_row)));
            }
        }
        Ok(Next::Keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::EditorError;

    fn profile(restart_after_timeouts: u32) -> Profile {
        let mut p = Profile::parse(
            "name = \"p\"\ncommand = \"true\"\ndialect = \"inline\"\nlanguages = [\"python\"]\n",
            std::path::Path::new("p.toml"),
        )
        .unwrap();
        p.restart_after_timeouts = restart_after_timeouts;
        p
    }

    fn exit() -> SessionError {
        SessionError::Editor(EditorError::Exited("gone".into()))
    }

    fn timeout() -> SessionError {
        SessionError::Editor(EditorError::Timeout("slow".into()))
    }

    #[test]
    fn an_exit_restarts_and_asks_once_more_and_too_many_stop_the_run() {
        let p = profile(0);
        let mut s = Supervisor::new(2);
        assert_eq!(
            s.judge(&p, Some(&exit()), false).unwrap(),
            Next::Restart(Why::Exited)
        );
        // The ask once more is kept, whatever it is.
        assert_eq!(s.judge(&p, Some(&exit()), true).unwrap(), Next::Keep);
        assert_eq!(
            s.judge(&p, Some(&exit()), false).unwrap(),
            Next::Restart(Why::Exited)
        );
        assert!(s.judge(&p, Some(&exit()), false).is_err());
        // An answer ends the run of exits.
        let mut s = Supervisor::new(1);
        s.judge(&p, Some(&exit()), false).unwrap();
        s.judge(&p, None, true).unwrap();
        assert_eq!(
            s.judge(&p, Some(&exit()), false).unwrap(),
            Next::Restart(Why::Exited)
        );
    }

    #[test]
    fn timeouts_in_a_row_restart_and_a_timeout_after_that_counts_one() {
        let p = profile(2);
        let mut s = Supervisor::new(3);
        assert_eq!(s.judge(&p, Some(&timeout()), false).unwrap(), Next::Keep);
        assert_eq!(
            s.judge(&p, Some(&timeout()), false).unwrap(),
            Next::Restart(Why::TimedOut(2))
        );
        s.fresh_server();
        assert_eq!(s.judge(&p, Some(&timeout()), true).unwrap(), Next::Keep);
        assert_eq!(s.timeouts_in_row, 1);
        // Another error neither counts nor ends the run.
        let other = SessionError::Editor(EditorError::Failed("no".into()));
        assert_eq!(s.judge(&p, Some(&other), false).unwrap(), Next::Keep);
        assert_eq!(
            s.judge(&p, Some(&timeout()), false).unwrap(),
            Next::Restart(Why::TimedOut(2))
        );
        // No limit: never restarted for timeouts.
        let mut s = Supervisor::new(3);
        for _ in 0..5 {
            assert_eq!(
                s.judge(&profile(0), Some(&timeout()), false).unwrap(),
                Next::Keep
            );
        }
    }

    #[test]
    fn an_attached_server_is_never_restarted() {
        let mut p = profile(1);
        p.connect = Some("127.0.0.1:1".into());
        let mut s = Supervisor::new(3);
        assert_eq!(s.judge(&p, Some(&exit()), false).unwrap(), Next::Keep);
        assert_eq!(s.judge(&p, Some(&timeout()), false).unwrap(), Next::Keep);
    }
}
