//! HTTP model backends of the host: OpenAI-compatible `/v1/completions` with a FIM
//! prompt (per-model templates), Ollama `/api/generate` with `suffix`, llama.cpp
//! `/infill`, TGI `/generate`. Request bodies and answer parsing are pure functions so
//! each can be checked exactly; the API key comes from an environment variable named
//! in the profile and is never logged.
//!
//! The context sent is a window of `context_chars` characters around the cursor, 3/4 of
//! it before the cursor and 1/4 after.

use std::io::BufRead;

use serde_json::{Value, json};

/// Fill-in-the-middle prompt formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FimTemplate {
    /// `<fim_prefix>P<fim_suffix>S<fim_middle>` (StarCoder, SantaCoder)
    Starcoder,
    /// `<PRE> P <SUF>S <MID>` (Code Llama)
    Codellama,
    /// `<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>` (DeepSeek-Coder)
    Deepseek,
    /// `<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>` (Qwen2.5-Coder)
    Qwen,
    /// The prefix alone as the prompt, the suffix in a `suffix` field.
    None,
}

impl FimTemplate {
    /// (before prefix, between prefix and suffix, after suffix)
    pub fn markers(self) -> Option<(&'static str, &'static str, &'static str)> {
        Some(match self {
            FimTemplate::Starcoder => ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
            FimTemplate::Codellama => ("<PRE> ", " <SUF>", " <MID>"),
            FimTemplate::Deepseek => ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
            FimTemplate::Qwen => ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
            FimTemplate::None => return None,
        })
    }

    pub const ALL: [FimTemplate; 4] = [
        FimTemplate::Starcoder,
        FimTemplate::Codellama,
        FimTemplate::Deepseek,
        FimTemplate::Qwen,
    ];
}

/// The FIM prompt for `prefix` and `suffix`.
pub fn fim_prompt(t: FimTemplate, prefix: &str, suffix: &str) -> String {
    match t.markers() {
        Some((a, b, c)) => format!("{a}{prefix}{b}{suffix}{c}"),
        None => prefix.to_string(),
    }
}

/// Splits a FIM prompt of any known template back into (prefix, suffix).
pub fn parse_fim(prompt: &str) -> Option<(String, String)> {
    for t in FimTemplate::ALL {
        let (a, b, c) = t.markers()?;
        if let Some(rest) = prompt.strip_prefix(a)
            && let Some(body) = rest.strip_suffix(c)
            && let Some((p, s)) = body.split_once(b)
        {
            return Some((p.to_string(), s.to_string()));
        }
    }
    None
}

/// What the host sends to a model and how.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Base URL of the model server (e.g. http://127.0.0.1:8080).
    pub endpoint: Option<String>,
    pub model: String,
    pub template: Option<FimTemplate>,
    pub max_tokens: u32,
    pub temperature: f64,
    /// Stop sequences (repeatable).
    pub stop: Vec<String>,
    /// Characters of context sent: 3/4 for the prefix (nearest the cursor), 1/4 suffix.
    pub context_chars: usize,
    /// Name of the environment variable that holds the API key (sent as a Bearer token).
    pub api_key_env: Option<String>,
    pub http_timeout_ms: u64,
    /// Whitespace healing for left-to-right models: the prompt ends at the prefix's last
    /// non-blank character, and the answer counts only if it starts with the whitespace
    /// taken off (which is then cut from it). A prompt that ends in a line break or an
    /// indentation splits a token the model would have written, and small models then
    /// answer off the rails. When a line break was taken off, a `\n` stop sequence is
    /// applied by the host after it (the server would stop at once).
    pub heal_whitespace: bool,
}

/// (prompt prefix, whitespace taken off its end) under whitespace healing.
pub fn heal_split(prefix: &str) -> (&str, &str) {
    let kept = prefix.trim_end();
    (kept, &prefix[kept.len()..])
}

/// The model's answer seen from the cursor, under whitespace healing: `None` when it does
/// not start with the whitespace `removed` (the model did not write what the editor holds).
/// `cut_at_newline`: the text ends at its first line break.
pub fn heal_answer(removed: &str, answer: &str, cut_at_newline: bool) -> Option<String> {
    let rest = answer.strip_prefix(removed)?;
    let rest = match (cut_at_newline, rest.find('\n')) {
        (true, Some(i)) => &rest[..i],
        _ => rest,
    };
    Some(rest.to_string())
}

