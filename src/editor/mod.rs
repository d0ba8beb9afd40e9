//! The `editor` layer: one editor session on one server under fixed conditions.
//! Owns profiles, conditions, documents and versions, typing, and the suggestion
//! dialects. Knows nothing of datasets or scoring; talks to servers only through `lsp`.

pub mod answers;
pub mod conditions;
pub mod dialect;
pub mod document;
pub mod profile;
pub mod session;

pub use conditions::{Conditions, TriggerKind};
pub use dialect::{CompletionEntry, InlineSuggestion, Suggestions};
pub use document::{Document, Position, PositionEncoding};
pub use profile::{DialectKind, Profile, ReadinessRule};
pub use session::{ServerCaps, ServerInfo, Session, SessionError, SessionOptions, SyncKind};
