//! The JSON-RPC client over one byte stream: ids, pending requests with deadlines,
//! `$/cancelRequest`, answers to server→client requests, notifications in order, and
//! the transcript tap.
//!
//! Wire order equals call order: [`Client::request`] allocates the id and queues the
//! message *before* it returns its future, so a `didChange` sent before a request is
//! always written before it. Knows nothing of editors, documents or profiles: the
//! answers to server→client requests are the handlers it was given.
//!
//! Every request has a deadline; `$/cancelRequest` goes out when it expires or when the
//! request's future is dropped, and the guard that sends it exists from the call, before
//! any poll. Requests and notifications are typed with `ls_types`' request and
//! notification types; answers are read loosely where servers deviate. Shutdown is
//! orderly: `shutdown`, `exit`, a grace period, then the kill.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tower_lsp_server::ls_types::notification::Exit;
use tower_lsp_server::ls_types::request::Shutdown;

use super::connection::{CLOSE, Shared, read_loop, write_loop};
use super::handlers::Handlers;
use super::process::ExitInfo;
use super::transcript::Transcript;
use super::transport::{Address, Peer, Transport};
use super::{Event, LspError};

/// How long `shutdown` may take before the server is told to `exit` anyway.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a server has to exit after `exit` before its process group is killed (or,
/// attached, to close the connection before typist closes it).
pub const EXIT_GRACE: Duration = Duration::from_secs(1);

/// What a client needs to know beyond the stream itself.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// Server name for logs and error messages.
    pub name: String,
    /// Where to write the JSONL transcript of every message, if anywhere.
    pub transcript: Option<PathBuf>,
    /// The answers to server→client requests (the editor's); a method without one is
    /// answered "method not found".
    pub handlers: Handlers,
}

/// A JSON-RPC client talking to one language server.
pub struct Client {
    shared: Arc<Shared>,
    events: Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    peer: Peer,
    exit_rx: watch::Receiver<Option<ExitInfo>>,
    /// The reader task: it ends with the stream, or is stopped when the client goes.
    reader: Option<JoinHandle<()>>,
}

/// Counters a caller may report (junk on stdout, answers that came after a cancel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClientStats {
    pub late_answers: u64,
    pub bad_frames: u64,
    pub junk_lines: u64,
}

impl Client {
    /// Starts `program` in its own process group and talks to it over stdio.
    pub fn spawn(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        options: ClientOptions,
    ) -> Result<Client, LspError> {
        let t = Transport::spawn(&options.name, program, args, env, cwd)?;
        Ok(Client::new(t, options))
    }

    /// Attaches to a server that is already running at `address` (the connection must
    /// open within `timeout`). Nothing is killed at the end: `shutdown` sends
    /// `shutdown` and `exit` and closes the connection.
    pub async fn attach(
        address: &Address,
        timeout: Duration,
        options: ClientOptions,
    ) -> Result<Client, LspError> {
        let t = Transport::connect(&options.name, address, timeout).await?;
        Ok(Client::new(t, options))
    }

