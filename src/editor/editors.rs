//! The run's editors: what the sessions of one run share, opened by whoever runs them
//! (`replay::run`, `doctor`) and closed at the end, where closing returns what the
//! manifest needs. Today that is VS Code's code-server and Chromium (one per set of
//! extensions and settings, started by the first session asking for it); typist's own
//! client and Neovim start a process per session and share nothing. No process-wide
//! state: two runs in one process have two hosts.

use std::sync::Arc;

use super::extensions::Closed;
use super::kind::EditorKind;
use super::vscode::VscodeHost;

/// The user settings typist writes for `kind` of editor, recorded in the manifest as
/// the editor's conditions (VS Code's; `None` for the others).
pub fn user_settings(kind: EditorKind) -> Option<serde_json::Value> {
    (kind == EditorKind::Vscode).then(super::vscode::user_settings)
}

/// The editors of one run; cloned, it is the same host.
#[derive(Clone, Default)]
pub struct Editors {
    vscode: Arc<VscodeHost>,
}

impl Editors {
    pub fn new() -> Editors {
        Editors::default()
    }

    /// The run's VS Codes.
    pub(super) fn vscode(&self) -> &Arc<VscodeHost> {
        &self.vscode
    }

    /// Stops what the run's sessions shared and returns what it leaves for the
    /// manifest (each VS Code extension and whether it activated, what typist closed).
    pub async fn close(&self) -> Closed {
        self.vscode.close().await
    }
}
