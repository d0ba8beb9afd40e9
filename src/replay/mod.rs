//! The `replay` layer: runs a plan of cases against assistants. Workers (one server
//! process and workspace copy each) take files from a shared queue; each file is
//! replayed under the run's editor conditions; every case yields exactly one record
//! (`suggestion`, `empty`, `error` or `timeout`), appended and flushed at once. The
//! records file is rewritten sorted at the end, so it does not depend on the number of
//! workers, the shard split or an interruption. Knows nothing of metric formulas.

pub mod records;
pub mod typing;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::dataset::{Case, Dataset, SourceFile};
use crate::editor::{
    Conditions, DialectKind, Document, Profile, Session, SessionError, SessionOptions, Suggestions,
};
use records::Record;
use typing::{ContextMode, Granularity, TypingMode};

/// The editor conditions of a run beyond the client's own (`editor`): all recorded in
/// the manifest, and a resumed run must use the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConditions {
    pub context: ContextMode,
    /// With `context = prefix`: lines below the target also in the document.
    pub suffix_lines: u32,
    pub typing: TypingMode,
    pub granularity: Granularity,
    /// Characters of the expected line typed before asking.
    pub typed_prefix: u32,
    /// Wait this long after the last change before asking.
    pub settle_ms: u64,
    /// Neighbouring files of the same repository opened first.
    pub open_tabs: u32,
    /// Record `latency_ms` (off: null, for byte-identical records across runs).
    pub latency: bool,
    pub editor: Conditions,
}

impl Default for RunConditions {
    fn default() -> Self {
        RunConditions {
            context: ContextMode::Prefix,
            suffix_lines: 0,
            typing: TypingMode::Paste,
            granularity: Granularity::Line,
            typed_prefix: 0,
            settle_ms: 0,
            open_tabs: 0,
            latency: true,
            editor: Conditions::default(),
        }
    }
}

/// Which part of the plan this process runs: files whose hash falls in `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `i/n` (0-based index); `auto`: from a Slurm job array (`SLURM_ARRAY_TASK_ID`,
    /// `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_COUNT`, all set by
    /// Slurm); `auto/n`: the index from the environment (a Kubernetes Indexed Job sets
    /// `JOB_COMPLETION_INDEX` and nothing that says how many completions there are, so the
    /// count is given), or from Slurm, whose count must then agree.
    pub fn parse(s: &str) -> Result<Shard> {
        if let Some(rest) = s.strip_prefix("auto") {
            let count = match rest.strip_prefix('/') {
                Some(n) => Some(
                    n.trim()
                        .parse::<u32>()
                        .context("--shard auto/n: the count")?,
                ),
                None if rest.is_empty() => None,
                None => bail!("--shard takes i/n (0-based), auto or auto/n"),
            };
            return Shard::from_env(|k| std::env::var(k).ok(), count);
        }
        let (i, n) = s
            .split_once('/')
            .context("--shard takes i/n (0-based), auto or auto/n")?;
        let shard = Shard {
            index: i.trim().parse().context("--shard index")?,
            count: n.trim().parse().context("--shard count")?,
        };
        shard.check()
    }

    /// The shard named by a scheduler's environment (`get` reads a variable), with the
    /// count given on the command line if any.
    pub fn from_env(get: impl Fn(&str) -> Option<String>, count: Option<u32>) -> Result<Shard> {
        let num = |k: &str| -> Result<Option<u32>> {
            match get(k) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .with_context(|| format!("--shard auto: {k}={v:?} is not a number")),
            }
        };
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
            let slurm_count = num("SLURM_ARRAY_TASK_COUNT")?;
            let off = id.checked_sub(min).with_context(|| {
                format!(
                    "--shard auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                )
            })?;
            if off % step != 0 {
                bail!(
                    "--shard auto: Slurm array task {id} is not on the array's step {step} from {min}; give --shard i/n"
                );
            }
            let n = match (count, slurm_count) {
                (Some(c), Some(s)) if c != s => bail!(
                    "--shard auto/{c}: the Slurm array has {s} tasks (SLURM_ARRAY_TASK_COUNT)"
                ),
                (Some(c), _) | (None, Some(c)) => c,
                (None, None) => {
                    bail!("--shard auto: SLURM_ARRAY_TASK_COUNT is not set; give --shard auto/n")
                }
            };
            return Shard { index: off / step, count: n }
                .check()
                .context("--shard auto: an array given as a list (--array=1,4,9) has no arithmetic index; give --shard i/n");
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let Some(n) = count else {
                bail!(
                    "--shard auto: a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX but not the number of completions; give it as --shard auto/n (the Job's .spec.completions)"
                );
            };
            return Shard { index: i, count: n }.check();
        }
        bail!(
            "--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm job array) is set"
        )
    }

    fn check(self) -> Result<Shard> {
        if self.count == 0 || self.index >= self.count {
            bail!(
                "shard {}/{} is out of range (index is 0-based, below the count)",
                self.index,
                self.count
            );
        }
        Ok(self)
    }

    /// Whether this shard runs `repo/file` (a stable hash of the path).
    pub fn contains(&self, repo: &str, file: &str) -> bool {
        let d = crate::dataset::draw(0x5eed_5a4d, repo, file, 0);
        ((d * self.count as f64) as u32).min(self.count - 1) == self.index
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub out: PathBuf,
    pub jobs: usize,
    pub passes: u32,
    pub resume: bool,
    pub shard: Option<Shard>,
    pub quiet: bool,
    /// Server restarts a worker may make in a row before the run stops.
    pub max_restarts: u32,
    /// Where the plan came from (a path, or how it was sampled), for the manifest.
    pub plan_source: String,
    /// Write each session's LSP transcript (secrets redacted) into this folder.
    pub transcripts: Option<PathBuf>,
    /// With `resume`: ask again the cases recorded as `error` or `timeout`.
    pub retry_errors: bool,
    /// The model services started for the run (`service::Services::describe`).
    pub services: Vec<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone)]
