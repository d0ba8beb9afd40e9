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
pub mod instance;
mod lists;
pub(super) mod refuse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::document::{Document, Position, PositionEncoding};
use super::error::{EditorError, SessionError};
use super::handshake::ServerInfo;
use super::kind::EditorApp;
use super::options::{SessionOptions, Timed};
use super::profile::{DialectKind, Profile};
use super::suggestions::{InlineSuggestion, Suggestions};
use super::workspace::{self, Workspace};
use instance::{CALL, Instance, PAGE_POLL, PAGE_WITHIN};

pub use instance::{stop_shared, user_settings};

/// How long a key's effect (a quick-open list, the cursor at its line) may take to show.
const UI_WITHIN: Duration = Duration::from_secs(10);
/// The inline-suggest command's title in the command palette.
const TRIGGER: &str = "Trigger Inline Suggestion";
/// How long a placed line may take to show before Go to Line is asked again.
const LINE_SHOWS_WITHIN: Duration = Duration::from_millis(500);
/// Go to Line at most this many times for a case.
const PLACE_TRIES: usize = 3;
/// The pause after a quick-input box opens before typing into it.
const QUICK_INPUT_SETTLE: Duration = Duration::from_millis(50);
/// With extensions alone: how long a freshly opened file is asked at its end before its
/// first case (see `VscodeSession::warm_up`).
const WARM_UP: Duration = Duration::from_secs(4);
/// The project's fixture extension's id.
const FIXTURE_ID: &str = "typist.typist-inline";
/// The workspace file typist writes beside each session's workspace.
const WORKSPACE_FILE: &str = "typist.code-workspace";
/// How long after a window was opened typist writes its workspace file again when the
/// fixture is still waiting for the folder (see `VscodeSession::wait_ready`).
const REREAD_AFTER: Duration = Duration::from_secs(3);
/// The page's title, address, the last of the workbench's startup marks
/// (`code/didStartRenderer`, `code/willLoadWorkbenchMain`, ...), and whether its main
/// bundle has run (`code/didLoadWorkbenchMain`).
const PAGE_STATE: &str = "[document.title, location.href, (performance.getEntriesByType('mark').pop() || {}).name || '', performance.getEntriesByName('code/didLoadWorkbenchMain').length > 0]";
/// The workbench's startup marks, in ms from the page's start.
const MARKS: &str = "Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name.replace('code/', ''), Math.round(m.startTime)]))";
/// How long a window may still show no workspace folder after that before it is opened
/// again.
const FOLDER_WITHIN: Duration = Duration::from_secs(10);
/// How long after it was opened a page may go without running the workbench's main
/// bundle (0.4 to 1.7 s on the loaded 2-core machine; a stuck one never does).
const WORKBENCH_WITHIN: Duration = Duration::from_secs(10);
/// A session's window is opened at most this many times.
const OPEN_TRIES: u32 = 3;
/// The pause before navigating again after Chromium aborted a navigation.
const NAVIGATE_AGAIN_AFTER: Duration = Duration::from_millis(300);

/// Resolves after two animation frames: what VS Code had to render by then is drawn.
const AFTER_RENDER: &str =
    "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))";
/// Where the cursor is, for an error: the status bar's position, the focused element,
/// the editor's line count (its last line number) and what is over the document.
const WHERE: &str = "(() => { const e = document.getElementById('status.editor.selection'); const a = document.activeElement; const ed = document.querySelector('.editor-instance .monaco-editor'); const nums = ed ? [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(n => Number(n.textContent)).filter(n => n > 0) : []; return { status: e ? e.textContent : null, focus: a ? a.tagName + '.' + (a.className || '') : null, last_line_drawn: nums.length ? Math.max(...nums) : null, dialog: !!document.querySelector('.monaco-dialog-box'), quick_input: !!document.querySelector('.quick-input-widget input:focus'), tab: (document.querySelector('.tab.active') || {}).ariaLabel || null }; })()";

/// How long Enter may take to open the case's line before typist looks whether it was
/// lost.
const ENTER_SHOWS_WITHIN: Duration = Duration::from_secs(2);

/// The page shows the cursor on line `row` (0-based), holding `want` (tabs expanded).
fn line_is(row: usize, want: &str) -> String {
    let want_js = serde_json::to_string(&expand_tabs(want)).unwrap_or_default();
    format!(
        "(() => {{ const r = {READ}; return r.row === {} && r.cur === {want_js}; }})()",
        row + 1
    )
}

/// The status bar shows the cursor at `line`, `column` (1-based, a visible column) in a
/// focused editor.
fn cursor_at(line: usize, column: usize) -> String {
    format!(
        "(() => {{ const e = document.getElementById('status.editor.selection'); const m = e && /Ln (\\d+), Col (\\d+)/.exec(e.textContent || ''); return !!m && Number(m[1]) === {line} && Number(m[2]) === {column} && !!document.querySelector('.editor-instance .monaco-editor.focused'); }})()"
    )
}

/// How many times a file is opened with Quick Open before the session fails.
const OPEN_FILE_TRIES: usize = 3;
/// How many times a command is looked for in the palette.
const PALETTE_TRIES: usize = 3;

/// The palette lists a command whose title starts with `title`.
fn palette_lists(title: &str) -> String {
    let want = serde_json::to_string(title).unwrap_or_default();
    format!(
        "[...document.querySelectorAll('.quick-input-list .monaco-list-row')].some(r => (r.getAttribute('aria-label')||'').startsWith({want}))"
    )
}

/// How many times typist closes what is over the document before giving up.
const FOCUS_TRIES: usize = 6;
/// What is over the document, read in one script: a modal dialog's message, the editor
/// tabs (their labels, which is active), whether an editor has the focus, and the title
/// of a panel that is shown and holds the focus.
const FOCUS: &str = "(() => { const d = document.querySelector('.monaco-dialog-box'); const msg = d && [...d.querySelectorAll('.dialog-message-text, .dialog-message-detail')].map(e => (e.textContent || '').trim()).filter(Boolean).join(' '); const tabs = [...document.querySelectorAll('.tabs-container .tab')].map(t => ({ label: t.getAttribute('aria-label') || '', active: t.classList.contains('active') })); const p = document.querySelector('.part.panel'); const inPanel = !!p && p.contains(document.activeElement) && p.offsetParent !== null; const title = inPanel ? (((p.querySelector('.composite-bar .action-item.checked') || p.querySelector('.title-label') || p).textContent || '').trim() || 'panel') : null; const a = document.querySelector('.tab.active'); return { dialog: d ? (msg || 'a dialog') : null, tabs, active: a ? (a.getAttribute('aria-label') || '') : '', focused: !!document.querySelector('.editor-instance .monaco-editor.focused'), panel: title }; })()";

/// What [`FOCUS`] reads.
#[derive(Debug, serde::Deserialize, serde::Serialize)]
struct Focus {
    dialog: Option<String>,
    tabs: Vec<Tab>,
    active: String,
    focused: bool,
    panel: Option<String>,
}

#[derive(Debug, serde::Deserialize, serde::Serialize)]
struct Tab {
    label: String,
    active: bool,
}

/// The quick-input box (Quick Open, Go to Line, the command palette) is open and
/// focused.
const QUICK_INPUT_FOCUSED: &str = "!!document.querySelector('.quick-input-widget input:focus')";

/// What the page shows, read in one script: the focused editor's cursor line (from the
/// status bar's "Ln N, Col M"), the ghost text at it, the fixture's status.
const READ: &str = include_str!("read.js");

