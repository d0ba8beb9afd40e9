//! `typist host`: the assistant plugin host. An LSP server on stdio (tower-lsp-server),
//! or on a loopback TCP or Unix socket with a fresh service per connection (`listen`),
//! that serves `textDocument/inlineCompletion` (LSP 3.18, both trigger kinds) and
//! `textDocument/completion` from a model backend, tracking documents through
//! `didOpen`/`didChange` (incremental). Optional fault shaping (delay, empty answers,
//! crash, hang, garbage frames, log floods) for the reliability drills, off by default.
//! Knows nothing of replay or scoring.
//!
//! On stdio the host's messages and the raw fault frames share one descriptor of its own
//! on stdout (`faults::Stdout`): each message is written whole, under one lock and in one
//! `write`. (`std`'s line-buffered stdout split a header from its body, and the client
//! woke twice per answer.)
//!
//! `textDocument/inlineCompletion` is served with `custom_method` and its params read as
//! lenient JSON (tower-lsp-server has no typed handler for it).

pub mod cheat;
pub mod faults;
pub mod http;
mod index;
mod index_cache;
pub mod listen;
pub mod next_edit;
pub mod ngram;
pub mod oracle;
pub mod serve_model;
mod workspace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::dataset::Language;
use crate::editor::document::{
    Document as EditorDoc, Position as EPos, PositionEncoding, apply_change_in_place,
};
pub use faults::Faults;
use faults::Kind;
use ngram::previous_line;
use workspace::{Doc, Model};

/// Which model answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// Token n-grams from the workspace and open documents of the same language.
    Ngram,
    /// Repeats the most similar earlier line.
    PreviousLine,
    /// Answers `pass` at once, computing nothing: for measuring the driver itself.
    Fixed,
    /// An OpenAI-compatible `/v1/completions` server (FIM prompt, `--template`).
    Openai,
    /// Ollama's `/api/generate` with `suffix`.
    Ollama,
    /// llama.cpp's `/infill`.
    Llamacpp,
    /// Text Generation Inference's `/generate`.
    Tgi,
    /// For tests of the replay's honesty only: reads the workspace from disk at
    /// `initialize`, every `didOpen` and every request, remembers every version of every
    /// file, and answers with the line at the cursor from any of them (`host::cheat`).
    Cheat,
    /// For tests only: answers the plan's true block at the cursor, read from the plan
    /// given with `--truth` (a path outside the workspace; `host::oracle`); given an
    /// edits plan, the session's true next edit (`host::next_edit`).
    Oracle,
    /// Next edits only: the last identifier renamed, renamed at its next occurrence
    /// (`host::next_edit`); no inline answers.
    Rename,
}

/// What the n-gram model learns from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NgramContext {
    /// The workspace's files of the same language and the open documents.
    #[default]
    Workspace,
    /// The current document alone (what an agent's prompt carries).
    Document,
}

/// Everything `typist host` is started with.
#[derive(Debug, Clone)]
pub struct HostArgs {
    pub backend: BackendKind,
    pub ngram_context: NgramContext,
    pub http: http::HttpOptions,
    pub faults: Faults,
    /// `--backend oracle`: the plan whose true texts it answers.
    pub truth: Option<PathBuf>,
    /// Appended to every non-empty answer of a local backend (for tests of the checks:
    /// an unmatched bracket).
    pub append: Option<String>,
    /// `--backend fixed`: its answer instead of `pass` (for tests of the sandbox: code
    /// that deletes files, loops forever or reads the network).
    pub text: Option<String>,
    /// `--backend oracle`: the rank of the true token in its completion lists.
    pub list_rank: u32,
}

