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

/// Runs `cmd` with its standard output in `stdout`, waiting for it with `wait4`.
pub fn timed(cmd: &mut Command, stdout: &Path) -> Result<Timing> {
    let out = std::fs::File::create(stdout)
        .with_context(|| format!("cannot create {}", stdout.display()))?;
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::from(out))
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let ended =
        crate::os::wait_with_usage(child).with_context(|| format!("wait4 failed for {cmd:?}"))?;
    let seconds_wall = start.elapsed().as_secs_f64();
    if ended.code != Some(0) {
        bail!("{cmd:?} failed (status {})", ended.status);
    }
    Ok(Timing {
        seconds: seconds_wall,
        cpu: ended.usage.cpu_seconds,
        peak_mb: ended.usage.peak_mb,
    })
}

/// `/proc/loadavg`'s three averages, or `?`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}