/// What the page shows that asks the user to sign in: status bar items (their text and
/// label), notifications, and the Accounts menu's badge (an extension that asked VS Code's
/// authentication for a session); typist's own fixture's status left out.
const SIGN_IN: &str = r#"(() => {
  const asks = /\b(sign[ -]?in|log[ -]?in|sign[ -]?up)\b|\bnot (signed|logged) in\b|\bnot authenticated\b|\bunauthori[sz]ed\b|\b(no|missing|invalid|enter|set)( an| your)? api key\b/i;
  const done = /\b(success|signed in as|logged in as|authenticated as)/i;
  const says = (t) => asks.test(t) && !done.test(t);
  const out = [];
  for (const e of document.querySelectorAll('.statusbar-item')) {
    const t = (e.textContent || '').trim();
    if (t.startsWith('typist-inline')) continue;
    const a = [e, ...e.querySelectorAll('[aria-label]')].map((x) => x.getAttribute('aria-label') || '').join(' ');
    if (says(t) || says(a)) out.push('status bar: ' + (t || a).replace(/\s+/g, ' '));
  }
  for (const e of document.querySelectorAll('.notifications-toasts .notification-list-item-message')) {
    const t = (e.textContent || '').trim();
    if (says(t)) out.push('notification: ' + t.replace(/\s+/g, ' '));
  }
  for (const e of document.querySelectorAll('.activitybar .action-item')) {
    const l = (e.querySelector('[aria-label]') || e).getAttribute('aria-label') || '';
    const b = e.querySelector('.badge .badge-content');
    if (/^Accounts/i.test(l) && b && (b.textContent || '').trim()) out.push('accounts menu: ' + l.replace(/\s+/g, ' '));
  }
  return [...new Set(out)];
})()"#;

/// The editor's layout when a line does not show (for the error).
const DUMP: &str = "(() => { const ed = document.querySelector('.editor-instance .monaco-editor.focused') || document.querySelector('.editor-instance .monaco-editor'); if (!ed) return 'no editor'; const sc = ed.querySelector('.monaco-scrollable-element'); return JSON.stringify({vis: document.visibilityState, focus: document.hasFocus(), win: [innerWidth, innerHeight], ed: [ed.clientWidth, ed.clientHeight], scroll: sc && [sc.scrollTop, sc.scrollHeight], lines: [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(n => n.textContent).filter(Boolean).slice(-3)}); })()";

