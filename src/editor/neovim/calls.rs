//! Typist's calls into Neovim and what their failures make of the session: a call
//! Neovim answers with an error, or not within its deadline, or a reply of
//! `driver.lua`'s that is malformed, breaks the editor (it serves no other case); a
//! closed channel is Neovim's exit, told with its status and last stderr lines. Also
//! the reads of where typing stands, and the keys typed as a person types them.

use std::time::{Duration, Instant};

use rmpv::Value as Mp;
use serde::de::DeserializeOwned;

use super::NeovimSession;
use super::protocol::{self, State};
use super::rpc::CallError;
use crate::editor::error::{EditorError, SessionError};
use crate::lsp::ExitInfo;

/// Deadline of typist's own calls into Neovim (placing text, reading state).
const CALL: Duration = Duration::from_secs(10);
/// How often typist looks whether Neovim has processed the keys it typed.
const POLL: Duration = Duration::from_millis(5);
/// How long an ended Neovim's exit status is waited for, so that the error can say it.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);
/// How long a killed Neovim has to be reaped at shutdown.
const KILL_WAIT: Duration = Duration::from_secs(2);

impl NeovimSession {
    /// This editor serves no other case, for `why`: the case's error.
    pub(super) fn broke(&mut self, why: String) -> SessionError {
        self.broken = Some(why.clone());
        EditorError::Failed(why).into()
    }

    /// An error message shown since the case was placed is the case's error, and this
    /// editor serves no other case.
    pub(super) fn check_errors(&mut self, state: &State) -> Result<(), SessionError> {
        if state.errors.is_empty() {
            return Ok(());
        }
        Err(self.broke(format!("neovim: {}", state.errors.join("\n"))))
    }

    /// Where typing stands in `buf` (`typist.state`).
    pub(super) async fn state(&mut self, buf: i64) -> Result<State, SessionError> {
        self.reply("typist.state", vec![Mp::from(buf)]).await
    }

    /// `driver.lua`'s `call` (`typist.NAME`) with `args`, its reply decoded.
    pub(super) async fn reply<T: DeserializeOwned>(
        &mut self,
        call: &str,
        args: Vec<Mp>,
    ) -> Result<T, SessionError> {
        let v = self.lua(&format!("return {call}(...)"), args).await?;
        protocol::decode(call, &v).map_err(|why| self.broke(why))
    }

    /// Polls `buf`'s state until `done`; not within `within`, the editor is broken.
    pub(super) async fn wait_state(
        &mut self,
        buf: i64,
        within: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<State, SessionError> {
        let deadline = Instant::now() + within;
        loop {
            let s = self.state(buf).await?;
            if done(&s) {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                return Err(self.broke(format!(
                    "neovim: typing did not give the expected state: {s:?}"
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Types `text` as a person does: one key per `interval`, each after its pause.
    pub(super) async fn type_chars(
        &mut self,
        text: &str,
        interval: Duration,
    ) -> Result<(), SessionError> {
        for c in text.chars() {
            tokio::time::sleep(interval).await;
            let key = if c == '<' {
                "<lt>".to_string()
            } else {
                c.to_string()
            };
            self.input(&key).await?;
        }
        Ok(())
    }

    pub(super) async fn input(&mut self, keys: &str) -> Result<(), SessionError> {
        self.call("nvim_input", vec![Mp::from(keys)], CALL).await?;
        Ok(())
    }

    pub(super) async fn lua(&mut self, code: &str, args: Vec<Mp>) -> Result<Mp, SessionError> {
        self.call("nvim_exec_lua", vec![Mp::from(code), Mp::Array(args)], CALL)
            .await
    }

    pub(super) async fn call(
        &mut self,
        method: &str,
        args: Vec<Mp>,
        within: Duration,
    ) -> Result<Mp, SessionError> {
        match self.rpc.call(method, args, within).await {
            Ok(v) => Ok(v),
            Err(CallError::Answer(m)) => Err(self.broke(format!("neovim: {m}"))),
            Err(CallError::Timeout) => Err(self.broke(format!(
                "neovim did not answer {method} within {} ms",
                within.as_millis()
            ))),
            Err(CallError::Closed) => Err(self.exited("neovim exited").await.into()),
        }
    }

    /// An exit error with what is known of Neovim's end (its status and last stderr
    /// lines, when it has ended).
    pub(super) async fn exited(&mut self, what: &str) -> EditorError {
        // Neovim's end is published once it is reaped: wait for it a moment so the
        // message says how it ended.
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some)).await;
        let end = exit.borrow().clone();
        match end {
            Some(e) if !e.stderr_tail.is_empty() => {
                EditorError::Exited(format!("{what} ({}): {}", e.status, e.stderr_tail))
            }
            Some(e) => EditorError::Exited(format!("{what} ({})", e.status)),
            None => EditorError::Exited(what.to_string()),
        }
    }

    /// Stops Neovim and its process group, keeping the session's folder (a login saves
    /// from its `home`).
    pub(super) async fn into_folder(self) -> tempfile::TempDir {
        self.process.kill_group();
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(Option::is_some)).await;
        self._dir
    }

    /// Stops Neovim and every server in its process group; the workspace goes with it.
    pub async fn shutdown(self) -> Option<ExitInfo> {
        self.process.kill_group();
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(Option::is_some)).await;
        exit.borrow().clone()
    }
}
