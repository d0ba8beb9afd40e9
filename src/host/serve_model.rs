//! `typist serve-model`: the HTTP APIs that real agents and the host's HTTP backends
//! call, on 127.0.0.1 only: OpenAI-compatible and Tabby `POST /v1/completions` (told
//! apart by the body), Tabby `/v1/health`, Ollama `/api/generate`, llama.cpp `/infill`,
//! TGI `/generate`.
//!
//! Two modes. Alone, it answers from the n-gram baseline: each answer depends only on
//! the request's prefix and suffix (`ngram::predict_document`). With `--upstream URL` it
//! fronts a llama.cpp server (or any OpenAI-compatible `/v1/completions`) with the APIs
//! that server lacks: a Tabby or Ollama request becomes one upstream `/v1/completions`
//! request (the prompt built from the prefix and suffix by `--template`, `--max-tokens`,
//! `--temperature` and `--stop` from the command line unless the request sets its own)
//! and the upstream's text comes back in the caller's shape; every other path is relayed
//! as it is. An upstream failure is relayed as a failure (its status and message), never
//! as an empty answer. Requests are served concurrently (one thread each), so the
//! upstream's parallel slots are used.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::http::{Api, FimTemplate, HttpOptions, parse_fim};
use super::ngram::predict_document;

/// (prefix, suffix) of a completion request in any of the served dialects.
pub fn context_of(path: &str, body: &Value) -> Option<(String, String)> {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    match path {
        "/v1/completions" => {
            if let Some(seg) = body.get("segments") {
                // Tabby
                return Some((s(seg.get("prefix")), s(seg.get("suffix"))));
            }
            let prompt = match body.get("prompt") {
                Some(Value::Array(a)) => {
                    a.first().and_then(Value::as_str).unwrap_or("").to_string()
                }
                other => s(other),
            };
            Some(parse_fim(&prompt).unwrap_or((prompt, s(body.get("suffix")))))
        }
        "/api/generate" => Some((s(body.get("prompt")), s(body.get("suffix")))),
        "/infill" => Some((s(body.get("input_prefix")), s(body.get("input_suffix")))),
        "/generate" => {
            let inputs = s(body.get("inputs"));
            Some(parse_fim(&inputs).unwrap_or((inputs, String::new())))
        }
        _ => None,
    }
}

/// The answer body for `path` carrying `text`.
pub fn answer(path: &str, text: &str, n: u64, model: &str) -> Value {
    match path {
        "/v1/completions" => json!({
            "id": format!("cmpl-typist-{n}"), "object": "text_completion", "created": 0, "model": model,
            "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": null}],
        }),
        "/api/generate" => json!({"model": model, "response": text, "done": true}),
        "/infill" => json!({"content": text, "stop": true}),
        _ => json!({"generated_text": text}),
    }
}

fn health(model: &str) -> Value {
    json!({
        "model": model, "device": "cpu", "arch": std::env::consts::ARCH, "cpu_info": "",
        "cpu_count": std::thread::available_parallelism().map_or(1, |n| n.get()), "cuda_devices": [],
        "version": {"build_date": "", "build_timestamp": "", "git_sha": "", "git_describe": format!("typist {}", env!("CARGO_PKG_VERSION"))},
    })
}

/// `--upstream`: the model server fronted and how its requests are made.
#[derive(Debug, Clone)]
pub struct UpstreamArgs {
    /// Front this llama.cpp server (or any OpenAI-compatible /v1/completions) instead of
    /// answering from the n-gram baseline.
    pub upstream: Option<String>,
    /// How a prefix and a suffix become the upstream's prompt (`none`: the prefix alone,
    /// for a left-to-right model).
    pub template: FimTemplate,
    /// Tokens asked for when the request does not say.
    pub max_tokens: u32,
    /// Sampling temperature when the request does not say.
    pub temperature: f64,
    /// Stop sequences when the request gives none (repeatable).
    pub stop: Vec<String>,
    /// The model name sent upstream and reported by /v1/health.
    pub model: String,
    pub upstream_timeout_ms: u64,
}

/// One answer: status and JSON body.
type Reply = (u16, Value);

struct Front {
    base: String,
    args: UpstreamArgs,
    agent: ureq::Agent,
}

impl Front {
    fn new(args: &UpstreamArgs, base: &str) -> Front {
        Front {
            base: base.trim_end_matches('/').to_string(),
            args: args.clone(),
            agent: ureq::Agent::config_builder()
                .timeout_global(Some(std::time::Duration::from_millis(
                    args.upstream_timeout_ms,
                )))
                .http_status_as_error(false)
                .build()
                .into(),
        }
    }

