//! A session's sign-in: the vault entry it started from, copied into its sandbox, and
//! what it changed written back when the session is dropped (a token the assistant
//! rotated, a SQLite WAL), under the entry's lock (`src/vault.rs`).

use std::path::{Path, PathBuf};

use super::error::SessionError;
use crate::vault::{Entry, Seeded};

/// The vault entry a session started from and the copies it was given; dropped (before
/// the session's folder goes), it writes back what the session changed.
pub struct SessionSignIn {
    entry: Entry,
    copies: Vec<(Seeded, PathBuf)>,
}

impl SessionSignIn {
    pub fn new(entry: Entry) -> SessionSignIn {
        SessionSignIn {
            entry,
            copies: Vec::new(),
        }
    }

    pub fn entry(&self) -> &Entry {
        &self.entry
    }

    /// Copies the entry's `part` into `dest`.
    pub fn seed(&mut self, part: &str, dest: &Path) -> Result<(), SessionError> {
        let seeded = self
            .entry
            .seed(part, dest)
            .map_err(|e| SessionError::File {
                path: self.entry.dir().to_path_buf(),
                message: format!("cannot copy the sign-in into the session: {e:#}"),
            })?;
        self.copies.push((seeded, dest.to_path_buf()));
        Ok(())
    }

    /// Writes back what the session changed of its copies (logged, never fatal: the
    /// run's records do not depend on it).
    pub fn write_back(&mut self) {
        for (seeded, src) in std::mem::take(&mut self.copies) {
            if let Err(e) = self.entry.write_back(&seeded, &src) {
                tracing::warn!(entry = %self.entry.name(), "vault: could not write back the session's sign-in: {e:#}");
            }
        }
    }
}

impl Drop for SessionSignIn {
    fn drop(&mut self) {
        self.write_back();
    }
}
