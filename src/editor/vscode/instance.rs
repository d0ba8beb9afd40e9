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

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, watch};

use super::cdp::{Cdp, CdpError, Event};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::profile::resolve_program;
use crate::editor::workspace;
use crate::lsp::ExitInfo;
use crate::lsp::process::ServerProcess;

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
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/vscode/typist-inline.vsix");
    let servers = std::env::var_os("TYPIST_SERVERS")
        .map(|s| PathBuf::from(s).join("vscode/typist-inline.vsix"));
    servers
        .filter(|p| p.is_file())
        .or(Some(p).filter(|p| p.is_file()))
}

/// An extension installed into the run's extensions folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub id: String,
    pub version: String,
}

/// An extension of the run as the manifest records it: what code-server installed, and
/// whether its extension host activated it (read from the extension hosts' logs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExtensionState {
    pub id: String,
    pub version: String,
    /// What was installed: a `.vsix` file or a marketplace id.
    pub from: String,
    /// `activate` was called in at least one window.
    pub activated: bool,
    /// Its activation failed: the error the extension host logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_error: Option<String>,
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
    /// Last: dropped after the processes, so their folder goes once they have.
    _scratch: tempfile::TempDir,
}

/// What a VS Code of the run is started with: the extensions installed (files as
/// absolute paths, or ids) and the user settings written. Sessions asking for the same
/// share one code-server and Chromium; another set gets its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub extensions: Vec<String>,
    pub settings: Value,
}

type Running = Vec<(Setup, Arc<Instance>)>;
static SHARED: tokio::sync::Mutex<Running> = tokio::sync::Mutex::const_new(Vec::new());
/// The extensions of every VS Code the run has stopped, by id.
static SEEN: std::sync::Mutex<Vec<ExtensionState>> = std::sync::Mutex::new(Vec::new());
/// What typist closed that extensions had opened over the document.
static CLOSED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes that typist closed `what` (a dialog, a tab, a panel an extension opened), once.
pub fn note_closed(what: String) {
    if let Ok(mut c) = CLOSED.lock()
        && !c.contains(&what)
    {
        tracing::info!("vscode: closed what an extension opened: {what}");
        c.push(what);
    }
}

/// What the run's VS Codes leave for the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stopped {
    /// Each extension installed, and whether it activated.
    pub extensions: Vec<ExtensionState>,
    /// What typist closed that extensions had opened over the document, sorted.
    pub closed: Vec<String>,
}

/// The run's VS Code for `setup`, started now if there is none or the last one has
/// exited.
pub async fn shared(setup: &Setup) -> Result<Arc<Instance>, SessionError> {
    let mut s = SHARED.lock().await;
    if let Some(at) = s.iter().position(|(k, _)| k == setup) {
        if s[at].1.alive() {
            return Ok(s[at].1.clone());
        }
        let (_, old) = s.remove(at);
        old.kill();
    }
    let i = Arc::new(Instance::start(setup).await?);
    s.push((setup.clone(), i.clone()));
    Ok(i)
}

