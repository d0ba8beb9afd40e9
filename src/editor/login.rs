//! `typist login --editor E --assistant NAME`: the assistant signed in once, in the
//! editor a run uses (the same launch, sandbox and profile), by a person at the
//! terminal or by a script (`--command`, `--answer`), and what it keeps of the sign-in
//! saved as its vault entry (`src/vault.rs`). Each editor does its part
//! (`neovim/login.rs`, `vscode/login.rs`); this is the interface the CLI calls.

use super::editors::Editors;
use super::error::{EditorError, SessionError};
use super::kind::{EditorApp, EditorKind};
pub use super::options::{LoginDone, LoginScript};
use super::profile::Profile;

/// Signs `profile`'s assistant in, in `app`'s kind of editor, and saves its vault
/// entry.
pub async fn login(
    editors: &Editors,
    app: &EditorApp,
    profile: &Profile,
    script: LoginScript,
) -> Result<LoginDone, SessionError> {
    let vault = editors.vault().ok_or_else(|| {
        SessionError::Editor(EditorError::Failed(
            "typist has no config folder for its vault (no HOME and no $TYPIST_CONFIG_DIR)".into(),
        ))
    })?;
    let entry = vault
        .entry(&profile.name, app.kind.as_str())
        .map_err(|e| SessionError::Editor(EditorError::Failed(e.to_string())))?;
    match app.kind {
        EditorKind::Neovim => super::neovim::login::login(app, profile, &entry, script).await,
        EditorKind::Vscode => {
            super::vscode::login::login(editors.vscode(), app, profile, &entry, script).await
        }
        EditorKind::Typist => Err(SessionError::Editor(EditorError::Failed(format!(
            "{}: typist's own client has no sign-in of its own to run: sign Copilot in with `typist login copilot`, give a server its key in the profile's env, or sign in with --editor neovim|vscode",
            profile.name
        )))),
    }
}