pub struct Host {
    client: Client,
    backend: BackendKind,
    ngram_context: NgramContext,
    http: http::HttpOptions,
    faults: Faults,
    docs: Mutex<HashMap<String, Doc>>,
    model: Mutex<Model>,
    cheat: Mutex<cheat::Memory>,
    requests: AtomicU64,
    /// Completion-list requests so far (`first_list_delay_ms`).
    lists: AtomicU64,
    /// The workspace folder named at `initialize`.
    root: Mutex<Option<PathBuf>>,
    oracle: Option<std::sync::Arc<oracle::Oracle>>,
    /// `--backend oracle` with an edits plan: the sessions' true next edits.
    edit_oracle: Option<std::sync::Arc<next_edit::EditOracle>>,
    /// Each document's edit run (`next_edit::EditRun`), by URI.
    edit_runs: Mutex<HashMap<String, next_edit::EditRun>>,
    /// Each document's text when it was opened (the HTTP models' edit history).
    opened: Mutex<HashMap<String, String>>,
    append: Option<String>,
    text: Option<String>,
    list_rank: u32,
}

fn language_of(path: Option<&Path>, language_id: &str) -> Option<Language> {
    path.and_then(Language::of_path).or(match language_id {
        "python" => Some(Language::Python),
        "typescript" | "typescriptreact" => Some(Language::TypeScript),
        "javascript" | "javascriptreact" => Some(Language::JavaScript),
        "rust" => Some(Language::Rust),
        "go" => Some(Language::Go),
        "c" => Some(Language::C),
        "cpp" => Some(Language::Cpp),
        "java" => Some(Language::Java),
        "csharp" => Some(Language::CSharp),
        "kotlin" => Some(Language::Kotlin),
        _ => None,
    })
}

