//! The JSON-RPC client over one byte stream: ids, pending requests with deadlines,
//! `$/cancelRequest`, answers to server→client requests, notifications in order, and
//! the transcript tap.
//!
//! Wire order equals call order: [`Client::request`] allocates the id and queues the
//! message *before* it returns its future, so a `didChange` sent before a request is
//! always written before it. Knows nothing of editors, documents or profiles: the
//! answers to server→client requests are the handlers it was given.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use super::framing::{FrameReader, encode, truncate};
use super::handlers::{Handlers, RpcError};
use super::process::{ExitInfo, ServerProcess};
use super::transcript::Transcript;
use super::{Event, LspError};

/// How long `shutdown` may take before the server is told to `exit` anyway.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a server has to exit after `exit` before its process group is killed.
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

type Reply = Result<Value, (i64, String, Option<Value>)>;

/// The requests awaiting an answer, or why the stream ended: one state under one lock,
/// so a request either is registered before the reader closes (and fails at once when
/// it does) or sees the closed state; it can never wait out its timeout on a dead
/// stream.
enum Pending {
    Open(HashMap<i64, (String, oneshot::Sender<Reply>)>),
    Closed(LspError),
}

struct Shared {
    name: String,
    handlers: Handlers,
    next_id: AtomicI64,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Mutex<Pending>,
    transcript: Option<Transcript>,
    late_answers: AtomicU64,
    bad_frames: AtomicU64,
    junk_lines: AtomicU64,
}

impl Shared {
    fn send_value(&self, method: Option<&str>, id: Option<i64>, msg: &Value) {
        if let Some(t) = &self.transcript {
            t.record("send", method, id.map(Value::from), msg);
        }
        let body = serde_json::to_vec(msg).unwrap_or_default();
        // A closed channel means the writer is gone; the reader reports why.
        let _ = self.out.send(encode(&body));
    }

    fn closed_error(&self) -> Option<LspError> {
        match &*self.pending.lock().ok()? {
            Pending::Closed(e) => Some(e.clone()),
            Pending::Open(_) => None,
        }
    }

    /// Registers a request, unless the stream has ended (then: why).
    fn register(&self, id: i64, method: &str, tx: oneshot::Sender<Reply>) -> Result<(), LspError> {
        let mut p = self.pending.lock().map_err(|_| LspError::Closed {
            server: self.name.clone(),
        })?;
        match &mut *p {
            Pending::Open(map) => {
                map.insert(id, (method.to_string(), tx));
                Ok(())
            }
            Pending::Closed(e) => Err(e.clone()),
        }
    }

    fn take_pending(&self, id: i64) -> Option<(String, oneshot::Sender<Reply>)> {
        match &mut *self.pending.lock().ok()? {
            Pending::Open(map) => map.remove(&id),
            Pending::Closed(_) => None,
        }
    }

    /// The stream is over: every pending request fails with `why`, and so does every
    /// later one.
    fn close(&self, why: LspError) {
        if let Ok(mut p) = self.pending.lock() {
            // Dropping the senders fails the waiting requests with the closed error.
            *p = Pending::Closed(why);
        }
    }
}

