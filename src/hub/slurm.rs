//! The Slurm executor (`typist serve --executor slurm`): each job is one Slurm job array
//! of N tasks, task `i` running `typist run --shard auto --out jobs/ID/shards/i` (Slurm
//! says the index and the count) with the arguments the local executor gives its run;
//! the service waits for the array to end (`squeue`, no accounting needed), then
//! `typist merge`s the shards into `jobs/ID/out` (records, manifest, `score.json` and
//! report as one run writes them: the same bytes, whatever N) and reads the figures as
//! the local executor does. Progress is the records written across the shards' folders.
//!
//! The batch script (`jobs/ID/slurm.sh`) decides per task, when it runs: a shard whose
//! run ended (its `shards/i.exit` says 0 or 3) exits at once, a shard with a manifest is
//! resumed (`--resume`), any other starts afresh. So a retried job is the same array
//! submitted again: the tasks that failed or were killed resume where their records
//! end, up to the local executor's attempts. The array's id is kept in `jobs/ID/slurm.id`
//! while it runs: a service stopped (or killed) leaves the array running on the
//! cluster, and the next one waits for it rather than submitting again. The data
//! folder must be the same path on every node, and the typist program too.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::db::Submission;
use super::jobs::{POLL, Written, last_words, result};
use super::layout::{job_dir, out_dir};
use super::state::{Hub, RunJob};

/// How often the array's tasks are asked of Slurm.
const SQUEUE_EVERY: Duration = Duration::from_secs(1);
/// How long Slurm may not answer `squeue` before the job's attempt fails.
const SQUEUE_PATIENCE: Duration = Duration::from_secs(120);

/// How jobs are sent to Slurm.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// Tasks of each job's array (shards of its plan).
    pub shards: u32,
    /// More options given to every `sbatch` (a partition, a time limit, an account).
    pub sbatch_args: Vec<String>,
}

/// The executor that runs every job through Slurm.
pub fn executor(opts: SlurmOptions) -> RunJob {
    let opts = Arc::new(opts);
    Arc::new(move |hub: Arc<Hub>, s: Submission| {
        let opts = Arc::clone(&opts);
        Box::pin(async move { run(&hub, &s, &opts).await })
    })
}

/// Before the service starts: Slurm's programs are there and its controller answers.
pub fn check(opts: &SlurmOptions) -> Result<()> {
    if opts.shards == 0 {
        bail!("--slurm-shards must be 1 or more");
    }
    for program in ["sbatch", "squeue", "scancel"] {
        if which(program).is_none() {
            bail!(
                "{program} not found: install slurm-wlm (or put Slurm's programs on PATH), or use --executor local"
            );
        }
    }
    let o = std::process::Command::new("squeue")
        .args(["--noheader", "--jobs", "1", "--format", "%i"])
        .output()
        .context("cannot run squeue")?;
    let said = String::from_utf8_lossy(&o.stderr);
    // An unknown job id is an answer: the controller is there.
    if !o.status.success() && !said.contains("Invalid job id") {
        bail!(
            "Slurm's controller does not answer (squeue: {}): start it, point SLURM_CONF at its slurm.conf, or use --executor local",
            last_line(&said).unwrap_or("no message")
        );
    }
    Ok(())
}

/// `program` on PATH.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// Shard `i`'s output folder.
fn shard_dir(shards: &Path, i: u32) -> PathBuf {
    shards.join(i.to_string())
}