pub struct RunReport {
    pub status: RunStatus,
    pub records: usize,
    pub new_records: usize,
    pub message: Option<String>,
}

/// One file of the plan for one assistant and pass: the unit of scheduling.
#[derive(Debug, Clone)]
struct Unit {
    assistant: usize,
    pass: u32,
    repo: String,
    file: String,
    cases: Vec<Case>,
}

struct Shared {
    ds: Arc<Dataset>,
    profiles: Vec<Profile>,
    cond: RunConditions,
    queue: Mutex<VecDeque<Unit>>,
    cancel: Arc<AtomicBool>,
    servers: Mutex<BTreeMap<String, Value>>,
    max_restarts: u32,
    transcripts: Option<PathBuf>,
    sessions_started: std::sync::atomic::AtomicU64,
    /// Servers restarted because they exited, and because they stopped answering.
    restarts_after_exit: std::sync::atomic::AtomicU64,
    restarts_after_timeouts: std::sync::atomic::AtomicU64,
    /// Reliability drill hook: `TYPIST_DRILL_PANIC_AT=N` makes the worker recording the
    /// Nth record of the run panic instead (what a bug in a worker would do).
    panic_at: Option<u64>,
    recorded: std::sync::atomic::AtomicU64,
}

/// Files of the plan whose repository or file is missing from the dataset, or changed.
pub fn check_plan(ds: &Dataset, plan: &[Case]) -> Result<()> {
    let changed = crate::dataset::changed_files(ds, plan);
    if !changed.is_empty() {
        bail!(
            "the plan does not match the dataset: {} file(s) changed or missing since it was made:\n  {}",
            changed.len(),
            changed.join("\n  ")
        );
    }
    Ok(())
}

/// Refuses assistants that cannot give line suggestions.
pub fn check_assistants(profiles: &[Profile]) -> Result<()> {
    for p in profiles {
        if p.dialect == DialectKind::Completion {
            bail!(
                "{} answers completion lists only (dialect \"completion\"); a line-level run needs an \
                 inline-completion assistant (dialects inline, copilot, lsp-ai, llm-ls)",
                p.name
            );
        }
    }
    Ok(())
}

/// Why `profile` is not asked `case` under `cond`, if it is not: a line no longer than
/// the typed prefix leaves nothing to suggest, and a case in a language the profile does
/// not list is never sent as another language.
pub fn skip_reason(case: &Case, profile: &Profile, cond: &RunConditions) -> Option<&'static str> {
    if cond.typed_prefix > 0 && case.expected.chars().count() <= cond.typed_prefix as usize {
        return Some("line not longer than the typed prefix");
    }
    if !profile.languages.iter().any(|l| l == &case.language) {
        return Some("language not served by the profile");
    }
    None
}

