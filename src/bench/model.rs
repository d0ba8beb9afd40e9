//! `typist bench model`: the model server's limit under the replay. A [`Relay`] in
//! front of each model service records every HTTP request that reaches it during a
//! `typist run` (path, body, answer, when and how long); [`send_direct`] then sends
//! exactly those requests, in order, straight to a fresh server with the same settings,
//! with as many in flight as the run had jobs. [`Row`] holds what the table prints:
//! suggestions per hour through typist, requests per hour both ways and their ratio,
//! the server's own prompt and generation tokens per second (from llama.cpp's
//! `timings`), and how many direct answers differ from the captured ones.
//!
//! llama.cpp's `timings` are summed over the requests; answers are compared without ids,
//! times and `timings`.

use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

/// One request sent straight to the model server: generous, since a slow CPU with
/// `--jobs` requests queued can take minutes, and a lost answer would spoil the pass.
const DIRECT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// How long [`Relay::finish`] waits for the requests still being answered (a stream
/// whose caller has just left it is recorded when the relay's next write fails).
const IN_FLIGHT_WAIT: Duration = Duration::from_secs(10);
/// How often [`Relay::finish`] looks again.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(10);

/// One request that reached the model server, and its answer.
#[derive(Debug, Clone, Serialize)]
pub struct Captured {
    /// Order of arrival.
    pub seq: usize,
    pub method: String,
    pub path: String,
    pub content_type: Option<String>,
    pub body: String,
    pub status: u16,
    pub answer: String,
    /// Seconds from the relay's start to the request's arrival.
    pub start: f64,
    /// Seconds the upstream took to answer.
    pub seconds: f64,
}

/// An HTTP client that opens a connection for each request, as the host does: a kept
/// connection can be one the server has closed (it did after streams left early: "Peer
/// disconnected" on the next request), and both passes must pay the same.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        .timeout_global(Some(DIRECT_REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into()
}

/// What the upstream answered: one body, or a stream of server-sent events still open.
enum Upstream {
    Whole(u16, String),
    Stream(u16, ureq::Body),
}

fn post(
    agent: &ureq::Agent,
    url: &str,
    c: &Captured,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    if c.method == "GET" {
        agent.get(url).call()
    } else {
        let mut r = agent.post(url);
        if let Some(ct) = &c.content_type {
            r = r.header("Content-Type", ct);
        }
        r.send(c.body.as_bytes())
    }
}

/// Sends one request as it was captured; a streamed answer is left open.
fn open(agent: &ureq::Agent, base: &str, c: &Captured) -> Upstream {
    let url = format!("{base}{}", c.path);
    match post(agent, &url, c) {
        Ok(mut resp) => {
            let status = resp.status().as_u16();
            let streamed = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if streamed {
                return Upstream::Stream(status, resp.into_body());
            }
            let text = resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .unwrap_or_default();
            Upstream::Whole(status, text)
        }
        Err(e) => Upstream::Whole(502, format!("upstream {url} unreachable: {e}")),
    }
}

/// Server-sent events of a stream: the `data:` lines.
fn events(stream: &str) -> usize {
    stream.lines().filter(|l| l.starts_with("data:")).count()
}

