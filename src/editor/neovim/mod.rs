//! A real Neovim as the editor: `nvim --embed --headless --clean -n -i NONE` in the
//! session's workspace, driven over msgpack-RPC ([`rpc`], on `rmpv`). Neovim's own LSP
//! client starts the profile's server (`vim.lsp.start` with its command, settings and
//! initialization options) and shows inline completions as ghost text; typist places
//! the context without the case's line with `nvim_buf_set_lines`, reaches the line as a
//! person does (`A<CR>` at the end of the line above: see [`arrival`]), types the line's
//! characters with `nvim_input` at the run's key interval, and reads back what Neovim
//! drew (every extmark at the cursor's row in the namespaces read, composed by
//! [`shown`]; never diagnostics' virtual text).
//!
//! Which answer is the case's: `driver.lua` reports every inline-completion request
//! Neovim sends (with the buffer's version and the cursor's row) and, for each, the
//! server's answer and the ghost text right after Neovim drew it. The case's answer
//! is the first request sent at the case's buffer version and row after typing ended;
//! a ghost text redrawn from an older request (Neovim redraws the previous suggestion
//! at the new cursor at once, and leaves it on an error) is never read. An error answer
//! is an `error`, no answer within the profile's deadline a `timeout`, the server's
//! exit (`LspDetach`) or Neovim's an exit; an error message Neovim shows (the message
//! history's error entries, never a `v:errmsg` set under `silent!`) or a failing handler
//! is the case's error and the editor is replaced before the next case.
//!
//! Buffers have `'endofline'` off: Neovim would otherwise send a line break after the
//! last line, a character after the cursor that typist's own client never sends (it
//! changed a model's answers in 2 of 23 cases), and its client sends whole-text changes:
//! with `'endofline'` off its incremental changes still put that line break back.
//!
//! The Neovim process leads its own process group (the servers it starts are in it) and
//! the group is killed when the session is dropped (`lsp::process`).

mod lists;
pub(super) mod refuse;
mod rpc;
mod shown;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmpv::Value as Mp;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

use super::document::{Document, Position, PositionEncoding};
use super::error::{EditorError, SessionError};
use super::handshake::ServerInfo;
use super::kind::EditorApp;
use super::options::{SessionOptions, Timed};
use super::profile::{DialectKind, Profile, resolve_program};
use super::request_hash::request_hash_of;
use super::suggestions::{InlineSuggestion, Suggestions};
use super::workspace::{self, Workspace};
use crate::lsp::process::ServerProcess;
use crate::lsp::{ExitInfo, uri};

/// The least time Neovim has to start and answer its first call, whatever the
/// profile's `init_timeout_ms`.
const MIN_STARTUP: Duration = Duration::from_secs(5);
/// The pause between two looks at whether Neovim's LSP client is initialized.
const READY_POLL: Duration = Duration::from_millis(20);
/// How long Neovim has to reach a state it was put in (a mode, the typed text), on top
/// of the keys' own interval.
const STATE_WAIT: Duration = Duration::from_secs(5);
/// The pause between two reads of a plugin's ghost text before the display deadline.
const SHOWN_POLL: Duration = Duration::from_millis(10);
/// How long an ended Neovim's exit status is waited for, so that the error can say it.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);
/// How long a killed Neovim has to be reaped at shutdown.
const KILL_WAIT: Duration = Duration::from_secs(2);
use rpc::{CallError, Notification, Rpc};
use shown::Shown;

/// The Lua side: options, the client, the request watch, the ghost-text reader.
const DRIVER: &str = include_str!("driver.lua");
/// Neovim's own inline-completion namespace: where its ghost text is drawn.
pub const INLINE_NAMESPACE: &str = "nvim.lsp.inline_completion";
/// Neovim asks 200 ms after the last key (its fixed debounce); a request not sent
/// within this much of Neovim's free time after typing ended is a failure of the
/// editor, not a timeout of the server. Time Neovim spends busy (a round trip through
/// its event loop slower than [`NVIM_BUSY`]) is not counted: under load the request is
/// late, not missing.
const REQUEST_SENT_WITHIN: Duration = Duration::from_millis(3000);
/// The slices the wait for a request is counted in: each ends with a round trip.
const SENT_SLICE: Duration = Duration::from_millis(250);
/// A round trip through Neovim's event loop slower than this: Neovim was busy.
const NVIM_BUSY: Duration = Duration::from_millis(50);
/// However busy Neovim is, a request not sent within this long is the editor's failure.
const REQUEST_SENT_CAP: Duration = Duration::from_secs(30);
/// Deadline of typist's own calls into Neovim (placing text, reading state).
const CALL: Duration = Duration::from_secs(10);
/// How often typist looks whether Neovim has processed the keys it typed.
const POLL: Duration = Duration::from_millis(5);
const METHOD: &str = "textDocument/inlineCompletion";
const COMPLETION: &str = "textDocument/completion";
const INSTALL_HINT: &str =
    "run scripts/install-servers.sh (it installs Neovim 0.12-dev into .servers/bin/nvim)";