/// Stops the run's VS Codes (code-server, its extension hosts, Chromium), if any, and
/// returns what each extension did in them and what typist closed (for the manifest).
pub async fn stop_shared() -> Stopped {
    for (_, i) in SHARED.lock().await.drain(..) {
        i.kill();
    }
    Stopped {
        extensions: SEEN
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default(),
        closed: CLOSED
            .lock()
            .map(|mut v| {
                // Sorted: which of two things opened together is seen first is a race.
                v.sort();
                std::mem::take(&mut *v)
            })
            .unwrap_or_default(),
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

fn random_password() -> Result<String, SessionError> {
    use std::io::Read;
    let mut b = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(SessionError::file(Path::new("/dev/urandom")))?;
    Ok(crate::digest::sha256_hex(&b))
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

    /// Stops this VS Code; what its extensions did is kept for the manifest first.
    pub fn kill(&self) {
        let states = self.extension_states();
        if let Ok(mut seen) = SEEN.lock() {
            for st in states {
                match seen.iter_mut().find(|e| e.id.eq_ignore_ascii_case(&st.id)) {
                    Some(e) => {
                        e.activated |= st.activated;
                        if e.activation_error.is_none() {
                            e.activation_error = st.activation_error;
                        }
                    }
                    None => seen.push(st),
                }
            }
        }
        self.browser.kill_group();
        self.server.kill_group();
    }

    /// Each installed extension, and whether an extension host of this VS Code
    /// activated it so far (its `exthost.log` files).
    pub fn extension_states(&self) -> Vec<ExtensionState> {
        let logs = exthost_logs(&self.dir.join("user-data/logs"));
        self.installed
            .iter()
            .map(|(from, i)| {
                let (activated, activation_error) = activation(&logs, &i.id);
                ExtensionState {
                    id: i.id.clone(),
                    version: i.version.clone(),
                    from: from.clone(),
                    activated,
                    activation_error,
                }
            })
            .collect()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn start(setup: &Setup) -> Result<Instance, SessionError> {
        let code_server = code_server_program().ok_or_else(|| SessionError::Missing {
            server: "vscode".into(),
            command: "code-server".into(),
            hint: INSTALL_HINT.into(),
        })?;
        let chromium = chromium_program().ok_or_else(|| SessionError::Missing {
            server: "vscode".into(),
            command: "chromium".into(),
            hint: INSTALL_HINT.into(),
        })?;
        let scratch =
            workspace::scratch_dir("vscode").map_err(SessionError::file(&std::env::temp_dir()))?;
        let dir = scratch.path().to_path_buf();
        let sub = |n: &str| -> Result<PathBuf, SessionError> {
            let p = dir.join(n);
            std::fs::create_dir_all(&p).map_err(SessionError::file(&p))?;
            Ok(p)
        };
        let (user, exts, home, profile_dir) = (
            sub("user-data")?,
            sub("extensions")?,
            sub("home")?,
            sub("chromium")?,
        );
        let user_dir = sub("user-data/User")?;
        let settings = user_dir.join("settings.json");
        let text = serde_json::to_string_pretty(&setup.settings).unwrap_or_default();
        std::fs::write(&settings, text).map_err(SessionError::file(&settings))?;
        let config = dir.join("config.yaml");
        std::fs::write(&config, "auth: password\ncert: false\n")
            .map_err(SessionError::file(&config))?;
        let d = |p: &Path| p.display().to_string();
        let env: Vec<(String, String)> = vec![
            ("HOME".into(), d(&home)),
            ("XDG_CONFIG_HOME".into(), d(&home.join(".config"))),
            ("XDG_DATA_HOME".into(), d(&home.join(".local/share"))),
            ("XDG_CACHE_HOME".into(), d(&home.join(".cache"))),
            ("XDG_STATE_HOME".into(), d(&home.join(".local/state"))),
            ("TMPDIR".into(), d(&dir)),
        ];
        let base_args = vec![
            format!("--config={}", d(&config)),
            format!("--user-data-dir={}", d(&user)),
            format!("--extensions-dir={}", d(&exts)),
        ];

        // Extensions first, with code-server's own installer.
        let mut installed = Vec::new();
        for x in &setup.extensions {
            let i = install(&code_server, &base_args, &env, &dir, &exts, x).await?;
            installed.push((x.clone(), i));
        }
        let version = version_of(&code_server, &env, &dir).await?;

        let password = random_password()?;
        crate::secrets::register(&password);
        let mut server_env = env.clone();
        server_env.push(("PASSWORD".into(), password.clone()));
        let mut args = base_args.clone();
        args.extend(
            [
                "--bind-addr=127.0.0.1:0",
                "--auth=password",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--ignore-last-opened",
            ]
            .map(String::from),
        );

        args.push(format!("--reconnection-grace-time={GRACE_S}"));
        let (server, _stdin, stdout, server_exit) =
            ServerProcess::spawn_guarded("code-server", &code_server, &args, &server_env, &dir)
                .map_err(SessionError::Lsp)?;
        let port = listening_port(stdout, &server_exit).await?;

        let (to_browser_r, to_browser_w) =
            std::io::pipe().map_err(SessionError::file(Path::new("pipe")))?;
        let (from_browser_r, from_browser_w) =
            std::io::pipe().map_err(SessionError::file(Path::new("pipe")))?;
        let browser_args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-component-update",
            "--password-store=basic",
            "--use-mock-keychain",
            WINDOW_SIZE,
            // A tab in the background still draws: VS Code renders in animation frames.
            "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            format!("--user-data-dir={}", d(&profile_dir)),
            "about:blank".into(),
        ])
        .collect();
        use std::os::fd::AsRawFd;
        let spawned = ServerProcess::spawn_with_fds(
            "chromium",
            &chromium,
            &browser_args,
            &env,
            &dir,
            &[
                (to_browser_r.as_raw_fd(), 3),
                (from_browser_w.as_raw_fd(), 4),
            ],
        );
        // The child's ends: closed here, so the pipe ends when the browser does.
        drop(to_browser_r);
        drop(from_browser_w);
        let (browser, _bin, _bout, browser_exit) = spawned.map_err(SessionError::Lsp)?;
        let (cdp, events) = Cdp::start(to_browser_w, from_browser_r);
        let i = Instance {
            cdp,
            events: tokio::sync::Mutex::new(events),
            port,
            version,
            installed,
            dir,
            _scratch: scratch,
            server,
            server_exit,
            browser,
            browser_exit,
        };
        i.cdp
            .call("Browser.getVersion", json!({}), None, PAGE_WITHIN)
            .await
            .map_err(|e| failed(format!("chromium: {e}")))?;
        i.login(&password).await?;
        Ok(i)
    }

    /// A new tab, attached: its session id.
    pub async fn new_tab(&self) -> Result<(String, String), SessionError> {
        let t = self
            .cdp
            .call(
                "Target.createTarget",
                json!({"url": "about:blank"}),
                None,
                CALL,
            )
            .await
            .map_err(|e| self.error("Target.createTarget", e))?;
        let target = t["targetId"].as_str().unwrap_or("").to_string();
        let a = self
            .cdp
            .call(
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                None,
                CALL,
            )
            .await
            .map_err(|e| self.error("Target.attachToTarget", e))?;
        let session = a["sessionId"].as_str().unwrap_or("").to_string();
        Ok((target, session))
    }

    pub async fn close_tab(&self, target: &str) {
        let _ = self
            .cdp
            .call(
                "Target.closeTarget",
                json!({"targetId": target}),
                None,
                CALL,
            )
            .await;
    }

    /// The error of a DevTools command, naming VS Code's end when it has ended.
    pub fn error(&self, what: &str, e: CdpError) -> SessionError {
        match self.ended() {
            Some(why) => EditorError::Exited(format!("vscode: {why}")).into(),
            None if matches!(e, CdpError::Closed) => {
                EditorError::Exited(format!("vscode: chromium: {what}: {e}")).into()
            }
            None => failed(format!("vscode: chromium: {what}: {e}")),
        }
    }

    /// Evaluates `expr` in a page and returns its value (by value).
    pub async fn eval(&self, session: &str, expr: &str) -> Result<Value, SessionError> {
        let r = self
            .cdp
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
                Some(session),
                CALL,
            )
            .await
            .map_err(|e| self.error("Runtime.evaluate", e))?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(failed(format!(
                "vscode: page script failed: {}",
                ex["exception"]["description"]
                    .as_str()
                    .unwrap_or(&ex.to_string())
            )));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Logs Chromium in once: code-server's login page, the password typed into its
    /// form; the session cookie then serves every tab.
    async fn login(&self, password: &str) -> Result<(), SessionError> {
        let (target, s) = self.new_tab().await?;
        let url = format!("{}/login", self.url());
        self.cdp
            .call("Page.navigate", json!({"url": url}), Some(&s), CALL)
            .await
            .map_err(|e| self.error("Page.navigate", e))?;
        let deadline = Instant::now() + PAGE_WITHIN;
        let form = "document.querySelector('input[name=password]') !== null";
        while self.eval(&s, form).await? != Value::Bool(true) {
            if Instant::now() >= deadline {
                return Err(failed(
                    "vscode: code-server's login page did not load".into(),
                ));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
        let submit = format!(
            "(() => {{ const i = document.querySelector('input[name=password]'); i.value = {}; i.form.submit(); return true; }})()",
            serde_json::to_string(password).unwrap_or_default()
        );
        self.eval(&s, &submit).await?;
        let done = "location.pathname !== '/login' && document.readyState !== 'loading'";
        loop {
            if let Ok(Value::Bool(true)) = self.eval(&s, done).await {
                break;
            }
            if Instant::now() >= deadline {
                return Err(failed("vscode: the login to code-server failed".into()));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
        self.close_tab(&target).await;
        Ok(())
    }
}

/// Installs one extension (`.vsix` or id) with code-server's own `--install-extension`;
/// its id and version are the line `--list-extensions --show-versions` gained (of the
/// lines an extension with dependencies adds, the one no other new extension names as
/// a dependency or pack member, from their manifests in `exts`).
async fn install(
    code_server: &Path,
    base: &[String],
    env: &[(String, String)],
    dir: &Path,
    exts: &Path,
    what: &str,
) -> Result<Installed, SessionError> {
    let before = list_extensions(code_server, base, env, dir).await?;
    let mut cmd = tokio::process::Command::new(code_server);
    cmd.args(base)
        .arg("--install-extension")
        .arg(what)
        .arg("--force")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .kill_on_drop(true)
        .process_group(0);
    crate::os::die_with_parent(cmd.as_std_mut());
    let out = tokio::time::timeout(INSTALL_WITHIN, cmd.output())
        .await
        .map_err(|_| {
            failed(format!(
                "vscode: installing {what} took over {INSTALL_WITHIN:?}"
            ))
        })?
        .map_err(|e| failed(format!("vscode: {}: {e}", code_server.display())))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !text.contains("successfully installed") {
        return Err(failed(format!(
            "vscode: code-server --install-extension {what} failed: {}",
            text.trim()
        )));
    }
    let after = list_extensions(code_server, base, env, dir).await?;
    let id_of = |l: &String| l.split('@').next().unwrap_or("").to_lowercase();
    let wanted = what.split('@').next().unwrap_or("").to_lowercase();
    let gained: Vec<String> = after
        .iter()
        .filter(|l| !before.contains(l))
        .cloned()
        .collect();
    let manifests = installed_dependencies(exts);
    let line = main_extension(&gained, |id| manifests.get(id).cloned().unwrap_or_default())
        .or_else(|| after.iter().find(|l| id_of(l) == wanted).cloned())
        .ok_or_else(|| {
            failed(format!(
                "vscode: code-server installed {what} but does not list it"
            ))
        })?;
    let (id, version) = line.split_once('@').unwrap_or((&line, ""));
    Ok(Installed {
        id: id.to_string(),
        version: version.to_string(),
    })
}

/// Of the `id@version` lines one install added, the extension asked for: the one that
/// no other added extension names among its dependencies (`deps`: an id's
/// `extensionDependencies` and `extensionPack`, lower case). `None` when none or
/// several are.
fn main_extension(gained: &[String], deps: impl Fn(&str) -> Vec<String>) -> Option<String> {
    let id_of = |l: &str| l.split('@').next().unwrap_or("").to_lowercase();
    let named: Vec<String> = gained.iter().flat_map(|l| deps(&id_of(l))).collect();
    let mut heads = gained.iter().filter(|l| !named.contains(&id_of(l)));
    match (heads.next(), heads.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Each extension in `exts` (its folders' `package.json`), by its id `publisher.name`
/// in lower case: the ids its `extensionDependencies` and `extensionPack` name.
fn installed_dependencies(exts: &Path) -> std::collections::HashMap<String, Vec<String>> {
    let mut out = std::collections::HashMap::new();
    let Ok(entries) = std::fs::read_dir(exts) else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("package.json")) else {
            continue;
        };
        let Ok(m) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let (Some(p), Some(n)) = (m["publisher"].as_str(), m["name"].as_str()) else {
            continue;
        };
        let deps = ["extensionDependencies", "extensionPack"]
            .iter()
            .flat_map(|k| m[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|d| d.as_str().map(str::to_lowercase))
            .collect();
        out.insert(format!("{p}.{n}").to_lowercase(), deps);
    }
    out
}

async fn list_extensions(
    code_server: &Path,
    base: &[String],
    env: &[(String, String)],
    dir: &Path,
) -> Result<Vec<String>, SessionError> {
    let list = tokio::process::Command::new(code_server)
        .args(base)
        .arg("--list-extensions")
        .arg("--show-versions")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| failed(format!("vscode: {}: {e}", code_server.display())))?;
    Ok(String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| l.contains('@'))
        .map(String::from)
        .collect())
}

/// The text of every extension host's log under `logs`.
fn exthost_logs(logs: &Path) -> String {
    let mut text = String::new();
    for e in walkdir(logs) {
        // code-server 4.139: logs/DATE/exthostN/remoteexthost.log, one per window.
        if e.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("exthost.log"))
            && let Ok(t) = std::fs::read_to_string(&e)
        {
            text.push_str(&t);
        }
    }
    text
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Whether the extension host logged the activation of `id` (VS Code 1.139:
/// `ExtensionService#_doActivateExtension ID, startup: …`), and the error it logged
/// when that failed (`Activating extension ID failed due to an error:` and the next
/// line).
fn activation(logs: &str, id: &str) -> (bool, Option<String>) {
    let id = id.to_ascii_lowercase();
    let lower = logs.to_ascii_lowercase();
    let activated = lower.contains(&format!("_doactivateextension {id},"));
    let marker = format!("activating extension {id} failed due to an error:");
    let error = lower.find(&marker).map(|at| {
        logs[at + marker.len()..]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    });
    (activated, error)
}

async fn version_of(
    code_server: &Path,
    env: &[(String, String)],
    dir: &Path,
) -> Result<String, SessionError> {
    let out = tokio::process::Command::new(code_server)
        .arg("--version")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| failed(format!("vscode: {}: {e}", code_server.display())))?;
    // "4.139.1 <commit> with Code 1.139.1"
    let s = String::from_utf8_lossy(&out.stdout);
    let line = s.lines().find(|l| l.contains(" with Code ")).unwrap_or("");
    let mut words = line.split_whitespace();
    let cs = words.next().unwrap_or("?");
    let code = line.rsplit(' ').next().unwrap_or("?");
    Ok(format!("{code} (code-server {cs})"))
}

/// Reads code-server's log until it says where it listens; the rest of its log is
/// drained into `tracing` so that it never blocks on a full pipe.
async fn listening_port(
    stdout: tokio::process::ChildStdout,
    exit: &watch::Receiver<Option<ExitInfo>>,
) -> Result<u16, SessionError> {
    let mut lines = BufReader::new(stdout).lines();
    let find = async {
        while let Ok(Some(l)) = lines.next_line().await {
            tracing::debug!(target: "code-server", "{}", crate::secrets::scrub(&l));
            if let Some(rest) = l.split("HTTP server listening on http://127.0.0.1:").nth(1) {
                let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(p) = port.parse::<u16>() {
                    return Some(p);
                }
            }
        }
        None
    };
    let port = tokio::time::timeout(LISTEN_WITHIN, find).await;
    tokio::spawn(async move {
        while let Ok(Some(l)) = lines.next_line().await {
            tracing::debug!(target: "code-server", "{}", crate::secrets::scrub(&l));
        }
    });
    match port {
        Ok(Some(p)) => Ok(p),
        _ => {
            let mut exit = exit.clone();
            let _ =
                tokio::time::timeout(Duration::from_millis(500), exit.wait_for(Option::is_some))
                    .await;
            let end = exit.borrow().clone();
            Err(EditorError::Exited(match end {
                Some(e) => format!(
                    "code-server exited before it listened ({}): {}",
                    e.status, e.stderr_tail
                ),
                None => {
                    format!("code-server did not say where it listens within {LISTEN_WITHIN:?}")
                }
            })
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::main_extension;

    #[test]
    fn the_extension_asked_for_is_the_one_no_other_new_one_depends_on() {
        let deps = |id: &str| match id {
            "acme.assistant" => vec!["acme.auth".to_string()],
            "acme.pack" => vec!["acme.a".to_string(), "acme.b".to_string()],
            _ => vec![],
        };
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The dependency is listed first (alphabetically); the one asked for is kept.
        assert_eq!(
            main_extension(&lines(&["acme.auth@1.0.0", "Acme.Assistant@2.1.0"]), deps),
            Some("Acme.Assistant@2.1.0".to_string())
        );
        assert_eq!(
            main_extension(&lines(&["acme.a@1", "acme.b@1", "acme.pack@3"]), deps),
            Some("acme.pack@3".to_string())
        );
        assert_eq!(
            main_extension(&lines(&["typist.typist-inline@0.1.0"]), deps),
            Some("typist.typist-inline@0.1.0".to_string())
        );
        // Two unrelated, or nothing new (installed already): not this function's to say.
        assert_eq!(main_extension(&lines(&["x.y@1", "x.z@1"]), deps), None);
        assert_eq!(main_extension(&[], deps), None);
    }
}
