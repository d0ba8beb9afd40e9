//! How a session fails.

use std::path::{Path, PathBuf};

use crate::lsp::LspError;

/// Copilot's "not authenticated" error code.
pub const COPILOT_NO_TOKEN: i64 = 1000;

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error(transparent)]
    Lsp(#[from] LspError),
    #[error("{server} is not signed in: {message}")]
    NotSignedIn { server: String, message: String },
    #[error("{server} is not installed ({command} not found); {hint}")]
    Missing {
        server: String,
        command: String,
        hint: String,
    },
    /// A file of the session's workspace or sandboxed home could not be made, copied or
    /// written (disk full, permissions, a source file gone).
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// The profile's `connect` address does not parse.
    #[error("{server}: connect: {message}")]
    Address { server: String, message: String },
    /// The profile's client capabilities are not valid LSP.
    #[error("{server}: client capabilities: {message}")]
    Capabilities { server: String, message: String },
    /// The worker has no live session to ask (the last one was retired and none could
    /// be started for this case).
    #[error("no session")]
    NoSession,
    #[error("{0} is not open in the session")]
    NotOpen(String),
    #[error(transparent)]
    Editor(#[from] EditorError),
}

/// How a real editor (Neovim) failed, each with its message: the editor or the server
/// inside it is gone (a restart may help), the editor failed (a Lua error, a refused
/// call: the case's error), or the server inside it did not answer in time.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EditorError {
    #[error("{0}")]
    Exited(String),
    #[error("{0}")]
    Failed(String),
    #[error("{0}")]
    Timeout(String),
    /// A plugin showed nothing new within the display deadline: what the user saw is
    /// nothing (an `empty` with this reason, never an error or a silent empty).
    #[error("{0}")]
    NothingShown(String),
}

impl SessionError {
    /// A file error at `path`, for `map_err`.
    pub fn file(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
        move |e| SessionError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
    pub fn is_timeout(&self) -> bool {
        matches!(self, SessionError::Lsp(e) if e.is_timeout())
            || matches!(self, SessionError::Editor(EditorError::Timeout(_)))
    }
    /// Nothing was shown within the display deadline (a plugin's ghost text).
    pub fn nothing_shown(&self) -> Option<&str> {
        match self {
            SessionError::Editor(EditorError::NothingShown(m)) => Some(m),
            _ => None,
        }
    }
    /// The server is gone (crashed or exited): a restart may help.
    pub fn is_exit(&self) -> bool {
        matches!(self, SessionError::Lsp(e) if e.is_exit())
            || matches!(self, SessionError::Editor(EditorError::Exited(_)))
    }
}
