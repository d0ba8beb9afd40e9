//! A session started: the run's VS Code for the profile's extensions and settings
//! ([`VscodeHost::instance`]), the session's `.code-workspace` file (the fixture's settings
//! naming the profile's server), a tab of its own, and the window opened on the
//! workspace until the fixture says its extension host has the folder (opened again
//! when it does not get on).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::instance::{self, PAGE_POLL};
use super::scripts::{DIALOG_WATCH, MARKS, PAGE_STATE};
use super::{VscodeHost, VscodeSession, failed, fixture_dialect};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::handshake::ServerInfo;
use crate::editor::kind::EditorApp;
use crate::editor::options::SessionOptions;
use crate::editor::profile::{DialectKind, Profile};
use crate::editor::workspace::{self, Workspace};
use std::sync::Arc;

/// The workspace file typist writes beside each session's workspace.
pub(super) const WORKSPACE_FILE: &str = "typist.code-workspace";
/// How long after a window was opened typist writes its workspace file again when the
/// fixture is still waiting for the folder (see `VscodeSession::wait_ready`).
const REREAD_AFTER: Duration = Duration::from_secs(3);
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

impl VscodeSession {
    pub async fn start(
        host: &Arc<VscodeHost>,
        profile: &Profile,
        app: &EditorApp,
        mut opts: SessionOptions,
    ) -> Result<VscodeSession, SessionError> {
        if profile.connect.is_some() {
            return Err(failed(format!(
                "{}: vscode starts its own server through its extension; a profile that attaches (connect) runs only with --editor typist",
                profile.name
            )));
        }
        let fixture = !profile.is_plugin_only();
        // The sign-in is the VS Code's (its instance's user data, HOME and browser
        // storage), shared by the assistant's sessions; not the session's HOME.
        let signin = opts.signin.take();
        let setup = instance_setup(profile, app, fixture, signin)?;
        let Workspace { dir, root, env, .. } = workspace::prepare(profile, &opts)?;
        let settings = if fixture {
            fixture_settings(profile, &env)?
        } else {
            serde_json::Map::new()
        };
        let vs = host.instance(&setup).await?;
        let file = write_workspace(dir.path(), &root, settings)?;
        let (target, tab) = vs.new_tab().await?;
        let mut s = VscodeSession {
            vs,
            host: host.clone(),
            target,
            tab,
            _dir: dir,
            root,
            profile: profile.clone(),
            app: app.clone(),
            texts: BTreeMap::new(),
            loaded: BTreeMap::new(),
            tabs: Default::default(),
            current: None,
            info: ServerInfo::default(),
            broken: None,
            fixture,
            list: None,
        };
        s.prepare_tab().await?;
        let url = format!(
            "{}/?workspace={}",
            s.vs.url(),
            urlencode(&file.display().to_string())
        );
        s.wait_ready(&url).await?;
        Ok(s)
    }

