//! The one interface the replay talks to, whatever the editor: open documents, set what
//! the editor holds, ask for the suggestion at a cursor, the server's name, shut down.
//! `typist` is typist's own LSP client ([`TypistSession`]); `neovim` a real Neovim
//! ([`NeovimSession`]); a third kind (VS Code) adds a variant here and nothing in the
//! replay. Plans, units, workers, records, resume and shards do not know which it is.

use std::time::Duration;

use super::conditions::{Conditions, ListAsk, Trigger};
use super::document::{Position, PositionEncoding};
use super::editors::Editors;
use super::error::SessionError;
use super::extensions::ExtensionState;
use super::handshake::{ServerCaps, ServerInfo};
use super::kind::{EditorApp, EditorKind};
use super::neovim::NeovimSession;
use super::next_edit::NextEdits;
use super::options::{SessionOptions, Timed};
use super::profile::Profile;
use super::ranking::{ListAnswer, ShownList};
use super::suggestions::Suggestions;
use super::typist::TypistSession;
use super::vscode::VscodeSession;

pub enum EditorSession {
    Typist(TypistSession),
    Neovim(NeovimSession),
    Vscode(VscodeSession),
}

impl EditorSession {
    /// Starts `app`'s kind of editor on `profile`'s server in a fresh workspace (a VS
    /// Code from the run's `editors`).
    pub async fn start(
        editors: &Editors,
        app: &EditorApp,
        profile: &Profile,
        conditions: &Conditions,
        mut opts: SessionOptions,
    ) -> Result<EditorSession, SessionError> {
        // The assistant's sign-in (refused here, naming `typist login`, when it has
        // none); VS Code's goes into its instance (shared by the assistant's sessions),
        // not into a session's `HOME`.
        opts.signin = editors.sign_in(profile, app.kind)?;
        Ok(match app.kind {
            EditorKind::Typist => {
                EditorSession::Typist(TypistSession::start(profile, conditions, opts).await?)
            }
            EditorKind::Neovim => {
                EditorSession::Neovim(NeovimSession::start(profile, app, opts).await?)
            }
            EditorKind::Vscode => EditorSession::Vscode(
                VscodeSession::start(editors.vscode(), profile, app, opts).await?,
            ),
        })
    }

    /// The editor's version (`None` for typist's own client: typist's version is the
    /// manifest's).
    pub fn editor_version(&self) -> Option<&str> {
        match self {
            EditorSession::Typist(_) => None,
            EditorSession::Neovim(n) => Some(n.editor_version()),
            EditorSession::Vscode(v) => Some(v.editor_version()),
        }
    }

    /// VS Code: each extension installed and whether it has activated so far; empty
    /// for the other editors.
    pub fn extension_states(&self) -> Vec<ExtensionState> {
        match self {
            EditorSession::Vscode(v) => v.extension_states(),
            _ => Vec::new(),
        }
    }

    /// VS Code: what the page shows that asks the user to sign in (status bar items,
    /// notifications, the Accounts menu's badge), looked for during `within`; empty for
    /// the other editors.
    pub async fn sign_in_prompts(&mut self, within: std::time::Duration) -> Vec<String> {
        match self {
            EditorSession::Vscode(v) => v.sign_in_prompts(within).await,
            _ => Vec::new(),
        }
    }

    /// What the server declared at `initialize`, as typist's own client read it;
    /// `None` in a real editor (its client reads them).
    pub fn capabilities(&self) -> Option<&ServerCaps> {
        match self {
            EditorSession::Typist(s) => Some(s.capabilities()),
            _ => None,
        }
    }

    /// Copilot's sign-in state (`checkStatus`, local checks only) asked through
    /// typist's own client; `None` otherwise.
    pub async fn auth_status(&mut self) -> Option<String> {
        match self {
            EditorSession::Typist(s) => s.auth_status().await,
            _ => None,
        }
    }

