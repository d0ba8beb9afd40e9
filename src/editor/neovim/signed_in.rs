//! A plugin's sign-in status (`[signin] neovim_status`, a Lua chunk that returns `true`
//! or why not), asked once the session has started from its vault entry, and again
//! after a case that showed nothing (a credential that expired mid-run): not signed in
//! is [`SessionError::NotSignedIn`], naming the plugin's words and the `typist login`
//! to run, and the run stops. A case that got an answer asks nothing.

use rmpv::Value as Mp;

use super::NeovimSession;
use super::login::STATUS;
use crate::editor::error::SessionError;
use crate::editor::options::Timed;
use crate::editor::suggestions::Suggestions;

impl NeovimSession {
    /// Why the plugin is not signed in (its own words), or `None` when it is or its
    /// profile has no status to ask.
    pub(super) async fn not_signed_in(&mut self) -> Result<Option<String>, SessionError> {
        let Some(chunk) = self
            .profile
            .signin
            .as_ref()
            .and_then(|s| s.neovim_status.clone())
        else {
            return Ok(None);
        };
        Ok(
            match self.lua(STATUS, vec![Mp::from(chunk.as_str())]).await? {
                Mp::Boolean(true) => None,
                other => Some(
                    other
                        .as_str()
                        .unwrap_or("the plugin says it is not signed in")
                        .to_string(),
                ),
            },
        )
    }

    /// Not signed in is the session's error, naming `typist login`.
    pub(super) async fn require_signed_in(&mut self) -> Result<(), SessionError> {
        match self.not_signed_in().await? {
            None => Ok(()),
            Some(why) => Err(SessionError::NotSignedIn {
                server: self.profile.name.clone(),
                message: format!(
                    "{}; run `typist login --editor neovim --assistant {}`",
                    crate::secrets::scrub(&why),
                    self.profile.name
                ),
            }),
        }
    }

    /// A case's result, with nothing shown (nothing drawn, an empty answer) checked
    /// against the sign-in: lost, it is the case's error.
    pub(super) async fn signed_in_or(
        &mut self,
        r: Result<Timed<Suggestions>, SessionError>,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if self._signin.is_none() {
            return r;
        }
        let empty = match &r {
            Err(e) => e.nothing_shown().is_some(),
            Ok(t) => t.value.is_empty(),
        };
        if empty {
            self.require_signed_in().await?;
        }
        r
    }
}
