//! Running untrusted code: a repository's tests on a file with an accepted suggestion in
//! it (methodology §12), and the benchmark service's uploaded assistants. One module
//! for both (issues 43 and 46).
//!
//! A command runs under bubblewrap (`bwrap`, Debian's `bubblewrap`) with every
//! namespace of its own: no network (a network namespace holding only a loopback that
//! is down), its own process ids (when the command ends, everything it started dies
//! with the namespace: a fork left behind cannot outlive it), its own IPC and host
//! name. The file system is the machine's, read-only, with three exceptions: a fresh
//! `/tmp` (in memory, gone afterwards) which is also its HOME and TMPDIR, the working
//! copy the caller gives (read-write: the only place a write survives, and the caller
//! throws it away), and the user's HOME hidden behind an empty one (but for the paths
//! the caller lists as needed, bound read-only). Limits: processes by a `pids` cgroup of
//! the sandbox's own when typist is root (the kernel exempts root from RLIMIT_NPROC), by
//! RLIMIT_NPROC otherwise (a fork bomb fails to fork either way); address space, file
//! size and no core dumps by `prlimit`; the wall time by typist, which kills the whole
//! sandbox when it runs over. Output is kept up to a cap.
//!
//! A sandbox may have a user of its own (`Job::user`, the benchmark service's jobs):
//! bwrap, started by root, sets it up, then `setpriv` becomes that user with no
//! capability and no new privileges before the command starts; the working copy is
//! made that user's and `/etc/passwd` names it. Without one, the command runs as
//! typist's user with every capability dropped.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Wall time before the sandbox is killed.
    pub wall: Duration,
    /// Memory, in MiB: the address space of each process (RLIMIT_AS), or with
    /// `memory_in_group` the whole sandbox's memory (a cgroup's, when typist is root).
    pub memory_mib: u64,
    /// Limit the sandbox's memory as a whole by a cgroup instead of each process's
    /// address space: for programs built on V8 (Node, Chromium, VS Code), which reserve
    /// far more address space than they use and fail to start under RLIMIT_AS.
    pub memory_in_group: bool,
    /// Processes the sandbox's user may have beyond those it has already
    /// (RLIMIT_NPROC, which counts per user).
    pub processes: u64,
    /// Largest file a process may write (RLIMIT_FSIZE), in MiB.
    pub file_mib: u64,
    /// Bytes of stdout and of stderr kept (the rest is read and dropped).
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            wall: Duration::from_secs(120),
            memory_mib: 4096,
            memory_in_group: false,
            processes: 256,
            file_mib: 512,
            output_bytes: 64 << 10,
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Job {
    pub program: String,
    pub args: Vec<String>,
    /// The working copy: the command runs here, and may write only here (and in its
    /// own `/tmp`). The caller makes it (see [`copy_tree`]) and removes it.
    pub work: PathBuf,
    /// Paths the command needs (a venv, a toolchain), bound read-only wherever they
    /// are (the user's HOME is hidden, and `/tmp` is the sandbox's own).
    pub needs: Vec<PathBuf>,
    /// Paths hidden behind an empty folder (`needs` and `work` inside them are bound
    /// again): the benchmark service's data folder.
    pub hide: Vec<PathBuf>,
    /// Where the command starts (default: `work`); read-only unless inside `work`.
    pub cwd: Option<PathBuf>,
    /// Variables set for the command (besides HOME, TMPDIR and PATH, which are set).
    pub env: Vec<(String, String)>,
    /// The user (and group) id the command runs as, with no capability and no way to
    /// gain one (no new privileges): the benchmark service gives each job its own. The
    /// working copy is made theirs, `/tmp` and HOME writable by anyone in the sandbox,
    /// and `/etc/passwd` names them. Root only. None: typist's own user, with every
    /// capability dropped.
    pub user: Option<u32>,
    pub limits: Limits,
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Its exit status.
    Exited(i32),
    /// Killed by this signal (not typist's: a crash, or the kernel).
    Signalled(i32),
    /// Over its wall time: typist killed the sandbox.
    TimedOut,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.ended == Ended::Exited(0)
    }

    /// One line on how it ended, for a record's reason.
    pub fn reason(&self) -> String {
        match &self.ended {
            Ended::Exited(0) => "passed".to_string(),
            Ended::Exited(c) => format!("exit status {c}"),
            Ended::Signalled(s) => format!("killed by signal {s}"),
            Ended::TimedOut => format!("over its time limit ({:.0} s)", self.wall.as_secs_f64()),
        }
    }
}