    /// Talks to a peer over any reader/writer pair (in-memory pipes in tests).
    pub fn connect<R, W>(reader: R, writer: W, options: ClientOptions) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Client::new(Transport::streams(reader, writer), options)
    }

    /// Framing and JSON-RPC over `transport`, whatever its streams are.
    pub fn new(transport: Transport, options: ClientOptions) -> Client {
        let Transport {
            reader,
            writer,
            peer,
            exit_rx,
        } = transport;
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let transcript = options
            .transcript
            .as_deref()
            .and_then(|p| match Transcript::create(p) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(path = %p.display(), "cannot write transcript: {e}");
                    None
                }
            });
        let shared = Arc::new(Shared::new(
            options.name,
            options.handlers,
            out_tx,
            transcript,
        ));
        // Buffered: what the writer finds queued together (a change and the request
        // after it) leaves in one write.
        tokio::spawn(write_loop(
            tokio::io::BufWriter::with_capacity(64 << 10, writer),
            out_rx,
        ));
        let attached = match &peer {
            Peer::Attached(a) => Some(a.to_string()),
            _ => None,
        };
        let task = tokio::spawn(read_loop(
            reader,
            shared.clone(),
            ev_tx,
            exit_rx.clone(),
            attached,
        ));
        Client {
            shared,
            events: Mutex::new(Some(ev_rx)),
            peer,
            exit_rx,
            reader: Some(task),
        }
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The stream of notifications and server→client requests, in arrival order.
    /// Can be taken once.
    pub fn take_events(&self) -> Option<mpsc::UnboundedReceiver<Event>> {
        self.events.lock().ok()?.take()
    }

    pub fn stats(&self) -> ClientStats {
        ClientStats {
            late_answers: self.shared.late_answers.load(Ordering::Relaxed),
            bad_frames: self.shared.bad_frames.load(Ordering::Relaxed),
            junk_lines: self.shared.junk_lines.load(Ordering::Relaxed),
        }
    }

    /// The server's exit, once it has happened.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit_rx.borrow().clone()
    }

    pub fn pid(&self) -> Option<u32> {
        match &self.peer {
            Peer::Child(p) => Some(p.pid()),
            _ => None,
        }
    }

    /// The address of the server this client is attached to, if it is.
    pub fn address(&self) -> Option<&Address> {
        match &self.peer {
            Peer::Attached(a) => Some(a),
            _ => None,
        }
    }

    /// Sends a notification (`params: None` omits the field).
    pub fn notify(&self, method: &str, params: Option<Value>) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.shared.send_value(Some(method), None, &msg);
    }

    /// Queues a request now and returns a future for its answer. The deadline starts
    /// now; on expiry or when the future is dropped unanswered, `$/cancelRequest` goes out
    /// and a late answer is discarded (and counted).
    pub fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> impl Future<Output = Result<Value, LspError>> + Send + 'static {
        let shared = self.shared.clone();
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let early = shared.register(id, method, tx).err();
        // The guard exists from the moment the request does: a future dropped before its
        // first poll still removes its entry and cancels the request.
        let guard = CancelGuard {
            shared: shared.clone(),
            id,
            armed: early.is_none(),
        };
        if early.is_none() {
            let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
            if let Some(p) = params {
                msg["params"] = p;
            }
            shared.send_value(Some(method), Some(id), &msg);
        }
        let method = method.to_string();
        let deadline = tokio::time::Instant::now() + timeout;
        async move {
            // Moved whole into the future (not just the field the arms touch), so it
            // lives exactly as long as the future does.
            let mut guard = guard;
            if let Some(e) = early {
                return Err(e);
            }
            let outcome = tokio::time::timeout_at(deadline, rx).await;
            match outcome {
                Err(_) => Err(LspError::Timeout {
                    server: shared.name.clone(),
                    method,
                    id,
                    after: timeout,
                }),
                Ok(Err(_)) => {
                    guard.armed = false;
                    Err(shared.closed_error().unwrap_or(LspError::Closed {
                        server: shared.name.clone(),
                    }))
                }
                Ok(Ok(reply)) => {
                    guard.armed = false;
                    reply.map_err(|(code, message, data)| LspError::Rpc {
                        server: shared.name.clone(),
                        method,
                        code,
                        message,
                        data,
                    })
                }
            }
        }
    }

    /// Sends a typed notification through `ls-types` (tower-lsp-server's LSP types) (unit params are omitted).
    pub fn notify_typed<N: tower_lsp_server::ls_types::notification::Notification>(
        &self,
        params: N::Params,
    ) {
        self.notify(N::METHOD, wire_params(params));
    }

    /// A typed request through `ls-types` (tower-lsp-server's LSP types); the answer is decoded strictly.
    pub fn typed<R: tower_lsp_server::ls_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> impl Future<Output = Result<R::Result, LspError>> + Send + 'static
    where
        R::Result: Send + 'static,
    {
        let fut = self.request_as::<R>(params, timeout);
        let server = self.shared.name.clone();
        async move {
            let v = fut.await?;
            serde_json::from_value(v).map_err(|e| LspError::Decode {
                server,
                method: R::METHOD.to_string(),
                message: e.to_string(),
            })
        }
    }

    /// A request with typed params whose answer is left as JSON, for answers that real
    /// servers shape loosely (capabilities given as `true` where an object is due).
    pub fn request_as<R: tower_lsp_server::ls_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> impl Future<Output = Result<Value, LspError>> + Send + 'static {
        self.request(R::METHOD, wire_params(params), timeout)
    }

    /// Orderly stop: `shutdown` under a short timer, `exit` (params omitted), a grace
    /// period, then the process group is killed. An attached server is not killed: the
    /// connection is closed after the grace period. Returns how a child ended.
    pub async fn shutdown(mut self) -> Option<ExitInfo> {
        if self.shared.closed_error().is_none() {
            let r = self.typed::<Shutdown>((), SHUTDOWN_TIMEOUT).await;
            if let Err(e) = r {
                tracing::debug!(server = %self.shared.name, "shutdown: {e}");
            }
            self.notify_typed::<Exit>(());
        }
        let Peer::Child(process) = std::mem::replace(&mut self.peer, Peer::Streams) else {
            // Our side of the stream closes after what is queued; the server's side
            // closes when it exits, or when the reader is stopped on drop.
            let _ = self.shared.out.send(CLOSE.to_vec());
            if let Some(task) = self.reader.as_mut() {
                let _ = tokio::time::timeout(EXIT_GRACE, task).await;
            }
            return None;
        };
        let mut rx = self.exit_rx.clone();
        let exited = tokio::time::timeout(EXIT_GRACE, rx.wait_for(|e| e.is_some()))
            .await
            .is_ok();
        if !exited {
            tracing::debug!(server = %self.shared.name, "server did not exit in time: killing");
        }
        // Always sweep the group: language servers leave workers behind.
        process.kill_group();
        let _ = tokio::time::timeout(EXIT_GRACE, rx.wait_for(|e| e.is_some())).await;
        self.exit_rx.borrow().clone()
    }
}

impl Drop for Client {
    /// The reader stops with the client (a socket's peer may never close its side);
    /// a request still waiting fails at once instead of waiting out its deadline.
    fn drop(&mut self) {
        if let Some(task) = self.reader.take()
            && !task.is_finished()
        {
            self.shared.close(LspError::Closed {
                server: self.shared.name.clone(),
            });
            task.abort();
        }
    }
}

/// Params as they go on the wire: unit params (`shutdown`, `exit`) are omitted.
fn wire_params<P: serde::Serialize>(params: P) -> Option<Value> {
    serde_json::to_value(params).ok().filter(|v| !v.is_null())
}

struct CancelGuard {
    shared: Arc<Shared>,
    id: i64,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Removed only while the stream is open: then a cancel is worth sending.
        if self.shared.take_pending(self.id).is_some() {
            let msg =
                json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": self.id}});
            self.shared.send_value(Some("$/cancelRequest"), None, &msg);
        }
    }
}