/// Neovim's program: `$TYPIST_NVIM`, else `nvim` in a server prefix or on `PATH`.
pub fn program() -> Option<PathBuf> {
    match std::env::var_os("TYPIST_NVIM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => resolve_program("nvim"),
    }
}

/// What Neovim told typist about one inline-completion request.
#[derive(Debug)]
struct Sent {
    seq: u64,
    method: String,
    epoch: u64,
    version: i64,
    row: i64,
    params: Value,
}

#[derive(Debug)]
struct Answer {
    error: Option<String>,
    null: bool,
    items: u64,
    incomplete: bool,
    /// Inline: the ghost text drawn ([`Shown`]); completion: the popup as shown.
    shown: Value,
    handler_error: Option<String>,
}

/// Where typing stands (`typist.state`).
#[derive(Debug, serde::Deserialize)]
struct State {
    mode: String,
    /// The buffer's version (`-1`: none yet).
    version: i64,
    /// 0-based row and byte column of the cursor.
    row: i64,
    col: i64,
    /// The cursor's line.
    line: String,
    /// The buffer's number of lines.
    lines: i64,
    /// Error messages shown since the case was placed.
    errors: Vec<String>,
    /// The completion popup is shown.
    pum: bool,
}

/// The completion session under way in the buffer (token cases, `lists.rs`).
struct ListState {
    rel: String,
    buf: i64,
    row: i64,
    epoch: u64,
    listed: usize,
    incomplete: bool,
    asked: bool,
}