/// The HTTP APIs the host can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Ollama,
    LlamaCpp,
    Tgi,
}

/// Keeps the end of the prefix and the start of the suffix within `chars` characters.
pub fn window<'a>(prefix: &'a str, suffix: &'a str, chars: usize) -> (&'a str, &'a str) {
    let suffix_budget = chars / 4;
    let s_chars = suffix.chars().count().min(suffix_budget);
    let p_budget = chars - s_chars;
    let p_len = prefix.chars().count();
    let p_start = prefix
        .char_indices()
        .nth(p_len.saturating_sub(p_budget))
        .map_or(prefix.len(), |(i, _)| i);
    let s_end = suffix
        .char_indices()
        .nth(s_chars)
        .map_or(suffix.len(), |(i, _)| i);
    (
        &prefix[if p_len <= p_budget { 0 } else { p_start }..],
        &suffix[..s_end],
    )
}

/// The path and JSON body of a request.
pub fn request(api: Api, o: &HttpOptions, prefix: &str, suffix: &str) -> (&'static str, Value) {
    let template = o.template.unwrap_or(FimTemplate::Starcoder);
    match api {
        Api::OpenAi => {
            let mut body = json!({
                "model": o.model,
                "prompt": fim_prompt(template, prefix, suffix),
                "max_tokens": o.max_tokens,
                "temperature": o.temperature,
                "stream": false,
            });
            if template == FimTemplate::None {
                body["suffix"] = json!(suffix);
            }
            if !o.stop.is_empty() {
                body["stop"] = json!(o.stop);
            }
            ("/v1/completions", body)
        }
        Api::Ollama => (
            "/api/generate",
            json!({
                "model": o.model, "prompt": prefix, "suffix": suffix, "stream": false, "raw": false,
                "options": {"num_predict": o.max_tokens, "temperature": o.temperature, "stop": o.stop},
            }),
        ),
        Api::LlamaCpp => (
            "/infill",
            json!({"input_prefix": prefix, "input_suffix": suffix, "n_predict": o.max_tokens, "temperature": o.temperature, "stop": o.stop}),
        ),
        Api::Tgi => (
            "/generate",
            json!({
                "inputs": fim_prompt(template, prefix, suffix),
                "parameters": {"max_new_tokens": o.max_tokens, "temperature": if o.temperature > 0.0 { Some(o.temperature) } else { None }, "stop": o.stop, "return_full_text": false},
            }),
        ),
    }
}

/// The completion text of an answer.
pub fn answer_text(api: Api, v: &Value) -> Option<String> {
    let t = match api {
        Api::OpenAi => v.pointer("/choices/0/text"),
        Api::Ollama => v.get("response"),
        Api::LlamaCpp => v.get("content"),
        Api::Tgi => v
            .get("generated_text")
            .or_else(|| v.pointer("/0/generated_text")),
    }?;
    t.as_str().map(str::to_string)
}

/// The message of a failed answer: `error.message` (llama.cpp, OpenAI), `error` as a
/// string (Ollama, TGI), else the body's first 200 characters.
pub fn error_message(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let found = v
        .pointer("/error/message")
        .or_else(|| v.get("error").filter(|e| e.is_string()))
        .or_else(|| v.get("message"))
        .and_then(Value::as_str);
    match found {
        Some(m) => m.trim().to_string(),
        None => body.trim().chars().take(200).collect(),
    }
}

/// Whether the host's answer is known from the text generated so far, under whitespace
/// healing with the host's own line cut: the text left the whitespace `removed` (the
/// answer is empty), or a line break follows it (the line is complete).
pub fn cut_known(removed: &str, generated: &str) -> bool {
    match generated.strip_prefix(removed) {
        Some(rest) => rest.contains('\n'),
        None => !removed.starts_with(generated),
    }
}

