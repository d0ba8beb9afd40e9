//! A real VS Code as the editor: code-server 4.139 (VS Code 1.139, its real extension
//! host) and a headless Chromium driven over the DevTools protocol ([`cdp`], over a
//! pipe), shared by the run ([`instance`]). Each session is a tab of its own opened on
//! a `.code-workspace` file in the session's scratch folder (outside the folder the
//! server sees) whose settings name the profile's server for the project's fixture
//! extension (`fixtures/vscode/typist-inline`: inline completions from any LSP server
//! through `vscode-languageclient`); so every window has its own extension host and
//! server.
//!
//! A case, as a user: what an extension opened over the document is closed and the
//! focus brought back (each named for the manifest); Escape hides what is shown; the
//! context without the case's line is written to the disk copy and File: Revert File
//! loads it (Ctrl+End until the status bar shows its last line: the reverted text has
//! arrived; before that, Go to Line put the cursor where the view did not follow); the
//! cursor goes to the end of the line above (Go to Line and End when lines follow) and
//! Enter opens the case's line, an edit after which VS Code asks its inline providers on
//! its own; the typed characters are typed as key events at the run's key interval. On
//! the first line, or with text after the cursor, the line is placed without its typed
//! characters and typed into from its start (none typed: the command Trigger Inline
//! Suggestion from the palette; its keybinding Alt+\ does not reach VS Code as DevTools
//! key events). A freshly opened file is asked once through that command before its first
//! case: VS Code does not ask inline providers for the first second or so of an editor
//! (up to 4 s here), and typed keys then ask nothing. Then the page is read:
//! the fixture shows in the status bar the fate of each inline request (its sequence
//! number, line:character, and the number of items, the error or `timeout`), so the
//! case's answer is the first request at the cursor typing ended at, sent after the case
//! began. An error is the case's error; a `timeout` is the fixture's verdict (it keeps
//! the profile's request deadline from the request's sending, so VS Code's own delays
//! never make one), and no verdict within that deadline and [`EDITOR_DELAY`] more is the
//! editor's error; no items is an `empty`; items but no ghost text shown within the
//! display deadline after the answer an `empty` with its reason. The ghost text read is
//! what the page shows: the cursor's line with the ghost text in it (its spans joined,
//! U+00A0 as spaces) and the further lines of its view zone; with the fixture it counts
//! only when it draws the answer's first item (the fixture's label gives the lines
//! accepting it would leave), and that text is recorded, tabs as tabs. A ghost text that
//! never draws the answer (an older suggestion still on screen) is the case's error,
//! never an answer or an empty. With extensions alone it is read once the page has
//! rendered what it had pending, and only on a line that holds what was typed.
//!
//! code-server or Chromium gone is the case's error (an exit: the next session starts
//! them again); a tab that does not answer marks the session broken.

mod cdp;
mod drawn;
mod edits;
mod focus;
pub mod instance;
mod keys;
mod launch;
mod lists;
pub mod login;
mod open;
mod page;
pub(super) mod refuse;
mod scripts;
mod suggest;
mod ui;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::document::{Document, Position, PositionEncoding};
use super::error::{EditorError, SessionError};
use super::handshake::ServerInfo;
use super::kind::EditorApp;
use super::profile::{DialectKind, Profile};
use instance::Instance;

pub use instance::shared::VscodeHost;
pub use instance::user_settings;

/// How long a session's end waits to read once more the dialogs shown.
const NAME_DIALOGS_WITHIN: Duration = Duration::from_secs(1);

/// How long past the profile's request deadline typist waits for the fixture to say what
/// became of a request (or for a later request at the cursor): VS Code's own delays,
/// asking after its debounce, the extension host and the page busy on a loaded machine.
/// The fixture keeps the request deadline itself, so a request the server did not answer
/// in time says `timeout` well within this; nothing said by then is the editor's
/// failure, never the assistant's timeout.
const EDITOR_DELAY: Duration = Duration::from_secs(30);