pub struct NeovimSession {
    rpc: Rpc,
    notes: UnboundedReceiver<Notification>,
    process: ServerProcess,
    exit: watch::Receiver<Option<ExitInfo>>,
    _dir: tempfile::TempDir,
    root: PathBuf,
    profile: Profile,
    app: EditorApp,
    version: String,
    info: ServerInfo,
    /// Buffers by document (relative path).
    bufs: BTreeMap<String, i64>,
    /// What the editor is to hold per document (mirrored on disk at once).
    texts: BTreeMap<String, String>,
    /// What the target buffer holds, line by line, after typist's last change.
    lines: BTreeMap<String, Vec<String>>,
    sent: Vec<Sent>,
    answers: BTreeMap<u64, Answer>,
    cancelled: Vec<u64>,
    detached: bool,
    last_request_hash: Option<String>,
    /// A Lua error happened: this editor is not used for another case.
    broken: Option<String>,
    /// The server's completion trigger characters.
    triggers: Vec<String>,
    /// The completion session under way (token cases).
    list: Option<ListState>,
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
        // A profile's `[neovim]` plugin, unless the run's flags name one.
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
        let app = &app;
        // A plugin with no server: no LSP client is started.
        let server = if profile.is_plugin_only() {
            None
        } else {
            Some(
                profile
                    .resolve_command()
                    .ok_or_else(|| SessionError::Missing {
                        server: profile.name.clone(),
                        command: profile.command.clone(),
                        hint: profile.install_hint.clone(),
                    })?,
            )
        };
        let Workspace { dir, root, env } = workspace::prepare(
            profile,
            opts.source_root.as_deref(),
            &opts.files,
            &opts.contents,
        )?;
        let mut nvim_env = env.clone();
        // Neovim's own log and its LSP client's go to the session's folder, never the
        // user's state folder (the driver gives the servers the user's XDG_STATE_HOME).
        let in_dir = |name: &str| dir.path().join(name).display().to_string();
        nvim_env.push(("NVIM_LOG_FILE".into(), in_dir("nvim.log")));
        // What the servers are to get back: the profile's value, else the user's.
        let user_var = |k: &str| {
            env.iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(k).ok())
        };
        let xdg_state_home = user_var("XDG_STATE_HOME");
        nvim_env.push(("XDG_STATE_HOME".into(), in_dir("state")));
        // Neovim's temporary folder and its RPC socket (under `TMPDIR`, or
        // `XDG_RUNTIME_DIR` when set) go in the session's folder too: a Neovim that dies
        // with a killed typist leaves them where the sweep of stale workspaces finds
        // them, not in the user's `/tmp/nvim.USER/`. The servers get the user's back.
        let run_dir = dir.path().join("run");
        std::fs::create_dir_all(&run_dir).map_err(|e| SessionError::File {
            path: run_dir.clone(),
            message: e.to_string(),
        })?;
        let (tmpdir, runtime_dir) = (user_var("TMPDIR"), user_var("XDG_RUNTIME_DIR"));
        nvim_env.push(("TMPDIR".into(), in_dir("run")));
        nvim_env.push(("XDG_RUNTIME_DIR".into(), in_dir("run")));
        let args: Vec<String> = ["--embed", "--headless", "--clean", "-n", "-i", "NONE"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (process, stdin, stdout, exit) =
            ServerProcess::spawn("neovim", &nvim, &args, &nvim_env, &root)
                .map_err(SessionError::Lsp)?;
        let (rpc, notes) = Rpc::start(stdout, stdin);
        let mut s = NeovimSession {
            rpc,
            notes,
            process,
            exit,
            _dir: dir,
            root: root.clone(),
            profile: profile.clone(),
            app: app.clone(),
            version: String::new(),
            info: ServerInfo::default(),
            bufs: BTreeMap::new(),
            texts: BTreeMap::new(),
            lines: BTreeMap::new(),
            sent: Vec::new(),
            answers: BTreeMap::new(),
            cancelled: Vec::new(),
            detached: false,
            last_request_hash: None,
            broken: None,
            triggers: Vec::new(),
            list: None,
        };
        let startup = Duration::from_millis(profile.init_timeout_ms).max(MIN_STARTUP);
        let info = s.call("nvim_get_api_info", vec![], startup).await?;
        let chan = info
            .as_array()
            .and_then(|a| a.first())
            .and_then(Mp::as_i64)
            .ok_or_else(|| {
                EditorError::Failed("neovim: no channel id in nvim_get_api_info".into())
            })?;
        let probe = s
            .lua(
                "local v = vim.split(vim.fn.execute('version'), '\\n')[2] or '' \
                 return {v:gsub('^NVIM v', '') .. '', vim.lsp.inline_completion ~= nil}",
                vec![],
            )
            .await?;
        let probe = mp_to_json(&probe);
        s.version = probe[0].as_str().unwrap_or("").to_string();
        if probe[1] != Value::Bool(true) {
            return Err(EditorError::Failed(format!(
                "neovim {} ({}) has no vim.lsp.inline_completion (0.12 or later needed); {INSTALL_HINT}",
                s.version,
                nvim.display()
            ))
            .into());
        }
        let cmd = server.map(|server| {
            let mut cmd = vec![server.display().to_string()];
            cmd.extend(profile.args.iter().cloned());
            cmd
        });
        let cmd_env: serde_json::Map<String, Value> = env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let setup = serde_json::json!({
            "chan": chan,
            "name": profile.name,
            "cmd": cmd,
            "cmd_env": cmd_env,
            "root": root.display().to_string(),
            "settings": profile.settings,
            "init_options": profile.initialization_options,
            "namespaces": if app.namespaces.is_empty() {
                vec![INLINE_NAMESPACE.to_string()]
            } else {
                app.namespaces.clone()
            },
            "highlights": app.highlights,
            "inline": app.namespaces.is_empty()
                && matches!(profile.dialect, DialectKind::Inline | DialectKind::Copilot),
            // Completion lists: Neovim's popup, asked again as keys are typed while the
            // list is incomplete; lsp-ai: asked once per case, never on typed keys.
            "popup": match profile.dialect {
                DialectKind::Completion => Value::from("auto"),
                DialectKind::LspAi => Value::from("manual"),
                _ => Value::Null,
            },
            "lsp_log": s._dir.path().join("lsp.log").display().to_string(),
            "xdg_state_home": xdg_state_home,
            "tmpdir": tmpdir,
            "xdg_runtime_dir": runtime_dir,
            "config": app.config,
        });
        s.lua(DRIVER, vec![json_to_mp(&setup)]).await?;
        Ok(s)
    }

    pub fn editor_version(&self) -> &str {
        &self.version
    }
    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }
    pub fn workspace(&self) -> &Path {
        &self.root
    }
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }
    /// Why this editor must not serve another case, if it must not.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }
    pub fn last_request_hash(&self) -> Option<&str> {
        self.last_request_hash.as_deref()
    }

    /// Opens `rel` in a buffer (the last one opened is the current one, where typing
    /// goes) with Neovim's client attached; the first waits for the server's
    /// initialization.
    pub async fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        self.write_file(rel, text)?;
        let path = self.root.join(rel);
        let lang = self
            .profile
            .language_for(Path::new(rel))
            .unwrap_or_else(|| self.profile.languages[0].clone());
        let buf = self
            .lua(
                "return typist.open(...)",
                vec![
                    Mp::from(path.display().to_string()),
                    Mp::from(lang),
                    Mp::from(true),
                ],
            )
            .await?;
        let buf = buf
            .as_i64()
            .ok_or_else(|| EditorError::Failed(format!("neovim: no buffer for {rel}")))?;
        self.bufs.insert(rel.to_string(), buf);
        self.texts.insert(rel.to_string(), text.to_string());
        self.lines.insert(
            rel.to_string(),
            text.split('\n').map(str::to_string).collect(),
        );
        if self.bufs.len() == 1 && !self.profile.is_plugin_only() {
            self.wait_initialized().await?;
        }
        Ok(())
    }

    async fn wait_initialized(&mut self) -> Result<(), SessionError> {
        let deadline = Instant::now() + Duration::from_millis(self.profile.init_timeout_ms);
        loop {
            let r = mp_to_json(&self.lua("return typist.ready()", vec![]).await?);
            if r["gone"] == Value::Bool(true) {
                return Err(self
                    .exited("the server exited before it was initialized")
                    .await
                    .into());
            }
            if r["initialized"] == Value::Bool(true) {
                self.info = ServerInfo {
                    name: r["name"].as_str().map(str::to_string),
                    version: r["version"].as_str().map(str::to_string),
                };
                self.triggers = r["triggers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect();
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(EditorError::Timeout(format!(
                    "{}: not initialized within {} ms (inside neovim)",
                    self.profile.name, self.profile.init_timeout_ms
                ))
                .into());
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }

    /// What the editor is to hold in `rel`; the disk copy holds it at once, the buffer
    /// when the next case is placed.
    pub fn set_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let old = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        if old == text {
            return Ok(());
        }
        if let Some(added) = text.strip_prefix(old.as_str()) {
            use std::io::Write;
            let path = self.root.join(rel);
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(added.as_bytes()))
                .map_err(SessionError::file(&path))?;
        } else {
            self.write_file(rel, text)?;
        }
        self.texts.insert(rel.to_string(), text.to_string());
        Ok(())
    }

    fn write_file(&self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        workspace::write_creating(&path, text).map_err(SessionError::file(&path))
    }

    /// [`Self::suggest`] after the profile's readiness rule: progress ended or the
    /// server quiescent, or (rule `stable`) asked again until two answers in a row are
    /// the same, as typist's own client does.
    pub async fn suggest_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let deadline = self.wait_for_readiness().await;
        let r = self.profile.readiness.clone();
        let mut last = self.suggest(rel, cursor).await?;
        if r.rule == super::profile::ReadinessRule::Stable {
            for _ in 1..r.max_tries {
                if Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(super::options::RETRY_INTERVAL).await;
                let next = self.suggest(rel, cursor).await?;
                let same = next.value == last.value;
                last = next;
                if same {
                    break;
                }
            }
        }
        Ok(last)
    }

    /// What every case begins with: a broken editor refused, old notifications
    /// dropped, and `rel`'s text with its buffer, the cursor's byte offset and the
    /// start of its line.
    fn begin_case(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<(String, i64, usize, usize), SessionError> {
        if let Some(why) = &self.broken {
            return Err(EditorError::Failed(why.clone()).into());
        }
        self.drain();
        let text = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        let buf = self.bufs[rel];
        let at = Document::offset_of(&text, cursor, PositionEncoding::Utf8);
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        Ok((text, buf, at, line_start))
    }

    /// Leaves insert mode and puts `new_lines` in `buf` (`typist.place`), sending only
    /// the lines from the first that differs from what `rel`'s buffer holds, with the
    /// cursor at byte `col` of `row` in normal mode; returns the placement's epoch.
    async fn place_lines(
        &mut self,
        rel: &str,
        buf: i64,
        new_lines: &[String],
        (row, col): (i64, i64),
    ) -> Result<u64, SessionError> {
        let start = self.lines.get(rel).map_or(0, |old| {
            old.iter()
                .zip(new_lines)
                .take_while(|(a, b)| a == b)
                .count()
        });
        let start = start.min(new_lines.len().saturating_sub(1));
        self.leave_insert_mode(buf).await?;
        let tail: Vec<Mp> = new_lines[start..]
            .iter()
            .map(|l| Mp::from(l.as_str()))
            .collect();
        Ok(self
            .lua(
                "return typist.place(...)",
                vec![
                    Mp::from(buf),
                    Mp::from(start as i64),
                    Mp::Array(tail),
                    Mp::from(row),
                    Mp::from(col),
                ],
            )
            .await?
            .as_u64()
            .unwrap_or(0))
    }

    /// Places the case in the buffer, arrives at its line as a person does (see
    /// [`arrival`]), types the line's characters, and reads the ghost text Neovim shows
    /// for the request sent after the last key.
    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let (text, buf, at, line_start) = self.begin_case(rel, cursor)?;
        let typed = &text[line_start..at];
        let row = cursor.line as usize;
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let rest = text[at..].split('\n').next().unwrap_or("");
        let (placed, at_place, keys) = arrival(&lines, row, rest);
        // Normal mode first: leaving insert mode clears the old ghost text and cancels
        // Neovim's pending requests.
        let epoch = self.place_lines(rel, buf, &placed, at_place).await?;
        self.lines.insert(rel.to_string(), lines);

        // A plugin's ghost text is told from an old one by its extmarks: what is shown
        // before typing is not the answer.
        let before = if self.app.namespaces.is_empty() {
            Shown::default()
        } else {
            self.shown_now(buf).await?
        };
        // Typing as a person: the keys that open the line, then one key per interval.
        self.input(keys).await?;
        let interval = Duration::from_millis(self.app.key_interval_ms);
        for c in typed.chars() {
            tokio::time::sleep(interval).await;
            let key = if c == '<' {
                "<lt>".to_string()
            } else {
                c.to_string()
            };
            self.input(&key).await?;
        }
        let want_line = format!("{typed}{rest}");
        let col = typed.len() as u64;
        let typed_wait = STATE_WAIT + interval * typed.chars().count() as u32;
        let state = self
            .wait_state(buf, typed_wait, |s| {
                s.mode.starts_with('i')
                    && s.row == row as i64
                    && s.col == col as i64
                    && s.line == want_line
                    && s.lines == placed.len() as i64 + i64::from(keys != "i")
            })
            .await?;
        let t0 = Instant::now();
        self.check_errors(&state)?;
        let version = state.version;
        if !self.app.namespaces.is_empty() {
            return self.wait_shown(buf, t0, &before).await;
        }
        if self.profile.dialect == DialectKind::LspAi {
            return self
                .ask_lsp_ai(
                    buf,
                    epoch,
                    version,
                    row as i64,
                    &want_line,
                    col as usize,
                    t0,
                )
                .await;
        }

        let seq = self
            .wait_sent(METHOD, epoch, version, row as i64, &text, 0)
            .await?;
        let answer = self.wait_answer(METHOD, seq).await?;
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let state = self.state(buf).await?;
        self.check_errors(&state)?;
        if let Some(e) = answer.handler_error {
            let why = format!("neovim: inline completion handler failed: {e}");
            self.broken = Some(why.clone());
            return Err(EditorError::Failed(why).into());
        }
        if let Some(e) = answer.error {
            return Err(EditorError::Failed(format!(
                "{}: {METHOD} failed (through neovim): {e}",
                self.profile.name
            ))
            .into());
        }
        let value = if answer.null || answer.items == 0 {
            Suggestions::Inline(Vec::new())
        } else {
            let shown: Shown = serde_json::from_value(answer.shown)
                .map_err(|e| EditorError::Failed(format!("neovim: typist_answer's shown: {e}")))?;
            // Neovim's own namespace: one highlight, nothing else drawn in it.
            let drawn = shown.compose(true).map_err(EditorError::Failed)?;
            Suggestions::Inline(drawn.into_iter().collect())
        };
        Ok(Timed { value, latency_ms })
    }

    /// lsp-ai through Neovim: the popup asked for at once after the last key (as
    /// `<C-x><C-o>` does; `Invoked`, the trigger typist's own client sends lsp-ai), and
    /// its first entry as shown, inserted at the cursor. Nothing shown is `empty`.
    #[allow(clippy::too_many_arguments)]
    async fn ask_lsp_ai(
        &mut self,
        buf: i64,
        epoch: u64,
        version: i64,
        row: i64,
        line: &str,
        col: usize,
        t0: Instant,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let after = self.last_seq();
        let trigger = super::conditions::Trigger::Invoked;
        self.lua("typist.complete(...)", vec![json_to_mp(&trigger.context())])
            .await?;
        let text = self.placed_text(buf);
        let (answer, latency_ms) = self
            .completion_answer(buf, epoch, version, row, &text, after, t0)
            .await?;
        let first = answer.shown["items"].as_array().and_then(|a| a.first());
        let value = Suggestions::Inline(
            first
                .and_then(|it| {
                    it.get("textEdit")
                        .and_then(|e| e.get("newText"))
                        .or_else(|| it.get("insertText"))
                        .and_then(Value::as_str)
                })
                .map(|t| inserted_at(line, col, t))
                .into_iter()
                .collect(),
        );
        Ok(Timed { value, latency_ms })
    }

    /// The answer to the completion request Neovim sent for `version` at `row` (the
    /// first after request `after`), with its latency from `t0`; the editor's state is
    /// checked, and a failed handler (the editor is then broken) or the server's error is
    /// the case's error.
    #[allow(clippy::too_many_arguments)]
    async fn completion_answer(
        &mut self,
        buf: i64,
        epoch: u64,
        version: i64,
        row: i64,
        text: &str,
        after: u64,
        t0: Instant,
    ) -> Result<(Answer, f64), SessionError> {
        let seq = self
            .wait_sent(COMPLETION, epoch, version, row, text, after)
            .await?;
        let answer = self.wait_answer(COMPLETION, seq).await?;
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let state = self.state(buf).await?;
        self.check_errors(&state)?;
        if let Some(e) = answer.handler_error {
            let why = format!("neovim: completion handler failed: {e}");
            self.broken = Some(why.clone());
            return Err(EditorError::Failed(why).into());
        }
        if let Some(e) = answer.error {
            return Err(EditorError::Failed(format!(
                "{}: {COMPLETION} failed (through neovim): {e}",
                self.profile.name
            ))
            .into());
        }
        Ok((answer, latency_ms))
    }

    /// The document's text as the case placed it (for the request's hash).
    fn placed_text(&self, buf: i64) -> String {
        self.bufs
            .iter()
            .find(|(_, b)| **b == buf)
            .and_then(|(rel, _)| self.texts.get(rel))
            .cloned()
            .unwrap_or_default()
    }

    /// What Neovim shows at the cursor now, in the namespaces read.
    async fn shown_now(&mut self, buf: i64) -> Result<Shown, SessionError> {
        let v = mp_to_json(
            &self
                .lua("return typist.shown(...)", vec![Mp::from(buf)])
                .await?,
        );
        serde_json::from_value(v)
            .map_err(|e| EditorError::Failed(format!("neovim: typist.shown: {e}")).into())
    }

    /// A plugin's ghost text: the first suggestion drawn at the cursor by marks other than
    /// those shown before typing, polled until the display deadline.
    async fn wait_shown(
        &mut self,
        buf: i64,
        t0: Instant,
        before: &Shown,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let deadline = t0 + Duration::from_millis(self.app.display_deadline_ms);
        let filtered = !self.app.highlights.is_empty();
        loop {
            let now = self.shown_now(buf).await?;
            if now.draws() && now.marks != before.marks {
                let drawn = now.compose(filtered);
                let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
                let state = self.state(buf).await?;
                self.check_errors(&state)?;
                if let Some(s) = drawn.map_err(EditorError::Failed)? {
                    return Ok(Timed {
                        value: Suggestions::Inline(vec![s]),
                        latency_ms,
                    });
                }
            }
            if Instant::now() >= deadline {
                let state = self.state(buf).await?;
                self.check_errors(&state)?;
                return Err(EditorError::NothingShown(format!(
                    "nothing shown within the display deadline ({} ms)",
                    self.app.display_deadline_ms
                ))
                .into());
            }
            tokio::time::sleep(SHOWN_POLL).await;
        }
    }

    /// The first request Neovim sent for this case's buffer version and row (after
    /// request `after`: the same place may be asked again).
    async fn wait_sent(
        &mut self,
        method: &str,
        epoch: u64,
        version: i64,
        row: i64,
        text: &str,
        after: u64,
    ) -> Result<u64, SessionError> {
        let started = Instant::now();
        let mut free = Duration::ZERO;
        let mut slice_end = started + SENT_SLICE;
        loop {
            let case = |s: &&Sent| {
                s.seq > after
                    && s.method == method
                    && s.epoch == epoch
                    && s.version == version
                    && s.row == row
            };
            if let Some(s) = self.sent.iter().find(case) {
                let root_uri = uri::from_path(&self.root);
                self.last_request_hash = Some(request_hash_of(
                    method,
                    &s.params,
                    &root_uri,
                    &crate::digest::sha256_hex(text.as_bytes()),
                ));
                return Ok(s.seq);
            }
            if self.detached {
                return Err(self
                    .exited("the server exited inside neovim (LspDetach)")
                    .await
                    .into());
            }
            if self.next_note(slice_end).await? {
                continue;
            }
            // A slice passed without the request: count it only if Neovim was free.
            let asked = Instant::now();
            self.lua("return 0", vec![]).await?;
            let took = asked.elapsed();
            self.drain();
            if took < NVIM_BUSY {
                free += SENT_SLICE;
            }
            slice_end = Instant::now() + SENT_SLICE;
            let over = free >= REQUEST_SENT_WITHIN || started.elapsed() >= REQUEST_SENT_CAP;
            if over && !self.sent.iter().any(|s| case(&s)) {
                return Err(EditorError::Failed(format!(
                    "neovim sent no {method} within {} ms after the last key ({} ms of it \
                     with neovim free)",
                    started.elapsed().as_millis(),
                    free.as_millis()
                ))
                .into());
            }
        }
    }

    async fn wait_answer(&mut self, method: &str, seq: u64) -> Result<Answer, SessionError> {
        let deadline = Instant::now() + self.profile.request_timeout();
        loop {
            if let Some(a) = self.answers.remove(&seq) {
                // Older requests' answers can no longer be a case's.
                self.answers.retain(|&k, _| k > seq);
                self.cancelled.retain(|&k| k > seq);
                return Ok(a);
            }
            if self.cancelled.contains(&seq) {
                return Err(EditorError::Failed(format!("neovim cancelled its {method}")).into());
            }
            if self.detached {
                return Err(self
                    .exited("the server exited inside neovim (LspDetach)")
                    .await
                    .into());
            }
            if !self.next_note(deadline).await? {
                let _ = self.lua("typist.cancel(...)", vec![Mp::from(seq)]).await;
                return Err(EditorError::Timeout(format!(
                    "{}: {method} not answered within {} ms (through neovim)",
                    self.profile.name, self.profile.request_timeout_ms
                ))
                .into());
            }
        }
    }

    /// Waits for one notification until `deadline`; false when none came.
    async fn next_note(&mut self, deadline: Instant) -> Result<bool, SessionError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.notes.recv()).await {
            Err(_) => Ok(false),
            Ok(None) => Err(self.exited("neovim exited").await.into()),
            Ok(Some(n)) => {
                self.absorb(n);
                Ok(true)
            }
        }
    }

    fn drain(&mut self) {
        while let Ok(n) = self.notes.try_recv() {
            self.absorb(n);
        }
    }

    fn absorb(&mut self, (method, params): Notification) {
        let data = params.first().map(mp_to_json).unwrap_or(Value::Null);
        let seq = data["seq"].as_u64().unwrap_or(0);
        let opt_str = |v: &Value| v.as_str().map(str::to_string);
        match method.as_str() {
            "typist_request" => self.sent.push(Sent {
                seq,
                method: data["method"].as_str().unwrap_or(METHOD).to_string(),
                epoch: data["epoch"].as_u64().unwrap_or(0),
                version: data["version"].as_i64().unwrap_or(-1),
                row: data["row"].as_i64().unwrap_or(-1),
                params: data["params"].clone(),
            }),
            "typist_answer" => {
                self.answers.insert(
                    seq,
                    Answer {
                        error: opt_str(&data["error"]),
                        null: data["null"] == Value::Bool(true),
                        items: data["items"].as_u64().unwrap_or(0),
                        incomplete: data["incomplete"] == Value::Bool(true),
                        shown: data["shown"].clone(),
                        handler_error: opt_str(&data["handler_error"]),
                    },
                );
            }
            "typist_cancel" => self.cancelled.push(seq),
            "typist_detach" => self.detached = true,
            _ => {}
        }
        // Only the requests of the current case can be the answer: keep the last few.
        if self.sent.len() > 64 {
            self.sent.drain(..self.sent.len() - 64);
        }
    }

    /// An error message shown since the case was placed is the case's error, and this
    /// editor serves no other case.
    fn check_errors(&mut self, state: &State) -> Result<(), SessionError> {
        if state.errors.is_empty() {
            return Ok(());
        }
        let why = format!("neovim: {}", state.errors.join("\n"));
        self.broken = Some(why.clone());
        Err(EditorError::Failed(why).into())
    }

    async fn state(&mut self, buf: i64) -> Result<State, SessionError> {
        let v = mp_to_json(
            &self
                .lua("return typist.state(...)", vec![Mp::from(buf)])
                .await?,
        );
        serde_json::from_value(v)
            .map_err(|e| EditorError::Failed(format!("neovim: typist.state: {e}")).into())
    }

    async fn wait_state(
        &mut self,
        buf: i64,
        within: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<State, SessionError> {
        let deadline = Instant::now() + within;
        loop {
            let s = self.state(buf).await?;
            if done(&s) {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                let why = format!("neovim: typing did not give the expected state: {s:?}");
                self.broken = Some(why.clone());
                return Err(EditorError::Failed(why).into());
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn input(&mut self, keys: &str) -> Result<(), SessionError> {
        self.call("nvim_input", vec![Mp::from(keys)], CALL).await?;
        Ok(())
    }

    async fn lua(&mut self, code: &str, args: Vec<Mp>) -> Result<Mp, SessionError> {
        self.call("nvim_exec_lua", vec![Mp::from(code), Mp::Array(args)], CALL)
            .await
    }

    async fn call(
        &mut self,
        method: &str,
        args: Vec<Mp>,
        within: Duration,
    ) -> Result<Mp, SessionError> {
        match self.rpc.call(method, args, within).await {
            Ok(v) => Ok(v),
            Err(CallError::Answer(m)) => {
                let why = format!("neovim: {m}");
                self.broken = Some(why.clone());
                Err(EditorError::Failed(why).into())
            }
            Err(CallError::Timeout) => {
                let why = format!(
                    "neovim did not answer {method} within {} ms",
                    within.as_millis()
                );
                self.broken = Some(why.clone());
                Err(EditorError::Failed(why).into())
            }
            Err(CallError::Closed) => Err(self.exited("neovim exited").await.into()),
        }
    }

    /// An exit error with what is known of Neovim's end (its status and last stderr
    /// lines, when it has ended).
    async fn exited(&mut self, what: &str) -> EditorError {
        // Neovim's end is published once it is reaped: wait for it a moment so the
        // message says how it ended.
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some)).await;
        let end = exit.borrow().clone();
        match end {
            Some(e) if !e.stderr_tail.is_empty() => {
                EditorError::Exited(format!("{what} ({}): {}", e.status, e.stderr_tail))
            }
            Some(e) => EditorError::Exited(format!("{what} ({})", e.status)),
            None => EditorError::Exited(what.to_string()),
        }
    }

    /// Stops Neovim and every server in its process group; the workspace goes with it.
    pub async fn shutdown(self) -> Option<ExitInfo> {
        self.process.kill_group();
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(Option::is_some)).await;
        exit.borrow().clone()
    }
}