/// `TYPIST_HOST_TRACE=FILE`: the host appends a JSON line to FILE for every document
/// event and inline request it handles (what its copy of the document held, what it
/// answered), for reading a run through an editor the host is started by.
fn trace(line: Value) {
    static TRACE: std::sync::OnceLock<Option<Mutex<std::fs::File>>> = std::sync::OnceLock::new();
    let f = TRACE.get_or_init(|| {
        let path = std::env::var_os("TYPIST_HOST_TRACE")?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    if let Some(Ok(mut f)) = f.as_ref().map(|m| m.lock()) {
        use std::io::Write;
        // One `write` per line: hosts of several workers append to the same file.
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}

/// The wall clock in milliseconds, for the trace's lines.
fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn traced_doc(ev: &str, uri: &str, version: i32, text: &str) {
    if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
        trace(
            json!({"ev": ev, "uri": uri, "version": version, "len": text.len(), "lines": text.split('\n').count(), "pid": std::process::id(), "ms": unix_ms()}),
        );
    }
}

impl Host {
    /// The text to insert at `pos` in `uri`, or `None`; an HTTP backend's failure is
    /// an error for the client, never an empty answer.
    async fn predict(&self, uri: &str, pos: EPos) -> Result<Option<String>, String> {
        let api = match self.backend {
            BackendKind::Openai => http::Api::OpenAi,
            BackendKind::Ollama => http::Api::Ollama,
            BackendKind::Llamacpp => http::Api::LlamaCpp,
            BackendKind::Tgi => http::Api::Tgi,
            _ => return Ok(self.predict_local(uri, pos)),
        };
        let (prefix, suffix) = {
            let docs = self.docs.lock().map_err(|_| "poisoned".to_string())?;
            let Some(doc) = docs.get(uri) else {
                return Ok(None);
            };
            let at = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
            (doc.text[..at].to_string(), doc.text[at..].to_string())
        };
        let opts = self.http.clone();
        let text =
            tokio::task::spawn_blocking(move || http::complete(api, &opts, &prefix, &suffix))
                .await
                .map_err(|e| e.to_string())??;
        Ok((!text.is_empty()).then_some(text))
    }

    fn predict_local(&self, uri: &str, pos: EPos) -> Option<String> {
        let docs = self.docs.lock().ok()?;
        let doc = docs.get(uri)?;
        let at = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
        let prefix = &doc.text[..at];
        let text = match (self.backend, self.ngram_context) {
            (BackendKind::Cheat, _) => {
                let mut m = self.cheat.lock().ok()?;
                m.read_workspace();
                m.remember(doc.path.as_deref()?, doc.text.clone());
                let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
                let line = prefix[..line_start].matches('\n').count();
                m.peek(doc.path.as_deref()?, line, &prefix[line_start..])
                    .unwrap_or_default()
            }
            (BackendKind::Oracle, _) => {
                let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
                let rel = self.rel_path(uri);
                if let Some(edits) = &self.edit_oracle {
                    // An edits plan: the rest of the line the person types next.
                    let opened = self.opened.lock().ok()?.get(uri).cloned()?;
                    edits
                        .inline(&rel, &opened, &doc.text, at)
                        .unwrap_or_default()
                } else {
                    self.oracle
                        .as_ref()?
                        .answer(&rel, pos.line, &prefix[line_start..])
                        .unwrap_or_default()
                }
            }
            (BackendKind::PreviousLine, _) => previous_line(prefix),
            (BackendKind::Rename, _) => String::new(),
            (BackendKind::Ngram, NgramContext::Document) => {
                ngram::predict_document(prefix, &doc.text[at..])
            }
            (BackendKind::Ngram, NgramContext::Workspace) => {
                let mut m = self.model.lock().ok()?;
                m.predict(uri, doc, &docs, at)
            }
            _ => self.text.clone().unwrap_or_else(|| "pass".to_string()),
        };
        (!text.is_empty()).then(|| match &self.append {
            Some(a) => format!("{text}{a}"),
            None => text,
        })
    }

    /// The cheat's completion list (`cheat::Memory::completion_items`), after reading
    /// the workspace and the document again.
    fn cheat_list(&self, uri: &str, pos: EPos) -> Vec<CompletionItem> {
        let Ok(docs) = self.docs.lock() else {
            return vec![];
        };
        let (Some(doc), Ok(mut m)) = (docs.get(uri), self.cheat.lock()) else {
            return vec![];
        };
        let Some(path) = doc.path.as_deref() else {
            return vec![];
        };
        m.read_workspace();
        m.remember(path, doc.text.clone());
        let at = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
        let line_start = doc.text[..at].rfind('\n').map_or(0, |i| i + 1);
        m.completion_items(path, pos.line as usize, &doc.text[line_start..at])
            .into_iter()
            .map(|(label, sort)| CompletionItem {
                label,
                sort_text: Some(sort),
                kind: Some(CompletionItemKind::TEXT),
                ..Default::default()
            })
            .collect()
    }

    /// The oracle's list when a token case's token is being written at `pos`
    /// (`oracle::list`); `None` elsewhere (a line case's answer is one item).
    fn oracle_list(&self, uri: &str, pos: EPos) -> Option<Vec<CompletionItem>> {
        let oracle = self.oracle.as_ref()?;
        let docs = self.docs.lock().ok()?;
        let doc = docs.get(uri)?;
        let at = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
        let line_start = doc.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let token = oracle.token(&self.rel_path(uri), pos.line, &doc.text[line_start..at])?;
        Some(
            oracle::list(token, self.list_rank)
                .into_iter()
                .map(|(label, sort)| CompletionItem {
                    label,
                    sort_text: Some(sort),
                    kind: Some(CompletionItemKind::TEXT),
                    ..Default::default()
                })
                .collect(),
        )
    }

    /// The document's path relative to the workspace root (its path when outside it).
    fn rel_path(&self, uri: &str) -> String {
        let path = crate::lsp::uri::to_path(uri).unwrap_or_default();
        let root = self.root.lock().ok().and_then(|r| r.clone());
        let rel = root
            .as_deref()
            .and_then(|r| path.strip_prefix(r).ok())
            .unwrap_or(&path);
        rel.to_string_lossy().into_owned()
    }

    async fn inline_completion(&self, params: Value) -> RpcResult<Value> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(pos) = params.get("position").and_then(EPos::from_json) else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(
                "position missing",
            ));
        };
        if let Some(err) = self.faults.leak_error(n) {
            return Err(err);
        }
        let rel = self.rel_path(uri);
        let fault = self.faults.drawn_fault(&rel, pos.line);
        if let Some(kind) = fault {
            if kind.ends_request().is_some() {
                self.faults.log_fault(&rel, pos.line, fault, None);
            }
            if kind == Kind::ErrorAnswer {
                let mut err = tower_lsp_server::jsonrpc::Error::internal_error();
                err.message = "injected fault: error answer".into();
                return Err(err);
            }
            self.faults.inject(&self.client, kind).await;
        }
        if !self.faults.shape(&self.client, n).await {
            self.faults.log_fault(&rel, pos.line, fault, Some(""));
            return Ok(json!({"items": []}));
        }
        let predicted = self.predict(uri, pos).await.map_err(|e| {
            self.faults.log_fault(&rel, pos.line, fault, None);
            let mut err = tower_lsp_server::jsonrpc::Error::internal_error();
            err.message = e.into();
            err
        })?;
        self.faults.log_fault(
            &rel,
            pos.line,
            fault,
            Some(predicted.as_deref().unwrap_or("")),
        );
        self.faults.after_answer(fault);
        if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
            let held = self.docs.lock().ok().and_then(|d| {
                d.get(uri)
                    .map(|d| (d.text.len(), d.text.split('\n').count()))
            });
            trace(
                json!({"ev": "inlineCompletion", "uri": uri, "n": n, "pos": [pos.line, pos.character], "held": held, "answer": predicted, "pid": std::process::id()}),
            );
        }
        let items = match predicted {
            Some(t) => vec![json!({
                "insertText": t,
                "range": {"start": pos.to_json(), "end": pos.to_json()},
            })],
            None => vec![],
        };
        Ok(json!({"items": items}))
    }
}

