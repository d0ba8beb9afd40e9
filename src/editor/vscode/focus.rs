//! What an extension opens over the document (a modal dialog, an editor tab, a panel)
//! closed and the focus brought back to the document's editor, each thing closed named
//! for the manifest; and what the page shows that asks the user to sign in.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::instance::PAGE_POLL;
use super::scripts::{DIALOG_CLOSED, FOCUS, SIGN_IN, close_tabs};
use super::{VscodeSession, failed, file_name};
use crate::editor::error::SessionError;

/// How many times typist closes what is over the document before giving up.
const FOCUS_TRIES: usize = 6;

/// What is over the document (`focus.js`).
#[derive(Debug, serde::Deserialize, serde::Serialize)]
struct Focus {
    /// A modal dialog's message.
    dialog: Option<String>,
    tabs: Vec<Tab>,
    /// The active tab's label.
    active: String,
    /// An editor has the focus.
    focused: bool,
    /// The title of a panel that is shown and holds the focus.
    panel: Option<String>,
    /// The message of every modal dialog shown so far, in order (`dialog_watch.js`).
    #[serde(default)]
    seen: Vec<String>,
}

#[derive(Debug, serde::Deserialize, serde::Serialize)]
struct Tab {
    label: String,
    active: bool,
}

impl VscodeSession {
    /// What is over the document; every dialog shown so far is named for the manifest
    /// (a dialog an Escape meant for a ghost text closed too).
    async fn read_focus(&mut self) -> Result<Focus, SessionError> {
        let f: Focus = serde_json::from_value(self.vs.eval(&self.tab, FOCUS).await?)
            .map_err(|e| failed(format!("vscode: reading the focus: {e}")))?;
        for d in &f.seen {
            self.host.note_closed(format!("dialog: {d}"));
        }
        Ok(f)
    }

    /// Names for the manifest every dialog shown so far (at the session's end: one
    /// shown after the last case).
    pub(super) async fn name_dialogs(&mut self) {
        if let Err(e) = self.read_focus().await {
            tracing::debug!("vscode: the dialogs shown could not be read: {e}");
        }
    }

    /// Dismisses a modal dialog (Escape: its cancel), naming it for the manifest; false
    /// when none is shown.
    pub(super) async fn dismiss_dialog(&mut self) -> Result<bool, SessionError> {
        let Some(d) = self.read_focus().await?.dialog else {
            return Ok(false);
        };
        self.host.note_closed(format!("dialog: {d}"));
        self.escape().await?;
        self.wait_page("the dialog closed", DIALOG_CLOSED).await?;
        Ok(true)
    }

    /// Closes what an extension opened over the document and brings the focus back to
    /// the document's editor, as a person closes an extension's first-start page or
    /// question and goes on typing (llama.vscode opens its how-to page in the editor area
    /// and asks in a modal dialog whether to install its server on its first start; every
    /// run starts a fresh profile, so every run is a first start): a modal dialog is
    /// dismissed (Escape: its cancel), an editor tab that is not the document closed,
    /// a panel that holds the focus closed, and the editor group focused. Each thing
    /// closed is named for the manifest ([`VscodeHost::note_closed`](super::VscodeHost::note_closed)).
    pub(super) async fn bring_back_focus(&mut self) -> Result<(), SessionError> {
        // The files this session opened: every other tab was opened by an extension.
        let ours: Vec<String> = self.texts.keys().map(|r| file_name(r)).collect();
        let current = self.current.as_deref().map(file_name);
        // A tab's label is its file's name, then `, preview` and the like.
        let is_ours = |label: &str| {
            ours.iter()
                .any(|n| label == n || label.split(", ").next() == Some(n.as_str()))
        };
        let mut last = Value::Null;
        // Tabs asked to close: named once they are gone.
        let mut closing: Vec<String> = Vec::new();
        for _ in 0..FOCUS_TRIES {
            let f = self.read_focus().await?;
            tracing::debug!(focus = ?f, "vscode: what is over the document");
            for gone in closing.drain(..) {
                if !f.tabs.iter().any(|t| t.label == gone) {
                    self.host.note_closed(format!("editor tab: {gone}"));
                }
            }
            if f.dialog.is_some() {
                self.dismiss_dialog().await?;
                continue;
            }
            let others: Vec<&String> = f
                .tabs
                .iter()
                .map(|t| &t.label)
                .filter(|l| !is_ours(l))
                .collect();
            if !others.is_empty() {
                closing = others.iter().map(|l| l.to_string()).collect();
                self.vs.eval(&self.tab, &close_tabs(&others)).await?;
                tokio::time::sleep(PAGE_POLL * 5).await;
                continue;
            }
            match &current {
                // No document open yet (a file is being opened): nothing to focus.
                None => return Ok(()),
                Some(c) if f.focused && f.active.split(", ").next() == Some(c.as_str()) => {
                    return Ok(());
                }
                Some(_) => {}
            }
            self.focus_editor(f.panel.as_deref()).await?;
            last = serde_json::to_value(&f).unwrap_or_default();
        }
        let why = format!(
            "vscode: the editor of {} could not be brought back into focus (the page shows {last})",
            self.current.as_deref().unwrap_or("the file")
        );
        self.broken = Some(why.clone());
        Err(failed(why))
    }

    /// Closes the focused `panel` (if any; named for the manifest) and focuses the
    /// editor group.
    async fn focus_editor(&mut self, panel: Option<&str>) -> Result<(), SessionError> {
        if let Some(p) = panel {
            self.host.note_closed(format!("panel: {p}"));
            self.run_in_palette("View: Close Panel").await?;
        }
        self.run_in_palette("View: Focus Active Editor Group").await
    }

    /// What the page shows that asks the user to sign in (an extension not signed in
    /// says so in the status bar, a notification or the Accounts menu's badge): all that
    /// was seen while looking for `within` (a notification comes and goes; extensions
    /// say it once they have looked), in the order first seen; empty when nothing does.
    pub async fn sign_in_prompts(&mut self, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut seen: Vec<String> = Vec::new();
        loop {
            if let Ok(Value::Array(a)) = self.vs.eval(&self.tab, SIGN_IN).await {
                for t in a.iter().filter_map(Value::as_str) {
                    if !seen.iter().any(|s| s == t) {
                        seen.push(t.to_string());
                    }
                }
            }
            if Instant::now() >= deadline {
                return seen;
            }
            tokio::time::sleep(PAGE_POLL * 5).await;
        }
    }
}