/// How typing reaches line `row` of `lines` (what the buffer holds after typing; `rest`:
/// the line's text after the cursor), as a person typing the file from the top does
/// ([`super::kind::Arrival::EnterAbove`]): the lines placed, the cursor's place in normal
/// mode, and the keys that open the line in insert mode. The line is left out and opened
/// by Enter at the end of the line above (`A<CR>`: `InsertEnter`, then `CursorMovedI` and
/// `TextChangedI`), or above the first line (`O`); the only line of a file, or a line with
/// text after the cursor, is placed without the typed characters and typed into from its
/// start (`i`).
fn arrival(lines: &[String], row: usize, rest: &str) -> (Vec<String>, (i64, i64), &'static str) {
    let row = row.min(lines.len().saturating_sub(1));
    if rest.is_empty() && row > 0 {
        let mut placed = lines.to_vec();
        placed.remove(row);
        return (placed, (row as i64 - 1, 0), "A<CR>");
    }
    if rest.is_empty() && lines.len() > 1 {
        return (lines[1..].to_vec(), (0, 0), "O");
    }
    let mut placed = lines.to_vec();
    if let Some(l) = placed.get_mut(row) {
        *l = rest.to_string();
    }
    (placed, (row as i64, 0), "i")
}

/// `insert` put at byte `col` of `line`: the line as it would stand after accepting,
/// and the lines below it.
fn inserted_at(line: &str, col: usize, insert: &str) -> InlineSuggestion {
    let col = col.min(line.len());
    let text = format!(
        "{}{}{}",
        &line[..col],
        insert.replace("\r\n", "\n"),
        &line[col..]
    );
    let first = text.split('\n').next().unwrap_or("").to_string();
    InlineSuggestion { line: first, text }
}