/// The `bwrap` to use, or a one-line error saying how to get it.
pub fn bwrap() -> Result<PathBuf> {
    crate::jail::bwrap_on_path().context(
        "bubblewrap (bwrap) is not installed, and untrusted code runs only in its sandbox: apt-get install bubblewrap (scripts/install-servers.sh installs it)",
    )
}

/// Copies `src` into `dst` (made; contents, modes and links kept), for a working copy.
pub fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    copy_tree_except(src, dst, &[])
}

/// The same, but for `src`'s top-level entries named in `leave_out` (an installed
/// `node_modules` the caller links instead).
pub fn copy_tree_except(src: &Path, dst: &Path, leave_out: &[&str]) -> Result<()> {
    std::fs::create_dir_all(dst).with_context(|| format!("cannot make {}", dst.display()))?;
    let mut cmd = Command::new("cp");
    cmd.arg("-a");
    if leave_out.is_empty() {
        cmd.arg(format!("{}/.", src.display()));
    } else {
        let entries =
            std::fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))?;
        let mut any = false;
        for e in entries {
            let e = e?;
            if !leave_out.iter().any(|n| e.file_name() == *n) {
                cmd.arg(e.path());
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
    }
    let out = cmd.arg(dst).output().context("cannot run cp")?;
    if !out.status.success() {
        bail!(
            "cannot copy {} to {}: {}",
            src.display(),
            dst.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// How many processes user `uid` has now (for RLIMIT_NPROC, which counts them all).
fn processes_of(uid: u32) -> u64 {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("status")).is_ok_and(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("Uid:"))
                            .and_then(|v| v.split_whitespace().next()?.parse::<u32>().ok())
                            == Some(uid)
                    })
                })
                .count() as u64
        })
        .unwrap_or(0)
}

/// The sandbox's own cgroups (root only): `pids` with its `pids.max`, and `memory`
/// with its limit when the sandbox's memory is limited as a whole; removed (after
/// killing what is left in them) when dropped.
struct Group {
    dirs: Vec<PathBuf>,
}