    /// Calls the upstream; its own failure statuses are relayed, an unreachable upstream
    /// is a 502 saying so.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        let url = format!("{}{path}", self.base);
        let sent = match (method, body) {
            ("GET", _) | (_, None) => self.agent.get(&url).call(),
            (_, Some(b)) => self.agent.post(&url).send_json(b),
        };
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => {
                return (
                    502,
                    json!({"error": {"code": 502, "message": format!("upstream {url} unreachable: {e}")}}),
                );
            }
        };
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        let v = serde_json::from_str(&text)
            .unwrap_or_else(|_| json!({"error": {"code": status, "message": text}}));
        (status, v)
    }

    /// The upstream `/v1/completions` text for a prefix and suffix, or the upstream's
    /// failure as it should be relayed.
    fn complete(
        &self,
        prefix: &str,
        suffix: &str,
        max_tokens: Option<u64>,
        temperature: Option<f64>,
        stop: Option<Vec<String>>,
    ) -> Result<String, Reply> {
        let o = HttpOptions {
            model: self.args.model.clone(),
            template: Some(self.args.template),
            max_tokens: max_tokens.map_or(self.args.max_tokens, |n| n as u32),
            temperature: temperature.unwrap_or(self.args.temperature),
            stop: stop.unwrap_or_else(|| self.args.stop.clone()),
            ..Default::default()
        };
        let (path, body) = super::http::request(Api::OpenAi, &o, prefix, suffix);
        let (status, v) = self.call("POST", path, Some(&body));
        if !(200..300).contains(&status) {
            return Err((status, v));
        }
        match super::http::answer_text(Api::OpenAi, &v) {
            Some(t) => Ok(t),
            None => Err((
                502,
                json!({"error": {"code": 502, "message": format!("upstream answer without text: {v}")}}),
            )),
        }
    }

    fn handle(&self, method: &str, path: &str, body: &Value, n: u64) -> Reply {
        let num = |v: Option<&Value>| v.and_then(Value::as_f64);
        let stops = |v: Option<&Value>| {
            v.and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
        };
        match path {
            "/v1/health" => {
                let (status, v) = self.call("GET", "/health", None);
                if (200..300).contains(&status) {
                    (200, health(&self.args.model))
                } else {
                    (
                        503,
                        json!({"error": {"code": 503, "message": format!("upstream not ready: {v}")}}),
                    )
                }
            }
            "/v1/completions" if body.get("segments").is_some() => {
                // Tabby: only the prefix is required; a null temperature is the server's
                // choice (ours: --temperature).
                let seg = &body["segments"];
                let s = |k: &str| seg.get(k).and_then(Value::as_str).unwrap_or("");
                match self.complete(
                    s("prefix"),
                    s("suffix"),
                    None,
                    num(body.get("temperature")),
                    None,
                ) {
                    Ok(text) => (
                        200,
                        json!({"id": format!("cmpl-typist-{n}"), "choices": [{"index": 0, "text": text}]}),
                    ),
                    Err(e) => e,
                }
            }
            "/api/generate" => {
                let s = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or("");
                let opts = body.get("options").cloned().unwrap_or(Value::Null);
                let max = opts.get("num_predict").and_then(Value::as_u64);
                match self.complete(
                    s("prompt"),
                    s("suffix"),
                    max,
                    num(opts.get("temperature")),
                    stops(opts.get("stop")),
                ) {
                    Ok(text) => (
                        200,
                        json!({"model": body.get("model").cloned().unwrap_or(json!(self.args.model)), "response": text, "done": true}),
                    ),
                    Err(e) => e,
                }
            }
            _ => self.call(method, path, (method != "GET").then_some(body)),
        }
    }
}

/// Serves until the process ends. `port` 0 picks a free one; the bound address is
/// printed as `listening on http://127.0.0.1:PORT` (first line of stdout).
pub fn serve(
    port: u16,
    log_requests: Option<&std::path::Path>,
    upstream: &UpstreamArgs,
) -> Result<()> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let server = tiny_http::Server::http(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().context("not an IP listener")?;
    println!("listening on http://{bound}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let log = match log_requests {
        Some(p) => Some(std::sync::Mutex::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => None,
    };
    let front = upstream
        .upstream
        .as_deref()
        .map(|u| Front::new(upstream, u));
    let shared = Arc::new((front, log, AtomicU64::new(0)));
    for mut req in server.incoming_requests() {
        let shared = shared.clone();
        std::thread::spawn(move || {
            let (front, log, count) = &*shared;
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let method = req.method().as_str().to_string();
            let path = req.url().split('?').next().unwrap_or("").to_string();
            let mut body = String::new();
            let _ = req.as_reader().read_to_string(&mut body);
            let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if let Some(f) = log
                && let Ok(mut f) = f.lock()
            {
                let _ = writeln!(f, "{}", json!({"path": path, "body": parsed}));
            }
            let (status, out) = match front {
                Some(front) => front.handle(&method, &path, &parsed, n),
                None => baseline(&path, &parsed, n),
            };
            if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", "application/json") {
                let _ = req.respond(
                    tiny_http::Response::from_string(out.to_string())
                        .with_status_code(status)
                        .with_header(header),
                );
            }
        });
    }
    Ok(())
}

/// The n-gram baseline's answer to one request.
fn baseline(path: &str, parsed: &Value, n: u64) -> Reply {
    if path == "/v1/health" {
        (200, health("typist-ngram"))
    } else if let Some((prefix, suffix)) = context_of(path, parsed) {
        let model = parsed
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("typist-ngram")
            .to_string();
        (
            200,
            answer(path, &predict_document(&prefix, &suffix), n, &model),
        )
    } else {
        (404, json!({"error": format!("no such endpoint: {path}")}))
    }
}
