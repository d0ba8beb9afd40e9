//! One editor session on one server: a temporary workspace holding copies of the files,
//! the open documents with their versions, `didOpen`/`didChange` (incremental when the
//! server asks for it, full otherwise), and `suggest` through the profile's dialect.
//! The user's files are never written to: the server sees only the copy.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::answers;
use super::conditions::Conditions;
use super::dialect::{self, Suggestions};
use super::document::{Document, Position, PositionEncoding, incremental_change};
use super::profile::{DialectKind, Profile, ReadinessRule};
use crate::lsp::{Client, ClientOptions, ClientStats, Event, ExitInfo, LspError, uri};

/// Temporary workspaces are named `typist-PID-…` after the process that made them, so
/// that one left by a killed typist can be told from one in use.
const WORKSPACE_PREFIX: &str = "typist-";

/// A temporary folder named `typist-PID-{purpose}…`: removed when dropped, and by
/// [`sweep_stale_workspaces`] if this typist is killed before it can remove it.
pub fn scratch_dir(purpose: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!(
            "{WORKSPACE_PREFIX}{}-{purpose}",
            std::process::id()
        ))
        .tempdir()
}

/// Removes the temporary workspaces of typist processes that no longer exist (a typist
/// killed with SIGKILL cannot remove its own); returns how many were removed. Folders of
/// live processes, and of other users, are left alone.
pub fn sweep_stale_workspaces() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(WORKSPACE_PREFIX))
            .and_then(|r| r.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) && std::fs::remove_dir_all(e.path()).is_ok() {
            tracing::debug!(folder = %e.path().display(), "removed the workspace of a typist that is gone");
            removed += 1;
        }
    }
    removed
}

/// Copilot's "not authenticated" error code.
pub const COPILOT_NO_TOKEN: i64 = 1000;

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error(transparent)]
    Lsp(#[from] LspError),
    #[error("{server} is not signed in: {message}")]
    NotSignedIn { server: String, message: String },
    #[error("{server} is not installed ({command} not found); {hint}")]
    Missing {
        server: String,
        command: String,
        hint: String,
    },
    #[error("workspace: {0}")]
    Workspace(String),
    #[error("{0} is not open in the session")]
    NotOpen(String),
}

