//! `typist serve-model`: the n-gram baseline behind the HTTP APIs that real agents and
//! the host's HTTP backends call, on 127.0.0.1 only: OpenAI-compatible and Tabby
//! `POST /v1/completions` (told apart by the body), Tabby `/v1/health`, Ollama
//! `/api/generate`, llama.cpp `/infill`, TGI `/generate`. Each answer depends only on
//! the request's prefix and suffix (`ngram::predict_document`).

use std::net::SocketAddr;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::http::parse_fim;
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

fn health() -> Value {
    json!({
        "model": "typist-ngram", "device": "cpu", "arch": std::env::consts::ARCH, "cpu_info": "",
        "cpu_count": std::thread::available_parallelism().map_or(1, |n| n.get()), "cuda_devices": [],
        "version": {"build_date": "", "build_timestamp": "", "git_sha": "", "git_describe": format!("typist {}", env!("CARGO_PKG_VERSION"))},
    })
}

/// Serves until the process ends. `port` 0 picks a free one; the bound address is
/// printed as `listening on http://127.0.0.1:PORT` (first line of stdout).
pub fn serve(port: u16, log_requests: Option<&std::path::Path>) -> Result<()> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let server = tiny_http::Server::http(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().context("not an IP listener")?;
    println!("listening on http://{bound}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let mut log = match log_requests {
        Some(p) => Some(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        ),
        None => None,
    };
    let mut n = 0u64;
    for mut req in server.incoming_requests() {
        n += 1;
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let mut body = String::new();
        let _ = req.as_reader().read_to_string(&mut body);
        let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if let Some(f) = log.as_mut() {
            let _ = writeln!(f, "{}", json!({"path": path, "body": parsed}));
        }
        let (status, out) = if path == "/v1/health" {
            (200, health())
        } else if let Some((prefix, suffix)) = context_of(&path, &parsed) {
            let model = parsed
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("typist-ngram")
                .to_string();
            (
                200,
                answer(&path, &predict_document(&prefix, &suffix), n, &model),
            )
        } else {
            (404, json!({"error": format!("no such endpoint: {path}")}))
        };
        let header = tiny_http::Header::from_bytes("Content-Type", "application/json")
            .map_err(|_| anyhow::anyhow!("header"))?;
        let _ = req.respond(
            tiny_http::Response::from_string(out.to_string())
                .with_status_code(status)
                .with_header(header),
        );
    }
    Ok(())
}
