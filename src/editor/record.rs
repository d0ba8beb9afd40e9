//! `typist record`: an edit session recorded from a person in their own editor, through
//! one entry whatever the editor (Neovim's recorder is `neovim/record.rs`, VS Code's
//! `vscode/instance/record.rs`; both write one log format). The log it gives is made a
//! session by `dataset::edits::recorded`.

use super::error::{EditorError, SessionError};
use super::kind::EditorKind;
pub use super::options::{RecordLog, RecordOptions};

/// Runs `kind`'s editor for the person until they end the recording (Neovim on their
/// terminal; VS Code at an address for their browser); the recorder's log.
pub async fn record(kind: EditorKind, opts: &RecordOptions) -> Result<RecordLog, SessionError> {
    match kind {
        EditorKind::Neovim => super::neovim::record::record(opts).await,
        EditorKind::Vscode => super::vscode::instance::record::record(opts).await,
        other => Err(EditorError::Failed(format!(
            "typist record records in neovim or vscode; {} is typist's own client, which nobody types in",
            other.as_str()
        ))
        .into()),
    }
}