impl Host {
    /// `textDocument/copilotInlineEdit`: the next edit at `position` (`host::next_edit`),
    /// `{edits: []}` from a backend that proposes none.
    async fn inline_edit(&self, params: Value) -> RpcResult<Value> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let version = params
            .pointer("/textDocument/version")
            .cloned()
            .unwrap_or(Value::Null);
        let Some(pos) = params.get("position").and_then(EPos::from_json) else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(
                "position missing",
            ));
        };
        if !self.faults.shape(&self.client, n).await {
            return Ok(json!({"edits": []}));
        }
        let rel = self.rel_path(&uri);
        let api = match self.backend {
            BackendKind::Openai => Some(http::Api::OpenAi),
            BackendKind::Ollama => Some(http::Api::Ollama),
            BackendKind::Llamacpp => Some(http::Api::LlamaCpp),
            BackendKind::Tgi => Some(http::Api::Tgi),
            _ => None,
        };
        if let Some(api) = api {
            return self.inline_edit_http(api, &uri, version, pos, &rel).await;
        }
        let edit = {
            let docs = self
                .docs
                .lock()
                .map_err(|_| tower_lsp_server::jsonrpc::Error::internal_error())?;
            let Some(doc) = docs.get(&uri) else {
                return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                    "{uri} is not open"
                )));
            };
            let cursor = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
            let edit = match self.backend {
                BackendKind::Oracle => {
                    let opened = self.opened.lock().ok().and_then(|o| o.get(&uri).cloned());
                    self.edit_oracle
                        .as_ref()
                        .and_then(|o| o.answer(&rel, opened.as_deref()?, &doc.text))
                }
                BackendKind::Rename => self
                    .edit_runs
                    .lock()
                    .ok()
                    .and_then(|r| r.get(&uri).cloned())
                    .and_then(|r| r.proposal(&doc.text, cursor)),
                _ => None,
            };
            edit.map(|(a, b, text)| {
                let at = |o: usize| EditorDoc::position_of(&doc.text, o, PositionEncoding::Utf16);
                (at(a), at(b), text)
            })
        };
        if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
            trace(
                json!({"ev": "copilotInlineEdit", "params": params, "answer": edit.as_ref().map(|e| &e.2), "pid": std::process::id()}),
            );
        }
        let edits: Vec<Value> = edit
            .into_iter()
            .map(|(start, end, text)| {
                json!({
                    "text": text,
                    "textDocument": {"uri": uri, "version": version},
                    "range": {"start": start.to_json(), "end": end.to_json()},
                    "command": {"title": "Accept next edit", "command": "typist.acceptInlineEdit"},
                })
            })
            .collect();
        Ok(json!({"edits": edits}))
    }

    /// A next edit from an HTTP model: the Zeta-style prompt (`next_edit::zeta_prompt`)
    /// completed, its region applied, the change as one edit. A failure of the model is
    /// an error for the client, never an empty answer.
    async fn inline_edit_http(
        &self,
        api: http::Api,
        uri: &str,
        version: Value,
        pos: EPos,
        rel: &str,
    ) -> RpcResult<Value> {
        let internal = |m: String| {
            let mut err = tower_lsp_server::jsonrpc::Error::internal_error();
            err.message = m.into();
            err
        };
        let (text, opened, cursor) = {
            let docs = self.docs.lock().map_err(|_| internal("poisoned".into()))?;
            let Some(doc) = docs.get(uri) else {
                return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                    "{uri} is not open"
                )));
            };
            let opened = self
                .opened
                .lock()
                .ok()
                .and_then(|o| o.get(uri).cloned())
                .unwrap_or_else(|| doc.text.clone());
            let cursor = EditorDoc::offset_of(&doc.text, pos, PositionEncoding::Utf16);
            (doc.text.clone(), opened, cursor)
        };
        let prompt = next_edit::zeta_prompt(rel, &opened, &text, cursor);
        let opts = self.http.clone();
        let p = prompt.text.clone();
        let region_chars = text[prompt.region.0..prompt.region.1].chars().count() as u32;
        // Room for the region rewritten and a little more, in tokens (about 3 characters
        // a token for code), at least the profile's --max-tokens.
        let max_tokens = (region_chars / 3 + 32).max(opts.max_tokens);
        let (answer, finished) = tokio::task::spawn_blocking(move || {
            http::generate(api, &opts, &p, max_tokens, &[next_edit::REGION_END])
        })
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(internal)?;
        let edit = next_edit::apply_region(&text, &prompt, &answer, finished)
            .filter(|new| *new != text)
            .map(|new| {
                let (a, b, t) = next_edit::one_edit(&text, &new);
                let at = |o: usize| EditorDoc::position_of(&text, o, PositionEncoding::Utf16);
                (at(a), at(b), t)
            });
        if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
            trace(
                json!({"ev": "copilotInlineEdit", "uri": uri, "answer": answer, "finished": finished, "pid": std::process::id()}),
            );
        }
        let edits: Vec<Value> = edit
            .into_iter()
            .map(|(start, end, t)| {
                json!({
                    "text": t,
                    "textDocument": {"uri": uri, "version": version},
                    "range": {"start": start.to_json(), "end": end.to_json()},
                    "command": {"title": "Accept next edit", "command": "typist.acceptInlineEdit"},
                })
            })
            .collect();
        Ok(json!({"edits": edits}))
    }

    /// `textDocument/didFocus` (Copilot's): nothing to do but note it.
    async fn did_focus(&self, params: Value) {
        if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
            trace(json!({"ev": "didFocus", "params": params, "pid": std::process::id()}));
        }
    }

    /// `textDocument/didShowInlineEdit` (Copilot's): a next edit was shown.
    async fn did_show_inline_edit(&self, params: Value) {
        if std::env::var_os("TYPIST_HOST_TRACE").is_some() {
            trace(json!({"ev": "didShowInlineEdit", "params": params, "pid": std::process::id()}));
        }
    }
}

