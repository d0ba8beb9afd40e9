//! A small msgpack-RPC client over a child's stdio (Neovim's `--embed` channel), on
//! `rmpv` values: requests `[0, id, method, params]` with a deadline each, responses
//! `[1, id, error, result]` routed to their caller, notifications `[2, method, params]`
//! handed on in arrival order. Neovim's requests to typist (none are expected) get an
//! error answer. When the stream ends every pending call fails with the exit.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmpv::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// A notification from Neovim: its method and parameters.
pub type Notification = (String, Vec<Value>);

/// How a call failed.
#[derive(Debug, Clone)]
pub enum CallError {
    /// Neovim answered with an error (a Lua error, a bad argument): its message.
    Answer(String),
    /// No answer within the deadline.
    Timeout,
    /// The channel is closed: Neovim exited or closed its stdout.
    Closed,
}

type Pending = Arc<Mutex<Option<HashMap<u32, oneshot::Sender<Result<Value, String>>>>>>;

pub struct Rpc {
    next_id: AtomicU32,
    pending: Pending,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

impl Rpc {
    /// Starts the reader and writer tasks; notifications go to the returned receiver.
    pub fn start<R, W>(reader: R, writer: W) -> (Rpc, mpsc::UnboundedReceiver<Notification>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (out, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (note_tx, note_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(writer, out_rx));
        tokio::spawn(read_loop(reader, pending.clone(), note_tx, out.clone()));
        (
            Rpc {
                next_id: AtomicU32::new(1),
                pending,
                out,
            },
            note_rx,
        )
    }

    /// Calls `method` with `params` and waits for the answer until `deadline`.
    pub async fn call(
        &self,
        method: &str,
        params: Vec<Value>,
        deadline: Duration,
    ) -> Result<Value, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.pending.lock().map_err(|_| CallError::Closed)?;
            let Some(map) = p.as_mut() else {
                return Err(CallError::Closed);
            };
            map.insert(id, tx);
        }
        let msg = Value::Array(vec![
            Value::from(0),
            Value::from(id),
            Value::from(method),
            Value::Array(params),
        ]);
        if self.out.send(encode(&msg)).is_err() {
            return Err(CallError::Closed);
        }
        let answer = tokio::time::timeout(deadline, rx).await;
        if let Ok(mut p) = self.pending.lock()
            && let Some(map) = p.as_mut()
        {
            map.remove(&id);
        }
        match answer {
            Err(_) => Err(CallError::Timeout),
            Ok(Err(_)) => Err(CallError::Closed),
            Ok(Ok(Err(message))) => Err(CallError::Answer(message)),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }
}

fn encode(v: &Value) -> Vec<u8> {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = rmpv::encode::write_value(&mut buf, v);
    buf
}

async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(frame) = rx.recv().await {
        if w.write_all(&frame).await.is_err() || w.flush().await.is_err() {
            return;
        }
    }
}

/// Reads whole messages from `r` (a message may arrive in pieces: decoding restarts
/// from the message's first byte once more bytes came) and routes them.
async fn read_loop<R: AsyncRead + Unpin>(
    mut r: R,
    pending: Pending,
    notes: mpsc::UnboundedSender<Notification>,
    out: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    'read: loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        loop {
            let mut cur = Cursor::new(&buf[..]);
            match rmpv::decode::read_value(&mut cur) {
                Ok(v) => {
                    let used = cur.position() as usize;
                    buf.drain(..used);
                    route(v, &pending, &notes, &out);
                }
                Err(e) if is_short(&e) => break,
                Err(e) => {
                    tracing::warn!("neovim: malformed msgpack-rpc message: {e}");
                    break 'read;
                }
            }
        }
    }
    // The stream ended: every caller waiting now, or later, learns it at once.
    if let Ok(mut p) = pending.lock() {
        p.take();
    }
}

fn is_short(e: &rmpv::decode::Error) -> bool {
    use rmpv::decode::Error;
    match e {
        Error::InvalidMarkerRead(io) | Error::InvalidDataRead(io) => {
            io.kind() == std::io::ErrorKind::UnexpectedEof
        }
        _ => false,
    }
}

