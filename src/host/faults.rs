//! Fault and latency shaping of `typist host`, off by default: the faults a real server
//! cannot be made to produce on demand, for the tests and `typist drill`.
//!
//! Raw frames are written to stdout between tower-lsp's own messages: on stdio both go
//! through one lock ([`Stdout`]), so nothing of tower-lsp's is half-written when a
//! fault writes.
//!
//! The kinds: delays, empty answers, crash, hang, garbage frames, log floods, linger. The
//! drill's `--fault-mix` draws one of twelve kinds per case from a seeded hash (the same
//! for the same case), and `--fault-log` records each request, its fault and what was
//! answered. `--leak-env` plays a careless server that quotes a secret, for the canary
//! test.

use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::json;
use tower_lsp_server::ls_types::{ConfigurationItem, MessageType};

use tower_lsp_server::Client;

use crate::score::Outcome;

/// How long the `crash-after` fault waits after handing its answer to tower-lsp, so that
/// the answer is written before the process dies.
const CRASH_AFTER_DELAY: Duration = Duration::from_millis(100);

/// Fault and latency shaping, off by default.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Fixed delay before every answer.
    pub delay_ms: u64,
    /// Extra random delay up to this much (seeded).
    pub jitter_ms: u64,
    /// Probability of an empty answer (seeded).
    pub empty_rate: f64,
    /// Exit (code 3) when the Nth suggestion request arrives.
    pub crash_after: Option<u64>,
    /// Never answer from the Nth suggestion request on.
    pub hang_after: Option<u64>,
    /// Write a garbage frame to stdout before answering the Nth request and every later one.
    pub garbage_after: Option<u64>,
    /// Send this many `window/logMessage` notifications before each answer.
    pub log_flood: u32,
    /// Write this many bytes of lines that are not UTF-8 to stderr before each answer
    /// (a blocking write: a client that stops draining stderr stalls the server).
    pub stderr_junk: u64,
    /// Delay only the answer to the first completion-list request by this much (a
    /// server warming up: pyright's first lists take seconds, its later ones not).
    pub first_list_delay_ms: u64,
    /// Mark completion lists incomplete (`isIncomplete`, as pyright and clangd do): an
    /// editor asks again as the user types on.
    pub incomplete_lists: bool,
    /// After the client has gone (stdin closed), stay alive this long before exiting,
    /// as servers busy indexing do: only the client's process handling ends it sooner.
    pub linger_secs: u64,
    /// Probability that a suggestion request meets one fault of a mix of every kind
    /// (crash on arrival, crash mid-answer, crash after answering, hang, error answer,
    /// garbage frame, huge length, invalid UTF-8 body, answer to an unknown id,
    /// notification flood, stderr flood, server→client request storm), drawn from the
    /// seed, the file's path in the workspace and the line: the same case meets the
    /// same fault on every attempt and in every run. Used by `typist drill`.
    pub fault_mix: f64,
    /// Append one JSON line per suggestion request: the file, the line, the fault met
    /// (or none) and what was answered, for `typist drill` to check records against.
    pub fault_log: Option<std::path::PathBuf>,
    /// Behave as a careless server with the secret in this environment variable: print
    /// it to stderr at `initialize`, and reject every third suggestion request with an
    /// error quoting it (as APIs quoting a rejected key do). For the secret canary test.
    pub leak_env: Option<String>,
    /// Seed of the random faults.
    pub fault_seed: u64,
}

