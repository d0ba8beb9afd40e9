//! The connection under a [`Client`](super::Client): the state its tasks share (ids,
//! pending requests, counters, the transcript), the writer task that batches frames
//! onto the stream, and the reader task that routes each message: answers to their
//! callers, server→client requests to the handlers (then to the event stream), and
//! notifications to the event stream, in arrival order.
//!
//! Ids, pending requests and the closed state are kept under one lock. An answer that
//! arrives after its request expired or was dropped is discarded and counted
//! (`ClientStats::late_answers`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use super::framing::{FrameReader, FramingError, encode, truncate};
use super::handlers::{Handlers, RpcError};
use super::process::ExitInfo;
use super::transcript::Transcript;
use super::{Event, LspError};

/// How long a closed connection waits for the server's exit status, so that the error
/// can carry it.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

pub(super) type Reply = Result<Value, (i64, String, Option<Value>)>;

/// The requests awaiting an answer, or why the stream ended: one state under one lock,
/// so a request either is registered before the reader closes (and fails at once when
/// it does) or sees the closed state; it can never wait out its timeout on a dead
/// stream.
pub(super) enum Pending {
    Open(HashMap<i64, (String, oneshot::Sender<Reply>)>),
    Closed(LspError),
}

pub(super) struct Shared {
    pub(super) name: String,
    pub(super) handlers: Handlers,
    pub(super) next_id: AtomicI64,
    pub(super) out: mpsc::UnboundedSender<Vec<u8>>,
    pub(super) pending: Mutex<Pending>,
    pub(super) transcript: Option<Transcript>,
    pub(super) late_answers: AtomicU64,
    pub(super) bad_frames: AtomicU64,
    pub(super) junk_lines: AtomicU64,
}

impl Shared {
    pub(super) fn new(
        name: String,
        handlers: Handlers,
        out: mpsc::UnboundedSender<Vec<u8>>,
        transcript: Option<Transcript>,
    ) -> Shared {
        Shared {
            name,
            handlers,
            next_id: AtomicI64::new(1),
            out,
            pending: Mutex::new(Pending::Open(HashMap::new())),
            transcript,
            late_answers: AtomicU64::new(0),
            bad_frames: AtomicU64::new(0),
            junk_lines: AtomicU64::new(0),
        }
    }

    pub(super) fn send_value(&self, method: Option<&str>, id: Option<i64>, msg: &Value) {
        if let Some(t) = &self.transcript {
            t.record("send", method, id.map(Value::from), msg);
        }
        let body = serde_json::to_vec(msg).unwrap_or_default();
        // A closed channel means the writer is gone; the reader reports why.
        let _ = self.out.send(encode(&body));
    }

    pub(super) fn closed_error(&self) -> Option<LspError> {
        match &*self.pending.lock().ok()? {
            Pending::Closed(e) => Some(e.clone()),
            Pending::Open(_) => None,
        }
    }

    /// Registers a request, unless the stream has ended (then: why).
    pub(super) fn register(
        &self,
        id: i64,
        method: &str,
        tx: oneshot::Sender<Reply>,
    ) -> Result<(), LspError> {
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

    pub(super) fn take_pending(&self, id: i64) -> Option<(String, oneshot::Sender<Reply>)> {
        match &mut *self.pending.lock().ok()? {
            Pending::Open(map) => map.remove(&id),
            Pending::Closed(_) => None,
        }
    }

    /// The stream is over: every pending request fails with `why`, and so does every
    /// later one.
    pub(super) fn close(&self, why: LspError) {
        if let Ok(mut p) = self.pending.lock() {
            // Dropping the senders fails the waiting requests with the closed error.
            *p = Pending::Closed(why);
        }
    }
}

/// The frame that is no frame: the writer closes our side of the stream (a socket's
/// write half) after what was queued before it.
pub(super) const CLOSE: &[u8] = b"";

pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(frame) = rx.recv().await {
        if frame == CLOSE {
            let _ = w.shutdown().await;
            return;
        }
        if let Err(e) = w.write_all(&frame).await {
            tracing::debug!("server's input closed: {e}");
            return;
        }
        // Batch what is already queued before one flush.
        while let Ok(more) = rx.try_recv() {
            if more == CLOSE {
                let _ = w.flush().await;
                let _ = w.shutdown().await;
                return;
            }
            if w.write_all(&more).await.is_err() {
                return;
            }
        }
        if w.flush().await.is_err() {
            return;
        }
    }
}

pub(super) async fn read_loop<R: AsyncBufRead + Unpin>(
    reader: R,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<Event>,
    mut exit_rx: watch::Receiver<Option<ExitInfo>>,
    attached: Option<String>,
) {
    let mut frames = FrameReader::new(reader);
    let why = loop {
        let frame = match frames.read_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(FramingError::UnexpectedEof) => {
                break Some("stream ended in the middle of a frame".to_string());
            }
            Err(FramingError::Io(e)) => break Some(e.to_string()),
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
    let err = match attached {
        // An attached server's stream ending is its crash, as far as typist can tell.
        Some(address) => LspError::Disconnected {
            server: shared.name.clone(),
            address,
            why: why.unwrap_or_else(|| "closed by the server".into()),
        },
        None => {
            // Wait briefly for the exit status so the error can carry it.
            let _ = tokio::time::timeout(EXIT_STATUS_WAIT, exit_rx.wait_for(|e| e.is_some())).await;
            let exit = exit_rx.borrow().clone();
            LspError::ServerExited {
                server: shared.name.clone(),
                status: exit
                    .as_ref()
                    .map(|e| e.status.clone())
                    .unwrap_or_else(|| why.clone().unwrap_or_else(|| "stream closed".into())),
                stderr: exit.map(|e| e.stderr_tail).unwrap_or_default(),
            }
        }
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
        (None, Some(id)) => deliver(shared, &id, &msg),
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

/// An answer to one of our requests: to its waiting caller, or counted as late.
fn deliver(shared: &Shared, id: &Value, msg: &Value) {
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
