//! A server's stderr: drained line by line into `tracing`, the last lines kept for
//! error messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncBufReadExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

/// Last lines of a server's stderr, kept for error messages.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
}

impl StderrTail {
    pub const KEEP: usize = 20;
    pub fn push(&mut self, line: String) {
        if self.lines.len() == Self::KEEP {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }
    pub fn joined(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Reads `stderr` to its end on a task of its own, logging every line and keeping the
/// last ones in the returned tail.
pub fn drain(stderr: Option<ChildStderr>, name: &str) -> (Arc<Mutex<StderrTail>>, JoinHandle<()>) {
    let tail = Arc::new(Mutex::new(StderrTail::default()));
    let task = {
        let tail = tail.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            let Some(stderr) = stderr else { return };
            // Bytes, decoded lossily: a server writing invalid UTF-8 must not stop the
            // drain (the pipe would fill and the server block).
            let mut reader = tokio::io::BufReader::new(stderr);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                tracing::debug!(target: "typist::server_stderr", server = %name, "{line}");
                if let Ok(mut t) = tail.lock() {
                    t.push(line.to_string());
                }
            }
        })
    };
    (tail, task)
}