/// Reads a streamed OpenAI-compatible answer (server-sent events, `data: {json}` lines,
/// `data: [DONE]` at the end) until [`cut_known`] says the rest cannot change the answer;
/// the text generated up to there. Returning drops the connection, which tells the
/// server to stop. A server that answers with one JSON body instead is read whole.
pub fn read_until_cut(mut reader: impl BufRead, api: Api, removed: &str) -> Result<String, String> {
    let mut generated = String::new();
    let mut line = String::new();
    // Whether the server said the answer is whole (a `finish_reason`, or `[DONE]`): a
    // stream that stops short of that is a failure, never a shorter answer.
    let mut finished = false;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| format!("reading the streamed answer: {e}"))?;
        if n == 0 {
            return if finished {
                Ok(generated)
            } else {
                Err("the stream ended before the server finished the answer".to_string())
            };
        }
        let l = line.trim();
        if l.is_empty() || l.starts_with(':') || l.starts_with("event:") || l.starts_with("id:") {
            continue;
        }
        let Some(data) = l.strip_prefix("data:").map(str::trim) else {
            // Not a stream: one JSON answer.
            let mut text = line.clone();
            reader
                .read_to_string(&mut text)
                .map_err(|e| format!("reading the answer: {e}"))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
            return answer_text(api, &v)
                .ok_or_else(|| "no completion text in the answer".to_string());
        };
        if data == "[DONE]" {
            return Ok(generated);
        }
        let v: Value =
            serde_json::from_str(data).map_err(|e| format!("a streamed event is not JSON: {e}"))?;
        if v.get("error").is_some() {
            return Err(format!(
                "the stream ended in an error: {}",
                error_message(data)
            ));
        }
        if let Some(t) = answer_text(api, &v) {
            generated.push_str(&t);
        }
        finished |= v
            .pointer("/choices/0/finish_reason")
            .is_some_and(|r| !r.is_null());
        if cut_known(removed, &generated) {
            return Ok(generated);
        }
    }
}

/// Calls the model (blocking: run it on a blocking thread).
pub fn complete(api: Api, o: &HttpOptions, prefix: &str, suffix: &str) -> Result<String, String> {
    let endpoint = o
        .endpoint
        .as_deref()
        .ok_or("no --endpoint for the HTTP backend")?;
    let (prefix, suffix) = window(prefix, suffix, o.context_chars);
    let (prefix, removed) = if o.heal_whitespace {
        heal_split(prefix)
    } else {
        (prefix, "")
    };
    // A `\n` stop would end the answer at the line break taken off: the host applies it.
    let host_cuts = removed.contains('\n') && o.stop.iter().any(|s| s == "\n");
    let (path, mut body) = if host_cuts {
        let mut o = o.clone();
        o.stop.retain(|s| s != "\n");
        request(api, &o, prefix, suffix)
    } else {
        request(api, o, prefix, suffix)
    };
    // When the host cuts the answer itself, an OpenAI-compatible server streams it and
    // the connection is closed as soon as the cut is known, so the server stops
    // generating tokens that would be thrown away (greedy decoding: the text up to the
    // cut is the same either way).
    let streamed = host_cuts && api == Api::OpenAi;
    if streamed {
        body["stream"] = json!(true);
    }
    let url = format!("{}{}", endpoint.trim_end_matches('/'), path);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_millis(o.http_timeout_ms)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.post(&url);
    if let Some(var) = &o.api_key_env
        && let Ok(key) = std::env::var(var)
    {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    // An answer's failure names the path, not the address: a managed service's port
    // changes from run to run, and the records of the same answers must not (the manifest
    // says where each service listened). A server that could not be reached at all is
    // named in full: where it was looked for is the point of that message.
    let mut resp = req
        .send_json(&body)
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = resp.status();
    if streamed && status.is_success() {
        let reader = std::io::BufReader::new(resp.body_mut().as_reader());
        let answer =
            read_until_cut(reader, api, removed).map_err(|e| format!("POST {path}: {e}"))?;
        return Ok(heal_answer(removed, &answer, true).unwrap_or_default());
    }
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("POST {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "POST {path} answered {status}: {}",
            error_message(&text)
        ));
    }
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("POST {path}: not JSON: {e}"))?;
    let answer = answer_text(api, &v)
        .ok_or_else(|| format!("POST {path}: no completion text in the answer"))?;
    if !o.heal_whitespace {
        return Ok(answer);
    }
    Ok(heal_answer(removed, &answer, host_cuts).unwrap_or_default())
}