fn json_to_mp(v: &Value) -> Mp {
    match v {
        Value::Null => Mp::Nil,
        Value::Bool(b) => Mp::from(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Mp::from(i),
            (_, Some(u), _) => Mp::from(u),
            (_, _, Some(f)) => Mp::from(f),
            _ => Mp::Nil,
        },
        Value::String(s) => Mp::from(s.as_str()),
        Value::Array(a) => Mp::Array(a.iter().map(json_to_mp).collect()),
        Value::Object(o) => Mp::Map(
            o.iter()
                .map(|(k, v)| (Mp::from(k.as_str()), json_to_mp(v)))
                .collect(),
        ),
    }
}

fn mp_to_json(v: &Mp) -> Value {
    match v {
        Mp::Nil => Value::Null,
        Mp::Boolean(b) => Value::Bool(*b),
        Mp::Integer(i) => i
            .as_i64()
            .map(Value::from)
            .or_else(|| i.as_u64().map(Value::from))
            .unwrap_or(Value::Null),
        Mp::F32(f) => {
            serde_json::Number::from_f64(f64::from(*f)).map_or(Value::Null, Value::Number)
        }
        Mp::F64(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Mp::String(s) => Value::String(s.as_str().unwrap_or("").to_string()),
        Mp::Binary(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Mp::Array(a) => Value::Array(a.iter().map(mp_to_json).collect()),
        Mp::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Mp::String(s) => s.as_str().unwrap_or("").to_string(),
                        other => other.to_string(),
                    };
                    (key, mp_to_json(v))
                })
                .collect(),
        ),
        Mp::Ext(_, _) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_reached_by_enter_at_the_end_of_the_line_above() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The typed prefix on its own line, below two lines and above one.
        let (placed, at, keys) = arrival(&l(&["a", "b", "pr", "c"]), 2, "");
        assert_eq!((placed, at, keys), (l(&["a", "b", "c"]), (1, 0), "A<CR>"));
        // The first line, with lines after it: opened above them.
        let (placed, at, keys) = arrival(&l(&["pr", "c"]), 0, "");
        assert_eq!((placed, at, keys), (l(&["c"]), (0, 0), "O"));
        // The only line: typed into from its start.
        let (placed, at, keys) = arrival(&l(&["pr"]), 0, "");
        assert_eq!((placed, at, keys), (l(&[""]), (0, 0), "i"));
        // Text after the cursor stays; the typed characters go before it.
        let (placed, at, keys) = arrival(&l(&["a", "pr)"]), 1, ")");
        assert_eq!((placed, at, keys), (l(&["a", ")"]), (1, 0), "i"));
    }
}