impl LanguageServer for Host {
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| crate::lsp::uri::to_path(f.uri.as_str()));
        #[allow(deprecated)]
        let root = root.or_else(|| {
            params
                .root_uri
                .as_ref()
                .and_then(|u| crate::lsp::uri::to_path(u.as_str()))
        });
        if let Some(secret) = self.faults.leaked() {
            eprintln!("careless server: starting with key {secret}");
        }
        if let (Ok(mut r), Some(root)) = (self.root.lock(), &root) {
            *r = Some(root.clone());
        }
        match (root, self.backend, self.ngram_context) {
            (Some(root), BackendKind::Ngram, NgramContext::Workspace) => {
                if let Ok(mut m) = self.model.lock() {
                    m.crawl(&root);
                }
            }
            (Some(root), BackendKind::Cheat, _) => {
                if let Ok(mut m) = self.cheat.lock() {
                    m.set_root(root);
                    m.read_workspace();
                }
            }
            _ => {}
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                completion_provider: Some(CompletionOptions::default()),
                inline_completion_provider: Some(OneOf::Left(true)),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: format!(
                    "typist-host ({})",
                    serde_json::to_value(self.backend)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> RpcResult<()> {
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        let uri = p.text_document.uri.as_str().to_string();
        let path = crate::lsp::uri::to_path(&uri);
        if let Some(path) = &path
            && let Ok(mut m) = self.model.lock()
        {
            m.shadow(path, true);
        }
        let language = language_of(path.as_deref(), &p.text_document.language_id);
        if self.backend == BackendKind::Cheat
            && let (Ok(mut m), Some(path)) = (self.cheat.lock(), &path)
        {
            m.read_workspace();
            m.remember(path, p.text_document.text.clone());
        }
        traced_doc(
            "didOpen",
            &uri,
            p.text_document.version,
            &p.text_document.text,
        );
        if let Ok(mut o) = self.opened.lock() {
            o.insert(uri.clone(), p.text_document.text.clone());
        }
        if let Ok(mut r) = self.edit_runs.lock() {
            r.remove(&uri);
        }
        if let Ok(mut docs) = self.docs.lock() {
            docs.insert(
                uri,
                Doc {
                    text: p.text_document.text,
                    language,
                    path,
                },
            );
        }
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        let uri = p.text_document.uri.as_str();
        let Ok(mut docs) = self.docs.lock() else {
            return;
        };
        let Some(doc) = docs.get_mut(uri) else { return };
        // Only the rename baseline reads the edit runs: other backends copy nothing per
        // change.
        let mut runs = (self.backend == BackendKind::Rename)
            .then(|| self.edit_runs.lock().ok())
            .flatten();
        for change in &p.content_changes {
            let range = change.range.map(|r| {
                let at = |p: tower_lsp_server::ls_types::Position| {
                    EditorDoc::offset_of(
                        &doc.text,
                        EPos {
                            line: p.line,
                            character: p.character,
                        },
                        PositionEncoding::Utf16,
                    )
                };
                (at(r.start), at(r.end))
            });
            let old = runs.is_some().then(|| doc.text.clone());
            apply_change_in_place(&mut doc.text, change, PositionEncoding::Utf16);
            if let Some(runs) = runs.as_mut() {
                let run = runs.remove(uri);
                let next = match (range, old) {
                    (Some((a, b)), Some(old)) if a <= b => {
                        next_edit::EditRun::follow(run, &old, a, b, &change.text, &doc.text)
                    }
                    // A whole-text change (Neovim's client sends them): followed as the
                    // one replacement between the two texts.
                    (None, Some(old)) => {
                        let (a, b, ins) = next_edit::one_edit(&old, &doc.text);
                        next_edit::EditRun::follow(run, &old, a, b, &ins, &doc.text)
                    }
                    _ => None,
                };
                if let Some(next) = next {
                    runs.insert(uri.to_string(), next);
                }
            }
        }
        drop(runs);
        traced_doc("didChange", uri, p.text_document.version, &doc.text);
        if self.backend == BackendKind::Cheat
            && let (Ok(mut m), Some(path)) = (self.cheat.lock(), &doc.path)
        {
            m.remember(path, doc.text.clone());
        }
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        let removed = self
            .docs
            .lock()
            .ok()
            .and_then(|mut d| d.remove(p.text_document.uri.as_str()));
        if let Some(Doc {
            path: Some(path), ..
        }) = removed
            && let Ok(mut m) = self.model.lock()
        {
            m.shadow(&path, false);
        }
    }

    async fn completion(&self, p: CompletionParams) -> RpcResult<Option<CompletionResponse>> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        if self.lists.fetch_add(1, Ordering::SeqCst) == 0 && self.faults.first_list_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.faults.first_list_delay_ms)).await;
        }
        let list = |items: Vec<CompletionItem>| {
            Ok(Some(if self.faults.incomplete_lists {
                CompletionResponse::List(CompletionList {
                    is_incomplete: true,
                    items,
                })
            } else {
                CompletionResponse::Array(items)
            }))
        };
        if !self.faults.shape(&self.client, n).await {
            return list(vec![]);
        }
        let tdp = &p.text_document_position;
        let pos = EPos {
            line: tdp.position.line,
            character: tdp.position.character,
        };
        if self.backend == BackendKind::Cheat {
            return list(self.cheat_list(tdp.text_document.uri.as_str(), pos));
        }
        if let Some(items) = self.oracle_list(tdp.text_document.uri.as_str(), pos) {
            return list(items);
        }
        let predicted = self
            .predict(tdp.text_document.uri.as_str(), pos)
            .await
            .map_err(|e| {
                let mut err = tower_lsp_server::jsonrpc::Error::internal_error();
                err.message = e.into();
                err
            })?;
        let Some(text) = predicted else {
            return list(vec![]);
        };
        let item = CompletionItem {
            label: text.clone(),
            insert_text: Some(text),
            kind: Some(CompletionItemKind::TEXT),
            ..Default::default()
        };
        list(vec![item])
    }
}