/// How shard `i`'s last run exited (`shards/i.exit`, written by the batch script), if
/// it ended.
fn exit_of(shards: &Path, i: u32) -> Option<i32> {
    std::fs::read_to_string(shards.join(format!("{i}.exit")))
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

/// Whether a run exited as one that ended: complete, or complete with an assistant that
/// answered nothing (3; its errors are in the records).
fn ended_well(code: Option<i32>) -> bool {
    matches!(code, Some(0) | Some(3))
}

/// `s` quoted for a POSIX shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs job `s` as a Slurm array to its end: its figures, or why it did not end.
async fn run(hub: &Hub, s: &Submission, o: &SlurmOptions) -> Result<Value> {
    let bench = hub
        .benchmark(&s.benchmark)
        .with_context(|| format!("benchmark {:?} is no longer defined", s.benchmark))?;
    let dir = job_dir(&hub.data, s.id);
    let out = out_dir(&hub.data, s.id);
    let shards = dir.join("shards");
    std::fs::create_dir_all(&shards)
        .with_context(|| format!("cannot make {}", shards.display()))?;
    let spec = super::spec::Spec::from_json(&s.spec)?;
    let total = bench.cases as i64 * i64::from(spec.passes);
    let n = o.shards;
    let mut written: Vec<Written> = (0..n).map(|_| Written::default()).collect();
    let mut count = || -> i64 {
        written
            .iter_mut()
            .zip(0..n)
            .map(|(w, i)| w.count(&shard_dir(&shards, i)))
            .sum()
    };
    hub.db.progress(s.id, count(), total)?;
    let id_file = dir.join("slurm.id");
    let pending = (0..n).any(|i| !ended_well(exit_of(&shards, i)));
    // The array a stopped service left running, if Slurm still runs it.
    let left = std::fs::read_to_string(&id_file)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|id| !id.is_empty());
    let array = match left {
        Some(id) if tasks(&id).await.is_ok_and(|t| t.iter().any(|t| t.active())) => Some(id),
        _ if pending => {
            let script = write_script(hub, s, &bench.plan, &dir, &shards, n, &spec)?;
            for i in 0..n {
                if !ended_well(exit_of(&shards, i)) {
                    let _ = std::fs::remove_file(shards.join(format!("{i}.exit")));
                }
            }
            let id = submit(s.id, &dir, &shards, &script, o).await?;
            std::fs::write(&id_file, format!("{id}\n"))
                .with_context(|| format!("cannot write {}", id_file.display()))?;
            tracing::info!(
                job = s.id,
                attempt = s.attempts,
                "hub: Slurm array {id} ({n} tasks) for {}",
                shards.display()
            );
            Some(id)
        }
        _ => None,
    };
    let mut states: Vec<Task> = Vec::new();
    if let Some(id) = &array {
        let mut asked = Instant::now() - SQUEUE_EVERY;
        let mut answered = Instant::now();
        loop {
            if hub.stopping.load(Ordering::SeqCst) {
                // The array runs on; the next service waits for it (slurm.id).
                bail!("the service is stopping (Slurm array {id} runs on)");
            }
            if asked.elapsed() >= SQUEUE_EVERY {
                asked = Instant::now();
                match tasks(id).await {
                    Ok(now) => {
                        answered = Instant::now();
                        if let Some(held) = now.iter().find(|t| t.held()) {
                            let _ = tokio::process::Command::new("scancel")
                                .arg(id)
                                .output()
                                .await;
                            bail!(
                                "Slurm held task {} of array {id} ({}): cancelled; see {}",
                                held.index,
                                held.reason,
                                shards.join(format!("{}.log", held.index)).display()
                            );
                        }
                        for t in &now {
                            match states.iter_mut().find(|s| s.index == t.index) {
                                Some(s) => *s = t.clone(),
                                None => states.push(t.clone()),
                            }
                        }
                        if !now.iter().any(Task::active) {
                            break;
                        }
                    }
                    Err(e) if answered.elapsed() > SQUEUE_PATIENCE => {
                        bail!("Slurm did not answer for {SQUEUE_PATIENCE:?}: {e:#}")
                    }
                    Err(e) => tracing::warn!(job = s.id, "hub: {e:#}"),
                }
            }
            hub.db.progress(s.id, count(), total)?;
            tokio::time::sleep(POLL).await;
        }
    }
    // Counted afresh: a run that ends writes its records again, sorted.
    let done: i64 = (0..n)
        .map(|i| Written::default().count(&shard_dir(&shards, i)))
        .sum();
    hub.db.progress(s.id, done, total.max(done))?;
    let _ = std::fs::remove_file(&id_file);
    let failed: Vec<u32> = (0..n)
        .filter(|&i| !ended_well(exit_of(&shards, i)))
        .collect();
    if let Some(&i) = failed.first() {
        let array = array.as_deref().unwrap_or("?");
        let how = match exit_of(&shards, i) {
            Some(c) => format!("exited with {c}"),
            None => match states.iter().find(|t| t.index == i) {
                Some(t) => format!("ended {} without its exit status", t.state),
                None => "ended without its exit status".to_string(),
            },
        };
        let said = last_words(&shards.join(format!("{i}.log")));
        let others = match failed.len() {
            1 => String::new(),
            k => format!(" (and {} other task(s))", k - 1),
        };
        bail!(
            "Slurm task {i} of array {array}{others} {how}{}",
            said.map(|w| format!(": {w}")).unwrap_or_default()
        );
    }
    merge(hub, &dir, &shards, n, &out).await?;
    result(&out)
}

