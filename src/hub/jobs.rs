//! The job queue's workers (the local executor): each takes the oldest queued
//! submission and measures it as the command line would, `typist run` as a child
//! process of its own (its folder `jobs/ID/out`, with `--resume` when an earlier attempt
//! left records there), its log in `jobs/ID/run.log`. Progress is the records written
//! against the plan's cases × passes, read while it runs. A run that ends (complete, or
//! complete with an assistant that answered nothing) is `done`, its figures taken from
//! its `score.json`; one that fails or is killed is retried (resuming where its records
//! end) up to [`ATTEMPTS`] attempts, then `failed` with its last words. An attempt that
//! runs past the service's `--job-time` is killed and the job failed at once. The child dies
//! with the service (Linux's parent-death signal); a job the service left `running` is
//! queued again at the next start, and resumes.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::db::Submission;
use super::layout::{job_dir, out_dir};
use super::state::Hub;

/// How many times a job is run before it is failed.
pub const ATTEMPTS: i64 = 3;
/// How often a running job's progress is read, and the queue looked at when idle.
pub(super) const POLL: Duration = Duration::from_millis(300);

/// A worker: jobs one after another until the service stops.
pub async fn worker(hub: Arc<Hub>) {
    loop {
        if hub.stopping.load(Ordering::SeqCst) {
            return;
        }
        let job = match hub.db.take_queued() {
            Ok(j) => j,
            Err(e) => {
                tracing::error!("hub: the queue could not be read: {e:#}");
                None
            }
        };
        let Some(job) = job else {
            tokio::select! {
                _ = hub.queued.notified() => {}
                _ = tokio::time::sleep(POLL * 10) => {}
            }
            continue;
        };
        let id = job.id;
        // The job in a task of its own: a panic is the job's error, not a lost worker.
        let ended = {
            let (h, j) = (Arc::clone(&hub), job.clone());
            tokio::spawn(async move {
                match h.run_job.clone() {
                    // Another executor (`--executor slurm`, hub::slurm).
                    Some(elsewhere) => elsewhere(h, j).await,
                    None => run(&h, &j).await,
                }
            })
            .await
            .unwrap_or_else(|e| Err(anyhow::anyhow!("the job's worker failed: {e}")))
        };
        if hub.stopping.load(Ordering::SeqCst) {
            // The service is stopping: the job stays `running`, and resumes at the next
            // start.
            return;
        }
        let verdict = match ended {
            Ok(result) => hub.db.finish(id, &result),
            Err(e) => {
                let why = format!("{e:#}");
                tracing::warn!(job = id, attempt = job.attempts, "hub: {why}");
                if job.attempts < ATTEMPTS && e.downcast_ref::<OverTime>().is_none() {
                    hub.db.retry(id, &why)
                } else {
                    hub.db.fail(
                        id,
                        &format!("{why} (attempt {} of {ATTEMPTS})", job.attempts),
                    )
                }
            }
        };
        if let Err(e) = verdict {
            tracing::error!(job = id, "hub: the job's end could not be written: {e:#}");
        }
        hub.boards_changed();
    }
}