pub struct VscodeSession {
    vs: Arc<Instance>,
    target: String,
    tab: String,
    _dir: tempfile::TempDir,
    root: PathBuf,
    profile: Profile,
    app: EditorApp,
    texts: BTreeMap<String, String>,
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

/// What the fixture's status bar item says about the last inline request.
#[derive(Debug, Clone, PartialEq)]
struct Status {
    seq: u64,
    line: u64,
    character: u64,
    fate: Fate,
}

/// What became of a request, as the fixture (where it is sent and answered) tells.
#[derive(Debug, Clone, PartialEq)]
enum Fate {
    /// Sent, not answered yet.
    Asking,
    /// Answered with this many items.
    Items(u64),
    /// The server's error, or its exit while asked.
    Error(String),
    /// Not answered within the profile's request deadline, counted by the fixture from
    /// the request's sending (the editor's delays before and after are not in it).
    Timeout,
    /// VS Code cancelled it (it asks again).
    Cancelled,
}

fn parse_status(s: &str) -> Option<Status> {
    let rest = s.trim().strip_prefix("typist-inline ")?;
    let mut w = rest.splitn(3, ' ');
    let seq = w.next()?.parse().ok()?;
    let (line, character) = w.next()?.split_once(':')?;
    let fate = w.next()?;
    let fate = if fate == "cancelled" {
        Fate::Cancelled
    } else if fate == "asking" {
        Fate::Asking
    } else if fate.starts_with("timeout") {
        Fate::Timeout
    } else if let Some(m) = fate.strip_prefix("error") {
        Fate::Error(m.trim().to_string())
    } else {
        Fate::Items(fate.parse().ok()?)
    };
    Some(Status {
        seq,
        line: line.parse().ok()?,
        character: character.parse().ok()?,
        fate,
    })
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

impl VscodeSession {
    pub async fn start(
        profile: &Profile,
        app: &EditorApp,
        opts: SessionOptions,
    ) -> Result<VscodeSession, SessionError> {
        if profile.connect.is_some() {
            return Err(failed(format!(
                "{}: vscode starts its own server through its extension; a profile that attaches (connect) runs only with --editor typist",
                profile.name
            )));
        }
        let fixture = !profile.is_plugin_only();
        let mut setup = instance::Setup {
            extensions: Vec::new(),
            settings: user_settings(),
        };
        // The fixture serves the profile's server; with extensions alone it only says
        // whether the extension host has the window's folder (`0 no-server`).
        let f = instance::fixture_vsix().ok_or_else(|| SessionError::Missing {
            server: "vscode".into(),
            command: ".servers/vscode/typist-inline.vsix".into(),
            hint: "run scripts/install-servers.sh (it packs the fixture extension)".into(),
        })?;
        setup.extensions.push(f.display().to_string());
        if let Some(v) = &profile.vscode {
            if fixture && !v.extensions.is_empty() {
                return Err(failed(format!(
                    "{}: a profile with a server cannot name VS Code extensions too (the fixture extension serves its server, and two providers would draw in one window); give the extensions a profile with no command",
                    profile.name
                )));
            }
            setup.extensions.extend(v.extensions.iter().cloned());
            if let (Some(to), Some(from)) = (setup.settings.as_object_mut(), v.settings.as_object())
            {
                to.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        for x in &app.extensions {
            // Named twice (the profile and --extension): installed once.
            if !setup.extensions.contains(x) {
                setup.extensions.push(x.clone());
            }
        }
        if !fixture && setup.extensions.len() == 1 {
            return Err(failed(format!(
                "{}: no VS Code extension to measure: name one with --extension FILE.vsix|ID",
                profile.name
            )));
        }
        let Workspace { dir, root, env } = workspace::prepare(
            profile,
            opts.source_root.as_deref(),
            &opts.files,
            &opts.contents,
        )?;
        let mut settings = serde_json::Map::new();
        if fixture {
            let server = profile
                .resolve_command()
                .ok_or_else(|| SessionError::Missing {
                    server: profile.name.clone(),
                    command: profile.command.clone(),
                    hint: profile.install_hint.clone(),
                })?;
            // The fixture asks the server as the profile's dialect says: completion
            // lists for the suggest widget (token cases), else line suggestions.
            let lists = (profile.dialect == DialectKind::Completion).then_some("completion");
            let dialect = lists.or(fixture_dialect(profile.dialect)).ok_or_else(|| {
                failed(format!(
                    "{}: the {} dialect has no inline suggestions in vscode's fixture extension; run it with --editor typist",
                    profile.name,
                    json!(profile.dialect).as_str().unwrap_or("")
                ))
            })?;
            let env: serde_json::Map<String, Value> = env
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            settings = json!({
                "typistInline.command": server.display().to_string(),
                "typistInline.args": profile.args,
                "typistInline.env": env,
                "typistInline.languages": profile.languages,
                "typistInline.initializationOptions": profile.initialization_options,
                "typistInline.settings": profile.settings,
                "typistInline.dialect": dialect,
                "typistInline.requestParams": profile.request_params,
                "typistInline.requestTimeoutMs": profile.request_timeout_ms,
            })
            .as_object()
            .cloned()
            .unwrap_or_default();
        }
        let vs = instance::shared(&setup).await?;
        let file = dir.path().join(WORKSPACE_FILE);
        let ws = json!({
            "folders": [{"path": root.display().to_string()}],
            "settings": settings,
        });
        std::fs::write(&file, serde_json::to_vec_pretty(&ws).unwrap_or_default())
            .map_err(SessionError::file(&file))?;
        let (target, tab) = vs.new_tab().await?;
        let mut s = VscodeSession {
            vs,
            target,
            tab,
            _dir: dir,
            root,
            profile: profile.clone(),
            app: app.clone(),
            texts: BTreeMap::new(),
            current: None,
            info: ServerInfo::default(),
            broken: None,
            fixture,
            list: None,
        };
        s.call("Page.enable", json!({})).await?;
        s.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        )
        .await?;
        // The page's size, as a window of that size would have it: the editor lays
        // out its lines for it.
        s.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": instance::WIDTH, "height": instance::HEIGHT, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        s.call("Page.bringToFront", json!({})).await?;
        let url = format!(
            "{}/?workspace={}",
            s.vs.url(),
            urlencode(&file.display().to_string())
        );
        s.wait_ready(&url).await?;
        Ok(s)
    }

    /// Opens the window on the session's workspace and waits for the fixture to say
    /// that its extension host has the folder: `typist-inline 0 ready` (its client
    /// started) or, with extensions alone, `typist-inline 0 no-server`.
    ///
    /// Now and then on a loaded machine the window's first read of the workspace file
    /// gives no folder (the title names the workspace; the extension host has none and
    /// gets none later; the cause inside code-server is not known): when the fixture
    /// says it is waiting for the folder `REREAD_AFTER` after the page was opened,
    /// typist writes the file again, unchanged, and the window, which watches it, reads
    /// it again and gives its extension host the folder. A window still without one
    /// `FOLDER_WITHIN` later is opened again. So is a page that has not run the
    /// workbench's main bundle `WORKBENCH_WITHIN` after it was opened: now and then one
    /// stops with its HTML half parsed or after fetching the bundle (the mark
    /// `code/willLoadWorkbenchMain` a minute on, the renderer idle), and a fresh
    /// navigation loads it in seconds; and so is a navigation that Chromium aborts at
    /// once. A window is opened at most `OPEN_TRIES` times; each open may take the
    /// profile's `init_timeout_ms` (at least a minute), and the last one is given all of
    /// it whatever it shows.
    async fn wait_ready(&mut self, url: &str) -> Result<(), SessionError> {
        let within = Duration::from_millis(self.profile.init_timeout_ms).max(PAGE_WITHIN);
        self.info = ServerInfo {
            name: Some(self.profile.name.clone()),
            version: None,
        };
        // Extensions alone: the fixture says the extension host has its folder; they
        // activate on their own events (the manifest says whether they did).
        let ready = if self.fixture {
            "typist-inline 0 ready"
        } else {
            "typist-inline 0 no-server"
        };
        let file = self._dir.path().join(WORKSPACE_FILE);
        let mut tries = 0;
        'open: loop {
            tries += 1;
            let last = tries >= OPEN_TRIES;
            let nav = self.call("Page.navigate", json!({"url": url})).await?;
            let opened = Instant::now();
            // Now and then the navigation is aborted at once (`net::ERR_ABORTED`) and the
            // tab stays on `about:blank`.
            if let Some(e) = nav["errorText"].as_str() {
                if let Some(why) = self.vs.ended() {
                    return Err(EditorError::Exited(format!("vscode: {why}")).into());
                }
                if !last {
                    tracing::warn!(assistant = %self.profile.name, "vscode's window: {e}; opening it again");
                    tokio::time::sleep(NAVIGATE_AGAIN_AFTER).await;
                    continue 'open;
                }
                return Err(EditorError::Timeout(format!(
                    "{}: vscode's window did not open: {e} ({tries} times)",
                    self.profile.name
                ))
                .into());
            }
            let mut rewritten: Option<Instant> = None;
            // Whether the page has been seen to run the workbench's main bundle (a
            // reading that failed says nothing).
            let mut loaded = false;
            loop {
                let r = self.read().await?;
                let status = r["status"].as_str().unwrap_or("").to_string();
                if status.starts_with(ready) {
                    // One more page call, made only for the debug log.
                    if tracing::enabled!(tracing::Level::DEBUG) {
                        let marks = self.vs.eval(&self.tab, MARKS).await.unwrap_or_default();
                        tracing::debug!(
                            assistant = %self.profile.name,
                            tries,
                            ms = opened.elapsed().as_millis() as u64,
                            %marks,
                            "vscode's window ready"
                        );
                    }
                    return Ok(());
                }
                if let Some(why) = status.strip_prefix("typist-inline failed") {
                    return Err(EditorError::Exited(format!(
                        "{}: the server did not start inside vscode:{why}",
                        self.profile.name
                    ))
                    .into());
                }
                if let Some(why) = self.vs.ended() {
                    return Err(EditorError::Exited(format!("vscode: {why}")).into());
                }
                let page = self
                    .vs
                    .eval(&self.tab, PAGE_STATE)
                    .await
                    .unwrap_or_default();
                let title = page[0].as_str().unwrap_or("").to_string();
                loaded |= page[3] == true;
                let waiting = status.contains("waiting for the workspace folder");
                if waiting && rewritten.is_none() && opened.elapsed() >= REREAD_AFTER {
                    tracing::info!(
                        assistant = %self.profile.name,
                        "vscode's extension host has no workspace folder; writing the workspace file again"
                    );
                    let text = std::fs::read(&file).map_err(SessionError::file(&file))?;
                    std::fs::write(&file, text).map_err(SessionError::file(&file))?;
                    rewritten = Some(Instant::now());
                }
                let timed_out = opened.elapsed() >= within;
                let again = if waiting && rewritten.is_some_and(|t| t.elapsed() >= FOLDER_WITHIN) {
                    Some("its extension host got no workspace folder")
                } else if !waiting
                    && !loaded
                    && page[3] == false
                    && opened.elapsed() >= WORKBENCH_WITHIN
                {
                    Some("the workbench did not load")
                } else if timed_out {
                    Some("not ready in time")
                } else {
                    None
                };
                if let Some(why) = again {
                    if !last {
                        tracing::warn!(
                            assistant = %self.profile.name,
                            title,
                            status,
                            url = %page[1],
                            mark = %page[2],
                            "vscode's window: {why}; opening it again"
                        );
                        continue 'open;
                    }
                    // The last open is given its whole time, whatever it shows.
                    if timed_out {
                        return Err(EditorError::Timeout(format!(
                            "{}: vscode's window or its extension not ready within {} ms ({why}; status: {status:?}, title: {title:?}, last mark: {}), opened {tries} times",
                            self.profile.name,
                            within.as_millis(),
                            page[2]
                        ))
                        .into());
                    }
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
        }
    }

    pub fn editor_version(&self) -> &str {
        &self.vs.version
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
    pub fn extension_states(&self) -> Vec<instance::ExtensionState> {
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

    /// Opens `rel` in an editor tab (Quick Open: Ctrl+P, its absolute path, Enter); the last one
    /// opened is where typing goes.
    pub async fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        workspace::write_creating(&path, text).map_err(SessionError::file(&path))?;
        // What an extension opens on its first start (llama.vscode: a page in the editor
        // area, a terminal, a modal question) may come while the file is being opened:
        // Quick Open then does not show, or lists the extension's page, and is tried again
        // once that is closed. (The file counts as the session's from now: its tab is
        // never taken for the extension's.)
        self.texts.insert(rel.to_string(), text.to_string());
        let mut tries = 0;
        loop {
            tries += 1;
            match self.quick_open(rel).await {
                Ok(()) => break,
                Err(e) if tries >= OPEN_FILE_TRIES => return Err(e),
                Err(e) => {
                    tracing::warn!(
                        file = rel,
                        "vscode: {e}; closing what is over the page and opening it again"
                    );
                    self.broken = None;
                    if !self.dismiss_dialog().await? {
                        self.key("Escape", "Escape", 27, 0).await?;
                    }
                    self.bring_back_focus().await?;
                }
            }
        }
        self.texts.insert(rel.to_string(), text.to_string());
        self.current = Some(rel.to_string());
        self.list = None;
        if self.profile.dialect == DialectKind::Completion {
            // Completion lists are asked with Trigger Suggest, which VS Code serves at
            // once in a fresh editor.
            return Ok(());
        }
        self.wait_asked(rel).await?;
        Ok(())
    }

    /// Quick Open (Ctrl+P), `rel`'s absolute path, Enter, until its editor is the active,
    /// focused one.
    async fn quick_open(&mut self, rel: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        self.key("p", "KeyP", 80, CTRL).await?;
        self.wait_page("quick open", QUICK_INPUT_FOCUSED).await?;
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        // The absolute path: Quick Open shows an existing file's own entry at once,
        // without waiting for the workspace's file search.
        self.call(
            "Input.insertText",
            json!({"text": path.display().to_string()}),
        )
        .await?;
        let name = Path::new(rel)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let want = serde_json::to_string(&name).unwrap_or_default();
        if let Err(e) = self
            .wait_page(
                "the file in quick open",
                &format!("[...document.querySelectorAll('.quick-input-list .monaco-list-row')].some(r => (r.getAttribute('aria-label')||'').includes({want}))"),
            )
            .await
        {
            let rows = self
                .vs
                .eval(&self.tab, "JSON.stringify([document.querySelector('.quick-input-widget input')?.value, ...[...document.querySelectorAll('.quick-input-list .monaco-list-row')].map(r => r.getAttribute('aria-label'))])")
                .await
                .unwrap_or_default();
            return Err(failed(format!("{e} (quick open shows {rows})")));
        }
        self.key("Enter", "Enter", 13, 0).await?;
        self.wait_page(
            "the file's editor",
            &format!("(() => {{ const t = document.querySelector('.tab.active'); return !!t && (t.getAttribute('aria-label')||'').includes({want}) && !!document.querySelector('.editor-instance .monaco-editor.focused'); }})()"),
        )
        .await
    }

    /// Waits until VS Code asks the extension for the opened file: a freshly opened
    /// editor does not ask its inline providers for a while (0.4 to 4 s here), so Trigger
    /// Inline Suggestion is run at the file's end until the fixture's status shows a
    /// request (its answer is not read; the next case hides it with Escape).
    async fn wait_asked(&mut self, rel: &str) -> Result<(), SessionError> {
        if !self.fixture {
            return self.warm_up().await;
        }
        let seq0 = self.status_seq().await?;
        let within = Duration::from_millis(self.profile.init_timeout_ms).max(PAGE_WITHIN);
        let deadline = Instant::now() + within;
        self.key("End", "End", 35, CTRL).await?;
        loop {
            self.bring_back_focus().await?;
            self.palette(TRIGGER).await?;
            let mut next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                let r = self.read().await?;
                match parse_status(r["status"].as_str().unwrap_or("")) {
                    // Asked, and its answer in: it does not overlap the next case.
                    Some(s) if s.seq > seq0 && s.fate != Fate::Asking => return Ok(()),
                    // Asked, the answer still coming: wait for it. Asking again would
                    // cancel it and queue one more request behind it at a server that
                    // answers one at a time (lsp-ai before llama-server, each answer
                    // over 0.5 s on a busy machine), so no answer would ever be the
                    // newest request's.
                    Some(s) if s.seq > seq0 => {
                        next = (Instant::now() + PAGE_POLL * 2).min(deadline)
                    }
                    _ => {}
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            if let Some(why) = self.vs.ended() {
                return Err(EditorError::Exited(format!("vscode: {why}")).into());
            }
            if Instant::now() >= deadline {
                return Err(EditorError::Timeout(format!(
                    "{}: vscode did not ask the extension for {rel} within {} ms",
                    self.profile.name,
                    within.as_millis()
                ))
                .into());
            }
        }
    }

    /// With extensions alone, whose requests typist cannot see: Trigger Inline
    /// Suggestion at the file's end until something is shown there, or `WARM_UP` has
    /// passed (an extension may rightly show nothing at a file's end).
    async fn warm_up(&mut self) -> Result<(), SessionError> {
        self.key("End", "End", 35, CTRL).await?;
        let deadline = Instant::now() + WARM_UP;
        while Instant::now() < deadline {
            self.bring_back_focus().await?;
            self.palette(TRIGGER).await?;
            let next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                if read_shown(&self.read().await?).is_some() {
                    return Ok(());
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            if let Some(why) = self.vs.ended() {
                return Err(EditorError::Exited(format!("vscode: {why}")).into());
            }
        }
        self.wait_activated().await?;
        // Nothing shown, and an extension asks to be signed in: it cannot answer, and a
        // run of empty records would say it had nothing to suggest.
        let asks = self.sign_in_prompts(Duration::ZERO).await;
        if !asks.is_empty() {
            return Err(SessionError::NotSignedIn {
                server: self.profile.name.clone(),
                message: format!(
                    "VS Code shows {} (check `typist doctor --editor vscode`)",
                    asks.join("; ")
                ),
            });
        }
        Ok(())
    }

    /// With extensions alone, after a file is open: every measured extension has
    /// activated (its extension host logged it), else the session fails naming it, so
    /// an extension that cannot work never yields a run of `empty` records.
    async fn wait_activated(&mut self) -> Result<(), SessionError> {
        let within = Duration::from_millis(self.profile.init_timeout_ms).max(PAGE_WITHIN);
        let deadline = Instant::now() + within;
        loop {
            let states = self.vs.extension_states();
            let measured: Vec<_> = states
                .iter()
                .filter(|x| !x.id.eq_ignore_ascii_case(FIXTURE_ID))
                .collect();
            if let Some(x) = measured.iter().find(|x| x.activation_error.is_some()) {
                return Err(EditorError::Exited(format!(
                    "{}: VS Code extension {} {} failed to activate: {}",
                    self.profile.name,
                    x.id,
                    x.version,
                    x.activation_error.as_deref().unwrap_or("")
                ))
                .into());
            }
            if measured.iter().all(|x| x.activated) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let ids: Vec<&str> = measured
                    .iter()
                    .filter(|x| !x.activated)
                    .map(|x| x.id.as_str())
                    .collect();
                return Err(EditorError::Timeout(format!(
                    "{}: VS Code extension {} not activated within {} ms of opening a file (check `typist doctor --editor vscode`: its sign-in, its activation events)",
                    self.profile.name,
                    ids.join(", "),
                    within.as_millis()
                ))
                .into());
            }
            tokio::time::sleep(PAGE_POLL * 10).await;
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

    /// A line case, as a person types it: the context placed, the line reached by Enter
    /// at the end of the line above ([`crate::editor::Arrival::EnterAbove`]), the typed
    /// characters as keys, then what VS Code shows read (see the module's doc).
    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let (text, at, line_start) = self.case_text(rel, cursor)?;
        let typed = text[line_start..at].to_string();
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let rest = text[at..line_end].to_string();
        let row = cursor.line as usize;
        self.bring_back_focus().await?;
        let (seq0, by_enter) = self
            .place_case(rel, &text, row, (line_start, at), &rest)
            .await?;
        // The user types the line's characters as key events.
        let interval = Duration::from_millis(self.app.key_interval_ms);
        for c in typed.chars() {
            tokio::time::sleep(interval).await;
            self.type_char(c).await?;
        }
        let by_palette = typed.is_empty() && !by_enter;
        if by_palette {
            // Nothing typed and no Enter (the first line, or text after the cursor): ask
            // as a user does, with the inline-suggest command (its keybinding, Alt+\,
            // does not reach it from DevTools key events).
            self.palette(TRIGGER).await?;
        }
        let t0 = Instant::now();
        let at_cursor = (row as u64, typed.encode_utf16().count() as u64);
        let typed_line = expand_tabs(&format!("{typed}{rest}"));
        if !self.fixture {
            // Extensions alone: their requests are not seen, only what the page shows.
            let display = Duration::from_millis(self.app.display_deadline_ms);
            let drawn = Drawn {
                by_palette,
                ..Drawn::alone(t0, display)
            };
            return self.wait_drawn(drawn, row, &typed_line).await;
        }
        let (status, first) = self.wait_status(seq0, at_cursor, t0).await?;
        let display = Duration::from_millis(self.app.display_deadline_ms);
        let mut drawn = Drawn::answered(status.seq, first, t0, display);
        drawn.by_palette = by_palette;
        match status.fate {
            Fate::Error(m) => return Err(request_failed(&self.profile.name, &m)),
            Fate::Timeout => return Err(request_timed_out(&self.profile, "inline")),
            Fate::Items(0) => {
                return Ok(Timed {
                    value: Suggestions::Inline(Vec::new()),
                    latency_ms: t0.elapsed().as_secs_f64() * 1000.0,
                });
            }
            _ => {}
        }
        drawn.cursor = Some(at_cursor);
        self.wait_drawn(drawn, row, &typed_line).await
    }

    /// Puts the case's context in the editor and the cursor where typing begins: with
    /// nothing after the cursor on a line below the first, the context without the line
    /// (the disk copy, reloaded by File: Revert File), the cursor at the end of the line
    /// above (where Ctrl+End leaves it when no line follows, else Go to Line and End),
    /// and Enter (an edit: VS Code asks its inline providers on its own, as after a
    /// person's Enter); else the line without its typed characters and the cursor at its
    /// start. Returns the fixture's last request before the case's keys, and whether the
    /// line was opened by Enter.
    async fn place_case(
        &mut self,
        rel: &str,
        text: &str,
        row: usize,
        (line_start, at): (usize, usize),
        rest: &str,
    ) -> Result<(u64, bool), SessionError> {
        let by_enter = rest.is_empty() && row > 0;
        let placed = if by_enter {
            format!("{}{}", &text[..line_start - 1], &text[at..])
        } else {
            format!("{}{}", &text[..line_start], &text[at..])
        };
        let path = self.root.join(rel);
        workspace::write_creating(&path, &placed).map_err(SessionError::file(&path))?;
        self.key("Escape", "Escape", 27, 0).await?;
        self.revert().await?;
        let lines = placed.split('\n').count();
        self.wait_line_count(lines).await?;
        if !by_enter {
            // Go to Line again when the line does not show (it did every time once the
            // reverted text had arrived; kept as a guard).
            let mut tries = 0;
            loop {
                tries += 1;
                self.go_to(row + 1, 1).await?;
                if tries == PLACE_TRIES {
                    self.wait_line(row, rest).await?;
                    break;
                }
                if self.line_shows(row, rest, LINE_SHOWS_WITHIN).await? {
                    break;
                }
            }
            self.wait_client_ready().await?;
            return Ok((self.status_seq().await?, false));
        }
        let above = text[..line_start - 1]
            .rsplit('\n')
            .next()
            .unwrap_or("")
            .to_string();
        let above_end = expand_tabs(&above).chars().count() + 1;
        // Nothing after the case's line (the default prefix context): Ctrl+End, which
        // waited for the reverted text, left the cursor at the end of the line above.
        if at < text.len() {
            self.go_to(row, 1).await?;
            self.key("End", "End", 35, 0).await?;
        }
        self.wait_cursor(row, above_end).await?;
        self.wait_client_ready().await?;
        let seq0 = self.status_seq().await?;
        self.key_text("\r", "Enter", 13, "\r").await?;
        // Now and then on a loaded machine an Enter right after Go to Line (the line above
        // empty: End moves nothing, so nothing is waited for) does nothing at all; the
        // cursor still at the end of the line above, once the page has rendered what it
        // had pending, says so, and Enter is pressed again.
        if !self
            .page_shows(&cursor_at(row + 1, 1), ENTER_SHOWS_WITHIN)
            .await?
            && self.vs.eval(&self.tab, AFTER_RENDER).await.map(|_| true)?
            && self
                .page_shows(&cursor_at(row, above_end), Duration::ZERO)
                .await?
        {
            tracing::warn!(
                line = row,
                "vscode: Enter at the end of the line above did nothing; pressing it again"
            );
            self.key_text("\r", "Enter", 13, "\r").await?;
        }
        self.wait_cursor(row + 1, 1).await?;
        Ok((seq0, true))
    }

    /// The fixture's status of the first request at `at` (row, UTF-16 column) sent after
    /// request `seq0` that has a fate (not asking, not cancelled), and its answer's lines.
    /// The fixture keeps the request deadline itself: typist waits past it for VS Code's
    /// own delays, and nothing said by then is the editor's failure, never a timeout.
    async fn wait_status(
        &mut self,
        seq0: u64,
        (row, col16): (u64, u64),
        t0: Instant,
    ) -> Result<(Status, Option<String>), SessionError> {
        let deadline = t0 + self.profile.request_timeout() + EDITOR_DELAY;
        loop {
            let r = self.read().await?;
            if let Some(s) = parse_status(r["status"].as_str().unwrap_or(""))
                && s.seq > seq0
                && (s.line, s.character) == (row, col16)
                && !matches!(s.fate, Fate::Asking | Fate::Cancelled)
            {
                let lines = answer_lines(&r, s.seq);
                return Ok((s, lines));
            }
            if let Some(why) = self.vs.ended() {
                return Err(EditorError::Exited(format!("vscode: {why}")).into());
            }
            if Instant::now() >= deadline {
                return Err(editor_silent(&self.profile, "inline", &r));
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// Reads the page until it draws the case's answer at the cursor's line (`row`,
    /// holding `typed_line` as typed): with the fixture, a ghost text drawing one of the
    /// answers at the cursor since the case began (a later request at the cursor is the
    /// case's answer too, and typist waits for it); with extensions alone, any ghost
    /// text there. Nothing drawn by the display deadline is an `empty` with its reason
    /// (an answer with no items, or a ghost text VS Code does not draw); a ghost text
    /// that is not an answer is the case's error (a stale suggestion).
    async fn wait_drawn(
        &mut self,
        mut d: Drawn,
        row: usize,
        typed_line: &str,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let display = Duration::from_millis(self.app.display_deadline_ms);
        let deadline = d.t0 + self.profile.request_timeout() + EDITOR_DELAY;
        loop {
            let r = self.read().await?;
            let later = d.later(&r, display, deadline);
            if r["row"].as_u64() == Some(row as u64 + 1)
                && let Some(s) = read_shown(&r)
            {
                if r["cur"].as_str() != Some(typed_line) {
                    let e = failed(format!(
                        "vscode: line {} shows {} as typed, not {typed_line:?} (the page shows {r})",
                        row + 1,
                        r["cur"]
                    ));
                    // Extensions alone: a ghost text drawn after an earlier key, before
                    // the page drew the last ones, is not read; the fixture's answer is
                    // at the cursor typing ended at, so its line must hold what was typed.
                    if d.cursor.is_some() || Instant::now() >= d.shown_by {
                        return Err(e);
                    }
                    tokio::time::sleep(PAGE_POLL / 4).await;
                    continue;
                }
                // Extensions alone: what is drawn is read once the page has rendered
                // what it had pending (VS Code draws a multi-line ghost text's view zone
                // and its first line in separate frames), the same in two readings.
                // A ghost text still changing at the display deadline is not read.
                let unsettled = d.cursor.is_none() && !self.settled(&s).await?;
                if !unsettled && let Some(s) = d.answer_drawn(s) {
                    let latency_ms = d.t0.elapsed().as_secs_f64() * 1000.0;
                    return Ok(Timed {
                        value: Suggestions::Inline(vec![s]),
                        latency_ms,
                    });
                }
            }
            match later {
                Some(Fate::Error(m)) => return Err(request_failed(&self.profile.name, &m)),
                Some(Fate::Timeout) if d.answers.is_empty() => {
                    return Err(request_timed_out(&self.profile, "inline"));
                }
                _ => {}
            }
            if Instant::now() >= d.shown_by {
                if d.later_asking {
                    return Err(editor_silent(&self.profile, "inline", &r));
                }
                return d.nothing_drawn(&self.profile.name, &self.app, &r);
            }
            tokio::time::sleep(PAGE_POLL / 4).await;
        }
    }

    /// Whether the page still shows the ghost text `s` after two animation frames (the
    /// page's pending rendering done).
    async fn settled(&mut self, s: &InlineSuggestion) -> Result<bool, SessionError> {
        self.vs.eval(&self.tab, AFTER_RENDER).await?;
        Ok(read_shown(&self.read().await?).as_ref() == Some(s))
    }

    /// Whether the page shows the cursor on `row` holding `want` within `within`.
    async fn line_shows(
        &mut self,
        row: usize,
        want: &str,
        within: Duration,
    ) -> Result<bool, SessionError> {
        self.page_shows(&line_is(row, want), within).await
    }

    /// Waits until the editor holds `lines` lines: Ctrl+End, again until the status
    /// bar's line is the last one (the reverted text has arrived).
    async fn wait_line_count(&mut self, lines: usize) -> Result<(), SessionError> {
        let want = format!("Ln {lines}, Col ");
        let want_js = serde_json::to_string(&want).unwrap_or_default();
        let expr = format!(
            "(() => {{ const e = document.getElementById('status.editor.selection'); return !!e && e.textContent.includes({want_js}); }})()"
        );
        let deadline = Instant::now() + UI_WITHIN;
        loop {
            self.key("End", "End", 35, CTRL).await?;
            let next = Instant::now() + LINE_SHOWS_WITHIN;
            while Instant::now() < next {
                if self.vs.eval(&self.tab, &expr).await? == Value::Bool(true) {
                    return Ok(());
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            if Instant::now() >= deadline {
                let why = format!(
                    "vscode: the reverted text ({lines} lines) did not show within {} ms",
                    UI_WITHIN.as_millis()
                );
                self.broken = Some(why.clone());
                return Err(failed(why));
            }
        }
    }

    /// Waits until the page shows the cursor on `row` (0-based) holding `want` (ghost
    /// text aside, tabs as drawn); the error says what the page shows instead.
    async fn wait_line(&mut self, row: usize, want: &str) -> Result<(), SessionError> {
        if let Err(e) = self
            .wait_page(
                &format!(
                    "line {} as the case has it ({:?})",
                    row + 1,
                    expand_tabs(want)
                ),
                &line_is(row, want),
            )
            .await
        {
            let r = self.read().await.unwrap_or_default();
            let dom = self.vs.eval(&self.tab, DUMP).await.unwrap_or_default();
            return Err(failed(format!("{e}; the page shows {r}; {dom}")));
        }
        Ok(())
    }

    async fn type_char(&mut self, c: char) -> Result<(), SessionError> {
        match c {
            // A Tab key would accept a shown suggestion or indent: the character itself.
            '\t' => {
                self.call("Input.insertText", json!({"text": "\t"})).await?;
            }
            ' ' => self.key_text(" ", "Space", 32, " ").await?,
            c => {
                let s = c.to_string();
                self.key_text(&s, "", 0, &s).await?;
            }
        }
        Ok(())
    }

    /// File: Revert File from the command palette: the editor holds the disk copy again
    /// (VS Code reloads it exactly, and the tab is no longer dirty).
    async fn revert(&mut self) -> Result<(), SessionError> {
        self.palette("File: Revert File").await?;
        self.wait_page(
            "the reverted editor",
            "(() => { const t = document.querySelector('.tab.active'); return !!t && !t.classList.contains('dirty') && !!document.querySelector('.editor-instance .monaco-editor.focused'); })()",
        )
        .await
    }

    /// Runs a command by its title from the command palette (Ctrl+Shift+P). A palette
    /// that does not open, or does not list the command (a dialog or a page an extension
    /// opened meanwhile holds the keys or took the editor's place), is closed and opened
    /// again once what is over the document is closed.
    async fn palette(&mut self, title: &str) -> Result<(), SessionError> {
        for _ in 1..PALETTE_TRIES {
            if self.try_palette(title).await? {
                return Ok(());
            }
            // A dialog is dismissed (and named) here; else the palette is closed first.
            if !self.dismiss_dialog().await? {
                self.key("Escape", "Escape", 27, 0).await?;
            }
            self.bring_back_focus().await?;
        }
        self.run_in_palette(title).await
    }

    /// [`Self::palette`] once: false when the palette or the command did not show.
    async fn try_palette(&mut self, title: &str) -> Result<bool, SessionError> {
        self.key("P", "KeyP", 80, CTRL | SHIFT).await?;
        if !self.page_shows(QUICK_INPUT_FOCUSED, UI_WITHIN).await? {
            return Ok(false);
        }
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.call("Input.insertText", json!({"text": title}))
            .await?;
        if !self.page_shows(&palette_lists(title), UI_WITHIN).await? {
            return Ok(false);
        }
        self.key("Enter", "Enter", 13, 0).await?;
        Ok(true)
    }

    /// Ctrl+Shift+P and `title` run from the palette, which must show and list it (the
    /// error says what is over the document).
    async fn run_in_palette(&mut self, title: &str) -> Result<(), SessionError> {
        self.key("P", "KeyP", 80, CTRL | SHIFT).await?;
        let shown = match self
            .wait_page("the command palette", QUICK_INPUT_FOCUSED)
            .await
        {
            Ok(()) => {
                tokio::time::sleep(QUICK_INPUT_SETTLE).await;
                self.call("Input.insertText", json!({"text": title}))
                    .await?;
                self.wait_page(
                    &format!("{title} in the command palette"),
                    &palette_lists(title),
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = shown {
            let f = self.vs.eval(&self.tab, FOCUS).await.unwrap_or_default();
            return Err(failed(format!("{e} (over the document: {f})")));
        }
        self.key("Enter", "Enter", 13, 0).await
    }

    /// Whether the page's `expr` becomes true within `within`.
    async fn page_shows(&mut self, expr: &str, within: Duration) -> Result<bool, SessionError> {
        let deadline = Instant::now() + within;
        loop {
            if self.vs.eval(&self.tab, expr).await? == Value::Bool(true) {
                return Ok(true);
            }
            if let Some(why) = self.vs.ended() {
                return Err(EditorError::Exited(format!("vscode: {why}")).into());
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
    }

    /// Go to Line (Ctrl+G), `line:column` (1-based; the column a visible one, as VS Code
    /// 1.108 and later read it), Enter, until the status bar shows both.
    async fn go_to(&mut self, line: usize, column: usize) -> Result<(), SessionError> {
        self.key("g", "KeyG", 71, CTRL).await?;
        self.wait_page("go to line", QUICK_INPUT_FOCUSED).await?;
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.call(
            "Input.insertText",
            json!({"text": format!("{line}:{column}")}),
        )
        .await?;
        tokio::time::sleep(QUICK_INPUT_SETTLE).await;
        self.key("Enter", "Enter", 13, 0).await?;
        // The status bar's line and column, once they have followed (the case before
        // may have left the cursor on the same line).
        self.wait_cursor(line, column).await
    }

    /// Waits until the status bar shows the cursor at `line`, `column` (1-based, the
    /// column a visible one) in a focused editor.
    async fn wait_cursor(&mut self, line: usize, column: usize) -> Result<(), SessionError> {
        let at = cursor_at(line, column);
        if let Err(e) = self
            .wait_page(&format!("the cursor at line {line}, column {column}"), &at)
            .await
        {
            let page = self.vs.eval(&self.tab, WHERE).await.unwrap_or_default();
            return Err(failed(format!("{e} (the page shows {page})")));
        }
        Ok(())
    }

    /// Dismisses a modal dialog (Escape: its cancel), naming it for the manifest; false
    /// when none is shown.
    async fn dismiss_dialog(&mut self) -> Result<bool, SessionError> {
        let f: Focus = serde_json::from_value(self.vs.eval(&self.tab, FOCUS).await?)
            .map_err(|e| failed(format!("vscode: reading the focus: {e}")))?;
        let Some(d) = f.dialog else {
            return Ok(false);
        };
        instance::note_closed(format!("dialog: {d}"));
        self.key("Escape", "Escape", 27, 0).await?;
        self.wait_page(
            "the dialog closed",
            "!document.querySelector('.monaco-dialog-box')",
        )
        .await?;
        Ok(true)
    }

    /// Closes what an extension opened over the document and brings the focus back to
    /// the document's editor, as a person closes an extension's first-start page or
    /// question and goes on typing (llama.vscode opens its how-to page in the editor area
    /// and asks in a modal dialog whether to install its server on its first start; every
    /// run starts a fresh profile, so every run is a first start): a modal dialog is
    /// dismissed (Escape: its cancel), an editor tab that is not the document closed,
    /// a panel that holds the focus closed, and the editor group focused. Each thing
    /// closed is named for the manifest ([`instance::note_closed`]).
    async fn bring_back_focus(&mut self) -> Result<(), SessionError> {
        let name = |rel: &str| {
            Path::new(rel)
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default()
        };
        // The files this session opened: every other tab was opened by an extension.
        let ours: Vec<String> = self.texts.keys().map(|r| name(r)).collect();
        let current = self.current.as_deref().map(name);
        // A tab's label is its file's name, then `, preview` and the like.
        let is_ours = |label: &str| {
            ours.iter()
                .any(|n| label == n || label.split(", ").next() == Some(n.as_str()))
        };
        let mut last = Value::Null;
        // Tabs asked to close: named once they are gone.
        let mut closing: Vec<String> = Vec::new();
        for _ in 0..FOCUS_TRIES {
            let f: Focus = serde_json::from_value(self.vs.eval(&self.tab, FOCUS).await?)
                .map_err(|e| failed(format!("vscode: reading the focus: {e}")))?;
            tracing::debug!(focus = ?f, "vscode: what is over the document");
            for gone in closing.drain(..) {
                if !f.tabs.iter().any(|t| t.label == gone) {
                    instance::note_closed(format!("editor tab: {gone}"));
                }
            }
            if f.dialog.is_some() {
                self.dismiss_dialog().await?;
                continue;
            }
            let others: Vec<&Tab> = f.tabs.iter().filter(|t| !is_ours(&t.label)).collect();
            if !others.is_empty() {
                closing = others.iter().map(|t| t.label.clone()).collect();
                let labels =
                    serde_json::to_string(&others.iter().map(|t| &t.label).collect::<Vec<_>>())
                        .unwrap_or_default();
                self.vs
                    .eval(
                        &self.tab,
                        &format!("(() => {{ const want = {labels}; for (const t of document.querySelectorAll('.tabs-container .tab')) {{ if (want.includes(t.getAttribute('aria-label') || '')) {{ const c = t.querySelector('.tab-actions .action-label'); if (c) c.click(); }} }} return true; }})()"),
                    )
                    .await?;
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
            if let Some(p) = &f.panel {
                instance::note_closed(format!("panel: {p}"));
                self.run_in_palette("View: Close Panel").await?;
            }
            self.run_in_palette("View: Focus Active Editor Group")
                .await?;
            last = serde_json::to_value(&f).unwrap_or_default();
        }
        let why = format!(
            "vscode: the editor of {} could not be brought back into focus (the page shows {last})",
            self.current.as_deref().unwrap_or("the file")
        );
        self.broken = Some(why.clone());
        Err(failed(why))
    }

    /// With the fixture: waits until its language client can be asked (its client item
    /// says `ready`). A server that exited (a crash, after its answer or in the middle
    /// of one) is started again by the client, which drops its providers meanwhile and
    /// registers them once the new server is initialized; VS Code asks no one in between
    /// and does not ask again once they are back, so a case's keys typed then would be
    /// asked of no one. typist's own client likewise starts a server again before the
    /// next case. A fixture that shows no client item is taken as ready.
    pub(super) async fn wait_client_ready(&mut self) -> Result<(), SessionError> {
        if !self.fixture {
            return Ok(());
        }
        let within = Duration::from_millis(self.profile.init_timeout_ms) + EDITOR_DELAY;
        let deadline = Instant::now() + within;
        loop {
            let r = self.read().await?;
            let state = r["client"].as_str().unwrap_or("ready");
            if state.ends_with(" ready") || state == "ready" {
                return Ok(());
            }
            if let Some(why) = self.vs.ended() {
                return Err(EditorError::Exited(format!("vscode: {why}")).into());
            }
            if Instant::now() >= deadline {
                return Err(failed(format!(
                    "vscode: the fixture's language client was not ready to be asked within {} ms of the case (it shows {state:?}: the server it starts again did not come up)",
                    within.as_millis()
                )));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
    }

    /// The sequence number of the fixture's last request (0 before any).
    async fn status_seq(&mut self) -> Result<u64, SessionError> {
        let r = self.read().await?;
        Ok(parse_status(r["status"].as_str().unwrap_or("")).map_or(0, |s| s.seq))
    }

    async fn wait_page(&mut self, what: &str, expr: &str) -> Result<(), SessionError> {
        if self.page_shows(expr, UI_WITHIN).await? {
            return Ok(());
        }
        let why = format!(
            "vscode: {what} did not show within {} ms",
            UI_WITHIN.as_millis()
        );
        self.broken = Some(why.clone());
        Err(failed(why))
    }

    async fn read(&mut self) -> Result<Value, SessionError> {
        self.vs.eval(&self.tab, READ).await
    }

    async fn key(
        &mut self,
        key: &str,
        code: &str,
        vk: u32,
        modifiers: u32,
    ) -> Result<(), SessionError> {
        let p = json!({"type": "rawKeyDown", "key": key, "code": code,
            "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk, "modifiers": modifiers});
        self.call("Input.dispatchKeyEvent", p).await?;
        let p = json!({"type": "keyUp", "key": key, "code": code,
            "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk, "modifiers": modifiers});
        self.call("Input.dispatchKeyEvent", p).await?;
        Ok(())
    }

    async fn key_text(
        &mut self,
        key: &str,
        code: &str,
        vk: u32,
        text: &str,
    ) -> Result<(), SessionError> {
        let p = json!({"type": "keyDown", "key": key, "code": code, "text": text,
            "unmodifiedText": text, "windowsVirtualKeyCode": vk});
        self.call("Input.dispatchKeyEvent", p).await?;
        let p = json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk});
        self.call("Input.dispatchKeyEvent", p).await?;
        Ok(())
    }

    async fn call(&mut self, method: &str, params: Value) -> Result<Value, SessionError> {
        match self
            .vs
            .cdp
            .call(method, params, Some(&self.tab), CALL)
            .await
        {
            Ok(v) => Ok(v),
            Err(e) => {
                let err = self.vs.error(method, e);
                if let SessionError::Editor(EditorError::Failed(m)) = &err {
                    self.broken = Some(m.clone());
                }
                Err(err)
            }
        }
    }

    /// Closes the tab (its window's extension host and server go after code-server's
    /// reconnection grace); the workspace goes with the session.
    pub async fn shutdown(self) {
        self.vs.close_tab(&self.target).await;
    }
}

const CTRL: u32 = 2;
const SHIFT: u32 = 8;

/// The line as shown and its further lines, from the page's reading; `None` when no
/// ghost text is shown at the cursor's line.
fn read_shown(r: &Value) -> Option<InlineSuggestion> {
    let ghost = r["ghost"].as_bool().unwrap_or(false);
    let further: Vec<String> = r["further"]
        .as_array()
        .map(|a| a.iter().map(|l| nbsp(l.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    if !ghost && further.is_empty() {
        return None;
    }
    let first = nbsp(r["line"].as_str()?);
    let mut text = first.clone();
    for l in &further {
        text.push('\n');
        text.push_str(l);
    }
    Some(InlineSuggestion { line: first, text })
}

/// How long past the profile's request deadline typist waits for the fixture to say what
/// became of a request (or for a later request at the cursor): VS Code's own delays,
/// asking after its debounce, the extension host and the page busy on a loaded machine.
/// The fixture keeps the request deadline itself, so a request the server did not answer
/// in time says `timeout` well within this; nothing said by then is the editor's
/// failure, never the assistant's timeout.
const EDITOR_DELAY: Duration = Duration::from_secs(30);

/// What a line case waits to see drawn, and what it has seen so far.
struct Drawn {
    /// The last key (the case's latency counts from it).
    t0: Instant,
    /// With the fixture: the cursor (row, UTF-16 column) its requests are matched by, and
    /// the last request at it that typist took into account. `None`: extensions alone,
    /// whose requests are not seen.
    cursor: Option<(u64, u64)>,
    current: u64,
    /// Every answer with items at the cursor since the case began, as the lines accepting
    /// its first item leaves: only a ghost text drawing one of them is read.
    answers: Vec<String>,
    /// Nothing drawn by then: the case is settled as nothing shown.
    shown_by: Instant,
    /// A later request at the cursor is still asked (typist waits for it).
    later_asking: bool,
    /// A later answer had no items while none had any.
    no_items: bool,
    /// A ghost text seen that is no answer (an older suggestion still on screen).
    other: Option<String>,
    /// The case was asked by Trigger Inline Suggestion (nothing typed, no Enter reached
    /// it): said in the reason when nothing is shown.
    by_palette: bool,
}

impl Drawn {
    /// Extensions alone: the display deadline counts from the last key.
    fn alone(t0: Instant, display: Duration) -> Drawn {
        Drawn {
            t0,
            cursor: None,
            current: 0,
            answers: Vec::new(),
            shown_by: t0 + display,
            later_asking: false,
            no_items: false,
            other: None,
            by_palette: false,
        }
    }

    /// The fixture answered request `seq` with items (`first`: the lines its first item
    /// leaves): the display deadline counts from now (a model's answer may take longer
    /// than the deadline to come).
    fn answered(seq: u64, first: Option<String>, t0: Instant, display: Duration) -> Drawn {
        Drawn {
            current: seq,
            answers: first.into_iter().collect(),
            shown_by: Instant::now() + display,
            ..Drawn::alone(t0, display)
        }
    }

    /// Takes in a later request at the cursor from reading `r`, if the fixture shows one:
    /// VS Code may ask again at the same cursor (the same document) before it draws, and
    /// then draws that later answer, which is the case's answer too (the display deadline
    /// then counts from it; while it is asked, typist waits up to `deadline`). Returns a
    /// later request's failure: an error is the case's unless this reading draws an
    /// earlier answer, a timeout is the case's when no answer had items.
    fn later(&mut self, r: &Value, display: Duration, deadline: Instant) -> Option<Fate> {
        let (row, col16) = self.cursor?;
        let st = parse_status(r["status"].as_str().unwrap_or(""))?;
        if st.seq <= self.current || (st.line, st.character) != (row, col16) {
            return None;
        }
        match &st.fate {
            Fate::Error(_) => return Some(st.fate),
            Fate::Asking => {
                self.later_asking = true;
                self.shown_by = self.shown_by.max(deadline);
                return None;
            }
            Fate::Items(n) => {
                if *n > 0 {
                    self.answers.extend(answer_lines(r, st.seq));
                }
                // No items: what is drawn now, if anything, is an earlier answer VS Code
                // keeps; nothing drawn by the deadline is an empty.
                if *n == 0 && self.answers.is_empty() {
                    self.no_items = true;
                }
            }
            Fate::Timeout | Fate::Cancelled => {}
        }
        self.current = st.seq;
        self.later_asking = false;
        self.shown_by = Instant::now() + display;
        (st.fate == Fate::Timeout).then_some(Fate::Timeout)
    }

    /// The suggestion a ghost text `s` read at the cursor's line stands for: with the
    /// fixture, the answer it draws (its lines, tabs as tabs), else none (it is kept as
    /// the stale suggestion seen); with extensions alone, what the page shows.
    fn answer_drawn(&mut self, s: InlineSuggestion) -> Option<InlineSuggestion> {
        if self.cursor.is_none() {
            return Some(s);
        }
        match self.answers.iter().find(|l| draws(&s.text, l)) {
            Some(lines) => Some(InlineSuggestion {
                line: lines.split('\n').next().unwrap_or("").to_string(),
                text: lines.clone(),
            }),
            None => {
                self.other = Some(s.text);
                None
            }
        }
    }

    /// The display deadline passed with no answer drawn: a stale suggestion seen is the
    /// case's error; an answer with no items an `empty`; else nothing shown (an `empty`
    /// with its reason).
    fn nothing_drawn(
        &self,
        name: &str,
        app: &EditorApp,
        r: &Value,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if let Some(seen) = &self.other {
            // Never an answer, never an empty: the user saw a suggestion that is not the
            // one asked for.
            return Err(failed(format!(
                "vscode: {name} answered {:?} and the page still shows {seen:?} at the display deadline ({} ms): a stale suggestion",
                self.answers
                    .last()
                    .map_or("(no answer text from the fixture)", String::as_str),
                app.display_deadline_ms
            )));
        }
        if self.no_items {
            return Ok(Timed {
                value: Suggestions::Inline(Vec::new()),
                latency_ms: self.t0.elapsed().as_secs_f64() * 1000.0,
            });
        }
        tracing::debug!(page = %r, answers = ?self.answers, "vscode: nothing shown within the display deadline");
        let asked = if self.by_palette {
            "; asked by Trigger Inline Suggestion (nothing typed and no Enter reaches this \
             line): an extension that answers automatic triggers only shows nothing here"
        } else {
            ""
        };
        Err(EditorError::NothingShown(format!(
            "nothing shown within the display deadline ({} ms){asked}",
            app.display_deadline_ms
        ))
        .into())
    }
}

/// The profile's request deadline passed with no answer, as the fixture counted it from
/// the request's sending: the assistant's timeout.
fn request_timed_out(profile: &Profile, what: &str) -> SessionError {
    EditorError::Timeout(format!(
        "{}: the {what} request not answered within {} ms (through vscode)",
        profile.name, profile.request_timeout_ms
    ))
    .into()
}

/// The fixture said nothing of a request at the cursor within the request deadline and
/// [`EDITOR_DELAY`]: VS Code did not ask, or its extension host or page did not get on.
/// The editor's failure, never the assistant's timeout.
fn editor_silent(profile: &Profile, what: &str, r: &Value) -> SessionError {
    failed(format!(
        "vscode: no fate of the {what} request at the cursor within {} ms of the last key ({} ms request deadline and {} s for the editor; the fixture's status: {}); vscode did not get on, the assistant {} is not to blame",
        profile.request_timeout_ms + EDITOR_DELAY.as_millis() as u64,
        profile.request_timeout_ms,
        EDITOR_DELAY.as_secs(),
        r["status"],
        profile.name,
    ))
}

/// The fixture's answer for request `seq` from a reading of the page: the lines that
/// accepting its first item would leave (the item's label, `{"seq": N, "lines": ...}`).
fn answer_lines(r: &Value, seq: u64) -> Option<String> {
    let a: Value = serde_json::from_str(r["answer"].as_str()?).ok()?;
    if a["seq"].as_u64() != Some(seq) {
        return None;
    }
    a["lines"].as_str().map(str::to_string)
}

/// The fixture's inline request failed: the case's error.
fn request_failed(name: &str, m: &str) -> SessionError {
    failed(format!(
        "{name}: the inline request failed (through vscode): {m}"
    ))
}

/// Whether the ghost text read (`shown`: the cursor's line and the further lines, as
/// drawn) draws `lines`: each line with its tabs drawn as spaces.
fn draws(shown: &str, lines: &str) -> bool {
    let drawn: Vec<&str> = shown.split('\n').collect();
    let want: Vec<String> = lines.split('\n').map(expand_tabs).collect();
    drawn.len() == want.len() && drawn.iter().zip(&want).all(|(a, b)| *a == b)
}

/// A line as VS Code draws it: tabs to the next stop of 4 (`editor.tabSize`).
fn expand_tabs(s: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for c in s.chars() {
        if c == '\t' {
            let n = TAB_SIZE - col % TAB_SIZE;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

const TAB_SIZE: usize = 4;

fn nbsp(s: &str) -> String {
    s.replace('\u{a0}', " ")
}

fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_status_says_seq_position_and_fate() {
        let s = parse_status("typist-inline 7 3:12 2").unwrap();
        assert_eq!((s.seq, s.line, s.character), (7, 3, 12));
        assert_eq!(s.fate, Fate::Items(2));
        let e = parse_status("typist-inline 8 0:0 error boom now").unwrap();
        assert_eq!(e.fate, Fate::Error("boom now".into()));
        let f = |t: &str| parse_status(t).unwrap().fate;
        assert_eq!(f("typist-inline 9 1:1 cancelled"), Fate::Cancelled);
        assert_eq!(f("typist-inline 10 1:1 asking"), Fate::Asking);
        assert_eq!(f("typist-inline 11 1:1 timeout 300"), Fate::Timeout);
        assert_eq!(parse_status("typist-inline 0 ready"), None);
    }

    #[test]
    fn only_a_ghost_text_drawing_this_requests_answer_is_read() {
        let r = json!({"answer": r#"{"seq":4,"lines":"\tx = f(1)\n\treturn x"}"#});
        let lines = answer_lines(&r, 4).unwrap();
        assert_eq!(lines, "\tx = f(1)\n\treturn x");
        // An older request's answer is not this one's.
        assert_eq!(answer_lines(&r, 5), None);
        assert_eq!(answer_lines(&json!({"answer": "null"}), 4), None);
        assert_eq!(answer_lines(&json!({}), 4), None);
        // Tabs are drawn as spaces to the next stop of 4.
        assert!(draws("    x = f(1)\n    return x", &lines));
        assert!(!draws("    x = f(1)", &lines), "a line missing");
        assert!(!draws("    x = f(2)\n    return x", &lines), "another text");
        assert!(draws("ab  c", "ab\tc"));
    }

    #[test]
    fn the_shown_line_joins_the_view_zone_lines_with_spaces_restored() {
        let r =
            json!({"ghost": true, "line": "x\u{a0}=\u{a0}f(1)", "further": ["\u{a0}\u{a0}return"]});
        let s = read_shown(&r).unwrap();
        assert_eq!(s.line, "x = f(1)");
        assert_eq!(s.text, "x = f(1)\n  return");
        assert_eq!(
            read_shown(&json!({"ghost": false, "line": "x", "further": []})),
            None
        );
    }
}
