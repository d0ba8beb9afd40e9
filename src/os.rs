//! The operating system calls typist makes with `libc`, each behind a safe function:
//! signals to a process or its group, CPU time and peak memory, a child that dies with
//! typist, a timed wait for a child. Every `unsafe` block for a system call is here.
//!
//! The functions: `signal_group` and `signal` (`killpg`, `kill`), `usage` (CPU seconds
//! and peak memory, `getrusage`), `wait_with_usage` (`wait4`), `die_with_parent`
//! (`PR_SET_PDEATHSIG` = SIGKILL, on Linux), `give_fds` (`dup2` before exec). No other file makes an `unsafe` system call.

use std::process::Command;

/// Signals the process group led by `pid` (the service or server and anything it
/// started). A group that is gone already is not an error: the signal had nothing to
/// reach.
pub fn signal_group(pid: u32, signal: libc::c_int) {
    // SAFETY: killpg has no memory-safety preconditions; a stale group gives ESRCH.
    unsafe {
        libc::killpg(pid as libc::pid_t, signal);
    }
}

/// The process's effective user id (0: root).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Signals the one process `pid`; a process that is gone already is not an error.
/// Whether process `pid` exists (signal 0 asks without sending one).
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only checks the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

pub fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) has no memory-safety preconditions; a stale pid gives ESRCH.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// CPU seconds (user + system) and peak resident memory of a process or of its reaped
/// children.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub cpu_seconds: f64,
    /// Linux reports kilobytes; this is mebibytes.
    pub peak_mb: f64,
}

impl Usage {
    fn of(u: &libc::rusage) -> Usage {
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            cpu_seconds: s(u.ru_utime) + s(u.ru_stime),
            peak_mb: u.ru_maxrss as f64 / 1024.0,
        }
    }
}

/// Whose usage [`usage`] reads.
#[derive(Debug, Clone, Copy)]
pub enum Who {
    /// typist itself, all its threads.
    This,
    /// The children typist has reaped (servers that ended).
    Children,
}

/// `getrusage`: `None` if the kernel refuses (it never does for these two).
pub fn usage(who: Who) -> Option<Usage> {
    let who = match who {
        Who::This => libc::RUSAGE_SELF,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: an all-zero rusage is a valid value for getrusage to fill in, and the
    // pointer is to our own local.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::getrusage(who, &mut u) };
    (r == 0).then(|| Usage::of(&u))
}

/// How a child waited for with [`wait_with_usage`] ended.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    /// The exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    /// The raw wait status, for messages.
    pub status: i32,
    pub usage: Usage,
}

/// Waits for `child` with `wait4`, which gives its own CPU time and peak memory (not
/// those of other children). The child is reaped: it must not be waited for again, so
/// it is taken by value.
pub fn wait_with_usage(child: std::process::Child) -> std::io::Result<Ended> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for; status and usage are valid
    // pointers to locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    // Reaped by wait4 (or lost to an error): the Child must not wait again.
    std::mem::forget(child);
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Ended {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        status,
        usage: Usage::of(&usage),
    })
}

/// Linux: the child gets SIGKILL when typist dies, however it dies. (The signal follows
/// the thread that spawned the child; tokio's worker threads live as long as the
/// runtime.) If typist is already gone when the child starts, the child exits at once.
pub fn die_with_parent(cmd: &mut Command) {
    parent_death_signal(cmd, libc::SIGKILL);
}

/// Linux: the child gets `signal` when typist dies, however it dies (see
/// [`die_with_parent`]); a guard catches SIGTERM and takes its process group with it.
#[cfg(target_os = "linux")]
pub fn parent_death_signal(cmd: &mut Command, signal: libc::c_int) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (prctl, getppid, _exit).
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn parent_death_signal(_cmd: &mut Command, _signal: libc::c_int) {}

/// The child gets each `(from, to)` pair's descriptor `from` as its descriptor `to`
/// (`dup2`, which clears close-on-exec on `to`): Chromium's `--remote-debugging-pipe`
/// reads on 3 and writes on 4. `from` must stay open until the child is spawned.
pub fn give_fds(cmd: &mut Command, fds: &[(std::os::fd::RawFd, std::os::fd::RawFd)]) {
    use std::os::unix::process::CommandExt;
    let fds = fds.to_vec();
    // SAFETY: the closure runs between fork and exec and calls only dup2 and fcntl,
    // which are async-signal-safe; it allocates nothing (the Vec was made before).
    unsafe {
        cmd.pre_exec(move || {
            for &(from, to) in &fds {
                if from == to {
                    let flags = libc::fcntl(from, libc::F_GETFD);
                    if flags < 0 || libc::fcntl(from, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_waited_for_gives_its_code_and_its_own_cpu() {
        let child = Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
            ])
            .spawn()
            .unwrap();
        let ended = wait_with_usage(child).unwrap();
        assert_eq!(ended.code, Some(3));
        assert!(ended.usage.cpu_seconds > 0.0, "{ended:?}");
        assert!(ended.usage.peak_mb > 0.0, "{ended:?}");
        assert!(usage(Who::This).unwrap().cpu_seconds > 0.0);
    }

    #[test]
    fn a_signalled_group_ends_and_a_gone_one_is_no_error() {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        signal_group(child.id(), libc::SIGKILL);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        signal_group(child.id(), libc::SIGKILL);
        signal(child.id(), libc::SIGKILL);
    }
}