/// The batch script of job `s` (`jobs/ID/slurm.sh`), each array task's run of its shard.
fn write_script(
    hub: &Hub,
    s: &Submission,
    plan: &Path,
    dir: &Path,
    shards: &Path,
    n: u32,
    spec: &super::spec::Spec,
) -> Result<PathBuf> {
    let assistant = spec.prepare(dir, &hub.data, None)?;
    let typist = quote(&hub.typist.to_string_lossy());
    let mut fresh = vec![
        "--plan".to_string(),
        quote(&plan.to_string_lossy()),
        "--assistant".into(),
        quote(&assistant.name),
        "--editor".into(),
        quote(spec.editor.as_str()),
        "--passes".into(),
        spec.passes.to_string(),
    ];
    if let Some(editors) = assistant.editors {
        fresh.push("--editors".into());
        fresh.push(quote(&editors.to_string_lossy()));
    }
    let text = format!(
        "#!/bin/sh\n\
         # typist serve: job {id} as a Slurm array of {n} tasks, one per shard of its plan\n\
         # (written by the service; each task runs or resumes its shard's run).\n\
         i=\"${{SLURM_ARRAY_TASK_ID:?run as a task of a Slurm array (sbatch --array=0-{last})}}\"\n\
         shards={shards}\n\
         case \"$(cat \"$shards/$i.exit\" 2>/dev/null)\" in 0|3) exit 0 ;; esac\n\
         if [ -f \"$shards/$i/manifest.json\" ]; then\n\
         \x20 {typist} run --quiet --out \"$shards/$i\" --jobs {jobs} --resume\n\
         else\n\
         \x20 {typist} run --quiet --out \"$shards/$i\" --jobs {jobs} --shard auto/{n} {fresh}\n\
         fi\n\
         rc=$?\n\
         echo \"$rc\" >\"$shards/$i.exit\"\n\
         # 3: complete, and an assistant answered nothing (its errors are in the records).\n\
         [ \"$rc\" = 3 ] && exit 0\n\
         exit \"$rc\"\n",
        id = s.id,
        last = n - 1,
        shards = quote(&shards.to_string_lossy()),
        jobs = hub.jobs,
        fresh = fresh.join(" "),
    );
    let path = dir.join("slurm.sh");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `sbatch` of the job's array: the array's id.
async fn submit(
    id: i64,
    dir: &Path,
    shards: &Path,
    script: &Path,
    o: &SlurmOptions,
) -> Result<String> {
    let mut cmd = tokio::process::Command::new("sbatch");
    cmd.arg("--parsable")
        .arg(format!("--array=0-{}", o.shards - 1))
        .arg(format!("--job-name=typist-{id}"))
        .arg(format!("--output={}/%a.log", shards.display()))
        .arg("--open-mode=append")
        .arg(format!("--chdir={}", dir.display()))
        .args(&o.sbatch_args)
        .arg(script)
        .stdin(std::process::Stdio::null());
    let out = cmd
        .output()
        .await
        .context("sbatch could not be run: install slurm-wlm, or use --executor local")?;
    let said = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "sbatch failed: {}",
            last_line(&said).unwrap_or("no message")
        );
    }
    // `ID` or `ID;CLUSTER`.
    let text = String::from_utf8_lossy(&out.stdout);
    let array = text
        .trim()
        .split(';')
        .next()
        .filter(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_digit()))
        .with_context(|| format!("sbatch answered no job id: {:?}", text.trim()))?;
    Ok(array.to_string())
}