/// Starts each assistant once in an empty workspace before the run and refuses one
/// whose server does not declare the capability its dialect's request needs (a server
/// that cannot start is refused here too, before any case is asked).
pub async fn check_capabilities(profiles: &[Profile], cond: &Conditions) -> Result<()> {
    for p in profiles {
        let Some(needed) = p.dialect.required_capability() else {
            continue;
        };
        let session = Session::start(p, cond, SessionOptions::default())
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.name))?;
        let declared = session.capabilities().declares(needed);
        let server = session
            .server_info()
            .name
            .clone()
            .unwrap_or_else(|| p.command.clone());
        let _ = tokio::time::timeout(Duration::from_secs(5), session.shutdown()).await;
        if !declared {
            bail!(
                "profile {} (dialect {:?}) needs the server capability {needed}, which {server} does not declare in its initialize answer",
                p.name,
                p.dialect
            );
        }
    }
    Ok(())
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn profile_json(p: &Profile) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    v["source"] = json!(p.source.display().to_string());
    crate::lsp::transcript::redact(&v)
}

/// Runs `plan` against every assistant under `cond`, writing `OUT/records.jsonl` and
/// `OUT/manifest.json`. Returns when every case is recorded, the run is cancelled, or a
/// server keeps failing (everything finished is kept in every case).
pub async fn run(
    ds: Arc<Dataset>,
    plan: &[Case],
    profiles: Vec<Profile>,
    cond: RunConditions,
    opts: &RunOptions,
    cancel: Arc<AtomicBool>,
) -> Result<RunReport> {
    let swept = crate::editor::session::sweep_stale_workspaces();
    if swept > 0 {
        tracing::info!(
            "removed {swept} temporary workspace(s) left by typist processes that are gone"
        );
    }
    check_assistants(&profiles)?;
    if cond.typing == TypingMode::Type && cond.context == ContextMode::Full {
        bail!(
            "typing = \"type\" feeds the file from the top, so it cannot have context = \"full\""
        );
    }
    check_plan(&ds, plan)?;
    check_capabilities(&profiles, &cond.editor).await?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let records_path = opts.out.join("records.jsonl");
    let manifest_path = opts.out.join("manifest.json");
    let plan_hash = crate::dataset::plan_hash(plan);

    // Resume: what is done already, and whether it is the same run.
    let mut done: BTreeSet<(String, u32, String)> = BTreeSet::new();
    if records_path.exists() && std::fs::metadata(&records_path)?.len() > 0 {
        if !opts.resume {
            bail!(
                "{} already holds records; pass --resume to continue that run, or choose another --out",
                records_path.display()
            );
        }
        if let Ok(text) = std::fs::read_to_string(&manifest_path) {
            let m: Value = serde_json::from_str(&text)
                .with_context(|| format!("malformed {}", manifest_path.display()))?;
            if m["plan"]["hash"] != json!(plan_hash) {
                bail!(
                    "cannot resume: {} was made from another plan ({})",
                    manifest_path.display(),
                    m["plan"]["hash"]
                );
            }
            if m["conditions"] != serde_json::to_value(&cond)? {
                bail!(
                    "cannot resume: {} was run under other editor conditions",
                    manifest_path.display()
                );
            }
        }
        let (existing, dropped) = records::read_for_resume(&records_path)?;
        if dropped > 0 {
            tracing::warn!(
                "dropped a cut last record ({dropped} bytes) from {}",
                records_path.display()
            );
        }
        // With --retry-errors, failed cases are asked again; the new record replaces the
        // old one when the file is finalized (the latest record of a case wins).
        done = existing
            .iter()
            .filter(|r| !(opts.retry_errors && matches!(r.outcome.as_str(), "error" | "timeout")))
            .map(Record::done_key)
            .collect();
    }

    // Units: files × assistants × passes, minus what is done, in a fixed order.
    let mut by_file: BTreeMap<(String, String), Vec<Case>> = BTreeMap::new();
    for c in plan {
        if opts.shard.is_none_or(|s| s.contains(&c.repo, &c.file)) {
            by_file
                .entry((c.repo.clone(), c.file.clone()))
                .or_default()
                .push(c.clone());
        }
    }
    // Largest work first (the last unit does not leave one worker alone at the end). The
    // order changes no record: every unit gets its own server, and records are sorted
    // when the run ends.
    let mut repo_size: BTreeMap<&str, usize> = BTreeMap::new();
    for ((repo, _), cases) in &by_file {
        *repo_size.entry(repo).or_default() += cases.len();
    }
    let mut files: Vec<(&(String, String), &Vec<Case>)> = by_file.iter().collect();
    files.sort_by(|a, b| {
        (
            std::cmp::Reverse(repo_size[a.0.0.as_str()]),
            &a.0.0,
            std::cmp::Reverse(a.1.len()),
            &a.0.1,
        )
            .cmp(&(
                std::cmp::Reverse(repo_size[b.0.0.as_str()]),
                &b.0.0,
                std::cmp::Reverse(b.1.len()),
                &b.0.1,
            ))
    });
    let mut queue = VecDeque::new();
    let mut todo = 0u64;
    // Cases an assistant is not asked, by assistant and reason (counted per pass).
    let mut skipped: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for (ai, p) in profiles.iter().enumerate() {
        for pass in 1..=opts.passes {
            for ((repo, file), cases) in &files {
                let mut kept: Vec<Case> = Vec::new();
                for c in cases.iter() {
                    if let Some(reason) = skip_reason(c, p, &cond) {
                        *skipped
                            .entry(p.name.clone())
                            .or_default()
                            .entry(reason)
                            .or_default() += 1;
                    } else if !done.contains(&(p.name.clone(), pass, c.case.clone())) {
                        kept.push(c.clone());
                    }
                }
                if kept.is_empty() {
                    continue;
                }
                // A file is typed from the top: its cases in line order.
                kept.sort_by_key(|c| c.line);
                todo += kept.len() as u64;
                queue.push_back(Unit {
                    assistant: ai,
                    pass,
                    repo: repo.clone(),
                    file: file.clone(),
                    cases: kept,
                });
            }
        }
    }
    for (name, reasons) in &skipped {
        for (reason, n) in reasons {
            tracing::warn!(assistant = %name, "{n} case(s) not asked: {reason}");
        }
    }

    let started_at = now_rfc3339();
    let mut manifest = json!({
        "typist_version": env!("CARGO_PKG_VERSION"),
        "status": RunStatus::Running,
        "started_at": started_at,
        "ended_at": null,
        "plan": {"hash": plan_hash, "cases": plan.len(), "source": opts.plan_source},
        "dataset": {
            "path": ds.root.display().to_string(),
            "repositories": ds.repos.len(),
            "files": ds.repos.iter().map(|r| r.files.len()).sum::<usize>(),
            "skipped": ds.skipped,
            "normalized": ds.repos.iter().flat_map(|r| r.files.iter())
                .filter(|f| !f.notes.is_empty())
                .map(|f| json!({"path": format!("{}/{}", f.repo, f.rel), "notes": f.notes}))
                .collect::<Vec<_>>(),
        },
        "shard": opts.shard,
        "passes": opts.passes,
        "jobs": opts.jobs,
        "conditions": cond,
        "assistants": profiles.iter().map(|p| json!({"name": p.name, "profile": profile_json(p), "trigger_on_wire": cond.editor.trigger.on_wire(p.dialect), "server": null})).collect::<Vec<_>>(),
        "services": opts.services,
        "skipped_cases": skipped,
        "records": null,
        "message": null,
    });
    write_json(&manifest_path, &manifest)?;

    let shared = Arc::new(Shared {
        ds,
        profiles,
        cond,
        queue: Mutex::new(queue),
        cancel: cancel.clone(),
        servers: Mutex::new(BTreeMap::new()),
        max_restarts: opts.max_restarts,
        transcripts: opts.transcripts.clone(),
        sessions_started: std::sync::atomic::AtomicU64::new(0),
        restarts_after_exit: std::sync::atomic::AtomicU64::new(0),
        restarts_after_timeouts: std::sync::atomic::AtomicU64::new(0),
        panic_at: std::env::var("TYPIST_DRILL_PANIC_AT")
            .ok()
            .and_then(|v| v.parse().ok()),
        recorded: std::sync::atomic::AtomicU64::new(0),
    });

    // The sink: one task appends and flushes every record as it arrives.
    let (tx, mut rx) = mpsc::channel::<Record>(256);
    let mut sink = records::Sink::open(&records_path)?;
    let progress = progress_bar(todo, opts.quiet);
    let bar = progress.clone();
    let writer = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let (mut written, mut empty, mut error, mut timeout) = (0usize, 0u64, 0u64, 0u64);
        while let Some(r) = rx.recv().await {
            sink.write(&r)?;
            written += 1;
            match r.outcome.as_str() {
                "empty" => empty += 1,
                "error" => error += 1,
                "timeout" => timeout += 1,
                _ => {}
            }
            let rate = written as f64 / started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!(
                "{rate:.0}/s, empty {empty}, error {error}, timeout {timeout}"
            ));
            bar.inc(1);
        }
        anyhow::Ok(written)
    });

    let mut workers = tokio::task::JoinSet::new();
    for id in 0..opts.jobs.max(1) {
        let shared = shared.clone();
        let tx = tx.clone();
        workers.spawn(async move {
            Worker {
                id,
                shared,
                tx,
                live: None,
                restarts: 0,
                timeouts_in_row: 0,
                closing: tokio::task::JoinSet::new(),
            }
            .run()
            .await
        });
    }
    drop(tx);
    let mut failure: Option<String> = None;
    while let Some(res) = workers.join_next().await {
        let res = res
            .map_err(|e| anyhow::anyhow!("worker panicked: {e}"))
            .and_then(|r| r);
        if let Err(e) = res {
            if failure.is_none() {
                failure = Some(format!("{e:#}"));
            }
            cancel.store(true, Ordering::SeqCst);
        }
    }
    let new_records = writer
        .await
        .map_err(|e| anyhow::anyhow!("record writer panicked: {e}"))??;
    progress.finish_and_clear();
    let total = records::finalize(&records_path)?;

    let status = if failure.is_some() {
        RunStatus::Failed
    } else if cancel.load(Ordering::SeqCst) {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    let servers = shared.servers.lock().map(|s| s.clone()).unwrap_or_default();
    if let Some(list) = manifest["assistants"].as_array_mut() {
        for a in list {
            if let Some(name) = a["name"].as_str()
                && let Some(s) = servers.get(name)
            {
                a["server"] = s.clone();
            }
        }
    }
    manifest["status"] = json!(status);
    manifest["ended_at"] = json!(now_rfc3339());
    manifest["cpu_seconds"] = cpu_seconds();
    manifest["records"] = json!(total);
    manifest["sessions"] = json!({
        "started": shared.sessions_started.load(Ordering::SeqCst),
        "restarted_after_exit": shared.restarts_after_exit.load(Ordering::SeqCst),
        "restarted_after_timeouts": shared.restarts_after_timeouts.load(Ordering::SeqCst),
    });
    manifest["message"] = json!(failure);
    write_json(&manifest_path, &manifest)?;
    Ok(RunReport {
        status,
        records: total,
        new_records,
        message: failure,
    })
}

