//! The recording relay in front of a model service: every request sent on as it came,
//! its answer passed back as it comes (a stream event by event), both recorded.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Captured;
use super::upstream::{Upstream, agent, open};
use anyhow::{Context, Result};

/// How long [`Relay::finish`] waits for the requests still being answered (a stream
/// whose caller has just left it is recorded when the relay's next write fails).
const IN_FLIGHT_WAIT: Duration = Duration::from_secs(10);
/// How often [`Relay::finish`] looks again.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(10);

/// The requests recorded so far, and how many have arrived but are not recorded yet
/// (a stream is recorded when its caller has left it).
#[derive(Clone, Default)]
struct Log {
    captured: Arc<Mutex<Vec<Captured>>>,
    in_flight: Arc<AtomicUsize>,
}

impl Log {
    fn arrived(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    fn record(&self, c: Captured) {
        if let Ok(mut v) = self.captured.lock() {
            v.push(c);
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Every request recorded, in order of arrival, once none is in flight or after
    /// [`IN_FLIGHT_WAIT`].
    fn take(&self) -> Vec<Captured> {
        let until = Instant::now() + IN_FLIGHT_WAIT;
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(IN_FLIGHT_POLL);
        }
        let mut v = std::mem::take(&mut *self.captured.lock().expect("relay lock"));
        v.sort_by_key(|c| c.seq);
        v
    }
}

/// A recording relay on a free 127.0.0.1 port: every request is sent on to the upstream
/// as it is (method, path and query, body, content type) and its answer comes back as
/// it is (status, body, content type), one thread per request.
pub struct Relay {
    port: u16,
    server: Arc<tiny_http::Server>,
    log: Log,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    pub fn start(upstream: &str) -> Result<Relay> {
        let server = tiny_http::Server::http("127.0.0.1:0")
            .map_err(|e| anyhow::anyhow!("relay: cannot listen on 127.0.0.1: {e}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .context("relay: no port")?
            .port();
        let server = Arc::new(server);
        let log = Log::default();
        let base = upstream.trim_end_matches('/').to_string();
        let thread = std::thread::spawn({
            let (server, log) = (server.clone(), log.clone());
            move || accept(&server, &base, &log)
        });
        Ok(Relay {
            port,
            server,
            log,
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops listening; the requests captured, in order of arrival.
    pub fn finish(mut self) -> Vec<Captured> {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.log.take()
    }
}

/// Relays each request on a thread of its own, numbered in order of arrival, until the
/// server is unblocked.
fn accept(server: &tiny_http::Server, base: &str, log: &Log) {
    let t0 = Instant::now();
    let agent = agent();
    for (seq, req) in server.incoming_requests().enumerate() {
        log.arrived();
        let (agent, base, log) = (agent.clone(), base.to_string(), log.clone());
        std::thread::spawn(move || relay_one(req, seq, t0, &agent, &base, &log));
    }
}

/// Sends one request on and its answer back, and records both: a whole answer before
/// the caller has it, so that a run that ends with its last answer finds every request
/// recorded; a stream when it has ended or its caller has left it.
fn relay_one(
    mut req: tiny_http::Request,
    seq: usize,
    t0: Instant,
    agent: &ureq::Agent,
    base: &str,
    log: &Log,
) {
    let mut c = Captured::arrived(&mut req, seq, t0.elapsed().as_secs_f64());
    let asked = Instant::now();
    match open(agent, base, &c) {
        Upstream::Whole(status, answer) => {
            c.answered(status, answer, asked);
            let resp = whole_response(status, &c.answer);
            log.record(c);
            let _ = req.respond(resp);
        }
        Upstream::Stream(status, body) => {
            let answer = forward_stream(req, status, body);
            c.answered(status, answer, asked);
            log.record(c);
        }
    }
}

/// A whole answer as the caller gets it: the upstream's status and body, typed as a
/// stream when it reads as one.
fn whole_response(status: u16, answer: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let mut resp = tiny_http::Response::from_string(answer).with_status_code(status);
    let ct = if answer.starts_with("data:") {
        "text/event-stream"
    } else {
        "application/json"
    };
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", ct) {
        resp = resp.with_header(h);
    }
    resp
}

/// Forwards a stream to the caller event by event as the upstream sends it, flushing
/// each, until its end or until the caller goes away (a failed write), when the
/// upstream connection is dropped so the server stops; what was forwarded.
fn forward_stream(req: tiny_http::Request, status: u16, body: ureq::Body) -> String {
    let mut out = req.into_writer();
    let mut reader = body.into_reader();
    let mut forwarded = Vec::new();
    let head = format!(
        "HTTP/1.1 {status} OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    if out
        .write_all(head.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return String::new();
    }
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = out.write_all(b"0\r\n\r\n").and_then(|_| out.flush());
                break;
            }
            Ok(n) => n,
        };
        forwarded.extend_from_slice(&buf[..n]);
        let chunk = [format!("{n:x}\r\n").as_bytes(), &buf[..n], b"\r\n"].concat();
        if out.write_all(&chunk).and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    String::from_utf8_lossy(&forwarded).into_owned()
}