impl Group {
    /// cgroup v2 (one folder in the unified hierarchy) or v1 (one per controller);
    /// None when the pids group cannot be made (not root, no controller). A memory
    /// limit that cannot be set is an error: the caller asked for it.
    fn make(max: u64, memory_mib: Option<u64>) -> Result<Option<Group>> {
        if crate::os::effective_uid() != 0 {
            if memory_mib.is_some() {
                bail!("the sandbox's memory limit needs a cgroup: run as root");
            }
            return Ok(None);
        }
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let name = format!(
            "typist-sandbox-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "pids"));
        let mut group = Group { dirs: Vec::new() };
        let pids = if v2 {
            PathBuf::from("/sys/fs/cgroup").join(&name)
        } else {
            PathBuf::from("/sys/fs/cgroup/pids").join(&name)
        };
        if std::fs::create_dir(&pids).is_err() {
            if memory_mib.is_some() {
                bail!("cannot make the sandbox's cgroup {}", pids.display());
            }
            return Ok(None);
        }
        group.dirs.push(pids.clone());
        if let Err(e) = std::fs::write(pids.join("pids.max"), max.to_string()) {
            if memory_mib.is_some() {
                bail!(
                    "cannot limit the sandbox's processes ({}): {e}",
                    pids.display()
                );
            }
            return Ok(None);
        }
        if let Some(mib) = memory_mib {
            let bytes = (mib << 20).to_string();
            let set = if v2 {
                std::fs::write(pids.join("memory.max"), &bytes)
            } else {
                let mem = PathBuf::from("/sys/fs/cgroup/memory").join(&name);
                std::fs::create_dir(&mem).and_then(|()| {
                    group.dirs.push(mem.clone());
                    std::fs::write(mem.join("memory.limit_in_bytes"), &bytes)
                })
            };
            set.context("cannot set the sandbox's memory limit (no memory cgroup controller)")?;
        }
        Ok(Some(group))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The pid namespace has ended them already; this is for a sandbox that did not
        // start one.
        for dir in &self.dirs {
            for _ in 0..50 {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                let pids: Vec<u32> = procs
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect();
                if pids.is_empty() {
                    break;
                }
                for p in pids {
                    crate::os::signal(p, libc::SIGKILL);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The command line that runs `job` in its sandbox, and its pids cgroup when it has one.
fn command(job: &Job, bwrap: &Path) -> Result<(Command, Held)> {
    let work = std::path::absolute(&job.work)?;
    let users = match job.user {
        Some(uid) => {
            if crate::os::effective_uid() != 0 {
                bail!("a sandbox with a user of its own needs typist to run as root");
            }
            if uid == 0 {
                bail!("a sandbox's own user cannot be root (user id 0)");
            }
            give_to(&work, uid)?;
            Some(user_files(uid)?)
        }
        None => None,
    };
    let group = Group::make(
        job.limits.processes,
        job.limits.memory_in_group.then_some(job.limits.memory_mib),
    )?;
    let mut cmd = match &group {
        // The shell moves itself into the groups, then becomes bwrap: everything the
        // sandbox starts is counted there.
        Some(g) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("while [ \"$1\" != -- ]; do echo $$ > \"$1\" || exit 125; shift; done; shift; exec \"$@\"")
                .arg("sh")
                .args(g.dirs.iter().map(|d| d.join("cgroup.procs")))
                .arg("--")
                .arg(bwrap);
            c
        }
        None => Command::new(bwrap),
    };
    // Every capability dropped: bwrap started by root would otherwise keep them all,
    // and with them the sandbox could unmount what hides paths from it or remount `/`
    // writable.
    cmd.args(["--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
    if job.user.is_some() {
        // Every namespace but the user's: the sandbox's user is a user of the host's,
        // so what it may touch is decided by the host's permissions too. The one
        // program that starts as root in it is `setpriv`, which needs these two to
        // become that user (and then has none).
        cmd.args([
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
        ]);
    } else {
        cmd.arg("--unshare-all");
    }
    cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--perms", "1777", "--tmpfs", "/dev/shm"])
        .args(["--perms", "1777", "--tmpfs", "/tmp"])
        .args(["--perms", "0777", "--dir", "/tmp/home"])
        // The host's sockets (the session bus, a container engine's) live under /run
        // (/var/run is a link to it): a read-only mount does not stop a connect(), so
        // the sandbox gets an empty /run of its own.
        .args(["--tmpfs", "/run"]);
    if let Some(files) = &users {
        cmd.arg("--ro-bind")
            .arg(files.path().join("passwd"))
            .arg("/etc/passwd")
            .arg("--ro-bind")
            .arg(files.path().join("group"))
            .arg("/etc/group");
    }
    mounts(&mut cmd, job, &work)?;
    let cwd = match &job.cwd {
        Some(c) => std::path::absolute(c)?,
        None => work.clone(),
    };
    cmd.arg("--chdir").arg(&cwd).arg("--clearenv");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_string());
    for (k, v) in [
        ("HOME", "/tmp/home"),
        ("TMPDIR", "/tmp"),
        ("PATH", path.as_str()),
        ("LANG", "C.UTF-8"),
    ] {
        cmd.args(["--setenv", k, v]);
    }
    for (k, v) in &job.env {
        cmd.arg("--setenv").arg(k).arg(v);
    }
    cmd.arg("--");
    if let Some(uid) = job.user {
        cmd.arg("setpriv").args([
            format!("--reuid={uid}"),
            format!("--regid={uid}"),
            "--clear-groups".to_string(),
            "--inh-caps=-all".to_string(),
            "--no-new-privs".to_string(),
            "--".to_string(),
        ]);
    }
    cmd.arg("prlimit").args([
        format!("--fsize={}", job.limits.file_mib << 20),
        "--core=0".to_string(),
    ]);
    if !job.limits.memory_in_group {
        cmd.arg(format!("--as={}", job.limits.memory_mib << 20));
    }
    if group.is_none() {
        let uid = job.user.unwrap_or_else(crate::os::effective_uid);
        cmd.arg(format!(
            "--nproc={}",
            processes_of(uid) + job.limits.processes
        ));
    }
    cmd.arg("--").arg(&job.program).args(&job.args);
    Ok((
        cmd,
        Held {
            _group: group,
            _users: users,
        },
    ))
}

/// The sandbox's view of the files: the user's HOME hidden; what the job needs,
/// read-only, wherever it is; its hidden paths behind empty folders; its working copy
/// writable.
fn mounts(cmd: &mut Command, job: &Job, work: &Path) -> Result<()> {
    // The user's HOME hidden; then what the job needs, read-only, wherever it is (also
    // under HOME or /tmp, which the sandbox replaces).
    // (The working copy, bound afterwards, shows through even when it lies in HOME.)
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        && home.is_absolute()
        && home != Path::new("/")
    {
        parents(cmd, &home);
        cmd.arg("--tmpfs").arg(&home);
    }
    let needs = job
        .needs
        .iter()
        .map(std::path::absolute)
        .collect::<std::io::Result<Vec<_>>>()?;
    let hide = job
        .hide
        .iter()
        .map(std::path::absolute)
        .collect::<std::io::Result<Vec<_>>>()?;
    // A need that is a hidden path would show it again: refused. (One that holds a
    // hidden path is bound first, and the path hidden over it; one inside a hidden path
    // is bound again over the empty folder.)
    if let Some((p, h)) = needs
        .iter()
        .find_map(|p| hide.iter().find(|h| *h == p).map(|h| (p, h)))
    {
        bail!(
            "the sandbox would show {} (hidden) through {}: give them apart",
            h.display(),
            p.display()
        );
    }
    let inside_hidden = |p: &PathBuf| hide.iter().any(|h| p.starts_with(h) && p != h);
    for p in needs.iter().filter(|p| p.exists() && !inside_hidden(p)) {
        parents(cmd, p);
        cmd.arg("--ro-bind").arg(p).arg(p);
    }
    for h in &hide {
        parents(cmd, h);
        cmd.arg("--tmpfs").arg(h);
    }
    for p in needs.iter().filter(|p| p.exists() && inside_hidden(p)) {
        parents(cmd, p);
        cmd.arg("--ro-bind").arg(p).arg(p);
    }
    parents(cmd, work);
    cmd.arg("--bind").arg(work).arg(work);
    Ok(())
}

/// Makes the folders above `path` that the sandbox has not (those inside its own
/// `/tmp`, HOME or a hidden folder) 0755 before something is mounted at `path`: bwrap
/// would make them 0700, root's, which a sandbox with a user of its own could not pass.
/// Folders that are there already (the machine's) keep their own mode.
fn parents(cmd: &mut Command, path: &Path) {
    let mut above: Vec<&Path> = path.ancestors().skip(1).collect();
    above.pop(); // `/`
    for a in above.into_iter().rev() {
        cmd.args(["--perms", "0755", "--dir"]).arg(a);
    }
}

/// What a sandbox holds while it runs (dropped when it has ended): its cgroups, and
/// the `/etc/passwd` and `/etc/group` naming its own user.
struct Held {
    _group: Option<Group>,
    _users: Option<tempfile::TempDir>,
}

/// A folder with `passwd` and `group`: the host's, and the sandbox's user `uid` (its
/// group of the same id) as `typist-job-UID`, HOME `/tmp/home`: programs that look
/// their user up (Node's `os.userInfo()`) find it.
fn user_files(uid: u32) -> Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new().prefix("typist-users-").tempdir()?;
    for (file, line) in [
        (
            "passwd",
            format!("typist-job-{uid}:x:{uid}:{uid}:typist job:/tmp/home:/usr/sbin/nologin\n"),
        ),
        ("group", format!("typist-job-{uid}:x:{uid}:\n")),
    ] {
        let mut text = std::fs::read_to_string(Path::new("/etc").join(file)).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        let path = dir.path().join(file);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// Makes `dir` and everything in it `uid`'s (links themselves, never what they point
/// to): the working copy of a sandbox with a user of its own.
fn give_to(dir: &Path, uid: u32) -> Result<()> {
    let own = |p: &Path| {
        std::os::unix::fs::lchown(p, Some(uid), Some(uid))
            .with_context(|| format!("cannot give {} to the sandbox's user {uid}", p.display()))
    };
    own(dir)?;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))? {
            let e = e?;
            let p = e.path();
            own(&p)?;
            if e.file_type()?.is_dir() {
                stack.push(p);
            }
        }
    }
    Ok(())
}

/// The cgroups a sandbox started by [`prepare`] is counted in: kept until it has ended
/// (dropped, what is left in them is killed and they are removed).
pub struct Guard(#[allow(dead_code)] Held);

/// A sandbox's command line for a caller that starts and waits for it itself (the
/// benchmark service's jobs, which run for hours and write their own logs), and its
/// [`Guard`]. The caller sets its standard streams; `limits.wall` and `output_bytes`
/// are not applied.
pub fn prepare(job: &Job) -> Result<(Command, Guard)> {
    let bwrap = bwrap()?;
    let (mut command, held) = command(job, &bwrap)?;
    crate::os::die_with_parent(&mut command);
    Ok((command, Guard(held)))
}

/// Reads a pipe to its end on a thread, keeping the first `cap` bytes.
fn drain(mut r: impl Read + Send + 'static, cap: usize) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// Runs `job` in its sandbox and waits for it (at most its wall time: then the whole
/// sandbox is killed and the outcome is `TimedOut`).
pub fn run(job: &Job) -> Result<Outcome> {
    let bwrap = bwrap()?;
    let (mut cmd, _held) = command(job, &bwrap)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    crate::os::die_with_parent(&mut cmd);
    tracing::debug!(program = %job.program, work = %job.work.display(), "sandbox: start");
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start the sandbox ({})", bwrap.display()))?;
    let pid = child.id();
    let out = drain(child.stdout.take().expect("piped"), job.limits.output_bytes);
    let err = drain(child.stderr.take().expect("piped"), job.limits.output_bytes);
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() >= job.limits.wall {
            // bwrap is the process group's leader; its children die with it
            // (die-with-parent), and the pid namespace's processes with its init.
            crate::os::signal_group(pid, libc::SIGKILL);
            timed_out = true;
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    let ended = if timed_out {
        Ended::TimedOut
    } else if let Some(c) = status.code() {
        Ended::Exited(c)
    } else {
        Ended::Signalled(status.signal().unwrap_or(0))
    };
    // bwrap's own failure (it cannot make a namespace) is not the command's.
    if ended == Ended::Exited(1) && stderr.starts_with("bwrap: ") {
        bail!(
            "the sandbox could not start: {} (bubblewrap needs user namespaces: sysctl user.max_user_namespaces)",
            stderr.lines().next().unwrap_or_default()
        );
    }
    Ok(Outcome {
        ended,
        stdout,
        stderr,
        wall,
    })
}
