//! A VS Code of the run started: its scratch folder (user data, extensions, config,
//! `HOME`), the extensions installed, code-server under its guard (listening on a port
//! it picks, its password in its environment), Chromium on a DevTools pipe, and the
//! login.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};

use super::super::cdp::{Cdp, Event};
use super::extensions::{code_server_output, install};
use super::{
    GRACE_S, INSTALL_HINT, Instance, LISTEN_WITHIN, PAGE_WITHIN, Setup, WINDOW_SIZE,
    chromium_program, code_server_program, failed,
};
use crate::editor::error::EditorError;
use crate::editor::error::SessionError;
use crate::editor::workspace;
use crate::lsp::ExitInfo;
use crate::lsp::process::ServerProcess;

/// The scratch folder of a VS Code of the run: code-server's user data (its user
/// settings written), extensions and config, a `HOME` for both programs, Chromium's
/// profile; the environment both run in and code-server's own arguments for them.
pub(super) struct Scratch {
    /// The folder itself: it goes when this is dropped.
    pub(super) folder: tempfile::TempDir,
    pub(super) dir: PathBuf,
    pub(super) exts: PathBuf,
    chromium_profile: PathBuf,
    pub(super) env: Vec<(String, String)>,
    /// `--config`, `--user-data-dir`, `--extensions-dir`.
    pub(super) base_args: Vec<String>,
}

/// A process started, with its exit, and its standard streams typist does not use
/// held open until the VS Code is started.
pub(super) struct Started {
    pub(super) process: ServerProcess,
    pub(super) exit: watch::Receiver<Option<ExitInfo>>,
    _streams: (ChildStdin, Option<ChildStdout>),
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

impl Scratch {
    /// Makes the scratch folder for `setup` (its user settings written).
    pub(super) fn make(setup: &Setup) -> Result<Scratch, SessionError> {
        let folder =
            workspace::scratch_dir("vscode").map_err(SessionError::file(&std::env::temp_dir()))?;
        let dir = folder.path().to_path_buf();
        let sub = |n: &str| -> Result<PathBuf, SessionError> {
            let p = dir.join(n);
            std::fs::create_dir_all(&p).map_err(SessionError::file(&p))?;
            Ok(p)
        };
        let (user, exts, home, chromium_profile) = (
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
        let d = display;
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
        Ok(Scratch {
            folder,
            dir,
            exts,
            chromium_profile,
            env,
            base_args,
        })
    }
}

impl Instance {
    pub(super) async fn start(setup: &Setup) -> Result<Instance, SessionError> {
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
        let scratch = Scratch::make(setup)?;
        // The sign-in, before code-server reads its user data (`signin.rs`).
        let seeded = super::signin::seed(setup, &scratch.dir)?;
        // Extensions first, with code-server's own installer.
        let mut installed = Vec::new();
        for x in &setup.extensions {
            let s = &scratch;
            let i = install(&code_server, &s.base_args, &s.env, &s.dir, &s.exts, x).await?;
            installed.push((x.clone(), i));
        }
        let version = version_of(&code_server, &scratch.env, &scratch.dir).await?;
        let password = random_password()?;
        crate::secrets::register(&password);
        let mut env = Vec::new();
        if setup.github {
            // An extension host keeps the first `github` provider registered and refuses
            // the next, and every `getSession('github')` activates the built-in one
            // (`onAuthenticationRequest:github`), racing typist's: the built-in must not
            // be loaded at all. The server's scanner of built-in extensions skips the ids
            // in `VSCODE_SKIP_BUILTIN_EXTENSIONS` (code-server has no
            // `--disable-extension`, and the workbench of the browser ignores the
            // server's).
            env.push((
                "VSCODE_SKIP_BUILTIN_EXTENSIONS".into(),
                super::BUILTIN_GITHUB_AUTH.into(),
            ));
        }
        let args = [
            "--bind-addr=127.0.0.1:0".to_string(),
            format!("--reconnection-grace-time={GRACE_S}"),
        ];
        let (server, port) =
            start_code_server(&code_server, &scratch, &password, &args, &env).await?;
        let (browser, cdp, events) = start_chromium(&chromium, &scratch)?;
        let i = Instance {
            cdp,
            events: tokio::sync::Mutex::new(events),
            port,
            version,
            installed,
            dir: scratch.dir,
            _scratch: scratch.folder,
            server: server.process,
            server_exit: server.exit,
            browser: browser.process,
            browser_exit: browser.exit,
            signin: std::sync::Mutex::new(seeded.signin),
        };
        i.cdp
            .call("Browser.getVersion", json!({}), None, PAGE_WITHIN)
            .await
            .map_err(|e| failed(format!("chromium: {e}")))?;
        i.login(&password, &seeded.storage).await?;
        Ok(i)
    }
}

/// code-server under its guard, listening on 127.0.0.1 (`--bind-addr` in `args`; at
/// port 0 it picks one, read from its log), with password authentication (`password` in
/// its environment, with `env`).
pub(super) async fn start_code_server(
    code_server: &Path,
    s: &Scratch,
    password: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<(Started, u16), SessionError> {
    let mut server_env = s.env.clone();
    server_env.push(("PASSWORD".into(), password.to_string()));
    server_env.extend_from_slice(env);
    let mut all = s.base_args.clone();
    all.extend(
        [
            "--auth=password",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            "--ignore-last-opened",
            // typist's fixture draws next edits as VS Code's inline edits, an API still
            // proposed (`inlineCompletionsAdditions`), as Copilot's own extension does.
            "--enable-proposed-api",
            "typist.typist-inline",
        ]
        .map(String::from),
    );
    all.extend_from_slice(args);
    let (process, stdin, stdout, exit) =
        ServerProcess::spawn_guarded("code-server", code_server, &all, &server_env, &s.dir)
            .map_err(SessionError::Lsp)?;
    let port = listening_port(stdout, &exit).await?;
    let started = Started {
        process,
        exit,
        _streams: (stdin, None),
    };
    Ok((started, port))
}

/// Headless Chromium with its own profile, driven over `--remote-debugging-pipe` (its
/// descriptors 3 and 4).
fn start_chromium(
    chromium: &Path,
    s: &Scratch,
) -> Result<(Started, Cdp, mpsc::UnboundedReceiver<Event>), SessionError> {
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
        format!("--user-data-dir={}", display(&s.chromium_profile)),
        "about:blank".into(),
    ])
    .collect();
    use std::os::fd::AsRawFd;
    let spawned = ServerProcess::spawn_with_fds(
        "chromium",
        chromium,
        &browser_args,
        &s.env,
        &s.dir,
        &[
            (to_browser_r.as_raw_fd(), 3),
            (from_browser_w.as_raw_fd(), 4),
        ],
    );
    // The child's ends: closed here, so the pipe ends when the browser does.
    drop(to_browser_r);
    drop(from_browser_w);
    let (process, stdin, stdout, exit) = spawned.map_err(SessionError::Lsp)?;
    let (cdp, events) = Cdp::start(to_browser_w, from_browser_r);
    let started = Started {
        process,
        exit,
        _streams: (stdin, Some(stdout)),
    };
    Ok((started, cdp, events))
}

pub(super) fn random_password() -> Result<String, SessionError> {
    use std::io::Read;
    let mut b = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(SessionError::file(Path::new("/dev/urandom")))?;
    Ok(crate::digest::sha256_hex(&b))
}

pub(super) async fn version_of(
    code_server: &Path,
    env: &[(String, String)],
    dir: &Path,
) -> Result<String, SessionError> {
    let out = code_server_output(code_server, &["--version".into()], env, dir).await?;
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