    /// The workspace copy the server works on.
    pub fn workspace(&self) -> &std::path::Path {
        match self {
            EditorSession::Typist(s) => s.workspace(),
            EditorSession::Neovim(n) => n.workspace(),
            EditorSession::Vscode(v) => v.workspace(),
        }
    }

    pub fn server_info(&self) -> &ServerInfo {
        match self {
            EditorSession::Typist(s) => s.server_info(),
            EditorSession::Neovim(n) => n.server_info(),
            EditorSession::Vscode(v) => v.server_info(),
        }
    }

    /// How the cursor's `character` is counted in [`Self::suggest`].
    pub fn encoding(&self) -> PositionEncoding {
        match self {
            EditorSession::Typist(s) => s.encoding(),
            // Neovim's cursor column is in bytes.
            EditorSession::Neovim(_) => PositionEncoding::Utf8,
            // typist places VS Code's cursor itself, from byte offsets.
            EditorSession::Vscode(_) => PositionEncoding::Utf8,
        }
    }

    pub async fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        match self {
            EditorSession::Typist(s) => s.open(rel, text),
            EditorSession::Neovim(n) => n.open(rel, text).await,
            EditorSession::Vscode(v) => v.open(rel, text).await,
        }
    }

    /// What the editor holds in `rel` from now on (its disk copy too).
    pub fn set_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        match self {
            EditorSession::Typist(s) => s.set_text(rel, text),
            EditorSession::Neovim(n) => n.set_text(rel, text),
            EditorSession::Vscode(v) => v.set_text(rel, text),
        }
    }

    /// Replaces bytes `start..end` of `rel` by `text` (`after` is the text it gives):
    /// one change with exactly that range in typist's own client and in Neovim's
    /// buffer (whose client sends the change it computes); the resulting text
    /// (`set_text`) in VS Code, placed with its next ask.
    pub async fn edit(
        &mut self,
        rel: &str,
        start: usize,
        end: usize,
        text: &str,
        after: &str,
    ) -> Result<(), SessionError> {
        match self {
            EditorSession::Typist(s) => s.edit(rel, start, end, text),
            EditorSession::Neovim(n) => n.edit(rel, start, end, text).await,
            EditorSession::Vscode(v) => v.set_text(rel, after),
        }
    }

    /// The inline suggestion where an edit session stands in `rel`, the cursor at
    /// `cursor`: asked of the document as it is in typist's own client; in Neovim,
    /// insert mode entered at the cursor (nothing retyped); in VS Code, the files the
    /// session changed reloaded and the cursor's line typed as for a line case.
    pub async fn suggest_here(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        match self {
            EditorSession::Typist(s) => s.suggest(rel, cursor).await,
            EditorSession::Neovim(n) => n.suggest_here(rel, cursor).await,
            EditorSession::Vscode(v) => v.suggest_here(rel, cursor).await,
        }
    }

    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        match self {
            EditorSession::Typist(s) => s.suggest(rel, cursor).await,
            EditorSession::Neovim(n) => n.suggest(rel, cursor).await,
            EditorSession::Vscode(v) => v.suggest(rel, cursor).await,
        }
    }

    /// The first suggestion of a session, after the profile's readiness rule (in
    /// either editor).
    pub async fn suggest_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        match self {
            EditorSession::Typist(s) => s.suggest_when_ready(rel, cursor).await,
            EditorSession::Neovim(n) => n.suggest_when_ready(rel, cursor).await,
            EditorSession::Vscode(v) => v.suggest(rel, cursor).await,
        }
    }

    /// The next edit proposed at `cursor` in `rel` (methodology §13), asked as
    /// Copilot's editors ask it (`textDocument/copilotInlineEdit`): by typist's own
    /// client, by Neovim's as copilot-lsp asks it, and in VS Code through typist's fixture
    /// extension, as Copilot's own extension asks it, read once VS Code draws it.
    pub async fn next_edit(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<NextEdits>, SessionError> {
        match self {
            EditorSession::Typist(s) => s.next_edit(rel, cursor).await,
            EditorSession::Neovim(n) => n.next_edit(rel, cursor).await,
            EditorSession::Vscode(v) => v.next_edit(rel, cursor).await,
        }
    }

    pub fn last_request_hash(&self) -> Option<&str> {
        match self {
            EditorSession::Typist(s) => s.last_request_hash(),
            EditorSession::Neovim(n) => n.last_request_hash(),
            EditorSession::Vscode(v) => v.last_request_hash(),
        }
    }

    /// Why this editor must not serve another case (a Lua error in Neovim), if so.
    pub fn broken(&self) -> Option<&str> {
        match self {
            EditorSession::Typist(_) => None,
            EditorSession::Neovim(n) => n.broken(),
            EditorSession::Vscode(v) => v.broken(),
        }
    }

    /// Token cases: the document placed with the cursor at the token's start, in a
    /// fresh completion session (typist's own client: nothing to do, the document is
    /// what `set_text` gave it).
    pub async fn list_open(&mut self, rel: &str, cursor: Position) -> Result<(), SessionError> {
        match self {
            EditorSession::Typist(_) => Ok(()),
            EditorSession::Neovim(n) => n.list_open(rel, cursor).await,
            EditorSession::Vscode(v) => v.list_open(rel, cursor).await,
        }
    }

    /// Token cases: the list asked for at `cursor` as `ask` says (after the profile's
    /// readiness rule when `when_ready`): the server's answer with typist's own client,
    /// the editor's widget as shown with a real editor (Neovim's popup, VS Code's
    /// suggest widget).
    pub async fn list_ask(
        &mut self,
        rel: &str,
        cursor: Position,
        ask: &ListAsk,
        when_ready: bool,
    ) -> Result<Timed<ListAnswer>, SessionError> {
        let shown = |t: Timed<ShownList>| Timed {
            value: ListAnswer::Shown(t.value),
            latency_ms: t.latency_ms,
        };
        match self {
            EditorSession::Typist(s) => s.list_ask(rel, cursor, ask, when_ready).await,
            EditorSession::Neovim(n) => {
                let trigger = Trigger::of(ask, n.trigger_characters());
                Ok(shown(n.list_ask(&trigger, when_ready).await?))
            }
            EditorSession::Vscode(v) => {
                let trigger = Trigger::of(ask, v.trigger_characters());
                Ok(shown(v.list_ask(&trigger, when_ready).await?))
            }
        }
    }

    /// Token cases: `typed` typed at the cursor, `text` what the document holds after
    /// it with the cursor at `cursor`; `incomplete`: the list in hand is. The list
    /// shown now and its latency when it changed (`None`: the one in hand stands; a
    /// latency of `None`: shown without a new request).
    pub async fn list_type(
        &mut self,
        rel: &str,
        text: &str,
        cursor: Position,
        typed: &str,
        incomplete: bool,
    ) -> Result<Option<(ListAnswer, Option<f64>)>, SessionError> {
        let shown = |l: Option<(ShownList, Option<f64>)>| l.map(|(l, t)| (ListAnswer::Shown(l), t));
        match self {
            EditorSession::Typist(s) => s.list_type(rel, text, cursor, incomplete).await,
            EditorSession::Neovim(n) => {
                n.set_text(rel, text)?;
                Ok(shown(n.list_type(typed).await?))
            }
            EditorSession::Vscode(v) => {
                v.set_text(rel, text)?;
                Ok(shown(v.list_type(typed).await?))
            }
        }
    }

    pub async fn shutdown(self, within: Duration) {
        match self {
            EditorSession::Typist(s) => {
                let _ = tokio::time::timeout(within, s.shutdown()).await;
            }
            EditorSession::Neovim(n) => {
                let _ = tokio::time::timeout(within, n.shutdown()).await;
            }
            EditorSession::Vscode(v) => {
                let _ = tokio::time::timeout(within, v.shutdown()).await;
            }
        }
    }
}