/// One injected fault of the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Exit when the request arrives.
    Crash,
    /// Write the first part of the answer's frame, then exit.
    Truncated,
    /// Answer, then exit shortly after.
    CrashAfter,
    /// Never answer.
    Hang,
    /// Answer with a JSON-RPC error.
    ErrorAnswer,
    /// A frame whose body is not JSON, then the answer.
    Garbage,
    /// A header claiming a body of 999,999,999,999 bytes, then the answer.
    HugeLength,
    /// A frame whose body is not UTF-8, then the answer.
    BadUtf8,
    /// An answer to a request never made, then the answer.
    UnknownId,
    /// Hundreds of notifications, then the answer.
    NotificationFlood,
    /// 64 KiB of non-UTF-8 lines on stderr, then the answer.
    StderrFlood,
    /// Dozens of server→client requests, each awaited, then the answer.
    RequestStorm,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::Crash,
        Kind::Truncated,
        Kind::CrashAfter,
        Kind::Hang,
        Kind::ErrorAnswer,
        Kind::Garbage,
        Kind::HugeLength,
        Kind::BadUtf8,
        Kind::UnknownId,
        Kind::NotificationFlood,
        Kind::StderrFlood,
        Kind::RequestStorm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Truncated => "truncated",
            Kind::CrashAfter => "crash-after",
            Kind::Hang => "hang",
            Kind::ErrorAnswer => "error-answer",
            Kind::Garbage => "garbage",
            Kind::HugeLength => "huge-length",
            Kind::BadUtf8 => "bad-utf8",
            Kind::UnknownId => "unknown-id",
            Kind::NotificationFlood => "notification-flood",
            Kind::StderrFlood => "stderr-flood",
            Kind::RequestStorm => "request-storm",
        }
    }

    /// The outcome the client must record when this fault ends the request, `None` when
    /// the server's answer still arrives (the record must then be that answer).
    pub fn ends_request(self) -> Option<Outcome> {
        match self {
            Kind::Crash | Kind::Truncated | Kind::ErrorAnswer => Some(Outcome::Error),
            Kind::Hang => Some(Outcome::Timeout),
            _ => None,
        }
    }
}

/// The host's stdout: one descriptor of its own (a duplicate of fd 1), shared by
/// tower-lsp's messages ([`Stdout`]) and the raw fault frames, each written whole under
/// one lock, so a frame never lands inside a message, and with none of `std`'s line
/// buffering, so a message leaves in one `write` when the pipe takes it. `None` when fd
/// 1 cannot be duplicated: both then go through `std`'s stdout.
fn shared_stdout() -> &'static Option<Mutex<std::fs::File>> {
    static OUT: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    OUT.get_or_init(|| {
        use std::os::fd::AsFd;
        match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => Some(Mutex::new(std::fs::File::from(fd))),
            Err(e) => {
                tracing::debug!("no descriptor of its own on stdout ({e}): writing through std");
                None
            }
        }
    })
}

/// Writes `bytes` whole to the host's stdout (see [`shared_stdout`]).
fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    match shared_stdout() {
        Some(out) => out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write_all(bytes),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()
        }
    }
}

/// tower-lsp's writer on stdio: each buffer it hands over is written at once, whole
/// ([`write_stdout`]). The write blocks the task's thread until the pipe has taken it,
/// as a message is small and the client reads all the time.
pub(super) struct Stdout;

