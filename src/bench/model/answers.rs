//! What an answer says once what changes from one call to the next is left out: its
//! server-sent events, its normalized form (for comparing the two passes' answers), and
//! llama.cpp's `timings`, summed over answers.

use serde::Serialize;
use serde_json::Value;

/// Server-sent events of a stream: the `data:` lines.
pub(super) fn events(stream: &str) -> usize {
    stream.lines().filter(|l| l.starts_with("data:")).count()
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
