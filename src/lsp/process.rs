//! The server's child process: spawned in its own process group with `kill_on_drop`,
//! stderr drained into `tracing` (last lines kept for error messages), exit status
//! published once. Dropping a [`ServerProcess`] kills the whole group, so no worker a
//! server started outlives the run; the group is also swept once when the server itself
//! exits, and never signalled after that (its id could by then name another group).
//! On Linux the server also gets `PR_SET_PDEATHSIG`: killed with typist, even by SIGKILL.
//!
//! Stderr is drained as bytes, decoded lossily (`stderr`). The parent-death signal is set
//! by `os::parent_death_signal`: SIGKILL, or SIGTERM to the guard shell of a program whose
//! descendants would outlive it (`spawn_guarded`), which then kills its whole group.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::LspError;
use super::stderr::{self, StderrTail};

/// How long the last lines a killed server wrote on stderr are waited for, so that the
/// error can quote them.
const STDERR_DRAIN_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// How a server process ended, with the last lines it wrote to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    pub status: String,
    pub stderr_tail: String,
}

/// The guard of [`ServerProcess::spawn_guarded`]: the program (`$1`, its arguments after
/// it) runs in the background of a shell that leads the process group; on SIGTERM (the
/// parent-death signal) the shell kills the group, itself included; else it ends with
/// the program's exit status. (A background command's standard input is `/dev/null`.)
const GUARD: &str = "trap 'kill -KILL 0' TERM; \"$@\" & wait $!";

pub struct ServerProcess {
    pid: u32,
    /// The server has not been reaped yet: its pid still names its group.
    alive: Arc<AtomicBool>,
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
        Self::spawn_with_fds(name, program, args, env, cwd, &[])
    }

    /// [`Self::spawn`] for a program whose descendants may outlive it by seconds when it
    /// is killed (code-server's server process and extension hosts notice their parent's
    /// end only later, longer on a loaded machine): it runs under `/bin/sh` as its
    /// process group's leader ([`GUARD`]); the parent-death signal reaches that shell as
    /// SIGTERM, and it kills the whole group at once. So a SIGKILL of typist takes every
    /// process the program started; [`Self::kill_group`] does as before.
    pub fn spawn_guarded(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Spawned, LspError> {
        let mut guarded = vec![
            "-c".to_string(),
            GUARD.to_string(),
            format!("typist-guard-{name}"),
            program.display().to_string(),
        ];
        guarded.extend(args.iter().cloned());
        Self::spawn_inner(
            name,
            Path::new("/bin/sh"),
            &guarded,
            env,
            cwd,
            &[],
            libc::SIGTERM,
        )
    }

    /// [`Self::spawn`], the child also getting each `(from, to)` descriptor pair (a
    /// browser's DevTools pipe on 3 and 4).
    pub fn spawn_with_fds(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        fds: &[(std::os::fd::RawFd, std::os::fd::RawFd)],
    ) -> Result<Spawned, LspError> {
        Self::spawn_inner(name, program, args, env, cwd, fds, libc::SIGKILL)
    }

    fn spawn_inner(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        fds: &[(std::os::fd::RawFd, std::os::fd::RawFd)],
        death: libc::c_int,
    ) -> Result<Spawned, LspError> {
        // With `--assistant-sandbox`, the program starts in the assistants' sandbox.
        let (start, start_args) = crate::jail::wrap(program, args)
            .unwrap_or_else(|| (program.to_path_buf(), args.to_vec()));
        let mut cmd = Command::new(&start);
        cmd.args(&start_args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        crate::os::parent_death_signal(cmd.as_std_mut(), death);
        if !fds.is_empty() {
            crate::os::give_fds(cmd.as_std_mut(), fds);
        }
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
        let (tail, drain) = stderr::drain(child.stderr.take(), name);
        let alive = Arc::new(AtomicBool::new(true));
        let exit_rx = watch_exit(child, pid, alive.clone(), tail, drain);
        Ok((ServerProcess { pid, alive }, stdin, stdout, exit_rx))
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGKILL to the whole process group (the server and every worker it started),
    /// while the server is alive; once it has been reaped its group was swept then.
    pub fn kill_group(&self) {
        if self.alive.load(Ordering::SeqCst) {
            killpg(self.pid);
        }
    }
}

/// Waits for the server on a task of its own: once it is reaped, sweeps its group (once:
/// `alive` goes false), lets the stderr drain finish, and publishes the exit.
fn watch_exit(
    mut child: Child,
    pid: u32,
    alive: Arc<AtomicBool>,
    tail: Arc<Mutex<StderrTail>>,
    drain: JoinHandle<()>,
) -> watch::Receiver<Option<ExitInfo>> {
    let (exit_tx, exit_rx) = watch::channel(None);
    tokio::spawn(async move {
        let status = match child.wait().await {
            Ok(s) => describe_status(s),
            Err(e) => format!("wait failed: {e}"),
        };
        // Sweep the workers the server left, now, while no other group can have
        // taken its id; after this the group is never signalled again.
        if alive.swap(false, Ordering::SeqCst) {
            killpg(pid);
        }
        // Give the drain a moment to read the last lines the server wrote.
        let _ = tokio::time::timeout(STDERR_DRAIN_WAIT, drain).await;
        let stderr_tail = tail.lock().map(|t| t.joined()).unwrap_or_default();
        let _ = exit_tx.send(Some(ExitInfo {
            status,
            stderr_tail,
        }));
    });
    exit_rx
}

fn killpg(pid: u32) {
    crate::os::signal_group(pid, libc::SIGKILL);
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