/// CPU time of typist itself and of the servers it ran (reaped children).
fn cpu_seconds() -> Value {
    let get = |who| {
        // SAFETY: getrusage fills the struct it is given; zeroed is a valid start.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::getrusage(who, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        if r == 0 {
            s(u.ru_utime) + s(u.ru_stime)
        } else {
            f64::NAN
        }
    };
    json!({"typist": get(libc::RUSAGE_SELF), "servers": get(libc::RUSAGE_CHILDREN)})
}

pub fn write_json(path: &Path, v: &Value) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(v)?;
    std::fs::write(&tmp, crate::secrets::scrub(&text).into_owned() + "\n")
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} cases, {msg}, ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// The n files of the same repository nearest to `rel` in path order.
fn neighbours<'a>(files: &'a [SourceFile], rel: &str, n: usize) -> Vec<&'a SourceFile> {
    let Some(at) = files.iter().position(|f| f.rel == rel) else {
        return vec![];
    };
    let mut idx: Vec<usize> = (0..files.len()).filter(|&i| i != at).collect();
    idx.sort_by_key(|&i| (i.abs_diff(at), i));
    idx.into_iter().take(n).map(|i| &files[i]).collect()
}

struct Worker {
    id: usize,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Record>,
    /// The live session, serving one unit (assistant × pass × file) at most.
    live: Option<Live>,
    restarts: u32,
    /// Timeouts in a row from the live server.
    timeouts_in_row: u32,
    /// Sessions being shut down in the background.
    closing: tokio::task::JoinSet<()>,
}