/// Sends one request as it was captured; (status, answer body). A captured stream that
/// its caller left before its end is read as far as the caller read it (as many
/// events), then dropped, as the caller did.
fn send(agent: &ureq::Agent, base: &str, c: &Captured) -> (u16, String) {
    match open(agent, base, c) {
        Upstream::Whole(status, text) => (status, text),
        Upstream::Stream(status, body) => {
            let left_early = !c.answer.contains("data: [DONE]");
            let limit = if left_early {
                events(&c.answer)
            } else {
                usize::MAX
            };
            let mut reader = std::io::BufReader::new(body.into_reader());
            let (mut text, mut line, mut seen) = (String::new(), String::new(), 0);
            while seen < limit {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                seen += usize::from(line.starts_with("data:"));
                text.push_str(&line);
            }
            (status, text)
        }
    }
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

/// A recording relay on a free 127.0.0.1 port: every request is sent on to the upstream
/// as it is (method, path and query, body, content type) and its answer comes back as
/// it is (status, body, content type), one thread per request.
pub struct Relay {
    port: u16,
    server: Arc<tiny_http::Server>,
    captured: Arc<Mutex<Vec<Captured>>>,
    /// Requests not yet recorded (a stream is recorded when its caller has left it).
    in_flight: Arc<AtomicUsize>,
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
        let captured = Arc::new(Mutex::new(Vec::new()));
        let base = upstream.trim_end_matches('/').to_string();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (srv, cap, in_fl) = (server.clone(), captured.clone(), in_flight.clone());
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let agent = agent();
            let count = Arc::new(AtomicUsize::new(0));
            for mut req in srv.incoming_requests() {
                let seq = count.fetch_add(1, Ordering::SeqCst);
                in_fl.fetch_add(1, Ordering::SeqCst);
                let (agent, base, cap) = (agent.clone(), base.clone(), cap.clone());
                let in_flight = in_fl.clone();
                std::thread::spawn(move || {
                    let start = t0.elapsed().as_secs_f64();
                    let mut body = String::new();
                    let _ = req.as_reader().read_to_string(&mut body);
                    let content_type = req
                        .headers()
                        .iter()
                        .find(|h| h.field.equiv("Content-Type"))
                        .map(|h| h.value.to_string());
                    let mut c = Captured {
                        seq,
                        method: req.method().as_str().to_string(),
                        path: req.url().to_string(),
                        content_type,
                        body,
                        status: 0,
                        answer: String::new(),
                        start,
                        seconds: 0.0,
                    };
                    let t = Instant::now();
                    let (status, answer) = match open(&agent, &base, &c) {
                        Upstream::Whole(status, answer) => (status, answer),
                        Upstream::Stream(status, body) => {
                            let answer = forward_stream(req, status, body);
                            c.seconds = t.elapsed().as_secs_f64();
                            c.status = status;
                            c.answer = answer;
                            if let Ok(mut v) = cap.lock() {
                                v.push(c);
                            }
                            in_flight.fetch_sub(1, Ordering::SeqCst);
                            return;
                        }
                    };
                    c.seconds = t.elapsed().as_secs_f64();
                    let mut resp =
                        tiny_http::Response::from_string(answer.clone()).with_status_code(status);
                    let ct = if answer.starts_with("data:") {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", ct) {
                        resp = resp.with_header(h);
                    }
                    c.status = status;
                    c.answer = answer;
                    // Recorded before the caller has its answer, so that a run that ends
                    // with its last answer finds every request here.
                    if let Ok(mut v) = cap.lock() {
                        v.push(c);
                    }
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    let _ = req.respond(resp);
                });
            }
        });
        Ok(Relay {
            port,
            server,
            captured,
            in_flight,
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
        let until = Instant::now() + IN_FLIGHT_WAIT;
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(IN_FLIGHT_POLL);
        }
        let mut v = std::mem::take(&mut *self.captured.lock().expect("relay lock"));
        v.sort_by_key(|c| c.seq);
        v
    }
}

/// What the direct pass measured.
#[derive(Debug, Clone)]
pub struct Direct {
    pub seconds: f64,
    /// (status, answer) of each request, in the captured order.
    pub answers: Vec<(u16, String)>,
}

/// Sends `requests` in order to `base`, `jobs` at a time (each worker takes the next
/// one when its answer has come), and times the whole.
pub fn send_direct(base: &str, requests: &[Captured], jobs: usize) -> Direct {
    let next = AtomicUsize::new(0);
    let answers: Mutex<Vec<Option<(u16, String)>>> = Mutex::new(vec![None; requests.len()]);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(c) = requests.get(i) else { break };
                    let a = send(&agent, base, c);
                    answers.lock().expect("answers lock")[i] = Some(a);
                }
            });
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    Direct {
        seconds,
        answers: answers
            .into_inner()
            .expect("answers lock")
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
    }
}

/// An answer without what changes from one call to the next (llama.cpp's `timings`,
/// ids, creation times, usage, fingerprints): equal for the same answer.
pub fn normalized(answer: &str) -> String {
    if events(answer) > 0 {
        return stream_data(answer)
            .map(normalized_json)
            .collect::<Vec<_>>()
            .join("\n");
    }
    normalized_json(answer)
}

/// The `data:` payloads of a stream of server-sent events.
fn stream_data(stream: &str) -> impl Iterator<Item = &str> {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
}

