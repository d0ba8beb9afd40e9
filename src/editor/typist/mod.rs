//! One editor session on one server: a temporary workspace holding copies of the files,
//! the open documents with their versions, `didOpen`/`didChange` (incremental when the
//! server asks for it, full otherwise), and `suggest` through the profile's dialect.
//! The user's files are never written to: the server sees only the copy.
//!
//! A text appended at the end is sent as an insertion there. The disk copy of a typed
//! document is kept open for appending and mirrors every change (see the replay's
//! invariant in `ARCHITECTURE.md`). Before asking, the session waits as the profile's
//! readiness rule says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use tower_lsp_server::ls_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
    DidOpenTextDocument, Initialized,
};
use tower_lsp_server::ls_types::request::Initialize;
use tower_lsp_server::ls_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, FileChangeType, FileEvent,
    InitializedParams, TextDocumentContentChangeEvent, TextDocumentIdentifier, TextDocumentItem,
    VersionedTextDocumentIdentifier,
};

use super::answers;
use super::conditions::Conditions;
use super::dialect;
use super::document::{
    Document, Position, PositionEncoding, incremental_change, insertion, replacement, whole,
};
use super::handshake;
use super::next_edit::{NextEdits, read_inline_edits};
use super::profile::{DialectKind, Profile, ReadinessRule};
use super::server_state::ServerState;
use super::suggestions::Suggestions;
use super::workspace::{self, Workspace};
use crate::lsp::{Address, Client, ClientOptions, ClientStats, Event, ExitInfo, uri};

mod completion;

use super::options::{PROGRESS_START_WAIT, RETRY_INTERVAL, SessionOptions, Timed};

use super::error::{COPILOT_NO_TOKEN, SessionError};
use super::handshake::{ServerCaps, ServerInfo, SyncKind};
use super::request_hash::{TextHash, request_hash_of};

pub struct TypistSession {
    client: Client,
    events: UnboundedReceiver<Event>,
    profile: Profile,
    conditions: Conditions,
    /// The sign-in the session started from: written back when dropped, after the
    /// client (and its server) and before the folder.
    _signin: Option<crate::editor::signin::SessionSignIn>,
    dir: tempfile::TempDir,
    root: PathBuf,
    docs: BTreeMap<String, Document>,
    info: ServerInfo,
    caps: ServerCaps,
    state: ServerState,
    focused: Option<String>,
    /// The canonical hash of the last suggestion request sent (see [`super::request_hash::request_hash`]).
    last_request_hash: Option<String>,
    /// Disk copies of documents being typed, open for appending (no open and close of
    /// the file per change); dropped when the file is rewritten.
    appending: BTreeMap<String, std::fs::File>,
    /// Running sha256 of open documents' texts; an entry is dropped whenever its text
    /// changes other than by appending.
    text_hashes: BTreeMap<String, TextHash>,
}

/// Starts the profile's server in `root`, or attaches to the one it names (`connect`).
async fn open_client(
    profile: &Profile,
    env: &[(String, String)],
    root: &Path,
    options: ClientOptions,
) -> Result<Client, SessionError> {
    if let Some(a) = &profile.connect {
        let address = Address::parse(a).map_err(|e| SessionError::Address {
            server: profile.name.clone(),
            message: e.to_string(),
        })?;
        let timeout = Duration::from_millis(profile.init_timeout_ms);
        return Ok(Client::attach(&address, timeout, options).await?);
    }
    let program = profile.server_program()?;
    Ok(Client::spawn(&program, &profile.args, env, root, options)?)
}