/// A server process and its workspace, serving one unit. A session never outlives its
/// unit, and is replaced within it before a case whose line it has been shown: a server
/// that has seen a line (in a document or on disk) may remember it, so it is never asked
/// to predict it. The target file's disk copy mirrors the editor's document at every
/// moment, from before the server starts.
struct Live {
    session: Session,
    /// The first suggestion waits for the profile's readiness rule.
    warmed: bool,
    /// 0-based lines of the target file this server has been shown in full.
    shown: Vec<std::ops::Range<usize>>,
}

impl Live {
    fn has_seen(&self, line: usize) -> bool {
        self.shown.iter().any(|r| r.contains(&line))
    }
    /// Every line of `text` but the cursor's has been shown (a document's lines are the
    /// file's lines: the target line is cut to its typed prefix, never removed).
    fn show(&mut self, text: &str, cursor_line: usize) {
        let n = text.split('\n').count();
        self.shown.push(0..cursor_line.min(n));
        if cursor_line + 1 < n {
            self.shown.push(cursor_line + 1..n);
        }
    }
}

enum Ask {
    Got(crate::editor::session::Timed<Suggestions>),
    Failed(SessionError),
}

impl Worker {
    async fn run(mut self) -> Result<()> {
        let result = self.run_units().await;
        self.retire();
        while self.closing.join_next().await.is_some() {}
        result
    }