/// Runs job `s` to its end: its figures (`score.json`'s entry of its assistant, with the
/// assistant's name), or why it did not end.
async fn run(hub: &Hub, s: &Submission) -> Result<Value> {
    let bench = hub
        .benchmark(&s.benchmark)
        .with_context(|| format!("benchmark {:?} is no longer defined", s.benchmark))?;
    let dir = job_dir(&hub.data, s.id);
    let out = out_dir(&hub.data, s.id);
    super::layout::fresh_dir(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let spec = super::spec::Spec::from_json(&s.spec)?;
    let passes = i64::from(spec.passes);
    let total = bench.cases as i64 * passes;
    let mut written = Written::default();
    hub.db.progress(s.id, written.count(&out), total)?;
    // The model's endpoint, asked through the one way out of the sandbox.
    let forward = match &spec.what {
        super::spec::What::Model { endpoint, .. } => Some(super::forward::inside_url(endpoint)?),
        _ => None,
    };
    let assistant = spec.prepare(
        &dir,
        &hub.data,
        forward.as_ref().map(|(inside, _)| inside.as_str()),
    )?;
    let mut args: Vec<String> = vec!["run".into(), "--quiet".into(), "--out".into()];
    args.push(out.display().to_string());
    args.extend(["--jobs".to_string(), hub.jobs.to_string()]);
    if out.join("manifest.json").is_file() {
        args.push("--resume".into());
    } else {
        args.extend(["--plan".to_string(), bench.plan.display().to_string()]);
        if let Some(editors) = &assistant.editors {
            args.extend(["--editors".to_string(), editors.display().to_string()]);
        }
        args.extend(["--assistant".to_string(), assistant.name.clone()]);
        args.extend(["--editor".to_string(), spec.editor.as_str().to_string()]);
        args.extend(["--passes".to_string(), spec.passes.to_string()]);
    }
    let log = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join("run.log"))
    }
    .with_context(|| format!("cannot write {}", dir.join("run.log").display()))?;
    let mut _forwarding = None;
    let mut sandboxed = None;
    let mut cmd = if hub.sandbox {
        // The measured code in a sandbox of its own inside the job's: its job's folder
        // (the records with their true lines, the run's log), the plan and the dataset
        // are not there (the profiles in it are shown again).
        args.extend([
            "--assistant-sandbox".to_string(),
            "--assistant-sandbox-hide".to_string(),
            dir.display().to_string(),
        ]);
        let mut program = hub.typist.display().to_string();
        if let Some((_, target)) = &forward {
            let net = dir.join("net");
            super::layout::fresh_dir(&net)?;
            let socket = net.join("model.sock");
            _forwarding = Some(AbortOnDrop(
                super::forward::outside(socket.clone(), target.clone()).await?,
            ));
            let mut wrapped = vec![
                "serve".to_string(),
                "job".into(),
                "--forward".into(),
                format!(
                    "127.0.0.1:{}={}",
                    super::forward::INSIDE_PORT,
                    socket.display()
                ),
                "--".into(),
                program.clone(),
            ];
            wrapped.append(&mut args);
            args = wrapped;
        }
        let (c, guard) = crate::sandbox::prepare(&sandbox_job(
            hub,
            s.id,
            bench,
            &dir,
            &assistant,
            (std::mem::take(&mut program), std::mem::take(&mut args)),
        )?)?;
        sandboxed = Some(guard);
        tokio::process::Command::from(c)
    } else {
        let mut c = tokio::process::Command::new(&hub.typist);
        c.args(&args);
        crate::os::die_with_parent(c.as_std_mut());
        c
    };
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", hub.typist.display()))?;
    tracing::info!(
        job = s.id,
        attempt = s.attempts,
        sandbox = hub.sandbox,
        "hub: running {}",
        out.display()
    );
    let started = std::time::Instant::now();
    let mut over_time = false;
    let status = loop {
        tokio::select! {
            st = child.wait() => break st.context("waiting for the run")?,
            _ = tokio::time::sleep(POLL) => {
                hub.db.progress(s.id, written.count(&out), total)?;
                if started.elapsed() > hub.job_time {
                    // Its run; everything else in its sandbox goes with the cgroup below.
                    over_time = true;
                    let _ = child.start_kill();
                    break child.wait().await.context("waiting for the run")?;
                }
            }
        }
    };
    drop(sandboxed);
    let done = Written::default().count(&out);
    hub.db.progress(s.id, done, total.max(done))?;
    if over_time {
        return Err(OverTime(hub.job_time).into());
    }
    // 3: complete, and an assistant answered nothing (its errors are in the records).
    if !matches!(status.code(), Some(0) | Some(3)) {
        // A full disk may have taken the run's log with it: said in words here.
        let said = full_disk(&dir).or_else(|| last_words(&dir.join("run.log")));
        let how = match status.code() {
            Some(c) => format!("the run exited with {c}"),
            None => "the run was killed".to_string(),
        };
        anyhow::bail!(
            "{how}{}",
            said.map(|w| format!(": {w}")).unwrap_or_default()
        );
    }
    result(&out)
}

/// An attempt that ran past the service's `--job-time`: the job is failed at once (a
/// second attempt would run as long).
#[derive(Debug)]
pub(super) struct OverTime(Duration);

impl std::fmt::Display for OverTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the run took longer than the service's limit for a job (--job-time {}): killed",
            humantime::format_duration(self.0)
        )
    }
}

impl std::error::Error for OverTime {}

/// Aborts a task when dropped: the forwarding of a job's endpoint ends with the job.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The sandbox a job's run goes in, as the job's own user: its folder writable (and
/// made that user's); its benchmark's plan and
/// dataset, its upload and the servers folder read-only; the service's data folder
/// (the database, other jobs, other uploads) and the host's home hidden; no network
/// but its loopback (and the endpoint forwarded into it); processes and memory
/// limited as a whole.
fn sandbox_job(
    hub: &Hub,
    id: i64,
    bench: &super::benchmarks::Benchmark,
    dir: &Path,
    assistant: &super::spec::Prepared,
    (program, args): (String, Vec<String>),
) -> Result<crate::sandbox::Job> {
    // The plan file itself, not its folder (which may be the data folder).
    let mut needs = vec![bench.plan.clone()];
    if let Some(d) = super::benchmarks::plan_dataset(&bench.plan) {
        needs.push(d);
    }
    needs.extend(assistant.upload.iter().cloned());
    // Where the service's runs find their profiles, servers and editors: its working
    // folder (./editors, ./.servers) and the variables that name them.
    let cwd = std::env::current_dir()?;
    needs.push(cwd.clone());
    needs.extend(hub.typist.parent().map(Path::to_path_buf));
    let mut env = Vec::new();
    for k in PASSED {
        if let Some(v) = std::env::var_os(k) {
            let path = std::path::absolute(std::path::PathBuf::from(&v))?;
            env.push((k.to_string(), path.display().to_string()));
            needs.push(path);
        }
    }
    for k in ["RUST_LOG", "NO_COLOR"] {
        if let Ok(v) = std::env::var(k) {
            env.push((k.to_string(), v));
        }
    }
    Ok(crate::sandbox::Job {
        program,
        args,
        work: dir.to_path_buf(),
        needs,
        hide: vec![hub.data.clone()],
        cwd: Some(cwd),
        env,
        user: Some(job_user(id)),
        limits: crate::sandbox::Limits {
            wall: Duration::from_secs(7 * 24 * 3600),
            memory_mib: JOB_MEMORY_MIB,
            memory_in_group: true,
            processes: JOB_PROCESSES,
            file_mib: 4096,
            output_bytes: 0,
        },
    })
}

