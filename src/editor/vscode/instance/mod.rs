//! The run's one VS Code: code-server and a headless Chromium, started by the first
//! session and shared by every worker (each session is a tab of its own with its own
//! workspace window and extension host); started again when either has exited.
//!
//! code-server listens on 127.0.0.1 at a port it picks (`--bind-addr 127.0.0.1:0`, the
//! port read from its log), with password authentication: a random password known only
//! to typist, handed over in the environment (`PASSWORD`), never on a command line or
//! in a file, and registered as a secret. Its user-data, extensions, config and `HOME`
//! are in the run's scratch folder. Chromium is reached over `--remote-debugging-pipe`
//! (no port), with its own profile and `HOME` there too; it logs in once through
//! code-server's login page and keeps the cookie for every tab.

mod extensions;
mod launch;
pub mod record;
pub mod shared;
pub(super) mod signin;
mod tabs;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::cdp::{Cdp, Event};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::profile::resolve_program;
use crate::lsp::ExitInfo;
use crate::lsp::process::ServerProcess;

pub use crate::editor::extensions::ExtensionState;

/// How long code-server has to say where it listens.
const LISTEN_WITHIN: Duration = Duration::from_secs(60);
/// How long Chromium has to answer its first command, and a page to load.
pub(super) const PAGE_WITHIN: Duration = Duration::from_secs(60);
/// Deadline of one DevTools command.
pub(super) const CALL: Duration = Duration::from_secs(10);
/// How long one `--install-extension` may take.
const INSTALL_WITHIN: Duration = Duration::from_secs(120);
/// The browser window's size in CSS pixels, and each tab's page size (the editor lays
/// out its lines for it).
pub(super) const WIDTH: u32 = 1400;
pub(super) const HEIGHT: u32 = 1000;
const WINDOW_SIZE: &str = "--window-size=1400,1000";
/// The pause between two looks at a page's state.
pub(super) const PAGE_POLL: Duration = Duration::from_millis(20);
/// Seconds code-server keeps a closed window's extension host for a reconnection.
const GRACE_S: &str = "1";

pub const INSTALL_HINT: &str = "run scripts/install-servers.sh (it installs code-server into .servers/bin/code-server and Chromium with apt)";

/// code-server's program: `$TYPIST_CODE_SERVER`, else `code-server` in a server prefix
/// or on `PATH`.
pub fn code_server_program() -> Option<PathBuf> {
    match std::env::var_os("TYPIST_CODE_SERVER") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => resolve_program("code-server"),
    }
}

/// Chromium's program: `$TYPIST_CHROMIUM`, else `chromium` on `PATH`.
pub fn chromium_program() -> Option<PathBuf> {
    match std::env::var_os("TYPIST_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => resolve_program("chromium"),
    }
}

/// The project's fixture extension, as the install script packs it.
pub fn fixture_vsix() -> Option<PathBuf> {
    packed_vsix("typist-inline")
}

/// typist's own `github` authentication provider (`fixtures/vscode/typist-github-auth`),
/// as the install script packs it: installed for profiles with `[signin] github`.
pub fn github_auth_vsix() -> Option<PathBuf> {
    packed_vsix("typist-github-auth")
}

/// One of the project's own extensions, packed by the install script into
/// `.servers/vscode/NAME.vsix` (or `$TYPIST_SERVERS/vscode/`).
fn packed_vsix(name: &str) -> Option<PathBuf> {
    let file = format!("vscode/{name}.vsix");
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".servers")
        .join(&file);
    let servers = std::env::var_os("TYPIST_SERVERS").map(|s| PathBuf::from(s).join(&file));
    servers
        .filter(|p| p.is_file())
        .or(Some(p).filter(|p| p.is_file()))
}

/// The built-in extension that would register the `github` authentication provider
/// before typist's own (`[signin] github`): not loaded in that VS Code.
pub const BUILTIN_GITHUB_AUTH: &str = "vscode.github-authentication";

/// An extension installed into the run's extensions folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub id: String,
    pub version: String,
}