impl SessionError {
    pub fn is_timeout(&self) -> bool {
        matches!(self, SessionError::Lsp(e) if e.is_timeout())
    }
    /// The server is gone (crashed or exited): a restart may help.
    pub fn is_exit(&self) -> bool {
        matches!(self, SessionError::Lsp(e) if e.is_exit())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncKind {
    None,
    Full,
    Incremental,
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct ServerInfo {
    pub name: Option<String>,
    pub version: Option<String>,
}

impl ServerCaps {
    /// Whether the server declared `key` (`inlineCompletionProvider`, `completionProvider`).
    pub fn declares(&self, key: &str) -> bool {
        match key {
            "inlineCompletionProvider" => self.inline,
            "completionProvider" => self.completion,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerCaps {
    pub inline: bool,
    pub completion: bool,
    pub sync: SyncKind,
    pub position_encoding: PositionEncoding,
}

/// A suggestion and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct Timed<T> {
    pub value: T,
    pub latency_ms: f64,
}

#[derive(Debug, Default, Clone)]
pub struct SessionOptions {
    /// Folder the files are copied from (the repository).
    pub source_root: Option<PathBuf>,
    /// Files (relative to `source_root`) copied into the workspace.
    pub files: Vec<PathBuf>,
    /// Files written into the workspace with these contents (path relative to it).
    pub contents: Vec<(String, String)>,
    /// JSONL transcript of the session's messages.
    pub transcript: Option<PathBuf>,
}

/// What the server has told us through notifications.
#[derive(Debug, Default)]
struct ServerState {
    active_progress: HashSet<String>,
    progress_seen: bool,
    quiescent: Option<bool>,
    /// Ids of the server's `workspace/didChangeWatchedFiles` registrations.
    watches: HashSet<String>,
}

pub struct Session {
    client: Client,
    events: UnboundedReceiver<Event>,
    profile: Profile,
    conditions: Conditions,
    dir: tempfile::TempDir,
    root: PathBuf,
    docs: BTreeMap<String, Document>,
    info: ServerInfo,
    caps: ServerCaps,
    state: ServerState,
    focused: Option<String>,
    /// The canonical hash of the last suggestion request sent (see [`request_hash`]).
    last_request_hash: Option<String>,
}

impl Session {
    /// Copies the files into a fresh workspace, starts the server there and
    /// initializes it under `conditions`.
    pub async fn start(
        profile: &Profile,
        conditions: &Conditions,
        opts: SessionOptions,
    ) -> Result<Session, SessionError> {
        let program = profile
            .resolve_command()
            .ok_or_else(|| SessionError::Missing {
                server: profile.name.clone(),
                command: profile.command.clone(),
                hint: profile.install_hint.clone(),
            })?;
        let ws_err = |e: std::io::Error| SessionError::Workspace(e.to_string());
        let dir = scratch_dir("").map_err(ws_err)?;
        let root = dir.path().join("workspace");
        std::fs::create_dir_all(&root).map_err(ws_err)?;
        let root = root.canonicalize().map_err(ws_err)?;
        // The profile's own files first (go.mod, compile_flags.txt): a file of the
        // repository with the same name wins, so the target's hidden copy is never
        // overwritten.
        for (name, text) in &profile.workspace_files {
            std::fs::write(root.join(name), text).map_err(ws_err)?;
        }
        if let Some(src) = &opts.source_root {
            for f in &opts.files {
                let to = root.join(f);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(ws_err)?;
                }
                std::fs::copy(src.join(f), &to).map_err(|e| {
                    SessionError::Workspace(format!("cannot copy {}: {e}", src.join(f).display()))
                })?;
            }
        }
        for (rel, text) in &opts.contents {
            let to = root.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(ws_err)?;
            }
            std::fs::write(&to, text).map_err(ws_err)?;
        }
        let mut env: Vec<(String, String)> = profile
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if profile.sandbox_home {
            let home = dir.path().join("home");
            std::fs::create_dir_all(&home).map_err(ws_err)?;
            let h = home.display().to_string();
            env.push(("HOME".into(), h.clone()));
            env.push(("XDG_CONFIG_HOME".into(), format!("{h}/.config")));
            env.push(("XDG_CACHE_HOME".into(), format!("{h}/.cache")));
            env.push(("XDG_DATA_HOME".into(), format!("{h}/.local/share")));
            // Copilot: the user's sign-in (typist's own or theirs), copied in.
            if profile.dialect == DialectKind::Copilot {
                crate::copilot::seed_home(&home).map_err(ws_err)?;
            }
            for (rel, text) in &profile.home_files {
                let to = home.join(rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(ws_err)?;
                }
                std::fs::write(&to, text).map_err(ws_err)?;
            }
        }
        let root_uri = uri::from_path(&root);
        let folders = answers::workspace_folders(&root_uri);
        let client = Client::spawn(
            &program,
            &profile.args,
            &env,
            &root,
            ClientOptions {
                name: profile.name.clone(),
                transcript: opts.transcript.clone(),
                handlers: answers::editor_handlers(profile.settings.clone(), folders.clone()),
            },
        )?;
        let events = client
            .take_events()
            .ok_or_else(|| SessionError::Workspace("event stream already taken".into()))?;
        let init = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": conditions.client_name, "version": conditions.client_version},
            "rootUri": root_uri,
            "rootPath": root.display().to_string(),
            "workspaceFolders": folders,
            "capabilities": conditions.capabilities(),
            "initializationOptions": profile.initialization_options,
            "trace": "off",
        });
        let answer = client
            .request(
                "initialize",
                Some(init),
                Duration::from_millis(profile.init_timeout_ms),
            )
            .await?;
        let caps_v = answer.get("capabilities").cloned().unwrap_or(Value::Null);
        let info = ServerInfo {
            name: answer
                .pointer("/serverInfo/name")
                .and_then(Value::as_str)
                .map(str::to_string),
            version: answer
                .pointer("/serverInfo/version")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let caps = read_caps(&caps_v);
        client.notify("initialized", Some(json!({})));
        client.notify(
            "workspace/didChangeConfiguration",
            Some(json!({"settings": profile.settings})),
        );
        Ok(Session {
            client,
            events,
            profile: profile.clone(),
            conditions: conditions.clone(),
            dir,
            root,
            docs: BTreeMap::new(),
            info,
            caps,
            state: ServerState::default(),
            focused: None,
            last_request_hash: None,
        })
    }

    pub fn workspace(&self) -> &Path {
        &self.root
    }
    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }
    pub fn capabilities(&self) -> &ServerCaps {
        &self.caps
    }
    pub fn profile(&self) -> &Profile {
        &self.profile
    }
    pub fn stats(&self) -> ClientStats {
        self.client.stats()
    }
    pub fn pid(&self) -> Option<u32> {
        self.client.pid()
    }
    pub fn document(&self, rel: &str) -> Option<&Document> {
        self.docs.get(rel)
    }
    pub fn encoding(&self) -> PositionEncoding {
        self.caps.position_encoding
    }

    /// Opens `rel` (relative to the workspace) with `text`. The disk copy mirrors every
    /// open document: it is written now and after every change, so a server that reads
    /// files sees exactly what the editor holds, never more.
    pub fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        self.write_file(rel, text)?;
        let language_id = self
            .profile
            .language_for(Path::new(rel))
            .unwrap_or_else(|| self.profile.languages[0].clone());
        let doc = Document {
            uri: uri::from_path(&path),
            language_id,
            version: 1,
            text: text.to_string(),
        };
        self.client.notify(
            "textDocument/didOpen",
            Some(json!({"textDocument": {
                "uri": doc.uri, "languageId": doc.language_id, "version": doc.version, "text": doc.text,
            }})),
        );
        self.docs.insert(rel.to_string(), doc);
        Ok(())
    }

