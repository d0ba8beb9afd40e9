//! `typist record`: an edit session recorded from a person in their own editor, through
//! one entry whatever the editor (Neovim's recorder is `neovim/record.rs`; VS Code has
//! none yet). The log it gives is made a session by `dataset::edits::recorded`.

use super::error::{EditorError, SessionError};
use super::kind::EditorKind;
pub use super::options::{RecordLog, RecordOptions};

/// Runs `kind`'s editor on the person's terminal until they quit it; the recorder's log.
pub async fn record(kind: EditorKind, opts: &RecordOptions) -> Result<RecordLog, SessionError> {
    match kind {
        EditorKind::Neovim => super::neovim::record::record(opts).await,
        other => Err(EditorError::Failed(format!(
            "typist record drives Neovim only for now (--editor neovim); {} has no recorder yet",
            other.as_str()
        ))
        .into()),
    }
}
