//! The Chrome DevTools protocol over a pipe (`--remote-debugging-pipe`): the browser
//! reads commands on its descriptor 3 and writes answers and events on 4, each message
//! one JSON object ended by a NUL byte. No port is opened, so no other local user can
//! drive the browser. Commands `{id, method, params, sessionId?}` get answers routed by
//! id, each with a deadline; events are handed on in arrival order. Blocking threads
//! read and write the pipe (two per browser); when the browser closes its end, every
//! pending call fails.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How a command failed.
#[derive(Debug, Clone)]
pub enum CdpError {
    /// The browser answered with an error: its message.
    Answer(String),
    /// No answer within the deadline.
    Timeout,
    /// The pipe is closed: the browser exited.
    Closed,
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpError::Answer(m) => write!(f, "{m}"),
            CdpError::Timeout => write!(f, "no answer in time"),
            CdpError::Closed => write!(f, "the browser closed its DevTools pipe"),
        }
    }
}

/// An event: its method, its params and the session it came from.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>>;

pub struct Cdp {
    next_id: AtomicU64,
    pending: Pending,
    out: std::sync::mpsc::Sender<Vec<u8>>,
}

impl Cdp {
    /// Starts the reader and writer threads on the browser's two pipe ends; events go to
    /// the returned receiver.
    pub fn start(
        to_browser: std::io::PipeWriter,
        from_browser: std::io::PipeReader,
    ) -> (Cdp, mpsc::UnboundedReceiver<Event>) {
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (out, out_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut w = to_browser;
            while let Ok(frame) = out_rx.recv() {
                if w.write_all(&frame).is_err() {
                    return;
                }
            }
        });
        let p = pending.clone();
        std::thread::spawn(move || read_loop(from_browser, p, ev_tx));
        (
            Cdp {
                next_id: AtomicU64::new(1),
                pending,
                out,
            },
            ev_rx,
        )
    }

    /// Sends `method` (to `session`, a page, or to the browser) and waits for the
    /// answer until `within`.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        within: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.pending.lock().map_err(|_| CdpError::Closed)?;
            let Some(map) = p.as_mut() else {
                return Err(CdpError::Closed);
            };
            map.insert(id, tx);
        }
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_string());
        }
        let mut frame = serde_json::to_vec(&msg).unwrap_or_default();
        frame.push(0);
        if self.out.send(frame).is_err() {
            return Err(CdpError::Closed);
        }
        let answer = tokio::time::timeout(within, rx).await;
        if let Ok(mut p) = self.pending.lock()
            && let Some(map) = p.as_mut()
        {
            map.remove(&id);
        }
        match answer {
            Err(_) => Err(CdpError::Timeout),
            Ok(Err(_)) => Err(CdpError::Closed),
            Ok(Ok(Err(message))) => Err(CdpError::Answer(message)),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }
}

fn read_loop(r: std::io::PipeReader, pending: Pending, events: mpsc::UnboundedSender<Event>) {
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match r.read_until(0, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.last() == Some(&0) {
            buf.pop();
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&buf) else {
            continue;
        };
        if let Some(id) = msg.get("id").and_then(Value::as_u64) {
            let answer = match msg.get("error") {
                Some(e) => Err(e
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| e.to_string(), str::to_string)),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            let tx = pending
                .lock()
                .ok()
                .and_then(|mut p| p.as_mut().and_then(|m| m.remove(&id)));
            if let Some(tx) = tx {
                let _ = tx.send(answer);
            }
        } else if let Some(method) = msg.get("method").and_then(Value::as_str) {
            let _ = events.send(Event {
                method: method.to_string(),
                params: msg.get("params").cloned().unwrap_or(Value::Null),
                session: msg
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        }
    }
    // The browser is gone: every pending call fails, and no new one can be made.
    if let Ok(mut p) = pending.lock() {
        p.take();
    }
}
