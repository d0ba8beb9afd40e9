//! What the server has told the editor through notifications and requests: work in
//! progress, rust-analyzer's quiescence, and its file-watching registrations.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::lsp::Event;

#[derive(Debug, Default)]
pub struct ServerState {
    pub active_progress: HashSet<String>,
    pub progress_seen: bool,
    pub quiescent: Option<bool>,
    /// Ids of the server's `workspace/didChangeWatchedFiles` registrations.
    pub watches: HashSet<String>,
    /// The last `textDocument/publishDiagnostics` of each document, by URI.
    pub diagnostics: HashMap<String, Published>,
}

/// What a server last published for one document.
#[derive(Debug, Default, Clone)]
pub struct Published {
    /// How many times it published for the document.
    pub count: u64,
    /// The document version it named, if any.
    pub version: Option<i64>,
    pub items: Vec<Value>,
}

impl ServerState {
    /// Applies one event from `server` (named for the log).
    pub fn absorb(&mut self, ev: Event, server: &str) {
        let (method, params) = match ev {
            Event::Notification { method, params } => (method, params),
            Event::Request { method, params } => {
                self.absorb_request(&method, &params);
                return;
            }
        };
        match method.as_str() {
            "$/progress" => self.progress(&params),
            "textDocument/publishDiagnostics" => {
                let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
                let p = self.diagnostics.entry(uri.to_string()).or_default();
                p.count += 1;
                p.version = params.get("version").and_then(Value::as_i64);
                p.items = params
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
            }
            "experimental/serverStatus" => {
                self.quiescent = params.get("quiescent").and_then(Value::as_bool);
            }
            "window/logMessage" | "window/showMessage" => {
                let msg = params.get("message").and_then(Value::as_str).unwrap_or("");
                tracing::trace!(server = %server, "{msg}");
            }
            _ => {}
        }
    }

    fn progress(&mut self, params: &Value) {
        let token = match params.get("token") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => other.to_string(),
            None => return,
        };
        match params.pointer("/value/kind").and_then(Value::as_str) {
            Some("begin") => {
                self.progress_seen = true;
                self.active_progress.insert(token);
            }
            Some("end") => {
                self.active_progress.remove(&token);
            }
            _ => {}
        }
    }

    /// Registrations the editor must honour: file watching. (Read from JSON: servers
    /// spell the unregistration list both ways.)
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
                self.watches.insert(id);
            } else {
                self.watches.remove(&id);
            }
        }
    }
}
