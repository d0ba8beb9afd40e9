//! Where a completion session (token cases) stands in the buffer: what `lists.rs`
//! keeps between placing the document, asking and typing.

/// The completion session under way in the buffer (token cases).
pub(super) struct ListState {
    pub rel: String,
    pub buf: i64,
    pub row: i64,
    /// The placement's epoch.
    pub epoch: u64,
    pub phase: ListPhase,
}

/// Where a completion session stands.
#[derive(Debug, Clone, Copy)]
pub(super) enum ListPhase {
    /// Placed, nothing asked yet.
    Placed,
    /// Asked: the last list's size (as the server answered it) and whether it was
    /// incomplete.
    Asked { listed: usize, incomplete: bool },
}