    async fn run_units(&mut self) -> Result<()> {
        loop {
            if self.shared.cancel.load(Ordering::SeqCst) {
                return Ok(());
            }
            let unit = self
                .shared
                .queue
                .lock()
                .ok()
                .and_then(|mut q| q.pop_front());
            let Some(unit) = unit else { return Ok(()) };
            tracing::debug!(worker = self.id, file = %unit.file, pass = unit.pass, "unit");
            let result = self.replay_file(&unit).await;
            self.retire();
            result?;
        }
    }

    fn profile(&self, a: usize) -> &Profile {
        &self.shared.profiles[a]
    }

    /// Shuts the live session down in the background (its process group and temporary
    /// folder go with it; `run` waits for every one before returning).
    fn retire(&mut self) {
        if let Some(live) = self.live.take() {
            self.closing.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), live.session.shutdown()).await;
            });
        }
    }

    /// Starts a server for `unit` in a fresh workspace holding the repository's files,
    /// with the target file already holding `text` (what the editor holds) before the
    /// server starts, then opens the tabs and the target document with `text`.
    async fn start_session(&mut self, unit: &Unit, text: &str) -> Result<()> {
        self.retire();
        self.timeouts_in_row = 0;
        let profile = self.profile(unit.assistant).clone();
        let ds = self.shared.ds.clone();
        let repo = ds
            .repos
            .iter()
            .find(|r| r.name == unit.repo)
            .context("repository vanished from the dataset")?;
        let contents = repo
            .files
            .iter()
            .map(|f| {
                let t = if f.rel == unit.file { text } else { &f.text };
                (f.rel.clone(), t.to_string())
            })
            .collect();
        let n = self.shared.sessions_started.fetch_add(1, Ordering::SeqCst);
        let transcript = self.shared.transcripts.as_ref().map(|d| {
            d.join(format!(
                "{}-{}-{n}.jsonl",
                profile.name,
                unit.repo.replace('/', "_")
            ))
        });
        let mut session = Session::start(
            &profile,
            &self.shared.cond.editor,
            SessionOptions {
                contents,
                transcript,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let info = session.server_info().clone();
        if let Ok(mut s) = self.shared.servers.lock() {
            s.entry(profile.name.clone())
                .or_insert_with(|| json!({"name": info.name, "version": info.version}));
        }
        for t in neighbours(&repo.files, &unit.file, self.shared.cond.open_tabs as usize) {
            session.open(&t.rel, &t.text)?;
        }
        session.open(&unit.file, text)?;
        self.live = Some(Live {
            session,
            warmed: false,
            shown: Vec::new(),
        });
        Ok(())
    }

    async fn replay_file(&mut self, unit: &Unit) -> Result<()> {
        let ds = self.shared.ds.clone();
        let file = ds
            .file(&unit.repo, &unit.file)
            .context("file vanished from the dataset")?;
        let lines = file.lines();
        let cond = self.shared.cond.clone();
        match cond.typing {
            TypingMode::Paste => self.replay_paste(unit, &lines, &cond).await,
            TypingMode::Type => self.replay_type(unit, &lines, &cond).await,
        }
    }

    async fn replay_paste(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        cond: &RunConditions,
    ) -> Result<()> {
        for case in &unit.cases {
            if self.shared.cancel.load(Ordering::SeqCst) {
                return Ok(());
            }
            let idx = case.line as usize - 1;
            let (text, cursor) = typing::paste_document(
                lines,
                case.line as usize,
                cond.typed_prefix as usize,
                cond.context,
                cond.suffix_lines as usize,
            );
            if self.live.as_ref().is_none_or(|l| l.has_seen(idx)) {
                self.start_session(unit, "").await?;
            }
            self.set_text(unit, &text)?;
            self.ask_and_record(unit, case, &text, cursor).await?;
        }
        Ok(())
    }

    async fn replay_type(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        cond: &RunConditions,
    ) -> Result<()> {
        let cases: BTreeMap<u32, &Case> = unit.cases.iter().map(|c| (c.line, c)).collect();
        let Some(&last) = cases.keys().next_back() else {
            return Ok(());
        };
        self.start_session(unit, "").await?;
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            let n = i as u32 + 1;
            if n > last || self.shared.cancel.load(Ordering::SeqCst) {
                break;
            }
            let rest: &str = if let Some(case) = cases.get(&n) {
                let typed = typing::typed_prefix(line, cond.typed_prefix as usize);
                self.type_into(unit, &mut text, typed, cond.granularity)?;
                let cursor = text.len();
                self.ask_and_record(unit, case, &text, cursor).await?;
                &line[typed.len()..]
            } else {
                line
            };
            let mut chunk = rest.to_string();
            if i + 1 < lines.len() {
                chunk.push('\n');
            }
            self.type_into(unit, &mut text, &chunk, cond.granularity)?;
        }
        Ok(())
    }

    fn type_into(
        &mut self,
        unit: &Unit,
        text: &mut String,
        add: &str,
        g: Granularity,
    ) -> Result<()> {
        match g {
            Granularity::Line => {
                text.push_str(add);
                self.set_text(unit, text)
            }
            Granularity::Char => {
                for c in add.chars() {
                    text.push(c);
                    self.set_text(unit, text)?;
                }
                Ok(())
            }
        }
    }

    /// Sets the target document (and so its disk copy) to `text`.
    fn set_text(&mut self, unit: &Unit, text: &str) -> Result<()> {
        let Some(live) = self.live.as_mut() else {
            bail!("no session")
        };
        live.session.set_text(&unit.file, text)?;
        Ok(())
    }

    async fn ask(&mut self, unit: &Unit, text: &str, cursor_byte: usize) -> Ask {
        let settle = self.shared.cond.settle_ms;
        if settle > 0 {
            tokio::time::sleep(Duration::from_millis(settle)).await;
        }
        let Some(live) = self.live.as_mut() else {
            return Ask::Failed(SessionError::Workspace("no session".into()));
        };
        let pos = Document::position_of(text, cursor_byte, live.session.encoding());
        live.show(text, pos.line as usize);
        let s = &mut live.session;
        let r = if live.warmed {
            s.suggest(&unit.file, pos).await
        } else {
            s.suggest_when_ready(&unit.file, pos).await
        };
        match r {
            Ok(t) => {
                live.warmed = true;
                Ask::Got(t)
            }
            Err(e) => Ask::Failed(e),
        }
    }

    /// Asks once; if the server died, restarts it with the editor's state (on disk and in
    /// the document) and asks once more. A server that keeps dying stops the run.
    async fn ask_and_record(
        &mut self,
        unit: &Unit,
        case: &Case,
        text: &str,
        cursor: usize,
    ) -> Result<()> {
        let mut outcome = self.ask(unit, text, cursor).await;
        if let Ask::Failed(e) = &outcome
            && e.is_exit()
        {
            let name = self.profile(unit.assistant).name.clone();
            tracing::warn!(worker = self.id, server = %name, case = %case.case, "server exited: {e}; restarting");
            self.restarts += 1;
            if self.restarts > self.shared.max_restarts {
                bail!(
                    "{name} keeps failing ({} restarts in a row); last error: {e}",
                    self.restarts - 1
                );
            }
            self.shared
                .restarts_after_exit
                .fetch_add(1, Ordering::SeqCst);
            self.start_session(unit, text).await?;
            outcome = self.ask(unit, text, cursor).await;
        }
        let timed_out = |o: &Ask| matches!(o, Ask::Failed(e) if e.is_timeout());
        if timed_out(&outcome) {
            self.timeouts_in_row += 1;
            let limit = self.profile(unit.assistant).restart_after_timeouts;
            if limit > 0 && self.timeouts_in_row >= limit {
                let name = self.profile(unit.assistant).name.clone();
                tracing::warn!(worker = self.id, server = %name, case = %case.case, "{} timeouts in a row: restarting the server and asking once more", self.timeouts_in_row);
                self.shared
                    .restarts_after_timeouts
                    .fetch_add(1, Ordering::SeqCst);
                self.start_session(unit, text).await?;
                outcome = self.ask(unit, text, cursor).await;
                if timed_out(&outcome) {
                    self.timeouts_in_row = 1;
                }
            }
        }
        if let Ask::Got(_) = outcome {
            self.restarts = 0;
            self.timeouts_in_row = 0;
        }
        let request_hash = self
            .live
            .as_ref()
            .and_then(|l| l.session.last_request_hash())
            .map(str::to_string);
        let n = self.shared.recorded.fetch_add(1, Ordering::SeqCst) + 1;
        if self.shared.panic_at == Some(n) {
            panic!(
                "drill: worker {} panics at record {n} (TYPIST_DRILL_PANIC_AT)",
                self.id
            );
        }
        let mut record = self.record(unit, case, text, cursor, outcome);
        record.request_hash = request_hash;
        self.tx
            .send(record)
            .await
            .map_err(|_| anyhow::anyhow!("record writer stopped"))?;
        Ok(())
    }

    fn record(&self, unit: &Unit, case: &Case, text: &str, cursor: usize, outcome: Ask) -> Record {
        let profile = self.profile(unit.assistant);
        let mut r = Record {
            case: case.case.clone(),
            repo: case.repo.clone(),
            file: case.file.clone(),
            line: case.line,
            language: case.language.clone(),
            assistant: profile.name.clone(),
            pass: unit.pass,
            outcome: String::new(),
            typed: typing::typed_prefix(&case.expected, self.shared.cond.typed_prefix as usize)
                .chars()
                .count() as u32,
            expected: case.expected.clone(),
            predicted: None,
            latency_ms: None,
            predicted_text: None,
            error: None,
            items: None,
            request_hash: None,
            response_hash: None,
            extra: Default::default(),
        };
        // The cursor's line as it stands before accepting anything.
        let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
        let current = &text[line_start..line_end];
        match outcome {
            Ask::Got(t) => {
                if self.shared.cond.latency {
                    r.latency_ms = Some((t.latency_ms * 1000.0).round() / 1000.0);
                }
                r.items = Some(t.value.len());
                r.response_hash = Some(crate::editor::session::sha256_hex(
                    serde_json::to_string(&t.value)
                        .unwrap_or_default()
                        .as_bytes(),
                ));
                match &t.value {
                    Suggestions::Inline(items) => match items.first() {
                        Some(first) if first.text != current => {
                            r.outcome = "suggestion".into();
                            r.predicted = Some(first.line.clone());
                            if first.text.contains('\n') {
                                r.predicted_text = Some(first.text.clone());
                            }
                        }
                        _ => r.outcome = "empty".into(),
                    },
                    Suggestions::Completion(_) => {
                        r.outcome = "error".into();
                        r.error =
                            Some("completion list where an inline suggestion was expected".into());
                    }
                }
            }
            Ask::Failed(e) if e.is_timeout() => {
                r.outcome = "timeout".into();
                r.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
            }
            Ask::Failed(e) => {
                r.outcome = "error".into();
                r.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
            }
        }
        r
    }
}