    /// The tab's page as a focused window of the browser's size would have it (the
    /// editor lays out its lines for its size), in front.
    async fn prepare_tab(&mut self) -> Result<(), SessionError> {
        self.call("Page.enable", json!({})).await?;
        self.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": DIALOG_WATCH}),
        )
        .await?;
        self.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        )
        .await?;
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": instance::WIDTH, "height": instance::HEIGHT, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        self.call("Page.bringToFront", json!({})).await?;
        Ok(())
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
        self.info = ServerInfo {
            name: Some(self.profile.name.clone()),
            version: None,
        };
        let mut open = Open {
            tries: 0,
            last: false,
            within: self.init_within(),
            // Extensions alone: the fixture says the extension host has its folder; they
            // activate on their own events (the manifest says whether they did).
            ready: if self.fixture {
                "typist-inline 0 ready"
            } else {
                "typist-inline 0 no-server"
            },
        };
        loop {
            open.tries += 1;
            open.last = open.tries >= OPEN_TRIES;
            if let Some(opened) = self.navigate(url, &open).await?
                && self.watch_window(&open, Window::new(opened)).await?
            {
                return Ok(());
            }
        }
    }

    /// Navigates the tab to `url`: when it was opened, or `None` when Chromium aborted
    /// the navigation at once (`net::ERR_ABORTED`, the tab left on `about:blank`) and it
    /// is to be opened again.
    async fn navigate(&mut self, url: &str, open: &Open) -> Result<Option<Instant>, SessionError> {
        let nav = self.call("Page.navigate", json!({"url": url})).await?;
        let opened = Instant::now();
        let Some(e) = nav["errorText"].as_str() else {
            return Ok(Some(opened));
        };
        self.still_running()?;
        if !open.last {
            tracing::warn!(assistant = %self.profile.name, "vscode's window: {e}; opening it again");
            tokio::time::sleep(NAVIGATE_AGAIN_AFTER).await;
            return Ok(None);
        }
        Err(EditorError::Timeout(format!(
            "{}: vscode's window did not open: {e} ({} times)",
            self.profile.name, open.tries
        ))
        .into())
    }

    /// Watches an opened window until the fixture says it is ready (true) or it is to be
    /// opened again (false); the last open is given its whole time, whatever it shows.
    async fn watch_window(&mut self, open: &Open, mut w: Window) -> Result<bool, SessionError> {
        loop {
            let status = self.read().await?.status;
            if status.starts_with(open.ready) {
                self.log_ready(open.tries, w.opened).await;
                return Ok(true);
            }
            if let Some(why) = status.strip_prefix("typist-inline failed") {
                return Err(EditorError::Exited(format!(
                    "{}: the server did not start inside vscode:{why}",
                    self.profile.name
                ))
                .into());
            }
            self.still_running()?;
            let page = self.page_state().await;
            let waiting = status.contains("waiting for the workspace folder");
            if waiting && w.rewritten.is_none() && w.opened.elapsed() >= REREAD_AFTER {
                self.rewrite_workspace_file()?;
                w.rewritten = Some(Instant::now());
            }
            let timed_out = w.opened.elapsed() >= open.within;
            if let Some(why) = w.open_again(waiting, page.as_ref(), timed_out) {
                let (title, url, mark) = match &page {
                    Some(p) => (p.0.as_str(), json!(p.1), json!(p.2)),
                    None => ("", Value::Null, Value::Null),
                };
                if !open.last {
                    tracing::warn!(
                        assistant = %self.profile.name,
                        title,
                        status,
                        %url,
                        %mark,
                        "vscode's window: {why}; opening it again"
                    );
                    return Ok(false);
                }
                if timed_out {
                    return Err(EditorError::Timeout(format!(
                        "{}: vscode's window or its extension not ready within {} ms ({why}; status: {status:?}, title: {title:?}, last mark: {mark}), opened {} times",
                        self.profile.name,
                        open.within.as_millis(),
                        open.tries
                    ))
                    .into());
                }
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
    }

    /// The page's state (`page_state.js`); `None` when it could not be read.
    async fn page_state(&mut self) -> Option<PageState> {
        let v = self.vs.eval(&self.tab, PAGE_STATE).await.ok()?;
        serde_json::from_value(v).ok()
    }

    /// The workspace file written again, unchanged: the window, which watches it, reads
    /// it again.
    fn rewrite_workspace_file(&self) -> Result<(), SessionError> {
        tracing::info!(
            assistant = %self.profile.name,
            "vscode's extension host has no workspace folder; writing the workspace file again"
        );
        let file = self._dir.path().join(WORKSPACE_FILE);
        let text = std::fs::read(&file).map_err(SessionError::file(&file))?;
        std::fs::write(&file, text).map_err(SessionError::file(&file))
    }

    /// Logs the window ready, with the workbench's startup marks (one more page call,
    /// made only for the debug log).
    async fn log_ready(&mut self, tries: u32, opened: Instant) {
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
    }
}

/// One opening of the session's window.
struct Open {
    /// This open's number, from 1.
    tries: u32,
    /// The last one allowed.
    last: bool,
    /// How long the window has to be ready.
    within: Duration,
    /// The fixture's status that says the window is ready.
    ready: &'static str,
}

/// A window opened, as watched.
struct Window {
    opened: Instant,
    /// When the workspace file was written again.
    rewritten: Option<Instant>,
    /// The page has been seen to run the workbench's main bundle (a reading that
    /// failed says nothing).
    loaded: bool,
}

/// The page's title, address, last startup mark, and whether the workbench's main
/// bundle has run (`page_state.js`).
#[derive(Debug, serde::Deserialize)]
struct PageState(String, String, String, bool);

impl Window {
    fn new(opened: Instant) -> Window {
        Window {
            opened,
            rewritten: None,
            loaded: false,
        }
    }

    /// Why the window is to be opened again, if it is: no workspace folder
    /// `FOLDER_WITHIN` after its file was written again, the workbench not loaded, or
    /// not ready in time (`timed_out`). `waiting`: the fixture waits for the folder;
    /// `page`: the page's state now.
    fn open_again(
        &mut self,
        waiting: bool,
        page: Option<&PageState>,
        timed_out: bool,
    ) -> Option<&'static str> {
        let not_loaded = page.is_some_and(|p| !p.3);
        self.loaded |= page.is_some_and(|p| p.3);
        if waiting && self.rewritten.is_some_and(|t| t.elapsed() >= FOLDER_WITHIN) {
            Some("its extension host got no workspace folder")
        } else if !waiting
            && !self.loaded
            && not_loaded
            && self.opened.elapsed() >= WORKBENCH_WITHIN
        {
            Some("the workbench did not load")
        } else if timed_out {
            Some("not ready in time")
        } else {
            None
        }
    }
}