impl TypistSession {
    /// Copies the files into a fresh workspace, starts the server there (or attaches
    /// to the running one the profile names) and initializes it under `conditions`.
    pub async fn start(
        profile: &Profile,
        conditions: &Conditions,
        opts: SessionOptions,
    ) -> Result<TypistSession, SessionError> {
        let Workspace {
            dir,
            root,
            env,
            signin,
        } = workspace::prepare(profile, &opts)?;
        let root_uri = uri::from_path(&root);
        let folders = answers::workspace_folders(&root_uri);
        let options = ClientOptions {
            name: profile.name.clone(),
            transcript: opts.transcript.clone(),
            handlers: answers::editor_handlers(profile.settings.clone(), folders.clone()),
        };
        let client = open_client(profile, &env, &root, options).await?;
        let events = client
            .take_events()
            .expect("a new client's events are taken once, here");
        let init = handshake::initialize_params(profile, conditions, &root, &root_uri, folders)
            .map_err(|e| SessionError::Capabilities {
                server: profile.name.clone(),
                message: e.to_string(),
            })?;
        let answer = client
            .request_as::<Initialize>(init, Duration::from_millis(profile.init_timeout_ms))
            .await?;
        let (info, caps) = handshake::read_answer(&answer);
        client.notify_typed::<Initialized>(InitializedParams {});
        client.notify_typed::<DidChangeConfiguration>(DidChangeConfigurationParams {
            settings: profile.settings.clone(),
        });
        Ok(TypistSession {
            client,
            events,
            profile: profile.clone(),
            conditions: conditions.clone(),
            _signin: signin,
            dir,
            root,
            docs: BTreeMap::new(),
            info,
            caps,
            state: ServerState::default(),
            focused: None,
            last_request_hash: None,
            appending: BTreeMap::new(),
            text_hashes: BTreeMap::new(),
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
            uri: uri::uri_of(&path),
            language_id,
            version: 1,
            text: text.to_string(),
        };
        self.client
            .notify_typed::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                text_document: TextDocumentItem::new(
                    doc.uri.clone(),
                    doc.language_id.clone(),
                    doc.version,
                    doc.text.clone(),
                ),
            });
        self.docs.insert(rel.to_string(), doc);
        self.text_hashes.remove(rel);
        Ok(())
    }

    /// Writes a file of the workspace on disk, and tells the server when it watches
    /// files (`workspace/didChangeWatchedFiles`, if it registered for it). Open documents
    /// are mirrored through this after every change.
    pub fn write_file(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        self.appending.remove(rel);
        let path = self.root.join(rel);
        let existed = path.exists();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(SessionError::file(parent))?;
        }
        std::fs::write(&path, text).map_err(SessionError::file(&path))?;
        let kind = if existed {
            FileChangeType::CHANGED
        } else {
            FileChangeType::CREATED
        };
        self.notify_watchers(&path, kind);
        Ok(())
    }

    fn notify_watchers(&mut self, path: &Path, kind: FileChangeType) {
        self.pump();
        if !self.state.watches.is_empty() {
            self.client
                .notify_typed::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams {
                    changes: vec![FileEvent::new(uri::uri_of(path), kind)],
                });
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
        // Typing appends: the disk copy grows by the same bytes (no rewrite of the file
        // per keystroke), and the change is an insertion at the end (what
        // `incremental_change` finds, without comparing the texts byte by byte).
        let appended = text
            .starts_with(doc.text.as_str())
            .then_some(doc.text.len());
        let change = match (sync, appended) {
            (SyncKind::Incremental, Some(at)) => insertion(doc.end(enc), &text[at..]),
            (SyncKind::Incremental, None) => incremental_change(&doc.text, text, enc),
            _ => whole(text),
        };
        doc.text = text.to_string();
        send_change(&self.client, doc, change);
        match appended {
            Some(at) => self.append_file(rel, &text[at..]),
            None => {
                self.text_hashes.remove(rel);
                self.write_file(rel, text)
            }
        }
    }

    /// Replaces bytes `start..end` of open document `rel` by `text`, as one change with
    /// exactly that range (a person's edit as they made it, not a diff of the texts,
    /// which can place a repeated letter elsewhere).
    pub fn edit(
        &mut self,
        rel: &str,
        start: usize,
        end: usize,
        text: &str,
    ) -> Result<(), SessionError> {
        let enc = self.caps.position_encoding;
        let sync = self.caps.sync;
        let doc = self
            .docs
            .get_mut(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        if start > end || end > doc.text.len() {
            return Err(SessionError::File {
                path: self.root.join(rel),
                message: format!("edit {start}..{end} is outside the document"),
            });
        }
        let mut new = doc.text.clone();
        new.replace_range(start..end, text);
        let change = match sync {
            SyncKind::Incremental => replacement(
                Document::position_of(&doc.text, start, enc),
                Document::position_of(&doc.text, end, enc),
                text,
            ),
            _ => whole(&new),
        };
        doc.text = new.clone();
        send_change(&self.client, doc, change);
        self.text_hashes.remove(rel);
        self.write_file(rel, &new)
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
            SyncKind::Incremental => insertion(doc.end(enc), text),
            _ => whole(&format!("{}{}", doc.text, text)),
        };
        doc.text.push_str(text);
        send_change(&self.client, doc, change);
        self.append_file(rel, text)
    }

    /// Appends to a file of the workspace (the disk copy of a document being typed).
    fn append_file(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        use std::io::Write;
        let path = self.root.join(rel);
        let file = match self.appending.entry(rel.to_string()) {
            std::collections::btree_map::Entry::Occupied(f) => Ok(f.into_mut()),
            std::collections::btree_map::Entry::Vacant(v) => std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .map(|f| v.insert(f)),
        };
        file.and_then(|f| f.write_all(text.as_bytes()))
            .map_err(SessionError::file(&path))?;
        self.notify_watchers(&path, FileChangeType::CHANGED);
        Ok(())
    }

    /// The sha256 (hex) of open document `rel`'s text, from its running hash.
    pub(super) fn text_sha256(&mut self, rel: &str) -> String {
        let text = self.docs.get(rel).map_or("", |d| d.text.as_str());
        self.text_hashes
            .entry(rel.to_string())
            .or_default()
            .of(text)
    }

    pub fn close(&mut self, rel: &str) {
        self.appending.remove(rel);
        self.text_hashes.remove(rel);
        if let Some(doc) = self.docs.remove(rel) {
            self.client
                .notify_typed::<DidCloseTextDocument>(DidCloseTextDocumentParams {
                    text_document: TextDocumentIdentifier::new(doc.uri),
                });
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
        let (answer, latency_ms) = self
            .timed_request(rel, method, params, dialect_kind == DialectKind::Copilot)
            .await?;
        let value = dialect::read_answer(
            dialect_kind,
            &answer,
            &doc,
            cursor,
            self.caps.position_encoding,
        );
        Ok(Timed { value, latency_ms })
    }

    /// Sends a request about `rel` (its hash kept as the last request's) and returns the
    /// answer with its latency in ms. With `copilot`, Copilot's "no token" error is
    /// `NotSignedIn`, naming `typist login copilot`.
    async fn timed_request(
        &mut self,
        rel: &str,
        method: &str,
        params: Value,
        copilot: bool,
    ) -> Result<(Value, f64), SessionError> {
        let text_sha256 = self.text_sha256(rel);
        self.last_request_hash = Some(request_hash_of(
            method,
            &params,
            &uri::from_path(&self.root),
            &text_sha256,
        ));
        let start = Instant::now();
        let answer = self
            .client
            .request(method, Some(params), self.profile.request_timeout())
            .await;
        let latency_ms = start.elapsed().as_secs_f64() * 1000.0;
        match answer {
            Ok(v) => Ok((v, latency_ms)),
            Err(e) if copilot && e.rpc_code() == Some(COPILOT_NO_TOKEN) => {
                Err(SessionError::NotSignedIn {
                    server: self.profile.name.clone(),
                    message: format!("{e}; run `typist login copilot`"),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Asks for the next edit at `cursor` in `rel` as Copilot's editors do:
    /// `textDocument/didFocus` when the document was not focused, then
    /// `textDocument/copilotInlineEdit` with the document's version, and
    /// `textDocument/didShowInlineEdit` for the first edit when the answer has one (an
    /// editor shows it). A server that does not know the method answers an error.
    pub async fn next_edit(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<NextEdits>, SessionError> {
        self.pump();
        let doc = self
            .docs
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?
            .clone();
        if self.focused.as_deref() != Some(rel) {
            self.client.notify(
                "textDocument/didFocus",
                Some(json!({"textDocument": {"uri": doc.uri}})),
            );
            self.focused = Some(rel.to_string());
        }
        let params = json!({
            "textDocument": {"uri": doc.uri, "version": doc.version},
            "position": cursor.to_json(),
        });
        let (answer, latency_ms) = self
            .timed_request(rel, "textDocument/copilotInlineEdit", params, true)
            .await?;
        let value = read_inline_edits(
            &answer,
            doc.uri.as_str(),
            i64::from(doc.version),
            &doc.text,
            self.caps.position_encoding,
        );
        if let Some(first) = answer
            .get("edits")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            self.client.notify(
                "textDocument/didShowInlineEdit",
                Some(json!({"item": first})),
            );
        }
        Ok(Timed { value, latency_ms })
    }

    /// Waits as the profile's readiness rule says and returns its deadline. `Stable` is
    /// left to the caller, which asks until two answers in a row agree.
    pub(super) async fn wait_for_readiness(&mut self) -> Instant {
        let r = self.profile.readiness.clone();
        let deadline = Instant::now() + Duration::from_millis(r.max_wait_ms);
        match r.rule {
            ReadinessRule::None | ReadinessRule::Stable => {}
            ReadinessRule::Progress => {
                // Give the server a moment to begin its work, then wait for it to end.
                self.wait_until(deadline.min(Instant::now() + PROGRESS_START_WAIT), |s| {
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
        }
        deadline
    }

    /// Waits until the profile's readiness rule holds for a suggestion at `cursor`,
    /// then returns that suggestion.
    pub async fn suggest_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        let deadline = self.wait_for_readiness().await;
        let r = self.profile.readiness.clone();
        if r.rule == ReadinessRule::Stable {
            let mut last = self.suggest(rel, cursor).await?;
            for _ in 1..r.max_tries {
                if Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(RETRY_INTERVAL).await;
                let next = self.suggest(rel, cursor).await?;
                let same = next.value == last.value;
                last = next;
                if same {
                    break;
                }
            }
            return Ok(last);
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
        let TypistSession { client, dir, .. } = self;
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
                Ok(Some(ev)) => self.state.absorb(ev, &self.profile.name),
                Ok(None) | Err(_) => return,
            }
        }
    }

    /// Applies every event already received, in order.
    fn pump(&mut self) {
        while let Ok(ev) = self.events.try_recv() {
            self.state.absorb(ev, &self.profile.name);
        }
    }

    /// rust-analyzer's `experimental/serverStatus`: `Some(quiescent)` once it was heard.
    pub fn server_status(&mut self) -> Option<bool> {
        self.pump();
        self.state.quiescent
    }

    /// How many times the server published diagnostics for open document `rel` so far
    /// (for [`TypistSession::diagnostics_after`]).
    pub fn diagnostics_seen(&mut self, rel: &str) -> u64 {
        self.pump();
        let Some(doc) = self.docs.get(rel) else {
            return 0;
        };
        self.state
            .diagnostics
            .get(doc.uri.as_str())
            .map_or(0, |p| p.count)
    }

    /// The diagnostics the server publishes for open document `rel` after its latest
    /// change: waits for a `publishDiagnostics` of the document later than the `after`th
    /// (naming the document's version, or none), then until `quiet` passes without
    /// another (servers publish in stages). `None` when nothing came by `deadline`.
    pub async fn diagnostics_after(
        &mut self,
        rel: &str,
        after: u64,
        quiet: Duration,
        deadline: Duration,
    ) -> Option<Vec<Value>> {
        let doc = self.docs.get(rel)?;
        let (uri, version) = (doc.uri.as_str().to_string(), i64::from(doc.version));
        let end = Instant::now() + deadline;
        let current = |st: &ServerState| {
            st.diagnostics
                .get(&uri)
                .filter(|p| p.count > after && p.version.is_none_or(|v| v == version))
                .map(|p| p.count)
        };
        self.wait_until(end, |st| current(st).is_some()).await;
        let mut seen = current(&self.state)?;
        loop {
            let until = (Instant::now() + quiet).min(end);
            self.wait_until(until, |st| current(st).is_some_and(|c| c > seen))
                .await;
            match current(&self.state) {
                Some(c) if c > seen && Instant::now() < end => seen = c,
                _ => break,
            }
        }
        self.state.diagnostics.get(&uri).map(|p| p.items.clone())
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

/// One `didChange` with the document's next version (its text already updated).
fn send_change(client: &Client, doc: &mut Document, change: TextDocumentContentChangeEvent) {
    doc.version += 1;
    client.notify_typed::<DidChangeTextDocument>(DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(doc.uri.clone(), doc.version),
        content_changes: vec![change],
    });
}