/// Variables naming where typist finds its profiles, servers and editors: passed into
/// a job's sandbox, with what they name (read-only).
const PASSED: &[&str] = &[
    "TYPIST_EDITORS",
    "TYPIST_SERVERS",
    "TYPIST_CHROMIUM",
    "TYPIST_CODE_SERVER",
    "TYPIST_NVIM",
    "TYPIST_EXE",
    "TYPIST_CONFIG_DIR",
];

/// The user id job `id` runs as in its sandbox: one of its own, no account of the
/// host's (ids from 1,500,000,000 up, far above those `adduser` and `/etc/subuid`
/// hand out); the same at every attempt, so a resumed run owns its earlier files.
pub(super) fn job_user(id: i64) -> u32 {
    JOB_USERS + (id.rem_euclid(500_000_000) as u32)
}

const JOB_USERS: u32 = 1_500_000_000;

/// A job's sandbox: memory for its editor, browser, servers and run together.
const JOB_MEMORY_MIB: u64 = 12 << 10;
/// ... and processes (Chromium and VS Code start a few hundred threads and processes).
const JOB_PROCESSES: u64 = 4096;

/// The job's figures from its `score.json`: its one assistant's entry, named.
pub(super) fn result(out: &Path) -> Result<Value> {
    let path = out.join("score.json");
    let mut text = String::new();
    super::layout::open_regular(&path)
        .and_then(|f| f.take(64 << 20).read_to_string(&mut text))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let score: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let (name, figures) = score["assistants"]
        .as_object()
        .and_then(|a| a.iter().next())
        .with_context(|| format!("{} scores no assistant", path.display()))?;
    let mut r = figures.clone();
    r.as_object_mut()
        .with_context(|| format!("{} scores {name} with no figures", path.display()))?
        .insert("assistant".into(), Value::String(name.clone()));
    Ok(r)
}

/// Records written in `out` so far (whole lines), read on from where the last count
/// ended: a run's progress is read every [`POLL`], and its records file only grows
/// (a resume that cuts a partial last record makes it shorter: counted again).
#[derive(Default)]
pub(super) struct Written {
    bytes: u64,
    lines: i64,
}

impl Written {
    pub(super) fn count(&mut self, out: &Path) -> i64 {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = super::layout::open_regular(&out.join("records.jsonl")) else {
            return self.lines;
        };
        if f.metadata().map_or(0, |m| m.len()) < self.bytes {
            *self = Written::default();
        }
        let mut tail = Vec::new();
        if f.seek(SeekFrom::Start(self.bytes)).is_ok() && f.read_to_end(&mut tail).is_ok() {
            // Only whole lines: a record being written is counted with its newline.
            if let Some(last) = memchr::memrchr(b'\n', &tail) {
                self.lines += memchr::memchr_iter(b'\n', &tail[..=last]).count() as i64;
                self.bytes += last as u64 + 1;
            }
        }
        self.lines
    }
}

/// Why the job's folder takes no more writes (its disk full), when it does not: a probe
/// of 64 KiB written and removed.
fn full_disk(dir: &Path) -> Option<String> {
    let probe = dir.join(format!(".space-probe-{}", std::process::id()));
    // A new file (O_EXCL): a link the job left there is not followed.
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &[0u8; 64 << 10]));
    if std::fs::symlink_metadata(&probe).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(&probe);
    }
    r.err().map(|e| {
        format!(
            "the job's folder {} takes no more writes: {e}",
            dir.display()
        )
    })
}

/// The run's last `typist…: error` line, else its last line, from its log.
pub(super) fn last_words(log: &Path) -> Option<String> {
    // Its last 64 KiB, read only from a file of its own.
    let mut f = super::layout::open_regular(log).ok()?;
    let len = f.metadata().ok()?.len();
    std::io::Seek::seek(
        &mut f,
        std::io::SeekFrom::Start(len.saturating_sub(64 << 10)),
    )
    .ok()?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rev()
        .find(|l| l.contains("error") || l.contains("failed"))
        .or(lines.last())
        .map(|l| l.chars().take(500).collect())
}