/// What the run's VS Code for this profile is started with: the fixture (it serves the
/// profile's server; with extensions alone it only says whether the extension host has
/// the window's folder, `0 no-server`), typist's own `github` authentication provider
/// for a profile that signs in with GitHub, the profile's extensions and settings,
/// `--extension`s, and the sign-in (`signin`: the vault entry).
pub(super) fn instance_setup(
    profile: &Profile,
    app: &EditorApp,
    fixture: bool,
    signin: Option<crate::vault::Entry>,
) -> Result<instance::Setup, SessionError> {
    let github = profile.signin.as_ref().is_some_and(|s| s.github);
    let mut setup = instance::Setup {
        extensions: Vec::new(),
        settings: instance::user_settings(),
        signin,
        github,
    };
    let f = instance::fixture_vsix().ok_or_else(|| SessionError::Missing {
        server: "vscode".into(),
        command: ".servers/vscode/typist-inline.vsix".into(),
        hint: "run scripts/install-servers.sh (it packs the fixture extension)".into(),
    })?;
    setup.extensions.push(f.display().to_string());
    if github {
        let g = instance::github_auth_vsix().ok_or_else(|| SessionError::Missing {
            server: "vscode".into(),
            command: ".servers/vscode/typist-github-auth.vsix".into(),
            hint: "run scripts/install-servers.sh (it packs typist's GitHub sign-in extension)"
                .into(),
        })?;
        setup.extensions.push(g.display().to_string());
    }
    if let Some(v) = &profile.vscode {
        if fixture && !v.extensions.is_empty() {
            return Err(failed(format!(
                "{}: a profile with a server cannot name VS Code extensions too (the fixture extension serves its server, and two providers would draw in one window); give the extensions a profile with no command",
                profile.name
            )));
        }
        setup.extensions.extend(v.extensions.iter().cloned());
        if let (Some(to), Some(from)) = (setup.settings.as_object_mut(), v.settings.as_object()) {
            to.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    for x in &app.extensions {
        // Named twice (the profile and --extension): installed once.
        if !setup.extensions.contains(x) {
            setup.extensions.push(x.clone());
        }
    }
    if !fixture && setup.extensions.len() == 1 + usize::from(github) {
        return Err(failed(format!(
            "{}: no VS Code extension to measure: name one with --extension FILE.vsix|ID",
            profile.name
        )));
    }
    Ok(setup)
}

/// The fixture's workspace settings: the profile's server (its command, arguments,
/// environment `env`, languages, options) and how it is asked (the dialect).
fn fixture_settings(
    profile: &Profile,
    env: &[(String, String)],
) -> Result<serde_json::Map<String, Value>, SessionError> {
    let server = profile.server_program()?;
    // The fixture asks the server as the profile's dialect says: completion lists for
    // the suggest widget (token cases), else line suggestions.
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
    Ok(json!({
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
    .unwrap_or_default())
}

/// Writes the session's workspace file in `dir`: the folder `root` and `settings`.
fn write_workspace(
    dir: &Path,
    root: &Path,
    settings: serde_json::Map<String, Value>,
) -> Result<PathBuf, SessionError> {
    let file = dir.join(WORKSPACE_FILE);
    let ws = json!({
        "folders": [{"path": root.display().to_string()}],
        "settings": settings,
    });
    std::fs::write(&file, serde_json::to_vec_pretty(&ws).unwrap_or_default())
        .map_err(SessionError::file(&file))?;
    Ok(file)
}

pub(super) fn urlencode(s: &str) -> String {
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
