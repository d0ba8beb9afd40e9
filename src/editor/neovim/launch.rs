//! Starting Neovim: the program found, the profile's plugin settled with the run's
//! flags, the server's command line, the workspace with Neovim's log, state, temporary
//! folder and RPC socket kept in the session's folder (the servers get the user's
//! back), `nvim --embed --headless --clean -n -i NONE` spawned in its own process group
//! and attached over msgpack-RPC, the version probed (0.12 or later: it has
//! `vim.lsp.inline_completion`), and `driver.lua` loaded with the typed [`Setup`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rmpv::Value as Mp;

use super::protocol::{PopupMode, Setup, mp_to_json};
use super::requests::Requests;
use super::rpc::Rpc;
use super::{DRIVER, INLINE_NAMESPACE, NeovimSession, program};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::handshake::ServerInfo;
use crate::editor::kind::EditorApp;
use crate::editor::options::SessionOptions;
use crate::editor::profile::{DialectKind, Profile};
use crate::editor::workspace::{self, Workspace};
use crate::lsp::process::ServerProcess;

/// The least time Neovim has to start and answer its first call, whatever the
/// profile's `init_timeout_ms`.
const MIN_STARTUP: Duration = Duration::from_secs(5);
pub(super) const INSTALL_HINT: &str =
    "run scripts/install-servers.sh (it installs Neovim 0.12-dev into .servers/bin/nvim)";
/// Neovim's arguments: embedded, no UI, no user configuration, swap or shada file.
const ARGS: [&str; 6] = ["--embed", "--headless", "--clean", "-n", "-i", "NONE"];

/// Neovim's environment: the workspace's, with its own folders in the session's; and
/// the user's folders, which the driver gives the servers back.
pub(super) struct Sandbox {
    pub(super) env: Vec<(String, String)>,
    /// The servers' environment: the workspace's.
    server_env: BTreeMap<String, String>,
    xdg_state_home: Option<String>,
    tmpdir: Option<String>,
    xdg_runtime_dir: Option<String>,
}

impl NeovimSession {
    /// Prepares the workspace and starts Neovim in it with typist's setup (the
    /// profile's server starts when the first document is opened).
    pub async fn start(
        profile: &Profile,
        app: &EditorApp,
        opts: SessionOptions,
    ) -> Result<NeovimSession, SessionError> {
        let nvim = program().ok_or_else(|| SessionError::Missing {
            server: "neovim".into(),
            command: "nvim".into(),
            hint: INSTALL_HINT.into(),
        })?;
        if profile.connect.is_some() {
            return Err(EditorError::Failed(format!(
                "{}: neovim starts its own server; a profile that attaches (connect) runs only with --editor typist",
                profile.name
            ))
            .into());
        }
        let app = with_profile_plugin(app, profile);
        let cmd = server_command(profile)?;
        let ws = workspace::prepare(profile, &opts)?;
        let sandbox = Sandbox::of(&ws)?;
        let mut s = Self::spawn(&nvim, profile, &app, ws, &sandbox.env)?;
        let startup = Duration::from_millis(profile.init_timeout_ms).max(MIN_STARTUP);
        let info = s.call("nvim_get_api_info", vec![], startup).await?;
        let chan = info
            .as_array()
            .and_then(|a| a.first())
            .and_then(Mp::as_i64)
            .ok_or_else(|| {
                EditorError::Failed("neovim: no channel id in nvim_get_api_info".into())
            })?;
        s.probe_version(&nvim).await?;
        let setup = s.setup(chan, cmd, sandbox);
        let setup = setup.to_mp().map_err(EditorError::Failed)?;
        s.lua(DRIVER, vec![setup]).await?;
        // A session that starts from a sign-in: the plugin must say it is signed in.
        if s._signin.is_some() {
            s.require_signed_in().await?;
        }
        Ok(s)
    }

    /// Neovim spawned in the workspace with `env` and attached over msgpack-RPC.
    fn spawn(
        nvim: &Path,
        profile: &Profile,
        app: &EditorApp,
        ws: Workspace,
        env: &[(String, String)],
    ) -> Result<NeovimSession, SessionError> {
        let Workspace {
            dir,
            root,
            env: _,
            signin,
        } = ws;
        let args: Vec<String> = ARGS.iter().map(|s| s.to_string()).collect();
        let (process, stdin, stdout, exit) =
            ServerProcess::spawn("neovim", nvim, &args, env, &root).map_err(SessionError::Lsp)?;
        let (rpc, notes) = Rpc::start(stdout, stdin);
        Ok(NeovimSession {
            rpc,
            notes,
            process,
            exit,
            _signin: signin,
            _dir: dir,
            root,
            profile: profile.clone(),
            app: app.clone(),
            version: String::new(),
            info: ServerInfo::default(),
            bufs: BTreeMap::new(),
            texts: BTreeMap::new(),
            lines: BTreeMap::new(),
            requests: Requests::default(),
            last_request_hash: None,
            broken: None,
            triggers: Vec::new(),
            list: None,
        })
    }