/// One task of the array as `squeue` sees it.
#[derive(Debug, Clone)]
struct Task {
    index: u32,
    state: String,
    reason: String,
}

impl Task {
    /// Not yet ended (Slurm keeps ended tasks for a while, as COMPLETED, FAILED…).
    fn active(&self) -> bool {
        matches!(
            self.state.as_str(),
            "PENDING"
                | "RUNNING"
                | "SUSPENDED"
                | "COMPLETING"
                | "CONFIGURING"
                | "REQUEUED"
                | "REQUEUE_FED"
                | "REQUEUE_HOLD"
                | "RESIZING"
                | "SIGNALING"
                | "STAGE_OUT"
                | "STOPPED"
        )
    }

    /// Pending and held: Slurm waits for a person (a launch that failed is requeued so).
    fn held(&self) -> bool {
        self.active()
            && self.state != "RUNNING"
            && (self.reason.contains("held") || self.reason.contains("Held"))
    }
}

/// The tasks of array `id`, ended ones included while Slurm keeps them; none once Slurm
/// has forgotten the array.
async fn tasks(id: &str) -> Result<Vec<Task>> {
    let out = tokio::process::Command::new("squeue")
        .args(["--noheader", "--array", "--states=all", "--jobs", id])
        .args(["--format=%K|%T|%r"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .context("squeue could not be run")?;
    let said = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if said.contains("Invalid job id") {
            return Ok(Vec::new());
        }
        bail!(
            "squeue failed: {}",
            last_line(&said).unwrap_or("no message")
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut tasks = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut f = line.trim().splitn(3, '|');
        let (Some(k), Some(state), reason) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let state = state.trim().to_string();
        let reason = reason.unwrap_or_default().trim().to_string();
        // A pending array's tasks not yet split off are one line, `0-3` or `[1,3]`.
        let ids: Vec<u32> = k
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .flat_map(|part| {
                let part = part.split('%').next().unwrap_or_default();
                match part.split_once('-') {
                    Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                        (Ok(a), Ok(b)) => (a..=b).collect(),
                        _ => Vec::new(),
                    },
                    None => part.parse::<u32>().into_iter().collect(),
                }
            })
            .collect();
        for index in ids {
            tasks.push(Task {
                index,
                state: state.clone(),
                reason: reason.clone(),
            });
        }
    }
    Ok(tasks)
}

/// `typist merge` of the shards into the job's `out`, its words in `run.log`.
async fn merge(hub: &Hub, dir: &Path, shards: &Path, n: u32, out: &Path) -> Result<()> {
    if out.exists() {
        // A merge cut short before: made again from the shards.
        std::fs::remove_dir_all(out).with_context(|| format!("cannot clear {}", out.display()))?;
    }
    let log_path = dir.join("run.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot write {}", log_path.display()))?;
    let mut cmd = tokio::process::Command::new(&hub.typist);
    cmd.arg("merge")
        .args((0..n).map(|i| shard_dir(shards, i)))
        .arg("--out")
        .arg(out)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true);
    let status = cmd
        .status()
        .await
        .with_context(|| format!("cannot start {}", hub.typist.display()))?;
    if !status.success() {
        let said = last_words(&log_path);
        bail!(
            "typist merge of the shards failed{}",
            said.map(|w| format!(": {w}")).unwrap_or_default()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_a_quote() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn held_and_active_tasks() {
        let t = |state: &str, reason: &str| Task {
            index: 0,
            state: state.into(),
            reason: reason.into(),
        };
        assert!(t("PENDING", "Resources").active());
        assert!(!t("PENDING", "Resources").held());
        assert!(t("PENDING", "launch failed requeued held").held());
        assert!(!t("COMPLETED", "None").active());
        assert!(!t("CANCELLED", "None").active());
    }
}
