//! Which editor a run types into (`typist`: typist's own LSP client; `neovim`: a real
//! Neovim driven headless; `vscode`: code-server in headless Chromium) and the editor's own conditions: how fast
//! a person types into it and the Lua configuration it loads. Plain values, recorded in
//! the manifest's conditions (only when the editor is not `typist`, so a default run's
//! manifest keeps its bytes), compared on `--resume`.

use serde::{Deserialize, Serialize};

/// The kinds of editor a run can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EditorKind {
    /// typist's own LSP client (the default): requests sent directly, answers read.
    #[default]
    Typist,
    /// Neovim (`nvim --embed --headless`) with its built-in LSP client and inline
    /// completion; the ghost text it draws is read back.
    Neovim,
    /// VS Code (code-server and headless Chromium over the DevTools protocol) with an
    /// extension serving inline completions; the ghost text the page shows is read.
    Vscode,
}

impl EditorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EditorKind::Typist => "typist",
            EditorKind::Neovim => "neovim",
            EditorKind::Vscode => "vscode",
        }
    }

    /// The editor's name in a sentence.
    pub fn display_name(self) -> &'static str {
        match self {
            EditorKind::Typist => "typist's client",
            EditorKind::Neovim => "Neovim",
            EditorKind::Vscode => "VS Code",
        }
    }
}

/// Keys typed into a real editor at this interval by default: 100 ms, 10 characters a
/// second, a quick typist's pace (fast enough that Neovim's 200 ms debounce asks once
/// after the last key of a burst, as it does for a person).
pub const DEFAULT_KEY_INTERVAL_MS: u64 = 100;

/// A plugin's ghost text must show within this long after the last key by default.
pub const DEFAULT_DISPLAY_DEADLINE_MS: u64 = 1000;

/// The editor of a run and its own conditions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EditorApp {
    pub kind: EditorKind,
    /// Milliseconds between two keys typed into the editor (the typing speed).
    pub key_interval_ms: u64,
    /// A Lua file the editor loads after typist's own setup (`--editor-config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// sha256 of that file's bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// A plugin's ghost text: the extmark namespaces read instead of Neovim's own
    /// inline completion (which is then not turned on). Empty: Neovim's own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// With `namespaces`: the highlight groups of the suggestion's chunks; a plugin's
    /// other chunks (llama.vim's statistics beside its suggestion) are not read. Empty:
    /// every chunk, and a ghost text drawn in several groups is the case's error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub highlights: Vec<String>,
    /// With `namespaces`: how long after the last key a ghost text may take to show;
    /// nothing new shown by then is an `empty` with its reason.
    pub display_deadline_ms: u64,
    /// VS Code: the extensions installed (`.vsix` files or ids, `--extension`); empty:
    /// the project's fixture extension serving the profile's server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// VS Code: the user settings typist wrote (what typing produces, the suggest
    /// widget, inline suggestions), recorded with the conditions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<serde_json::Value>,
    /// A real editor: how typing reaches the case's line (the keys, and so the events
    /// plugins see). `None`: typist's own client, or a run made before this was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
}

/// How a real editor's typing reaches a case's line, as a person typing the file from
/// the top does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    /// The context is placed without the case's line; from the end of the line above, in
    /// insert mode, Enter opens the line and each typed key follows. Neovim: `A<CR>`
    /// (`InsertEnter`, then `CursorMovedI` and `TextChangedI` for the Enter and for each
    /// key; on the first line `O`, on an empty file `i`); VS Code: End, Enter, the keys
    /// (each an edit: VS Code asks its inline providers automatically). The exception,
    /// in VS Code: a case on the first line, or with text after the cursor, is reached by
    /// Go to Line; with nothing typed there it is asked by Trigger Inline Suggestion (the
    /// record's reason says so when nothing is shown).
    EnterAbove,
}

impl Default for EditorApp {
    fn default() -> Self {
        EditorApp {
            kind: EditorKind::Typist,
            key_interval_ms: DEFAULT_KEY_INTERVAL_MS,
            config: None,
            config_sha256: None,
            namespaces: Vec::new(),
            display_deadline_ms: DEFAULT_DISPLAY_DEADLINE_MS,
            extensions: Vec::new(),
            settings: None,
            highlights: Vec::new(),
            arrival: None,
        }
    }
}

impl EditorApp {
    /// typist's own client with nothing else set: left out of the manifest.
    pub fn is_default(&self) -> bool {
        *self == EditorApp::default()
    }
}
