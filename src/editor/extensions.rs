//! What a run's editors leave for the manifest and `doctor`: each extension installed
//! and whether it activated, and what typist closed that extensions had opened over
//! the document (VS Code; nothing with the other editors).

/// An extension of the run as the manifest records it: what code-server installed, and
/// whether its extension host activated it (read from the extension hosts' logs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExtensionState {
    pub id: String,
    pub version: String,
    /// What was installed: a `.vsix` file or a marketplace id.
    pub from: String,
    /// `activate` was called in at least one window.
    pub activated: bool,
    /// Its activation failed: the error the extension host logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_error: Option<String>,
}

/// What the run's editors leave when they are closed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Closed {
    /// Each extension installed, and whether it activated.
    pub extensions: Vec<ExtensionState>,
    /// What typist closed that extensions had opened over the document, sorted.
    pub closed: Vec<String>,
    /// The vault entries the run's sessions started from (name and when saved), sorted.
    pub vault: Vec<crate::vault::Used>,
}