fn normalized_json(answer: &str) -> String {
    match serde_json::from_str::<Value>(answer) {
        Ok(Value::Object(mut o)) => {
            for k in ["timings", "id", "created", "usage", "system_fingerprint"] {
                o.remove(k);
            }
            Value::Object(o).to_string()
        }
        _ => answer.to_string(),
    }
}

/// llama.cpp's `timings`, summed over answers.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Timings {
    /// Answers that carried `timings`.
    pub answers: usize,
    pub prompt_n: f64,
    pub prompt_ms: f64,
    pub predicted_n: f64,
    pub predicted_ms: f64,
}

impl Timings {
    /// Adds an answer's `timings`; a stream's are in its last event that has them (a
    /// stream its caller left before the end has none).
    pub fn add(&mut self, answer: &str) {
        let found = if events(answer) > 0 {
            stream_data(answer)
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .filter(|v| v["timings"].is_object())
                .last()
        } else {
            serde_json::from_str::<Value>(answer).ok()
        };
        let Some(v) = found else {
            return;
        };
        let t = &v["timings"];
        if !t.is_object() {
            return;
        }
        let f = |k: &str| t[k].as_f64().unwrap_or(0.0);
        self.answers += 1;
        self.prompt_n += f("prompt_n");
        self.prompt_ms += f("prompt_ms");
        self.predicted_n += f("predicted_n");
        self.predicted_ms += f("predicted_ms");
    }

    pub fn of<'a>(answers: impl IntoIterator<Item = &'a str>) -> Timings {
        let mut t = Timings::default();
        for a in answers {
            t.add(a);
        }
        t
    }

    pub fn prompt_per_second(&self) -> f64 {
        per_second(self.prompt_n, self.prompt_ms)
    }

    pub fn predicted_per_second(&self) -> f64 {
        per_second(self.predicted_n, self.predicted_ms)
    }
}

fn per_second(n: f64, ms: f64) -> f64 {
    if ms > 0.0 { n * 1000.0 / ms } else { 0.0 }
}

fn per_hour(n: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 * 3600.0 / seconds
    } else {
        0.0
    }
}

/// One assistant's line of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub assistant: String,
    pub jobs: usize,
    pub cases: usize,
    /// Records with outcome `suggestion`.
    pub suggestions: usize,
    /// Requests that reached the model server during the replay.
    pub requests: usize,
    /// Requests sent straight to the fresh server (always `requests`).
    pub direct_requests: usize,
    /// Wall seconds of the replay through typist (sessions included).
    pub typist_seconds: f64,
    pub direct_seconds: f64,
    pub typist_suggestions_per_hour: f64,
    pub typist_requests_per_hour: f64,
    pub direct_requests_per_hour: f64,
    /// typist's requests per hour / the direct requests per hour.
    pub ratio: f64,
    /// Seconds the replay spent starting sessions (`RunReport::server_start_seconds`:
    /// workspace, editor and server, up to the server's answer to `initialize`), summed:
    /// mostly an agent's own start, which no direct request can have.
    pub server_start_seconds: f64,
    /// With one job, `ratio` with the server starts taken out of typist's time: what
    /// typist and the agent add to each request.
    pub ratio_starts_aside: Option<f64>,
    pub typist_timings: Timings,
    pub direct_timings: Timings,
    /// Direct answers equal to the captured ones (less ids, times and `timings`).
    pub identical_answers: usize,
    pub different_answers: usize,
    /// Requests that failed (status not 2xx) through typist and directly.
    pub typist_failed: usize,
    pub direct_failed: usize,
}

impl Row {
    pub fn new(
        assistant: &str,
        jobs: usize,
        cases: usize,
        suggestions: usize,
        typist_seconds: f64,
        captured: &[Captured],
        direct: &Direct,
    ) -> Row {
        let identical = captured
            .iter()
            .zip(&direct.answers)
            .filter(|(c, (status, a))| {
                c.status == *status && normalized(&c.answer) == normalized(a)
            })
            .count();
        let ok = |s: u16| (200..300).contains(&s);
        let typist_rph = per_hour(captured.len(), typist_seconds);
        let direct_rph = per_hour(direct.answers.len(), direct.seconds);
        Row {
            assistant: assistant.to_string(),
            jobs,
            cases,
            suggestions,
            requests: captured.len(),
            direct_requests: direct.answers.len(),
            typist_seconds,
            direct_seconds: direct.seconds,
            typist_suggestions_per_hour: per_hour(suggestions, typist_seconds),
            typist_requests_per_hour: typist_rph,
            direct_requests_per_hour: direct_rph,
            ratio: if direct_rph > 0.0 {
                typist_rph / direct_rph
            } else {
                0.0
            },
            server_start_seconds: 0.0,
            ratio_starts_aside: None,
            typist_timings: Timings::of(captured.iter().map(|c| c.answer.as_str())),
            direct_timings: Timings::of(direct.answers.iter().map(|(_, a)| a.as_str())),
            identical_answers: identical,
            different_answers: captured.len() - identical,
            typist_failed: captured.iter().filter(|c| !ok(c.status)).count(),
            direct_failed: direct.answers.iter().filter(|(s, _)| !ok(*s)).count(),
        }
    }

