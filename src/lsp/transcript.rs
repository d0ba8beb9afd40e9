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

use crate::secrets::redact;
