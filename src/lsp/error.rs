//! How the layer fails: one `LspError` naming the server, the method and what happened
//! (spawn, timeout, exit with the last stderr lines, an error answer, a bad answer, a
//! closed or dropped connection).

use std::time::Duration;

use serde_json::Value;

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    #[error("cannot start {server}: {program} {args:?} in {cwd}: {message}")]
    Spawn {
        server: String,
        program: String,
        cwd: String,
        args: Vec<String>,
        message: String,
    },
    #[error("{server}: {method} (id {id}) got no answer within {after:?}")]
    Timeout {
        server: String,
        method: String,
        id: i64,
        after: Duration,
    },
    #[error("{server} exited ({status}){}", stderr_suffix(.stderr))]
    ServerExited {
        server: String,
        status: String,
        stderr: String,
    },
    #[error("{server} answered {method} with error {code}: {message}")]
    Rpc {
        server: String,
        method: String,
        code: i64,
        message: String,
        data: Option<Value>,
    },
    #[error("{server}: cannot decode the answer to {method}: {message}")]
    Decode {
        server: String,
        method: String,
        message: String,
    },
    #[error("{server}: connection closed")]
    Closed { server: String },
    #[error("{server}: cannot connect to {address}: {message}")]
    Connect {
        server: String,
        address: String,
        message: String,
    },
    /// An attached server's connection ended: reported as a crashed server is.
    #[error("{server}: the connection to {address} was dropped ({why})")]
    Disconnected {
        server: String,
        address: String,
        why: String,
    },
}

fn stderr_suffix(s: &str) -> String {
    if s.trim().is_empty() {
        String::new()
    } else {
        format!("; last stderr lines:\n{s}")
    }
}

impl LspError {
    pub fn is_timeout(&self) -> bool {
        matches!(self, LspError::Timeout { .. })
    }
    pub fn is_exit(&self) -> bool {
        matches!(
            self,
            LspError::ServerExited { .. } | LspError::Closed { .. } | LspError::Disconnected { .. }
        )
    }
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            LspError::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }
}