    /// The row with the replay's server starts (`RunReport::server_start_seconds`):
    /// with one job they are wall time, taken out of typist's time for
    /// `ratio_starts_aside`; with more they overlap other workers' requests.
    pub fn with_server_starts(mut self, seconds: f64) -> Row {
        self.server_start_seconds = seconds;
        let rest = self.typist_seconds - seconds;
        self.ratio_starts_aside =
            (self.jobs == 1 && rest > 0.0 && self.direct_seconds > 0.0).then(|| {
                per_hour(self.requests, rest) / per_hour(self.direct_requests, self.direct_seconds)
            });
        self
    }
}

/// The markdown table of `rows`.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| assistant | jobs | cases | suggestions | requests | through typist: s | suggestions/h | requests/h | direct: s | direct requests/h | typist / direct | server starts: s | typist / direct, starts aside | prompt tok/s (typist; direct) | generation tok/s (typist; direct) | identical answers | failed (typist; direct) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.2} | {:.1} | {} | {:.0}; {:.0} | {:.1}; {:.1} | {} of {} | {}; {} |\n",
            r.assistant,
            r.jobs,
            r.cases,
            r.suggestions,
            r.requests,
            r.typist_seconds,
            r.typist_suggestions_per_hour,
            r.typist_requests_per_hour,
            r.direct_seconds,
            r.direct_requests_per_hour,
            r.ratio,
            r.server_start_seconds,
            r.ratio_starts_aside
                .map_or_else(|| "–".to_string(), |x| format!("{x:.2}")),
            r.typist_timings.prompt_per_second(),
            r.direct_timings.prompt_per_second(),
            r.typist_timings.predicted_per_second(),
            r.direct_timings.predicted_per_second(),
            r.identical_answers,
            r.requests,
            r.typist_failed,
            r.direct_failed,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_records_and_direct_replays_in_order() {
        // An upstream that echoes the body with changing timings.
        let up = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let up_port = up.server_addr().to_ip().unwrap().port();
        std::thread::spawn(move || {
            for (i, mut req) in up.incoming_requests().enumerate() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let answer = serde_json::json!({
                    "path": req.url(), "body": body, "id": i,
                    "timings": {"prompt_n": 10, "prompt_ms": 100.0 + i as f64, "predicted_n": 5, "predicted_ms": 50.0},
                });
                let _ = req.respond(tiny_http::Response::from_string(answer.to_string()));
            }
        });
        let base = format!("http://127.0.0.1:{up_port}");
        let relay = Relay::start(&base).unwrap();
        let a = agent();
        let via = format!("http://127.0.0.1:{}", relay.port());
        for i in 0..3 {
            let mut r = a
                .post(format!("{via}/v1/completions"))
                .header("Content-Type", "application/json")
                .send(format!("{{\"prompt\":\"{i}\"}}").as_bytes())
                .unwrap();
            let text = r.body_mut().read_to_string().unwrap();
            assert!(
                text.contains(&format!("{{\\\"prompt\\\":\\\"{i}\\\"}}")),
                "{text}"
            );
        }
        a.get(format!("{via}/health")).call().unwrap();
        let captured = relay.finish();
        assert_eq!(captured.len(), 4);
        assert_eq!(captured[0].body, "{\"prompt\":\"0\"}");
        assert_eq!(captured[3].path, "/health");
        let direct = send_direct(&base, &captured, 2);
        let row = Row::new("x", 2, 3, 3, 1.0, &captured, &direct);
        assert_eq!(row.direct_requests, 4);
        assert_eq!(row.identical_answers, 4, "ids and timings are left out");
        assert_eq!(row.typist_timings.answers, 4);
        assert!((row.typist_timings.predicted_per_second() - 100.0).abs() < 1e-9);
        assert!(table(&[row]).contains("| x | 2 | 3 | 3 | 4 |"));
    }

    /// With one job the server starts come out of typist's time for the second ratio;
    /// with two they overlap other requests and no such ratio is given.
    #[test]
    fn server_starts_are_set_aside_with_one_job_only() {
        let captured: Vec<Captured> = (0..10)
            .map(|seq| Captured {
                seq,
                method: "POST".into(),
                path: "/v1/completions".into(),
                content_type: None,
                body: String::new(),
                status: 200,
                answer: "{}".into(),
                start: 0.0,
                seconds: 0.5,
            })
            .collect();
        let direct = Direct {
            seconds: 5.0,
            answers: vec![(200, "{}".into()); 10],
        };
        let row = Row::new("x", 1, 10, 10, 8.0, &captured, &direct).with_server_starts(2.5);
        assert!((row.ratio - 5.0 / 8.0).abs() < 1e-9);
        assert!((row.ratio_starts_aside.unwrap() - 5.0 / 5.5).abs() < 1e-9);
        assert!(table(&[row]).contains("| 0.62 | 2.5 | 0.91 |"));
        let two = Row::new("x", 2, 10, 10, 8.0, &captured, &direct).with_server_starts(2.5);
        assert_eq!(two.ratio_starts_aside, None);
        assert!(table(&[two]).contains("| 0.62 | 2.5 | – |"));
    }

    /// An upstream that streams `n` events, one every `gap`, on the raw connection, and
    /// counts those it could write before its caller left.
    fn streaming_upstream(n: usize, gap: Duration) -> (String, Arc<AtomicUsize>) {
        let up = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = up.server_addr().to_ip().unwrap().port();
        let written = Arc::new(AtomicUsize::new(0));
        let w = written.clone();
        std::thread::spawn(move || {
            for mut req in up.incoming_requests() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let mut out = req.into_writer();
                let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
                w.store(0, Ordering::SeqCst);
                for i in 0..n {
                    let ev = format!(
                        "data: {}\n\n",
                        serde_json::json!({"choices": [{"text": format!("t{i} ")}], "id": i})
                    );
                    let chunk = format!("{:x}\r\n{ev}\r\n", ev.len());
                    if out
                        .write_all(chunk.as_bytes())
                        .and_then(|_| out.flush())
                        .is_err()
                    {
                        break;
                    }
                    w.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(gap);
                }
                let _ = out.write_all(b"0\r\n\r\n");
            }
        });
        (format!("http://127.0.0.1:{port}"), written)
    }

    #[test]
    fn a_stream_left_early_reaches_the_upstream_and_the_direct_pass_leaves_it_alike() {
        let (base, written) = streaming_upstream(200, Duration::from_millis(20));
        let relay = Relay::start(&base).unwrap();
        let via = format!("http://127.0.0.1:{}", relay.port());
        let mut r = agent()
            .post(format!("{via}/v1/completions"))
            .header("Content-Type", "application/json")
            .send(b"{\"stream\":true}".as_slice())
            .unwrap();
        // The caller reads three events and leaves.
        let mut reader = std::io::BufReader::new(r.body_mut().as_reader());
        let (mut line, mut seen) = (String::new(), 0);
        while seen < 3 {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0);
            seen += usize::from(line.starts_with("data:"));
        }
        drop(reader);
        drop(r);
        let captured = relay.finish();
        assert_eq!(captured.len(), 1);
        let forwarded = events(&captured[0].answer);
        assert!(
            (3..200).contains(&forwarded),
            "{forwarded} events forwarded"
        );
        assert!(!captured[0].answer.contains("[DONE]"));
        let upstream_wrote = written.load(Ordering::SeqCst);
        assert!(
            upstream_wrote < 200,
            "the upstream was left early too ({upstream_wrote})"
        );
        // The direct pass reads as many events as were forwarded, and they are the same
        // but for ids.
        let direct = send_direct(&base, &captured, 1);
        assert_eq!(events(&direct.answers[0].1), forwarded);
        let row = Row::new("x", 1, 1, 1, 1.0, &captured, &direct);
        assert_eq!(row.identical_answers, 1);
        assert_eq!(
            row.typist_timings.answers, 0,
            "a stream left early has no timings"
        );
    }
}