pub struct Instance {
    pub cdp: Cdp,
    pub events: tokio::sync::Mutex<mpsc::UnboundedReceiver<Event>>,
    pub port: u16,
    pub version: String,
    pub installed: Vec<(String, Installed)>,
    pub dir: PathBuf,
    server: ServerProcess,
    server_exit: watch::Receiver<Option<ExitInfo>>,
    browser: ServerProcess,
    browser_exit: watch::Receiver<Option<ExitInfo>>,
    /// The sign-in this VS Code started from (`signin.rs`): written back when it stops,
    /// before its folder goes.
    signin: std::sync::Mutex<Option<crate::editor::signin::SessionSignIn>>,
    /// Last: dropped after the processes, so their folder goes once they have.
    _scratch: tempfile::TempDir,
}

/// What a VS Code of the run is started with: the extensions installed (files as
/// absolute paths, or ids), the user settings written, and the sign-in it starts from.
/// Sessions asking for the same share one code-server and Chromium (so the sessions of
/// one assistant share one signed-in VS Code); another set gets its own.
#[derive(Debug, Clone)]
pub struct Setup {
    pub extensions: Vec<String>,
    pub settings: Value,
    /// The vault entry copied in before code-server starts (`signin.rs`).
    pub signin: Option<crate::vault::Entry>,
    /// typist's own `github` provider serves the entry's GitHub token
    /// (`[signin] github`), the built-in one not loaded (`VSCODE_SKIP_BUILTIN_EXTENSIONS`).
    pub github: bool,
}

impl PartialEq for Setup {
    fn eq(&self, o: &Setup) -> bool {
        self.extensions == o.extensions
            && self.settings == o.settings
            && self.github == o.github
            && self.signin.as_ref().map(|e| e.dir()) == o.signin.as_ref().map(|e| e.dir())
    }
}

/// The user settings typist writes for VS Code: what typing produces is what the plan
/// says (no auto-closing, auto-indent, format on type or paste, autosave), no suggest
/// widget, inline suggestions on, nothing asked of the network. Recorded in the
/// manifest (the editor's conditions).
pub fn user_settings() -> Value {
    let mut settings = json!({
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.autoClosingComments": "never",
        "editor.autoClosingOvertype": "never",
        "editor.autoSurround": "never",
        "editor.autoIndent": "none",
        "editor.autoIndentOnPaste": false,
        "editor.formatOnType": false,
        "editor.formatOnPaste": false,
        "editor.formatOnSave": false,
        "editor.quickSuggestions": {"other": "off", "comments": "off", "strings": "off"},
        "editor.suggestOnTriggerCharacters": false,
        "editor.wordBasedSuggestions": "off",
        "editor.parameterHints.enabled": false,
        "editor.acceptSuggestionOnEnter": "off",
        "editor.inlineSuggest.enabled": true,
        "editor.inlineSuggest.showToolbar": "never",
        "editor.minimap.enabled": false,
        "editor.stickyScroll.enabled": false,
        "editor.detectIndentation": false,
        "editor.tabSize": 4,
        "files.autoSave": "off",
        "files.insertFinalNewline": false,
        "files.trimTrailingWhitespace": false,
        "files.trimFinalNewlines": false,
        "files.eol": "\n",
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "extensions.ignoreRecommendations": true,
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "workbench.editor.enablePreview": false,
        "git.enabled": false,
        "chat.disableAIFeatures": true,
        "github.copilot.enable": {"*": false},
        "window.restoreWindows": "none",
        "window.commandCenter": false,
    });
    // A token case's typed characters never accept the widget's focused item (set
    // apart: the object above is at the json! macro's recursion limit).
    settings["editor.acceptSuggestionOnCommitCharacter"] = json!(false);
    settings
}

fn failed(m: String) -> SessionError {
    EditorError::Failed(m).into()
}

impl Instance {
    pub fn alive(&self) -> bool {
        self.server_exit.borrow().is_none() && self.browser_exit.borrow().is_none()
    }

    /// Why this VS Code is gone, if it is.
    pub fn ended(&self) -> Option<String> {
        let say = |what: &str, e: &ExitInfo| {
            if e.stderr_tail.is_empty() {
                format!("{what} exited ({})", e.status)
            } else {
                format!("{what} exited ({}): {}", e.status, e.stderr_tail)
            }
        };
        if let Some(e) = self.server_exit.borrow().as_ref() {
            return Some(say("code-server", e));
        }
        self.browser_exit
            .borrow()
            .as_ref()
            .map(|e| say("chromium", e))
    }

    /// Stops this VS Code (the host keeps what its extensions did first).
    pub fn kill(&self) {
        self.browser.kill_group();
        self.server.kill_group();
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}
