//! The `editor` layer: one editor session on one server under fixed conditions.
//! Owns profiles, conditions, documents and versions, typing, and the suggestion
//! dialects; which editor types (typist's own client or a real Neovim, behind
//! [`EditorSession`]). Knows nothing of datasets or scoring; talks to servers only
//! through `lsp` or through the editor it drives.

pub mod ad_hoc;
pub mod answers;
pub mod conditions;
pub mod dialect;
pub mod document;
pub mod editors;
mod error;
pub mod extensions;
pub mod handshake;
pub mod kind;
pub mod login;
pub mod neovim;
pub mod next_edit;
pub mod options;
pub mod profile;
pub mod ranking;
pub mod record;
pub mod refusals;
pub mod request_hash;
pub mod run_asks;
pub mod server_state;
pub mod session;
pub mod signin;
pub mod suggestions;
pub mod typist;
pub mod vscode;
pub mod workspace;

pub use conditions::{Conditions, ListAsk, TriggerKind};
pub use document::{Document, Position, PositionEncoding};
pub use editors::Editors;
pub use error::{EditorError, SessionError};
pub use extensions::{Closed, ExtensionState};
pub use handshake::{ServerCaps, ServerInfo, SyncKind};
pub use kind::{Arrival, EditorApp, EditorKind};
pub use next_edit::{NextEdits, ProposedEdit};
pub use options::{SessionOptions, Timed};
pub use profile::{DialectKind, Profile, ReadinessRule};
pub use session::EditorSession;
pub use suggestions::{CompletionEntry, InlineSuggestion, Suggestions};
