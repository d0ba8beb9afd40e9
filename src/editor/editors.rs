//! The run's editors: what the sessions of one run share, opened by whoever runs them
//! (`replay::run`, `doctor`, `typist login`) and closed at the end, where closing
//! returns what the manifest needs. That is VS Code's code-server and Chromium (one per
//! set of extensions and settings, started by the first session asking for it), and the
//! sign-in vault every session of an assistant that signs in starts from (the entries
//! used are the manifest's); typist's own client and Neovim start a process per session
//! and share nothing else. No process-wide state: two runs in one process have two
//! hosts.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::error::SessionError;
use super::extensions::Closed;
use super::kind::EditorKind;
use super::profile::Profile;
use super::vscode::VscodeHost;
use crate::vault::{Entry, Used, Vault};

/// The user settings typist writes for `kind` of editor, recorded in the manifest as
/// the editor's conditions (VS Code's; `None` for the others).
pub fn user_settings(kind: EditorKind) -> Option<serde_json::Value> {
    (kind == EditorKind::Vscode).then(super::vscode::user_settings)
}

/// The editors of one run; cloned, it is the same host.
#[derive(Clone, Default)]
pub struct Editors {
    vscode: Arc<VscodeHost>,
    signins: Arc<SignIns>,
}

/// The vault the run's sessions start from, and the entries they used.
#[derive(Default)]
struct SignIns {
    vault: Option<Vault>,
    used: Mutex<BTreeSet<Used>>,
}

pub use crate::copilot::GITHUB_ENTRY;

impl Editors {
    /// The run's editors, with the vault in typist's config folder.
    pub fn new() -> Editors {
        Editors::with_vault(Vault::open().ok())
    }

    /// The run's editors, with `vault` (none: an assistant that signs in is refused).
    pub fn with_vault(vault: Option<Vault>) -> Editors {
        Editors {
            vscode: Arc::default(),
            signins: Arc::new(SignIns {
                vault,
                used: Mutex::default(),
            }),
        }
    }

    pub fn vault(&self) -> Option<&Vault> {
        self.signins.vault.as_ref()
    }

    /// The vault entry `profile`'s sessions in `kind` start from: its own
    /// (`assistant/editor`), or the GitHub sign-in (`[signin] github`); `None` for an
    /// assistant that does not sign in. An assistant that signs in with no entry is
    /// refused, naming the `typist login` that makes one. The entry is noted for the
    /// manifest.
    pub fn sign_in(
        &self,
        profile: &Profile,
        kind: EditorKind,
    ) -> Result<Option<Entry>, SessionError> {
        let Some(signin) = &profile.signin else {
            return Ok(self.copilot_sign_in(profile));
        };
        let (assistant, editor, login) = if signin.github {
            (
                GITHUB_ENTRY.0.to_string(),
                GITHUB_ENTRY.1.to_string(),
                "typist login copilot".to_string(),
            )
        } else {
            (
                profile.name.clone(),
                kind.as_str().to_string(),
                format!(
                    "typist login --editor {} --assistant {}",
                    kind.as_str(),
                    profile.name
                ),
            )
        };
        let not_signed_in = |why: String| SessionError::NotSignedIn {
            server: profile.name.clone(),
            message: format!("{why}; run `{login}`"),
        };
        let vault = self
            .vault()
            .ok_or_else(|| not_signed_in("typist has no config folder for its vault".into()))?;
        let entry = vault
            .entry(&assistant, &editor)
            .map_err(|e| not_signed_in(e.to_string()))?;
        let used = entry.used(&profile.name).map_err(|_| {
            not_signed_in(format!(
                "no sign-in for {} in the vault ({})",
                kind.as_str(),
                entry.dir().display()
            ))
        })?;
        self.note(used);
        Ok(Some(entry))
    }

    /// The run's VS Codes.
    pub(super) fn vscode(&self) -> &Arc<VscodeHost> {
        &self.vscode
    }

    /// Notes an entry a session started from, for the manifest.
    fn note(&self, used: Used) {
        if let Ok(mut u) = self.signins.used.lock() {
            u.insert(used);
        }
    }

    /// Copilot's language server (the `copilot` dialect), which also takes a token from
    /// the environment or the user's own sign-in: the vault's GitHub entry when that is
    /// what the server would use (so a WAL it rewrites goes back), else `None` and the
    /// workspace gives it the others as before.
    fn copilot_sign_in(&self, profile: &Profile) -> Option<Entry> {
        if profile.dialect != super::profile::DialectKind::Copilot {
            return None;
        }
        let entry = self.vault()?.entry(GITHUB_ENTRY.0, GITHUB_ENTRY.1).ok()?;
        match crate::copilot::find()? {
            crate::copilot::Credentials::Folder { path, typist: true }
                if path.starts_with(entry.dir()) =>
            {
                self.note(entry.used(&profile.name).ok()?);
                Some(entry)
            }
            _ => None,
        }
    }

    /// Stops what the run's sessions shared and returns what it leaves for the
    /// manifest (each VS Code extension and whether it activated, what typist closed).
    pub async fn close(&self) -> Closed {
        let mut closed = self.vscode.close().await;
        closed.vault = self
            .signins
            .used
            .lock()
            .map(|u| u.iter().cloned().collect())
            .unwrap_or_default();
        closed
    }
}
