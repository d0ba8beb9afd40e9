//! Secrets never leave typist: API keys from the environment, tokens in profiles, and
//! `Authorization` headers are known by value and replaced by `[redacted]` wherever text
//! leaves the process (records' errors, manifests, transcripts, logs, messages, reports
//! built from records).
//!
//! Two nets: by shape ([`redact`]: values under secret-looking keys, strings with token
//! prefixes) for structured data, and by value ([`scrub`]: every registered secret, in
//! any text). Values are registered from the environment at start-up ([`register_env`])
//! and from each profile as it is loaded ([`register_value`], [`register`]).
//!
//! The keys (`token`, `authorization`, …) and prefixes (`Bearer `, `ghp_`, `sk-`, `hf_`,
//! …) are the lists below.
//!
//! [`ScrubbedStderr`] is the `tracing` writer that scrubs every log event before it
//! reaches stderr.

use std::borrow::Cow;
use std::sync::RwLock;

use serde_json::Value;

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// Names (of keys and environment variables) whose values are secrets; matched in
/// lower case with `-` read as `_`.
const SECRET_KEYS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "authorization",
    "credential",
    "cookie",
];
/// Environment variable names that hold keys without saying "token" or "secret".
const SECRET_ENV_SUFFIXES: &[&str] = &["_key", "_pat"];
/// Prefixes of well-known token formats.
const SECRET_PREFIXES: &[&str] = &[
    "Bearer ",
    "gho_",
    "ghp_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "sk-",
    "hf_",
];
/// Shorter values are not registered: scrubbing `abc` everywhere would mangle text.
const MIN_LEN: usize = 8;

static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Whether a key or variable name names a secret.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.iter().any(|s| n.contains(s))
}

fn is_secret_env(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    is_secret_name(&n) || SECRET_ENV_SUFFIXES.iter().any(|s| n.ends_with(s))
}

/// Remembers a secret value (and, for `Bearer x`, `x`).
pub fn register(value: &str) {
    let value = value.trim();
    let bare = value.strip_prefix("Bearer ").unwrap_or(value);
    if bare.len() < MIN_LEN {
        return;
    }
    if let Ok(mut k) = KNOWN.write()
        && !k.iter().any(|s| s == bare)
    {
        k.push(bare.to_string());
        // Longest first, so a secret containing another is replaced whole.
        k.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Registers the values of the environment's secret-looking variables.
pub fn register_env() {
    for (k, v) in std::env::vars_os() {
        if let (Some(k), Some(v)) = (k.to_str(), v.to_str())
            && is_secret_env(k)
        {
            register(v);
        }
    }
}

/// Registers every string under a secret-looking key, and every token-shaped string.
pub fn register_value(v: &Value) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s) if is_secret_name(k) => register(s),
                    _ => register_value(v),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(register_value),
        Value::String(s) if SECRET_PREFIXES.iter().any(|p| s.starts_with(p)) => register(s),
        _ => {}
    }
}

/// `text` with every registered secret replaced by [`REDACTED`].
pub fn scrub(text: &str) -> Cow<'_, str> {
    let Ok(known) = KNOWN.read() else {
        return Cow::Borrowed(text);
    };
    let mut out = Cow::Borrowed(text);
    for s in known.iter() {
        if out.contains(s.as_str()) {
            out = Cow::Owned(out.replace(s.as_str(), REDACTED));
        }
    }
    out
}

/// A copy of `v` with every value under a secret-looking key, every token-shaped string
/// and every registered secret replaced by [`REDACTED`].
pub fn redact(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    // Only strings are secrets: `maxTokens: 64` stays readable.
                    let nv = if is_secret_name(k) && v.is_string() {
                        Value::String(REDACTED.into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), nv)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(redact).collect()),
        Value::String(s) if SECRET_PREFIXES.iter().any(|p| s.starts_with(p)) => {
            Value::String(REDACTED.into())
        }
        Value::String(s) => Value::String(scrub(s).into_owned()),
        other => other.clone(),
    }
}

/// A `tracing` writer that scrubs each event before it reaches stderr.
#[derive(Clone, Copy, Default)]
pub struct ScrubbedStderr;

impl std::io::Write for ScrubbedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(scrub(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for ScrubbedStderr {
    type Writer = ScrubbedStderr;
    fn make_writer(&'a self) -> Self::Writer {
        ScrubbedStderr
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registered_values_are_scrubbed_anywhere_in_text() {
        register("canary-unit-0123456789");
        register("Bearer canary-bearer-abcdef");
        register("short");
        let t = "key=canary-unit-0123456789; auth: Bearer canary-bearer-abcdef; short";
        assert_eq!(scrub(t), "key=[redacted]; auth: Bearer [redacted]; short");
    }

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let v = json!({
            "initializationOptions": {"config": {"server": {"endpoint": "http://127.0.0.1:1", "token": "auth_123"}}},
            "env": {"GITHUB_TOKEN": "x", "PATH": "/bin"},
            "headers": [{"Authorization": "Bearer abc"}, "sk-live-1"],
            "tokensToClear": ["<eos>"],
            "maxTokens": 64,
        });
        assert_eq!(
            redact(&v),
            json!({
                "initializationOptions": {"config": {"server": {"endpoint": "http://127.0.0.1:1", "token": "[redacted]"}}},
                "env": {"GITHUB_TOKEN": "[redacted]", "PATH": "/bin"},
                "headers": [{"Authorization": "[redacted]"}, "[redacted]"],
                "tokensToClear": ["<eos>"],
                "maxTokens": 64,
            })
        );
        register_value(
            &json!({"settings": {"apiKey": "canary-value-777777"}, "n": ["ghp_canary12345"]}),
        );
        assert_eq!(
            scrub("canary-value-777777 ghp_canary12345"),
            "[redacted] [redacted]"
        );
    }
}