/// Serves the host on stdin/stdout until the client says `exit`.
pub async fn serve_stdio(args: HostArgs) {
    let linger = args.faults.linger_secs;
    // Messages are written whole, at once (`faults::Stdout`), not through tokio's
    // stdout over `std`'s line-buffered one: that wrote each message in two (its header
    // ends in a newline, its body does not), and the client woke up twice per answer.
    serve(args, tokio::io::stdin(), faults::Stdout).await;
    if linger > 0 {
        tracing::warn!("fault: lingering {linger} s after the client left");
        std::thread::sleep(Duration::from_secs(linger));
    }
}

/// A fresh host (its own documents, model and request count) serving one client over
/// `read`/`write` until the client says `exit` or goes.
pub async fn serve<R, W>(args: HostArgs, read: R, write: W)
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite,
{
    let HostArgs {
        backend,
        ngram_context,
        http,
        faults,
        truth,
        append,
        text,
        list_rank,
    } = args;
    let oracle = match truth.as_deref().map(oracle::Oracle::read) {
        Some(Ok(o)) => Some(std::sync::Arc::new(o)),
        Some(Err(e)) => {
            tracing::error!("{e:#}");
            None
        }
        None => None,
    };
    let edit_oracle = match truth.as_deref().map(next_edit::EditOracle::read) {
        Some(Ok(o)) => o.map(std::sync::Arc::new),
        Some(Err(e)) => {
            tracing::error!("{e:#}");
            None
        }
        None => None,
    };
    let (service, socket) = LspService::build(|client| Host {
        client,
        backend,
        ngram_context,
        http,
        faults,
        docs: Mutex::new(HashMap::new()),
        model: Mutex::new(Model::default()),
        cheat: Mutex::new(cheat::Memory::default()),
        requests: AtomicU64::new(0),
        lists: AtomicU64::new(0),
        root: Mutex::new(None),
        oracle: oracle.clone(),
        edit_oracle: edit_oracle.clone(),
        edit_runs: Mutex::new(HashMap::new()),
        opened: Mutex::new(HashMap::new()),
        append: append.clone(),
        text: text.clone(),
        list_rank,
    })
    .custom_method("textDocument/inlineCompletion", Host::inline_completion)
    .custom_method("textDocument/copilotInlineEdit", Host::inline_edit)
    .custom_method("textDocument/didFocus", Host::did_focus)
    .custom_method("textDocument/didShowInlineEdit", Host::did_show_inline_edit)
    .finish();
    Server::new(read, write, socket).serve(service).await;
}