/// A session: a tab of the run's VS Code on its own workspace window.
pub struct VscodeSession {
    vs: Arc<Instance>,
    /// The run's VS Codes (told what typist closes).
    host: Arc<VscodeHost>,
    /// The tab's DevTools target and the session attached to it.
    target: String,
    tab: String,
    /// The session's scratch folder (its workspace file); goes with the session.
    _dir: tempfile::TempDir,
    root: PathBuf,
    profile: Profile,
    app: EditorApp,
    /// What the editor is to hold in each file opened.
    texts: BTreeMap<String, String>,
    /// What VS Code was last given of each file opened (its disk copy when it was
    /// opened or reverted): an edit session's other files are brought up to date from
    /// it before an ask (`edits.rs`).
    loaded: BTreeMap<String, String>,
    /// The files whose editor indents with tabs (`open.rs`, `indent_as`); any other
    /// with spaces, VS Code's default.
    tabs: std::collections::BTreeSet<String>,
    /// The file typed into (the last one opened).
    current: Option<String>,
    info: ServerInfo,
    broken: Option<String>,
    /// The project's fixture extension serves the profile's server and shows each
    /// request's fate; `false`: extensions alone (`[vscode]`, `--extension`), whose
    /// requests typist cannot see, so only what the page shows counts.
    fixture: bool,
    /// The completion session under way (token cases, `lists.rs`).
    list: Option<ListState>,
}

/// The completion session under way in the editor (token cases, `lists.rs`).
#[derive(Debug, Clone)]
struct ListState {
    /// 0-based line of the token.
    row: usize,
    /// The token's line as the editor holds it now.
    line: String,
    /// The UTF-16 column of the cursor on it.
    col16: usize,
    /// A list was asked for in this session.
    asked: bool,
    /// The server's items of the last answer, in its order.
    items: Vec<Value>,
    incomplete: bool,
}

/// How the fixture extension asks a server of `dialect` for line suggestions
/// (`typistInline.dialect`); `None`: it cannot show that dialect's answers.
pub fn fixture_dialect(dialect: DialectKind) -> Option<&'static str> {
    match dialect {
        DialectKind::Inline | DialectKind::Copilot => Some("inline"),
        DialectKind::LspAi => Some("lsp-ai"),
        DialectKind::LspAiGeneration => Some("lsp-ai-generation"),
        DialectKind::Completion | DialectKind::LlmLs => None,
    }
}

fn failed(m: String) -> SessionError {
    EditorError::Failed(m).into()
}

/// A file's name from its path relative to the workspace.
fn file_name(rel: &str) -> String {
    Path::new(rel)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

impl VscodeSession {
    pub fn editor_version(&self) -> &str {
        &self.vs.version
    }
    pub fn extension_states(&self) -> Vec<crate::editor::extensions::ExtensionState> {
        self.vs.extension_states()
    }
    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }
    pub fn workspace(&self) -> &Path {
        &self.root
    }
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }
    pub fn last_request_hash(&self) -> Option<&str> {
        None
    }

    /// VS Code's end as an error, if code-server or Chromium has exited.
    fn still_running(&self) -> Result<(), SessionError> {
        match self.vs.ended() {
            Some(why) => Err(EditorError::Exited(format!("vscode: {why}")).into()),
            None => Ok(()),
        }
    }

    /// What the editor is to hold in `rel` when the next case is placed. Nothing is
    /// written yet: the case writes the disk copy without the line's typed characters,
    /// which reach VS Code only as keys.
    pub fn set_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        if !self.texts.contains_key(rel) {
            return Err(SessionError::NotOpen(rel.to_string()));
        }
        self.texts.insert(rel.to_string(), text.to_string());
        Ok(())
    }

    /// What the editor is to hold in `rel` for a case at `cursor`, the cursor's byte
    /// offset in it and the start of its line; an error when the session is broken or
    /// `rel` is not the file typed into.
    fn case_text(
        &self,
        rel: &str,
        cursor: Position,
    ) -> Result<(String, usize, usize), SessionError> {
        if let Some(why) = &self.broken {
            return Err(failed(why.clone()));
        }
        if self.current.as_deref() != Some(rel) {
            return Err(failed(format!(
                "vscode: {rel} is not the editor typed into (the last file opened is)"
            )));
        }
        let text = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        let at = Document::offset_of(&text, cursor, PositionEncoding::Utf8);
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        Ok((text, at, line_start))
    }

    /// Closes the tab (its window's extension host and server go after code-server's
    /// reconnection grace); the workspace goes with the session.
    pub async fn shutdown(mut self) {
        // The dialogs shown are read once more, briefly and only from a working page:
        // the tab is closed whatever that read does.
        if self.broken.is_none() {
            let _ = tokio::time::timeout(NAME_DIALOGS_WITHIN, self.name_dialogs()).await;
        }
        self.vs.close_tab(&self.target).await;
    }
}