fn route(
    v: Value,
    pending: &Pending,
    notes: &mpsc::UnboundedSender<Notification>,
    out: &mpsc::UnboundedSender<Vec<u8>>,
) {
    let Value::Array(mut parts) = v else { return };
    match parts.first().and_then(Value::as_u64) {
        Some(1) if parts.len() == 4 => {
            let result = parts.pop().unwrap_or(Value::Nil);
            let error = parts.pop().unwrap_or(Value::Nil);
            let Some(id) = parts.get(1).and_then(Value::as_u64) else {
                return;
            };
            let tx = pending
                .lock()
                .ok()
                .and_then(|mut p| p.as_mut().and_then(|m| m.remove(&(id as u32))));
            if let Some(tx) = tx {
                let answer = if error.is_nil() {
                    Ok(result)
                } else {
                    Err(error_message(&error))
                };
                let _ = tx.send(answer);
            }
        }
        Some(2) if parts.len() == 3 => {
            let params = match parts.pop() {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            };
            let method = parts.pop().and_then(|m| m.as_str().map(str::to_string));
            if let Some(method) = method {
                let _ = notes.send((method, params));
            }
        }
        Some(0) if parts.len() == 4 => {
            // typist serves no requests: answer each with an error so Neovim never waits.
            let id = parts[1].clone();
            let msg = Value::Array(vec![
                Value::from(1),
                id,
                Value::from("typist serves no requests"),
                Value::Nil,
            ]);
            let _ = out.send(encode(&msg));
        }
        _ => {}
    }
}

/// Neovim's error object is `[type, message]`.
fn error_message(e: &Value) -> String {
    match e {
        Value::Array(a) => a
            .get(1)
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string()),
        Value::String(s) => s.as_str().unwrap_or("").to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message cut in two arrives whole, an error answer keeps its message, and a
    /// closed stream fails the calls still waiting.
    #[tokio::test]
    async fn split_messages_errors_and_a_closed_stream() {
        let (client_side, mut server_side) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(client_side);
        let (rpc, mut notes) = Rpc::start(r, w);
        let call = tokio::spawn(async move {
            let a = rpc
                .call("nvim_eval", vec![Value::from("1")], Duration::from_secs(5))
                .await;
            let b = rpc
                .call("nvim_eval", vec![Value::from("x")], Duration::from_secs(5))
                .await;
            let c = rpc.call("nvim_eval", vec![], Duration::from_secs(5)).await;
            (a, b, c)
        });
        let mut got = vec![0u8; 4096];
        let take_request = async |got: &mut Vec<u8>, s: &mut tokio::io::DuplexStream| {
            let n = s.read(got).await.unwrap();
            let v = rmpv::decode::read_value(&mut &got[..n]).unwrap();
            v.as_array().unwrap()[1].as_u64().unwrap()
        };
        let id = take_request(&mut got, &mut server_side).await;
        let note = encode(&Value::Array(vec![
            Value::from(2),
            Value::from("typist_answer"),
            Value::Array(vec![Value::from(7)]),
        ]));
        let answer = encode(&Value::Array(vec![
            Value::from(1),
            Value::from(id),
            Value::Nil,
            Value::from("one"),
        ]));
        let mut both = note.clone();
        both.extend_from_slice(&answer);
        let (first, second) = both.split_at(note.len() + 3);
        server_side.write_all(first).await.unwrap();
        server_side.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        server_side.write_all(second).await.unwrap();
        let id = take_request(&mut got, &mut server_side).await;
        let err = encode(&Value::Array(vec![
            Value::from(1),
            Value::from(id),
            Value::Array(vec![
                Value::from(0),
                Value::from("E121: Undefined variable: x"),
            ]),
            Value::Nil,
        ]));
        server_side.write_all(&err).await.unwrap();
        let _ = take_request(&mut got, &mut server_side).await;
        drop(server_side);
        let (a, b, c) = call.await.unwrap();
        assert_eq!(a.unwrap().as_str(), Some("one"));
        assert!(matches!(b, Err(CallError::Answer(m)) if m == "E121: Undefined variable: x"));
        assert!(matches!(c, Err(CallError::Closed)));
        let (method, params) = notes.recv().await.unwrap();
        assert_eq!(method, "typist_answer");
        assert_eq!(params, vec![Value::from(7)]);
    }
}
