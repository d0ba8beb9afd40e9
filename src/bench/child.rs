//! A benchmarked child process: wall time, CPU time (user + system) and peak resident
//! memory, from `wait4`'s resource usage of that child alone; and the machine's load
//! average the measurement was taken under.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub seconds: f64,
    /// User + system CPU seconds.
    pub cpu: f64,
    pub peak_mb: f64,
}

impl Timing {
    /// CPU time over wall time: 2 when both cores were busy throughout.
    pub fn cpu_share(&self) -> f64 {
        self.cpu / self.seconds
    }
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// Runs `cmd` with its standard output in `stdout`, waiting for it with `wait4`.
pub fn timed(cmd: &mut Command, stdout: &Path) -> Result<Timing> {
    let out = std::fs::File::create(stdout)
        .with_context(|| format!("cannot create {}", stdout.display()))?;
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::from(out))
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for; status and usage are valid
    // pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds_wall = start.elapsed().as_secs_f64();
    // Reaped by wait4: the Child must not wait again.
    std::mem::forget(child);
    if r < 0 {
        bail!("wait4 failed for {cmd:?}");
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("{cmd:?} failed (status {status})");
    }
    Ok(Timing {
        seconds: seconds_wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux reports kilobytes.
        peak_mb: usage.ru_maxrss as f64 / 1024.0,
    })
}

/// `/proc/loadavg`'s three averages, or `?`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}