    /// Reads Neovim's version; one without `vim.lsp.inline_completion` is refused.
    async fn probe_version(&mut self, nvim: &Path) -> Result<(), SessionError> {
        let probe = self
            .lua(
                "local v = vim.split(vim.fn.execute('version'), '\\n')[2] or '' \
                 return {v:gsub('^NVIM v', '') .. '', vim.lsp.inline_completion ~= nil}",
                vec![],
            )
            .await?;
        let probe = mp_to_json(&probe);
        self.version = probe[0].as_str().unwrap_or("").to_string();
        if probe[1] != serde_json::Value::Bool(true) {
            return Err(EditorError::Failed(format!(
                "neovim {} ({}) has no vim.lsp.inline_completion (0.12 or later needed); {INSTALL_HINT}",
                self.version,
                nvim.display()
            ))
            .into());
        }
        Ok(())
    }

    /// What `driver.lua` is run with.
    fn setup(&self, chan: i64, cmd: Option<Vec<String>>, sandbox: Sandbox) -> Setup {
        let (profile, app) = (&self.profile, &self.app);
        Setup {
            chan,
            name: profile.name.clone(),
            cmd,
            cmd_env: sandbox.server_env,
            root: self.root.display().to_string(),
            settings: profile.settings.clone(),
            init_options: profile.initialization_options.clone(),
            namespaces: if app.namespaces.is_empty() {
                vec![INLINE_NAMESPACE.to_string()]
            } else {
                app.namespaces.clone()
            },
            highlights: app.highlights.clone(),
            inline: app.namespaces.is_empty()
                && matches!(profile.dialect, DialectKind::Inline | DialectKind::Copilot),
            popup: match profile.dialect {
                DialectKind::Completion => Some(PopupMode::Auto),
                DialectKind::LspAi => Some(PopupMode::Manual),
                _ => None,
            },
            lsp_log: self._dir.path().join("lsp.log").display().to_string(),
            xdg_state_home: sandbox.xdg_state_home,
            tmpdir: sandbox.tmpdir,
            xdg_runtime_dir: sandbox.xdg_runtime_dir,
            config: app.config.clone(),
        }
    }
}

impl Sandbox {
    /// Neovim's own log and its LSP client's go to the session's folder, never the
    /// user's state folder; its temporary folder and its RPC socket (under `TMPDIR`, or
    /// `XDG_RUNTIME_DIR` when set) too: a Neovim that dies with a killed typist leaves
    /// them where the sweep of stale workspaces finds them, not in the user's
    /// `/tmp/nvim.USER/`. What the servers are to get back: the profile's value, else
    /// the user's.
    pub(super) fn of(ws: &Workspace) -> Result<Sandbox, SessionError> {
        let in_dir = |name: &str| ws.dir.path().join(name).display().to_string();
        let user_var = |k: &str| {
            ws.env
                .iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(k).ok())
        };
        let run_dir = ws.dir.path().join("run");
        std::fs::create_dir_all(&run_dir).map_err(|e| SessionError::File {
            path: run_dir.clone(),
            message: e.to_string(),
        })?;
        let mut env = ws.env.clone();
        env.push(("NVIM_LOG_FILE".into(), in_dir("nvim.log")));
        env.push(("XDG_STATE_HOME".into(), in_dir("state")));
        env.push(("TMPDIR".into(), in_dir("run")));
        env.push(("XDG_RUNTIME_DIR".into(), in_dir("run")));
        Ok(Sandbox {
            env,
            server_env: ws.env.iter().cloned().collect(),
            xdg_state_home: user_var("XDG_STATE_HOME"),
            tmpdir: user_var("TMPDIR"),
            xdg_runtime_dir: user_var("XDG_RUNTIME_DIR"),
        })
    }
}

/// The run's editor with the profile's `[neovim]` plugin, unless the run's flags name
/// one.
pub(super) fn with_profile_plugin(app: &EditorApp, profile: &Profile) -> EditorApp {
    let mut app = app.clone();
    if let Some(nv) = &profile.neovim {
        if app.config.is_none() {
            app.config = nv.config.clone();
            app.config_sha256 = nv.config_sha256.clone();
        }
        if app.namespaces.is_empty() {
            app.namespaces = nv.namespaces.clone();
            if app.highlights.is_empty() {
                app.highlights = nv.highlights.clone();
            }
        }
    }
    app
}

/// The server's command line; `None` for a plugin with no server (no LSP client is
/// started).
fn server_command(profile: &Profile) -> Result<Option<Vec<String>>, SessionError> {
    if profile.is_plugin_only() {
        return Ok(None);
    }
    let server = profile.server_program()?;
    let mut cmd = vec![server.display().to_string()];
    cmd.extend(profile.args.iter().cloned());
    Ok(Some(cmd))
}