impl tokio::io::AsyncWrite for Stdout {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(write_stdout(buf).map(|()| buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A raw frame, written whole between tower-lsp's messages.
fn raw_stdout(bytes: &[u8]) {
    let _ = write_stdout(bytes);
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    f.extend_from_slice(body);
    f
}

fn stderr_junk(bytes: u64) {
    let mut line = b"junk \xff\xfe\xc3(".to_vec();
    line.resize(99, b'x');
    line.push(b'\n');
    let mut err = std::io::stderr().lock();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(line.len() as u64) as usize;
        let _ = err.write_all(&line[line.len() - n..]);
        left -= n as u64;
    }
    let _ = err.flush();
}

/// What the faults do to one request: the host hands itself in pieces (its client for
/// the messages a fault sends), so this file never names the host.
impl Faults {
    /// Applies the configured faults for the request numbered `n`; false: answer empty.
    pub(super) async fn shape(&self, client: &Client, n: u64) -> bool {
        let f = self;
        if f.crash_after.is_some_and(|c| n >= c) {
            tracing::warn!("fault: crashing at request {n}");
            std::process::exit(3);
        }
        if f.hang_after.is_some_and(|h| n >= h) {
            // Cancellation drops this future; otherwise the request never ends.
            std::future::pending::<()>().await;
        }
        if f.garbage_after.is_some_and(|g| n >= g) {
            raw_stdout(b"Content-Length: 12\r\n\r\n{not json!!}");
        }
        if f.stderr_junk > 0 {
            stderr_junk(f.stderr_junk);
        }
        for i in 0..f.log_flood {
            client
                .log_message(MessageType::LOG, format!("flood {i} of request {n}"))
                .await;
        }
        let draw = crate::dataset::draw(f.fault_seed, "faults", "", n as u32);
        let delay = f.delay_ms + (draw * f.jitter_ms as f64) as u64;
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let draw2 = crate::dataset::draw(f.fault_seed ^ 0xe4, "empty", "", n as u32);
        draw2 >= f.empty_rate
    }

    /// The fault of the mix this request meets, if any (the same for the same case).
    pub(super) fn drawn_fault(&self, rel: &str, line: u32) -> Option<Kind> {
        let f = self;
        if f.fault_mix <= 0.0 {
            return None;
        }
        if crate::dataset::draw(f.fault_seed, "fault", rel, line) >= f.fault_mix {
            return None;
        }
        let k = crate::dataset::draw(f.fault_seed, "kind", rel, line);
        Some(Kind::ALL[((k * Kind::ALL.len() as f64) as usize).min(Kind::ALL.len() - 1)])
    }

    /// One line of the fault log: `answer` is the text answered (`""`: empty), `None`
    /// when the fault ends the request.
    pub(super) fn log_fault(&self, rel: &str, line: u32, kind: Option<Kind>, answer: Option<&str>) {
        let Some(path) = &self.fault_log else {
            return;
        };
        let entry = json!({
            "file": rel,
            "line": line,
            "fault": kind.map(Kind::name),
            "answer": answer,
            "pid": std::process::id(),
        });
        let mut text = entry.to_string();
        text.push('\n');
        // One write of a short line to a file opened for appending: lines of several
        // servers never interleave.
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = file.write_all(text.as_bytes());
        }
    }

    /// Acts out the part of `kind` that comes before the answer; returns only if the
    /// answer is still to be sent.
    pub(super) async fn inject(&self, client: &Client, kind: Kind) {
        match kind {
            Kind::Crash => {
                tracing::warn!("fault: crash on arrival");
                std::process::exit(3);
            }
            Kind::Truncated => {
                tracing::warn!("fault: crash mid-answer");
                raw_stdout(b"Content-Length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":");
                std::process::exit(3);
            }
            Kind::Hang => std::future::pending::<()>().await,
            Kind::Garbage => raw_stdout(&frame(b"{this is not json]")),
            Kind::HugeLength => {
                raw_stdout(b"Content-Length: 999999999999\r\n\r\n{\"jsonrpc\":\"2.0\"}\r\n")
            }
            Kind::BadUtf8 => raw_stdout(&frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\xc3(\"}")),
            Kind::UnknownId => raw_stdout(&frame(
                br#"{"jsonrpc":"2.0","id":987654321,"result":{"items":[{"insertText":"not yours"}]}}"#,
            )),
            Kind::NotificationFlood => {
                for i in 0..300 {
                    client
                        .log_message(MessageType::LOG, format!("flood {i}"))
                        .await;
                }
            }
            Kind::StderrFlood => stderr_junk(64 * 1024),
            Kind::RequestStorm => {
                for i in 0..40 {
                    let item = ConfigurationItem {
                        scope_uri: None,
                        section: Some(format!("typist.storm{i}")),
                    };
                    let _ = client.configuration(vec![item]).await;
                    if i % 8 == 0 {
                        let _ = client.workspace_folders().await;
                    }
                }
            }
            Kind::CrashAfter | Kind::ErrorAnswer => {}
        }
    }

    /// The secret `--leak-env` names, if set.
    pub(super) fn leaked(&self) -> Option<String> {
        self.leak_env
            .as_ref()
            .map(|v| std::env::var(v).unwrap_or_default())
    }

    /// With `--leak-env`: every third request is rejected quoting the secret.
    pub(super) fn leak_error(&self, n: u64) -> Option<tower_lsp_server::jsonrpc::Error> {
        let secret = self.leaked()?;
        n.is_multiple_of(3).then(|| {
            let mut err = tower_lsp_server::jsonrpc::Error::internal_error();
            err.message = format!("invalid API key provided: {secret}").into();
            err
        })
    }

    /// The part of `kind` that comes after the answer is handed to tower-lsp.
    pub(super) fn after_answer(&self, kind: Option<Kind>) {
        if kind == Some(Kind::CrashAfter) {
            tokio::spawn(async {
                tokio::time::sleep(CRASH_AFTER_DELAY).await;
                tracing::warn!("fault: crash after answering");
                std::process::exit(3);
            });
        }
    }
}
