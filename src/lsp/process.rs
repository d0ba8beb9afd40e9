//! The server's child process: spawned in its own process group with `kill_on_drop`,
//! stderr drained into `tracing` (last lines kept for error messages), exit status
//! published once. Dropping a [`ServerProcess`] kills the whole group, so no worker a
//! server started outlives the run.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncBufReadExt;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::LspError;
use super::client::StderrTail;

/// How a server process ended, with the last lines it wrote to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    pub status: String,
    pub stderr_tail: String,
}

pub struct ServerProcess {
    pid: u32,
}

type Spawned = (
    ServerProcess,
    ChildStdin,
    ChildStdout,
    watch::Receiver<Option<ExitInfo>>,
);

impl ServerProcess {
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Spawned, LspError> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let spawn_err = |message: String| LspError::Spawn {
            server: name.to_string(),
            program: program.display().to_string(),
            cwd: cwd.display().to_string(),
            args: args.to_vec(),
            message,
        };
        let mut child = cmd.spawn().map_err(|e| spawn_err(e.to_string()))?;
        let pid = child
            .id()
            .ok_or_else(|| spawn_err("exited at once".into()))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| spawn_err("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| spawn_err("no stdout".into()))?;
        let stderr = child.stderr.take();
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let (exit_tx, exit_rx) = watch::channel(None);

        let drain = {
            let tail = tail.clone();
            let name = name.to_string();
            tokio::spawn(async move {
                let Some(stderr) = stderr else { return };
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(target: "typist::server_stderr", server = %name, "{line}");
                    if let Ok(mut t) = tail.lock() {
                        t.push(line);
                    }
                }
            })
        };
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(s) => describe_status(s),
                Err(e) => format!("wait failed: {e}"),
            };
            // Give the drain a moment to read the last lines the server wrote.
            let _ = tokio::time::timeout(std::time::Duration::from_millis(300), drain).await;
            let stderr_tail = tail.lock().map(|t| t.joined()).unwrap_or_default();
            let _ = exit_tx.send(Some(ExitInfo {
                status,
                stderr_tail,
            }));
        });
        Ok((ServerProcess { pid }, stdin, stdout, exit_rx))
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGKILL to the whole process group (the server and every worker it started).
    pub fn kill_group(&self) {
        // SAFETY: killpg has no memory-safety preconditions; a stale group gives ESRCH.
        unsafe {
            libc::killpg(self.pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill_group();
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown exit".into(),
    }
}
