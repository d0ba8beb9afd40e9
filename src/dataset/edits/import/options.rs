//! What an import takes: its options.

use crate::dataset::Language;

/// What to import and how to type it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// A gap at least this long before an event is a moment (default 1000).
    pub pause_ms: u64,
    /// Seeds the typing times (with each session's id).
    pub seed: u64,
    /// Stop after this many sessions (oldest commits, first patches, first files).
    pub max_sessions: Option<usize>,
    /// A change touching more code files is skipped (default 8).
    pub max_files: usize,
    /// A change of more lines (added plus removed, code files) is skipped (default 60).
    pub max_changed_lines: usize,
    /// Only files of these languages; `None`: every language typist knows
    /// ([`Language::of_path`]). Other files are left out of every change.
    pub languages: Option<Vec<Language>>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            pause_ms: 1000,
            seed: 0,
            max_sessions: None,
            max_files: 8,
            max_changed_lines: 60,
            languages: None,
        }
    }
}
