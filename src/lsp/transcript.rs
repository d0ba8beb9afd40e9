//! The transcript tap: every message as one JSON line (direction, monotonic time,
//! method, id, body), with secrets redacted before anything is written.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

pub struct Transcript {
    start: Instant,
    out: Mutex<BufWriter<File>>,
}

impl Transcript {
    pub fn create(path: &Path) -> std::io::Result<Transcript> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Transcript {
            start: Instant::now(),
            out: Mutex::new(BufWriter::new(File::create(path)?)),
        })
    }

    pub fn record(&self, dir: &str, method: Option<&str>, id: Option<Value>, body: &Value) {
        let line = json!({
            "dir": dir,
            "t_ms": (self.start.elapsed().as_secs_f64() * 1e6).round() / 1e3,
            "method": method,
            "id": id,
            "body": redact(body),
        });
        if let Ok(mut out) = self.out.lock() {
            let _ = serde_json::to_writer(&mut *out, &line);
            let _ = out.write_all(b"\n");
            let _ = out.flush();
        }
    }
}

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
const SECRET_PREFIXES: &[&str] = &[
    "Bearer ",
    "gho_",
    "ghp_",
    "ghu_",
    "github_pat_",
    "sk-",
    "hf_",
];

/// A copy of `v` with every value under a secret-looking key, and every string that
/// looks like a token, replaced by `"[redacted]"`.
pub fn redact(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let lk = k.to_ascii_lowercase().replace('-', "_");
                    // Only strings are secrets: `maxTokens: 64` stays readable.
                    let secret = SECRET_KEYS.iter().any(|s| lk.contains(s)) && v.is_string();
                    let nv = if secret {
                        Value::String("[redacted]".into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), nv)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(redact).collect()),
        Value::String(s) if SECRET_PREFIXES.iter().any(|p| s.starts_with(p)) => {
            Value::String("[redacted]".into())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