/// Joins the output folders of shards into `out`: the same plan and conditions are
/// required, records are unioned and written sorted, exactly as one run would have.
pub fn merge(shards: &[PathBuf], out: &Path) -> Result<usize> {
    let mut all: Vec<Record> = Vec::new();
    let mut first: Option<Value> = None;
    let mut parts = Vec::new();
    let mut servers: BTreeMap<String, Value> = BTreeMap::new();
    let mut complete = true;
    for dir in shards {
        let mpath = dir.join("manifest.json");
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(&mpath)
                .with_context(|| format!("cannot read {}", mpath.display()))?,
        )
        .with_context(|| format!("malformed {}", mpath.display()))?;
        if let Some(f) = &first {
            if f["plan"]["hash"] != m["plan"]["hash"] {
                bail!(
                    "{} was made from another plan than {}",
                    dir.display(),
                    shards[0].display()
                );
            }
            if f["conditions"] != m["conditions"] {
                bail!(
                    "{} ran under other editor conditions than {}",
                    dir.display(),
                    shards[0].display()
                );
            }
        }
        complete &= m["status"] == json!(RunStatus::Complete);
        for a in m["assistants"].as_array().into_iter().flatten() {
            if let (Some(n), false) = (a["name"].as_str(), a["server"].is_null()) {
                servers
                    .entry(n.to_string())
                    .or_insert_with(|| a["server"].clone());
            }
        }
        parts.push(json!({"path": dir.display().to_string(), "status": m["status"], "shard": m["shard"], "records": m["records"]}));
        all.extend(records::read_all(&dir.join("records.jsonl"))?);
        first.get_or_insert(m);
    }
    let mut manifest = first.context("no shards given")?;
    all.sort_by_key(|a| a.key());
    let mut seen = BTreeSet::new();
    all.retain(|r| seen.insert(r.done_key()));
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    records::write_sorted(&out.join("records.jsonl"), &all)?;
    if let Some(list) = manifest["assistants"].as_array_mut() {
        for a in list {
            if let Some(s) = a["name"].as_str().and_then(|n| servers.get(n)) {
                a["server"] = s.clone();
            }
        }
    }
    manifest["shard"] = Value::Null;
    manifest["merged_from"] = json!(parts);
    manifest["records"] = json!(all.len());
    manifest["status"] = json!(if complete {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted
    });
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(all.len())
}