/// A plain prompt completed by an OpenAI-compatible `/v1/completions` server (no FIM,
/// no context window, no healing): `max_tokens` and `stop` as given, the options'
/// model, temperature, key and timeout. For the next-edit prompt (`host::next_edit`).
/// Returns the text and whether the model stopped by itself (a stop sequence or its end
/// of text), not at `max_tokens`.
pub fn generate(
    api: Api,
    o: &HttpOptions,
    prompt: &str,
    max_tokens: u32,
    stop: &[&str],
) -> Result<(String, bool), String> {
    if api != Api::OpenAi {
        return Err(
            "next edits are asked of an OpenAI-compatible server only (--backend openai)".into(),
        );
    }
    let endpoint = o
        .endpoint
        .as_deref()
        .ok_or("no --endpoint for the HTTP backend")?;
    let path = "/v1/completions";
    let body = json!({
        "model": o.model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": o.temperature,
        "stream": false,
        "stop": stop,
    });
    let url = format!("{}{}", endpoint.trim_end_matches('/'), path);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_millis(o.http_timeout_ms)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.post(&url);
    if let Some(var) = &o.api_key_env
        && let Ok(key) = std::env::var(var)
    {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let mut resp = req
        .send_json(&body)
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = resp.status();
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("POST {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "POST {path} answered {status}: {}",
            error_message(&text)
        ));
    }
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("POST {path}: not JSON: {e}"))?;
    let finished = v
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        != Some("length");
    let text = answer_text(api, &v)
        .ok_or_else(|| format!("POST {path}: no completion text in the answer"))?;
    Ok((text, finished))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fim_prompts_per_template_exactly() {
        let (p, s) = ("def f(x):\n    ", "\n    return y");
        assert_eq!(
            fim_prompt(FimTemplate::Starcoder, p, s),
            "<fim_prefix>def f(x):\n    <fim_suffix>\n    return y<fim_middle>"
        );
        assert_eq!(
            fim_prompt(FimTemplate::Codellama, p, s),
            "<PRE> def f(x):\n     <SUF>\n    return y <MID>"
        );
        assert_eq!(
            fim_prompt(FimTemplate::Deepseek, p, s),
            "<｜fim▁begin｜>def f(x):\n    <｜fim▁hole｜>\n    return y<｜fim▁end｜>"
        );
        assert_eq!(
            fim_prompt(FimTemplate::Qwen, p, s),
            "<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n    return y<|fim_middle|>"
        );
        assert_eq!(fim_prompt(FimTemplate::None, p, s), p);
        for t in FimTemplate::ALL {
            assert_eq!(
                parse_fim(&fim_prompt(t, p, s)),
                Some((p.to_string(), s.to_string())),
                "{t:?}"
            );
        }
    }

    #[test]
    fn the_context_window_keeps_what_is_near_the_cursor() {
        assert_eq!(window("abcdefgh", "ijkl", 8), ("cdefgh", "ij"));
        assert_eq!(window("ab", "cd", 100), ("ab", "cd"));
        assert_eq!(window("日本語テキスト", "", 4), ("テキスト", ""));
        assert_eq!(window("日本語テキスト", "abc", 4), ("キスト", "a"));
    }

    #[test]
    fn error_messages_come_from_the_servers_body() {
        // llama-server's answer to /infill for a model without FIM tokens.
        let llama = r#"{"error":{"code":501,"message":"Infill is not supported by this model: prefix token is missing. suffix token is missing. middle token is missing. ","type":"not_supported_error"}}"#;
        assert_eq!(
            error_message(llama),
            "Infill is not supported by this model: prefix token is missing. suffix token is missing. middle token is missing."
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
    }

    #[test]
    fn whitespace_healing_moves_the_trailing_blank_into_the_answer() {
        assert_eq!(heal_split("def f():\n    "), ("def f():", "\n    "));
        assert_eq!(heal_split("x = 1\n"), ("x = 1", "\n"));
        assert_eq!(heal_split("x = 1"), ("x = 1", ""));
        assert_eq!(
            heal_answer("\n", "\n    return 1\n\nfoo", true),
            Some("    return 1".into())
        );
        assert_eq!(
            heal_answer("\n    ", "\n    return 1\n", false),
            Some("return 1\n".into())
        );
        // The model continued the line above: nothing fits the cursor.
        assert_eq!(heal_answer("\n", " # comment\nx", true), None);
        // A blank line first is a blank suggestion for this line.
        assert_eq!(heal_answer("\n", "\n\nx = 2", true), Some(String::new()));
    }

    #[test]
    fn request_bodies_per_api() {
        let o = HttpOptions {
            model: "m".into(),
            max_tokens: 16,
            stop: vec!["\n".into()],
            ..Default::default()
        };
        let (path, b) = request(Api::OpenAi, &o, "a", "b");
        assert_eq!(path, "/v1/completions");
        assert_eq!(b["prompt"], "<fim_prefix>a<fim_suffix>b<fim_middle>");
        assert_eq!(b["stop"], json!(["\n"]));
        let (path, b) = request(Api::Ollama, &o, "a", "b");
        assert_eq!(
            (
                path,
                &b["prompt"],
                &b["suffix"],
                &b["options"]["num_predict"]
            ),
            ("/api/generate", &json!("a"), &json!("b"), &json!(16))
        );
        let (path, b) = request(Api::LlamaCpp, &o, "a", "b");
        assert_eq!(
            (path, &b["input_prefix"], &b["input_suffix"]),
            ("/infill", &json!("a"), &json!("b"))
        );
        let (path, b) = request(Api::Tgi, &o, "a", "b");
        assert_eq!(
            (path, &b["parameters"]["max_new_tokens"]),
            ("/generate", &json!(16))
        );
        assert_eq!(
            answer_text(Api::Tgi, &json!([{"generated_text": "x"}])),
            Some("x".into())
        );
        assert_eq!(
            answer_text(Api::OpenAi, &json!({"choices": [{"text": "y"}]})),
            Some("y".into())
        );
    }

    #[test]
    fn the_cut_is_known_when_the_answer_leaves_the_healed_blank_or_ends_its_line() {
        assert!(!cut_known("\n    ", ""));
        assert!(!cut_known("\n    ", "\n  "));
        assert!(cut_known("\n    ", "\nx"));
        assert!(!cut_known("\n    ", "\n    return"));
        assert!(cut_known("\n    ", "\n    return 1\n"));
        assert!(cut_known("\n", "\n\n"));
    }

    #[test]
    fn a_streamed_answer_is_read_up_to_the_cut_and_no_further() {
        let ev = |t: &str| format!("data: {}\n\n", json!({"choices": [{"text": t}]}));
        let stream = [ev("\n "), ev("   ret"), ev("urn 1\n"), ev("never read")].concat();
        let got = read_until_cut(stream.as_bytes(), Api::OpenAi, "\n    ").unwrap();
        assert_eq!(got, "\n    return 1\n");
        assert_eq!(heal_answer("\n    ", &got, true).unwrap(), "return 1");
        // Ends without a line break: all of it.
        let short = [ev("\nx = 1"), "data: [DONE]\n\n".to_string()].concat();
        assert_eq!(
            read_until_cut(short.as_bytes(), Api::OpenAi, "\n").unwrap(),
            "\nx = 1"
        );
        // A server that does not stream: one JSON body.
        let whole = json!({"choices": [{"text": "\nabc\ndef"}]}).to_string();
        assert_eq!(
            read_until_cut(whole.as_bytes(), Api::OpenAi, "\n").unwrap(),
            "\nabc\ndef"
        );
        // A stream cut short (the server died) is an error, not a shorter answer.
        let cut_short = ev("\nx = 1");
        assert_eq!(
            read_until_cut(cut_short.as_bytes(), Api::OpenAi, "\n").unwrap_err(),
            "the stream ended before the server finished the answer"
        );
        let finished = format!(
            "{}data: {}\n\n",
            ev("\nx"),
            json!({"choices": [{"text": "", "finish_reason": "length"}]})
        );
        assert_eq!(
            read_until_cut(finished.as_bytes(), Api::OpenAi, "\n").unwrap(),
            "\nx"
        );
        // An error event is an error, not an empty answer.
        let err = format!(
            "{}data: {}\n\n",
            ev("\n"),
            json!({"error": {"message": "slot lost"}})
        );
        assert_eq!(
            read_until_cut(err.as_bytes(), Api::OpenAi, "\n    ").unwrap_err(),
            "the stream ended in an error: slot lost"
        );
    }
}
