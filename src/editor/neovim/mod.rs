//! A real Neovim as the editor: `nvim --embed --headless --clean -n -i NONE` in the
//! session's workspace, driven over msgpack-RPC ([`rpc`], on `rmpv`). Neovim's own LSP
//! client starts the profile's server (`vim.lsp.start` with its command, settings and
//! initialization options) and shows inline completions as ghost text; typist places
//! the context without the case's line with `nvim_buf_set_lines`, reaches the line as a
//! person does (`A<CR>` at the end of the line above: see [`suggest`]), types the line's
//! characters with `nvim_input` at the run's key interval, and reads back what Neovim
//! drew (every extmark at the cursor's row in the namespaces read, composed by
//! [`shown`]; never diagnostics' virtual text).
//!
//! Which answer is the case's: `driver.lua` reports every inline-completion request
//! Neovim sends (with the buffer's version and the cursor's row) and, for each, the
//! server's answer and the ghost text right after Neovim drew it. The case's answer
//! is the first request sent at the case's buffer version and row after typing ended;
//! a ghost text redrawn from an older request (Neovim redraws the previous suggestion
//! at the new cursor at once, and leaves it on an error) is never read. An error answer
//! is an `error`, no answer within the profile's deadline a `timeout`, the server's
//! exit (`LspDetach`) or Neovim's an exit; an error message Neovim shows (the message
//! history's error entries, never a `v:errmsg` set under `silent!`) or a failing handler
//! is the case's error and the editor is replaced before the next case.
//!
//! Buffers have `'endofline'` off: Neovim would otherwise send a line break after the
//! last line, a character after the cursor that typist's own client never sends (it
//! changed a model's answers in 2 of 23 cases), and its client sends whole-text changes:
//! with `'endofline'` off its incremental changes still put that line break back.
//!
//! The Neovim process leads its own process group (the servers it starts are in it) and
//! the group is killed when the session is dropped (`lsp::process`).
//!
//! The files: [`launch`] starts Neovim and loads `driver.lua`; [`protocol`] types what
//! goes to `driver.lua` and what comes back; [`requests`] follows the requests Neovim
//! sends and waits for the case's; [`suggest`] runs a line case, [`lists`] a completion
//! session; [`documents`] opens and updates the documents; [`calls`] makes typist's
//! calls into Neovim and turns their failures into the session's; [`rpc`] is the
//! msgpack-RPC channel and [`shown`] composes the ghost text read; [`login`] is
//! `typist login --editor neovim`, and [`signed_in`] asks a plugin's sign-in status
//! (before a run's first case, and after a case that showed nothing).

mod calls;
mod documents;
mod edits;
mod launch;
mod list_state;
mod lists;
pub mod login;
mod protocol;
pub mod record;
pub(super) mod refuse;
mod requests;
mod rpc;
mod shown;
mod signed_in;
mod suggest;
mod waits;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

use super::handshake::ServerInfo;
use super::kind::EditorApp;
use super::profile::{Profile, resolve_program};
use crate::lsp::ExitInfo;
use crate::lsp::process::ServerProcess;
use list_state::ListState;
use requests::Requests;
use rpc::{Notification, Rpc};

/// The Lua side: options, the client, the request watch, the ghost-text reader.
const DRIVER: &str = include_str!("driver.lua");
/// Neovim's own inline-completion namespace: where its ghost text is drawn.
pub const INLINE_NAMESPACE: &str = "nvim.lsp.inline_completion";

/// Neovim's program: `$TYPIST_NVIM`, else `nvim` in a server prefix or on `PATH`.
pub fn program() -> Option<PathBuf> {
    match std::env::var_os("TYPIST_NVIM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => resolve_program("nvim"),
    }
}

/// One Neovim and what typist knows of it: the channel and its notifications, the
/// process, the workspace, the documents and what their buffers hold, the requests
/// Neovim sent, and whether the editor may serve another case.
pub struct NeovimSession {
    rpc: Rpc,
    notes: UnboundedReceiver<Notification>,
    process: ServerProcess,
    exit: watch::Receiver<Option<ExitInfo>>,
    /// The sign-in the session started from: written back when dropped, after Neovim
    /// and before the folder.
    _signin: Option<crate::editor::signin::SessionSignIn>,
    _dir: tempfile::TempDir,
    root: PathBuf,
    profile: Profile,
    app: EditorApp,
    version: String,
    info: ServerInfo,
    /// Buffers by document (relative path).
    bufs: BTreeMap<String, i64>,
    /// What the editor is to hold per document (mirrored on disk at once).
    texts: BTreeMap<String, String>,
    /// What the target buffer holds, line by line, after typist's last change.
    lines: BTreeMap<String, Vec<String>>,
    /// The requests Neovim sent, their answers, and the server's detach.
    requests: Requests,
    last_request_hash: Option<String>,
    /// A Lua error happened: this editor is not used for another case.
    broken: Option<String>,
    /// The server's completion trigger characters.
    triggers: Vec<String>,
    /// The completion session under way (token cases).
    list: Option<ListState>,
}

impl NeovimSession {
    pub fn editor_version(&self) -> &str {
        &self.version
    }
    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }
    pub fn workspace(&self) -> &Path {
        &self.root
    }
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }
    /// Why this editor must not serve another case, if it must not.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }
    pub fn last_request_hash(&self) -> Option<&str> {
        self.last_request_hash.as_deref()
    }
}