    /// Writes a file of the workspace on disk, and tells the server when it watches
    /// files (`workspace/didChangeWatchedFiles`, if it registered for it). Open documents
    /// are mirrored through this after every change.
    pub fn write_file(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        let existed = path.exists();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SessionError::Workspace(e.to_string()))?;
        }
        std::fs::write(&path, text).map_err(|e| SessionError::Workspace(e.to_string()))?;
        // FileChangeType: Created = 1, Changed = 2.
        self.notify_watchers(&path, if existed { 2 } else { 1 });
        Ok(())
    }

    fn notify_watchers(&mut self, path: &Path, kind: u8) {
        self.pump();
        if !self.state.watches.is_empty() {
            self.client.notify(
                "workspace/didChangeWatchedFiles",
                Some(json!({"changes": [{"uri": uri::from_path(path), "type": kind}]})),
            );
        }
    }

    /// Replaces the text of an open document, as one change.
    pub fn set_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let enc = self.caps.position_encoding;
        let sync = self.caps.sync;
        let doc = self
            .docs
            .get_mut(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        if doc.text == text {
            return Ok(());
        }
        let change = match sync {
            SyncKind::Incremental => incremental_change(&doc.text, text, enc),
            _ => json!({"text": text}),
        };
        // Typing appends: the disk copy grows by the same bytes (no rewrite of the file
        // per keystroke).
        let appended = text
            .starts_with(doc.text.as_str())
            .then_some(doc.text.len());
        doc.text = text.to_string();
        send_change(&self.client, doc, change);
        match appended {
            Some(at) => self.append_file(rel, &text[at..]),
            None => self.write_file(rel, text),
        }
    }

    /// Types `text` at the end of the document, as one change: an insertion at the end
    /// (no diff of the whole document) when the server syncs incrementally.
    pub fn type_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let enc = self.caps.position_encoding;
        let sync = self.caps.sync;
        let doc = self
            .docs
            .get_mut(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        if text.is_empty() {
            return Ok(());
        }
        let change = match sync {
            SyncKind::Incremental => {
                let end = doc.end(enc).to_json();
                json!({"range": {"start": end, "end": end}, "text": text})
            }
            _ => json!({"text": format!("{}{}", doc.text, text)}),
        };
        doc.text.push_str(text);
        send_change(&self.client, doc, change);
        self.append_file(rel, text)
    }

    /// Appends to a file of the workspace (the disk copy of a document being typed).
    fn append_file(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        use std::io::Write;
        let path = self.root.join(rel);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| SessionError::Workspace(format!("{}: {e}", path.display())))?;
        self.notify_watchers(&path, 2);
        Ok(())
    }

    pub fn close(&mut self, rel: &str) {
        if let Some(doc) = self.docs.remove(rel) {
            self.client.notify(
                "textDocument/didClose",
                Some(json!({"textDocument": {"uri": doc.uri}})),
            );
        }
    }

    /// The end of an open document: where the cursor stands after typing.
    pub fn end_of(&self, rel: &str) -> Option<Position> {
        self.docs
            .get(rel)
            .map(|d| d.end(self.caps.position_encoding))
    }

    /// Asks for a suggestion at `cursor` in `rel` through the profile's dialect.
    pub async fn suggest(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        self.pump();
        let dialect_kind = self.profile.dialect;
        let doc = self
            .docs
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        if dialect_kind == DialectKind::Copilot && self.focused.as_deref() != Some(rel) {
            self.client.notify(
                "textDocument/didFocus",
                Some(json!({"textDocument": {"uri": doc.uri}})),
            );
            self.focused = Some(rel.to_string());
        }
        let (method, params) = dialect::request_for(
            dialect_kind,
            &doc,
            cursor,
            self.conditions.trigger,
            self.conditions.formatting_options(),
            &self.profile.request_params,
        );
        self.last_request_hash = Some(request_hash(
            method,
            &params,
            &uri::from_path(&self.root),
            &doc.text,
        ));
        let start = Instant::now();
        let answer = self
            .client
            .request(method, Some(params), self.profile.request_timeout())
            .await;
        let latency_ms = start.elapsed().as_secs_f64() * 1000.0;
        let answer = match answer {
            Ok(v) => v,
            Err(e)
                if dialect_kind == DialectKind::Copilot
                    && e.rpc_code() == Some(COPILOT_NO_TOKEN) =>
            {
                return Err(SessionError::NotSignedIn {
                    server: self.profile.name.clone(),
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let value = dialect::read_answer(
            dialect_kind,
            &answer,
            &doc,
            cursor,
            self.caps.position_encoding,
        );
        Ok(Timed { value, latency_ms })
    }

    /// Waits until the profile's readiness rule holds for a suggestion at `cursor`,
    /// then returns that suggestion.
    pub async fn suggest_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let r = self.profile.readiness.clone();
        let deadline = Instant::now() + Duration::from_millis(r.max_wait_ms);
        match r.rule {
            ReadinessRule::None => {}
            ReadinessRule::Progress => {
                // Give the server a moment to begin its work, then wait for it to end.
                self.wait_until(deadline.min(Instant::now() + Duration::from_secs(2)), |s| {
                    s.progress_seen
                })
                .await;
                self.wait_until(deadline, |s| s.active_progress.is_empty())
                    .await;
            }
            ReadinessRule::ServerStatus => {
                self.wait_until(deadline, |s| s.quiescent == Some(true))
                    .await;
            }
            ReadinessRule::Stable => {
                let mut last = self.suggest(rel, cursor).await?;
                for _ in 1..r.max_tries {
                    if Instant::now() >= deadline {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    let next = self.suggest(rel, cursor).await?;
                    let same = next.value == last.value;
                    last = next;
                    if same {
                        break;
                    }
                }
                return Ok(last);
            }
        }
        self.suggest(rel, cursor).await
    }

    /// Copilot's sign-in state from `checkStatus` (local checks only, no network).
    pub async fn auth_status(&mut self) -> Option<String> {
        if self.profile.dialect != DialectKind::Copilot {
            return None;
        }
        let v = self
            .client
            .request(
                "checkStatus",
                Some(json!({"options": {"localChecksOnly": true}})),
                self.profile.request_timeout(),
            )
            .await
            .ok()?;
        v.get("status").and_then(Value::as_str).map(str::to_string)
    }

    pub async fn shutdown(self) -> Option<ExitInfo> {
        let Session { client, dir, .. } = self;
        let info = client.shutdown().await;
        drop(dir);
        info
    }

    async fn wait_until(&mut self, deadline: Instant, done: impl Fn(&ServerState) -> bool) {
        loop {
            self.pump();
            if done(&self.state) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            match tokio::time::timeout(deadline - now, self.events.recv()).await {
                Ok(Some(ev)) => self.absorb(ev),
                Ok(None) | Err(_) => return,
            }
        }
    }

    /// Applies every event already received, in order.
    fn pump(&mut self) {
        while let Ok(ev) = self.events.try_recv() {
            self.absorb(ev);
        }
    }

    fn absorb(&mut self, ev: Event) {
        let (method, params) = match ev {
            Event::Notification { method, params } => (method, params),
            Event::Request { method, params } => {
                self.absorb_request(&method, &params);
                return;
            }
        };
        let s = &mut self.state;
        match method.as_str() {
            "$/progress" => {
                let token = match params.get("token") {
                    Some(Value::String(t)) => t.clone(),
                    Some(other) => other.to_string(),
                    None => return,
                };
                match params.pointer("/value/kind").and_then(Value::as_str) {
                    Some("begin") => {
                        s.progress_seen = true;
                        s.active_progress.insert(token);
                    }
                    Some("end") => {
                        s.active_progress.remove(&token);
                    }
                    _ => {}
                }
            }
            "experimental/serverStatus" => {
                s.quiescent = params.get("quiescent").and_then(Value::as_bool);
            }
            "window/logMessage" | "window/showMessage" => {
                let msg = params.get("message").and_then(Value::as_str).unwrap_or("");
                tracing::trace!(server = %self.profile.name, "{msg}");
            }
            _ => {}
        }
    }
}

impl Session {
    /// Registrations the editor must honour: file watching.
    fn absorb_request(&mut self, method: &str, params: &Value) {
        let regs = match method {
            "client/registerCapability" => params.get("registrations"),
            "client/unregisterCapability" => params
                .get("unregisterations")
                .or_else(|| params.get("unregistrations")),
            _ => return,
        };
        for r in regs.and_then(Value::as_array).into_iter().flatten() {
            if r.get("method").and_then(Value::as_str) != Some("workspace/didChangeWatchedFiles") {
                continue;
            }
            let id = r
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if method == "client/registerCapability" {
                self.state.watches.insert(id);
            } else {
                self.state.watches.remove(&id);
            }
        }
    }

    /// rust-analyzer's `experimental/serverStatus`: `Some(quiescent)` once it was heard.
    pub fn server_status(&mut self) -> Option<bool> {
        self.pump();
        self.state.quiescent
    }

    /// Whether the server asked to be told of file changes on disk.
    pub fn watches_files(&mut self) -> bool {
        self.pump();
        !self.state.watches.is_empty()
    }

    /// The canonical hash of the last suggestion request sent, if any.
    pub fn last_request_hash(&self) -> Option<&str> {
        self.last_request_hash.as_deref()
    }
}

/// sha256 of the canonical form of a suggestion request: the method, the parameters
/// with the workspace's location and every document version taken out, and the
/// document's text. Two requests with the same hash asked the same thing of the same
/// editor state, whatever the run, worker or temporary folder.
pub fn request_hash(method: &str, params: &Value, root_uri: &str, text: &str) -> String {
    fn canon(v: &Value, root_uri: &str) -> Value {
        match v {
            Value::String(s) => Value::String(s.replacen(root_uri, "file:///workspace", 1)),
            Value::Array(a) => Value::Array(a.iter().map(|x| canon(x, root_uri)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| k.as_str() != "version")
                    .map(|(k, x)| (k.clone(), canon(x, root_uri)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let canonical = json!({
        "method": method,
        "params": canon(params, root_uri),
        "text_sha256": sha256_hex(text.as_bytes()),
    });
    sha256_hex(canonical.to_string().as_bytes())
}

/// Lower-case hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write;
    let digest = sha2::Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// One `didChange` with the document's next version (its text already updated).
fn send_change(client: &Client, doc: &mut Document, change: Value) {
    doc.version += 1;
    client.notify(
        "textDocument/didChange",
        Some(json!({
            "textDocument": {"uri": doc.uri, "version": doc.version},
            "contentChanges": [change],
        })),
    );
}

fn read_caps(caps: &Value) -> ServerCaps {
    let truthy = |v: Option<&Value>| match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(_) => true,
    };
    let sync = match caps.get("textDocumentSync") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::Object(o)) => o.get("change").and_then(Value::as_u64),
        _ => None,
    };
    let sync = match sync {
        Some(2) => SyncKind::Incremental,
        Some(1) => SyncKind::Full,
        Some(0) => SyncKind::None,
        // Unspecified: send full text, which every server accepts.
        _ => SyncKind::Full,
    };
    let position_encoding = caps
        .get("positionEncoding")
        .and_then(Value::as_str)
        .and_then(PositionEncoding::from_lsp)
        // A server that does not answer the negotiation speaks UTF-16, whatever we asked.
        .unwrap_or(PositionEncoding::Utf16);
    ServerCaps {
        inline: truthy(caps.get("inlineCompletionProvider")),
        completion: truthy(caps.get("completionProvider")),
        sync,
        position_encoding,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_are_read_from_either_shape() {
        let c = read_caps(
            &json!({"textDocumentSync": {"openClose": true, "change": 2}, "inlineCompletionProvider": {}}),
        );
        assert!(c.inline && !c.completion);
        assert_eq!(c.sync, SyncKind::Incremental);
        let c = read_caps(
            &json!({"textDocumentSync": 1, "completionProvider": {"triggerCharacters": ["."]}, "positionEncoding": "utf-8"}),
        );
        assert!(!c.inline && c.completion);
        assert_eq!(c.sync, SyncKind::Full);
        assert_eq!(c.position_encoding, PositionEncoding::Utf8);
    }
}