/// A JSON-RPC client talking to one language server.
pub struct Client {
    shared: Arc<Shared>,
    events: Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    process: Option<ServerProcess>,
    exit_rx: watch::Receiver<Option<ExitInfo>>,
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
        let (process, stdin, stdout, exit_rx) =
            ServerProcess::spawn(&options.name, program, args, env, cwd)?;
        let mut client =
            Client::connect_with(tokio::io::BufReader::new(stdout), stdin, options, exit_rx);
        client.process = Some(process);
        Ok(client)
    }

    /// Talks to a peer over any reader/writer pair (in-memory pipes in tests).
    pub fn connect<R, W>(reader: R, writer: W, options: ClientOptions) -> Client
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        // No process: the exit channel is closed from the start.
        let (_exit_tx, exit_rx) = watch::channel(None);
        Client::connect_with(reader, writer, options, exit_rx)
    }

    fn connect_with<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
        exit_rx: watch::Receiver<Option<ExitInfo>>,
    ) -> Client
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
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
        let shared = Arc::new(Shared {
            name: options.name,
            handlers: options.handlers,
            next_id: AtomicI64::new(1),
            out: out_tx,
            pending: Mutex::new(Pending::Open(HashMap::new())),
            transcript,
            late_answers: AtomicU64::new(0),
            bad_frames: AtomicU64::new(0),
            junk_lines: AtomicU64::new(0),
        });
        tokio::spawn(write_loop(writer, out_rx));
        let client = Client {
            shared: shared.clone(),
            events: Mutex::new(Some(ev_rx)),
            process: None,
            exit_rx,
        };
        let exit_for_reader = client.exit_rx.clone();
        tokio::spawn(read_loop(reader, shared, ev_tx, exit_for_reader));
        client
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
        self.process.as_ref().map(|p| p.pid())
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

    /// A typed request through `lsp-types`; the answer is decoded strictly.
    pub fn typed<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> impl Future<Output = Result<R::Result, LspError>> + Send + 'static
    where
        R::Result: Send + 'static,
    {
        let params = serde_json::to_value(params).ok();
        let fut = self.request(R::METHOD, params, timeout);
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

    /// Orderly stop: `shutdown` under a short timer, `exit` (params omitted), a grace
    /// period, then the process group is killed. Returns how the server ended.
    pub async fn shutdown(mut self) -> Option<ExitInfo> {
        if self.shared.closed_error().is_none() {
            let r = self.request("shutdown", None, SHUTDOWN_TIMEOUT).await;
            if let Err(e) = r {
                tracing::debug!(server = %self.shared.name, "shutdown: {e}");
            }
            self.notify("exit", None);
        }
        let process = self.process.take()?;
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

async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(frame) = rx.recv().await {
        if let Err(e) = w.write_all(&frame).await {
            tracing::debug!("server stdin closed: {e}");
            return;
        }
        // Batch what is already queued before one flush.
        while let Ok(more) = rx.try_recv() {
            if w.write_all(&more).await.is_err() {
                return;
            }
        }
        if w.flush().await.is_err() {
            return;
        }
    }
}

async fn read_loop<R: AsyncBufRead + Unpin>(
    reader: R,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<Event>,
    mut exit_rx: watch::Receiver<Option<ExitInfo>>,
) {
    let mut frames = FrameReader::new(reader);
    let why = loop {
        let frame = match frames.read_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(super::framing::FramingError::UnexpectedEof) => {
                break Some("stream ended in the middle of a frame".to_string());
            }
            Err(super::framing::FramingError::Io(e)) => break Some(e.to_string()),
            Err(e) => {
                shared.bad_frames.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(server = %shared.name, "protocol error: {e}");
                continue;
            }
        };
        shared
            .junk_lines
            .store(frames.junk_lines, Ordering::Relaxed);
        let msg: Value = match serde_json::from_slice(&frame) {
            Ok(v) => v,
            Err(e) => {
                shared.bad_frames.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(server = %shared.name, body = %truncate(&String::from_utf8_lossy(&frame), 200), "unparsable message: {e}");
                continue;
            }
        };
        dispatch(&shared, &events, msg);
    };
    shared
        .junk_lines
        .store(frames.junk_lines, Ordering::Relaxed);
    // The stream is over: wait briefly for the exit status so the error can carry it.
    let _ = tokio::time::timeout(Duration::from_secs(1), exit_rx.wait_for(|e| e.is_some())).await;
    let exit = exit_rx.borrow().clone();
    let err = LspError::ServerExited {
        server: shared.name.clone(),
        status: exit
            .as_ref()
            .map(|e| e.status.clone())
            .unwrap_or_else(|| why.clone().unwrap_or_else(|| "stream closed".into())),
        stderr: exit.map(|e| e.stderr_tail).unwrap_or_default(),
    };
    tracing::debug!(server = %shared.name, "{err}");
    shared.close(err);
}

fn dispatch(shared: &Shared, events: &mpsc::UnboundedSender<Event>, msg: Value) {
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = msg.get("id").cloned().filter(|v| !v.is_null());
    if let Some(t) = &shared.transcript {
        t.record("recv", method.as_deref(), id.clone(), &msg);
    }
    match (method, id) {
        (None, Some(id)) => {
            let Some(n) = id
                .as_i64()
                .or_else(|| id.as_str().and_then(|s| s.parse().ok()))
            else {
                shared.late_answers.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let entry = shared.take_pending(n);
            let Some((method, tx)) = entry else {
                shared.late_answers.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(server = %shared.name, id = n, "late answer discarded");
                return;
            };
            let reply = match msg.get("error") {
                Some(e) if !e.is_null() => Err((
                    e.get("code").and_then(Value::as_i64).unwrap_or(0),
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    e.get("data").cloned(),
                )),
                _ => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            tracing::trace!(server = %shared.name, id = n, %method, "answer");
            let _ = tx.send(reply);
        }
        (Some(method), Some(id)) => {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let mut out = json!({"jsonrpc": "2.0", "id": id});
            match shared.handlers.answer_to(&method, params.clone()) {
                Ok(v) => out["result"] = v,
                Err(RpcError { code, message }) => {
                    out["error"] = json!({"code": code, "message": message})
                }
            }
            shared.send_value(None, None, &out);
            let _ = events.send(Event::Request { method, params });
        }
        (Some(method), None) => {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let _ = events.send(Event::Notification { method, params });
        }
        (None, None) => {
            shared.bad_frames.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(server = %shared.name, "message with neither method nor id");
        }
    }
}
