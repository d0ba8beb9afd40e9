//! `typist bench run`: suggestions actually answered (records with outcome
//! `suggestion`, not records, which count errors and empty answers) per second and per
//! hour, and typist's own CPU per answered case, against the instant server
//! (`typist-fixed`: the driver is what is measured) and other assistants, each with
//! every `--jobs` asked for. With token cases (completion-list sessions, issue 11) one
//! plan is sampled first and every run replays it; a session is answered when the
//! server answered a list (outcome `suggestion` or `empty`: an empty list is an
//! answer), not when it failed or timed out.
//!
//! Typist's CPU is read from the run's manifest. The token plan is `typist sample --cases
//! tokens --rate P --seed 1`.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::editor::EditorKind;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub dataset: PathBuf,
    pub dir: PathBuf,
    pub runs: usize,
    /// Assistants (profiles) to replay, each in its own runs.
    pub assistants: Vec<String>,
    /// Worker counts to compare.
    pub jobs: Vec<usize>,
    /// Sample code lines with this probability instead of replaying every one (for slow
    /// assistants such as a local model); with token cases, tokens (required).
    pub rate: Option<f64>,
    /// Code lines, or token cases replayed as completion-list sessions.
    pub cases: Cases,
    /// A real editor compared with typist's own client: each run made with both.
    pub editor: Option<EditorKind>,
}

/// What `typist bench run` replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cases {
    /// Code lines (inline suggestions), every one or sampled.
    Lines,
    /// Token cases (completion-list sessions) from one plan sampled at `--rate`.
    Tokens,
}

/// The seed of the token plan every run replays.
const TOKEN_SEED: u64 = 1;

/// One measured `typist run`.
struct RunTiming {
    answered: usize,
    records: usize,
    wall: f64,
    typist_cpu: f64,
    server_cpu: f64,
    /// With a real editor: the highest sum, over the run's samples (every
    /// [`MEMORY_SAMPLE`]), of the proportional set size (PSS) of typist and every process
    /// under it (servers, editor), in MiB; at least typist's own peak RSS (`wait4`), which
    /// measures a run shorter than the sampling.
    peak_pss_mb: Option<f64>,
}

/// How often a run's processes' memory is read (with a real editor).
const MEMORY_SAMPLE: std::time::Duration = std::time::Duration::from_millis(200);

/// The PSS of `root` and every process under it, in MiB (from `/proc`: each process's
/// parent in `stat`, its `Pss:` in `smaps_rollup`; a process gone meanwhile counts 0).
fn tree_pss_mb(root: u32) -> f64 {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // After the command name's closing parenthesis: state, then the parent.
            if let Some(ppid) = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok())
            {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    let kb: u64 = tree
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok())
        .filter_map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .sum();
    kb as f64 / 1024.0
}

/// Records answered in a records file: outcome `suggestion`, and with `lists` also
/// `empty` (an empty completion list is the server's answer).
fn answered(records: &Path, lists: bool) -> Result<usize> {
    #[derive(serde::Deserialize)]
    struct Outcome<'a> {
        #[serde(borrow)]
        outcome: std::borrow::Cow<'a, str>,
    }
    let f = std::fs::File::open(records)
        .with_context(|| format!("cannot open {}", records.display()))?;
    let mut n = 0;
    for line in std::io::BufReader::new(f).lines() {
        let line = line?;
        if let Ok(r) = serde_json::from_str::<Outcome>(&line) {
            n += usize::from(r.outcome == "suggestion" || (lists && r.outcome == "empty"));
        }
    }
    Ok(n)
}

/// `typist sample ARGS --dataset DATASET --out PLAN`; its stdout. A failure is an error
/// naming `what` with the command's stderr.
pub(super) fn sample(what: &str, args: &[&str], dataset: &Path, plan: &Path) -> Result<String> {
    let o = Command::new(std::env::current_exe()?)
        .arg("sample")
        .args(args)
        .arg("--dataset")
        .arg(dataset)
        .arg("--out")
        .arg(plan)
        .output()
        .context("cannot start typist sample")?;
    if !o.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Samples the token plan every run replays (`--rate` tokens, seed [`TOKEN_SEED`]) into
/// `dir`; returns its path and the sample's summary line.
fn token_plan(opts: &RunOptions) -> Result<(PathBuf, String)> {
    let Some(rate) = opts.rate else {
        bail!("token cases need --rate (every token of a dataset is far too many sessions)");
    };
    let plan = opts.dir.join("tokens-plan.jsonl");
    let (rate, seed) = (rate.to_string(), TOKEN_SEED.to_string());
    let args = ["--cases", "tokens", "--rate", &rate, "--seed", &seed];
    let stdout = sample("typist sample --cases tokens", &args, &opts.dataset, &plan)?;
    let summary = stdout.lines().next().unwrap_or_default().to_string();
    Ok((plan, summary))
}

fn time_run(
    opts: &RunOptions,
    plan: Option<&Path>,
    assistant: &str,
    jobs: usize,
    editor: Option<EditorKind>,
    out: &Path,
) -> Result<RunTiming> {
    let _ = std::fs::remove_dir_all(out);
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(&exe);
    cmd.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"]);
    if let Some(e) = editor {
        cmd.args(["--editor", e.as_str()]);
    }
    match (plan, opts.rate) {
        (Some(plan), _) => cmd.arg("--plan").arg(plan),
        (None, Some(p)) => cmd.args(["--rate", &p.to_string()]),
        (None, None) => cmd.args(["--lines", "all"]),
    };
    if plan.is_none() {
        cmd.arg("--dataset").arg(&opts.dataset);
    }
    cmd.args([
        "--assistant",
        assistant,
        "--jobs",
        &jobs.to_string(),
        "--out",
    ])
    .arg(out)
    .stdout(std::process::Stdio::null());
    let start = Instant::now();
    let child = cmd.spawn().context("cannot start typist run")?;
    let pid = child.id();
    // With a real editor (both runs of the comparison alike), a thread samples the
    // memory of typist's process tree while wait4 waits for typist.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = opts.editor.is_some().then(|| {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0.0f64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(tree_pss_mb(pid));
                std::thread::sleep(MEMORY_SAMPLE);
            }
            peak
        })
    });
    let ended = crate::os::wait_with_usage(child).context("wait4 failed for typist run")?;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    // A run shorter than the sampling interval is measured by typist's own peak RSS.
    let peak_pss_mb = sampler
        .and_then(|t| t.join().ok())
        .map(|sampled| sampled.max(ended.usage.peak_mb));
    let status = ended.status;
    let success = ended.code == Some(0);
    let wall = start.elapsed().as_secs_f64();
    if !success {
        bail!("typist run against {assistant} failed (status {status})");
    }
    let m = crate::replay::Manifest::read(&out.join("manifest.json"))?;
    let cpu = m.cpu_seconds;
    Ok(RunTiming {
        answered: answered(&out.join("records.jsonl"), plan.is_some())?,
        records: m.records.unwrap_or(0),
        wall,
        typist_cpu: cpu.and_then(|c| c.typist).unwrap_or(f64::NAN),
        server_cpu: cpu.and_then(|c| c.servers).unwrap_or(f64::NAN),
        peak_pss_mb,
    })
}

/// The best run of each (assistant, jobs): the highest rate, and the lowest typist CPU
/// per answered case.
#[derive(Default, Clone, Copy)]
struct Best {
    rate: f64,
    cpu_us: f64,
}

/// An assistant (with a real editor, `assistant@editor`) and its worker count.
type Key = (String, usize);

/// What the runs measured so far: a table row each, and per (assistant, jobs) the best
/// figures of its runs.
#[derive(Default)]
struct Tally {
    rows: Vec<String>,
    best: BTreeMap<Key, Best>,
    /// The lowest CPU per answered case of typist plus its children (the server;
    /// Neovim and its server), in µs.
    all_cpu: BTreeMap<Key, f64>,
    /// With a real editor: the lowest peak PSS per worker.
    mem: BTreeMap<Key, f64>,
}

impl Tally {
    fn add(&mut self, assistant: &str, jobs: usize, t: &RunTiming) {
        let key = (assistant.to_string(), jobs);
        let rate = t.answered as f64 / t.wall;
        let cpu_us = 1e6 * t.typist_cpu / t.answered.max(1) as f64;
        let b = self.best.entry(key.clone()).or_insert(Best {
            rate: 0.0,
            cpu_us: f64::INFINITY,
        });
        (b.rate, b.cpu_us) = (b.rate.max(rate), b.cpu_us.min(cpu_us));
        let all = 1e6 * (t.typist_cpu + t.server_cpu) / t.answered.max(1) as f64;
        keep_lowest(&mut self.all_cpu, key.clone(), all);
        if let Some(pss) = t.peak_pss_mb {
            keep_lowest(&mut self.mem, key, pss / jobs as f64);
        }
        self.rows.push(format!(
            "| {assistant} | {jobs} | {} of {} | {:.2} | {rate:.1} | {:.0} | {:.2} ({:.0}%) | {cpu_us:.0} | {:.2} |",
            t.answered,
            t.records,
            t.wall,
            rate * 3600.0,
            t.typist_cpu,
            100.0 * t.typist_cpu / t.wall,
            t.server_cpu
        ));
    }
}

fn keep_lowest(map: &mut BTreeMap<Key, f64>, key: Key, value: f64) {
    let v = map.entry(key).or_insert(f64::INFINITY);
    *v = v.min(value);
}

/// The token plan every run replays, if the cases are tokens, and what the runs replay
/// in words.
fn cases_of(opts: &RunOptions) -> Result<(Option<PathBuf>, String)> {
    Ok(match opts.cases {
        Cases::Tokens => {
            let (plan, summary) = token_plan(opts)?;
            (
                Some(plan),
                format!("token cases (seed {TOKEN_SEED}): {summary}"),
            )
        }
        Cases::Lines => (
            None,
            opts.rate.map_or("every code line".to_string(), |p| {
                format!("code lines sampled at {p}")
            }),
        ),
    })
}

/// The editors each run is made in: with a real editor typist's own client, then the
/// editor (`assistant@editor` in the tables); else the one the run's settings say.
fn editors(opts: &RunOptions) -> Vec<Option<EditorKind>> {
    match opts.editor {
        Some(e) => vec![Some(EditorKind::Typist), Some(e)],
        None => vec![None],
    }
}

/// `typist bench run`: a row per run, then the best of each (assistant, jobs) and the
/// `--jobs` ratios.
pub fn run(opts: &RunOptions) -> Result<String> {
    std::fs::create_dir_all(&opts.dir)?;
    let (plan, what) = cases_of(opts)?;
    let mut tally = Tally::default();
    for a in &opts.assistants {
        for &jobs in &opts.jobs {
            for _ in 0..opts.runs.max(1) {
                for editor in editors(opts) {
                    let assistant = match editor {
                        Some(e) => format!("{a}@{}", e.as_str()),
                        None => a.clone(),
                    };
                    let out = opts.dir.join(format!("{assistant}-{jobs}"));
                    let t = time_run(opts, plan.as_deref(), a, jobs, editor, &out)?;
                    tally.add(&assistant, jobs, &t);
                }
            }
        }
    }
    let editor_table = opts
        .editor
        .map(|e| editor_ratios(e, &tally))
        .unwrap_or_default();
    let limit = match opts.cases {
        Cases::Lines if opts.assistants.iter().any(|a| a == "typist-fixed") => {
            limit_line(opts, &tally.best)?
        }
        _ => String::new(),
    };
    Ok(format!(
        "dataset: {} ({}); wall time includes start-up, the final sort, scoring and the report\n\
         load average at the end: {}\n\n\
         | assistant | jobs | answered (of records) | wall s | per second | per hour | typist CPU s (share of wall) | typist CPU µs per answered | server CPU s |\n\
         |---|---|---|---|---|---|---|---|---|\n{}\n\n\
         best of {}:\n\n{}{editor_table}{limit}",
        opts.dataset.display(),
        what,
        super::child::load_average(),
        tally.rows.join("\n"),
        opts.runs.max(1),
        best_table(&tally.best, &opts.jobs),
    ))
}

/// The limit line: the runs' cases (the same sampling) sent straight to the instant host
/// by a bare client ([`super::bare`]), best of the runs, against typist-fixed with one
/// job (best run).
fn limit_line(opts: &RunOptions, best: &BTreeMap<Key, Best>) -> Result<String> {
    let plan = opts.dir.join("lines-plan.jsonl");
    let rate = opts.rate.map(|p| p.to_string());
    let how = match &rate {
        Some(p) => ["--rate", p.as_str()],
        None => ["--lines", "all"],
    };
    sample("typist sample", &how, &opts.dataset, &plan)?;
    let mut bare: Option<super::bare::Bare> = None;
    for _ in 0..opts.runs.max(1) {
        let b = super::bare::run(&opts.dataset, &plan)?;
        if bare.is_none_or(|x| b.per_second() > x.per_second()) {
            bare = Some(b);
        }
    }
    let b = bare.expect("at least one run");
    let ours = best
        .get(&("typist-fixed".to_string(), 1))
        .or_else(|| best.get(&("typist-fixed@typist".to_string(), 1)))
        .map_or(f64::NAN, |x| x.rate);
    Ok(format!(
        "\nlimit: the same {} cases sent straight to the instant host by a bare LSP client \
         (one change and one request per case, nothing recorded), best of {}: {} answered in \
         {:.2} s, {:.1} per second; typist-fixed with 1 job / bare: {:.2}\n",
        b.cases,
        opts.runs.max(1),
        b.answered,
        b.seconds,
        b.per_second(),
        ours / b.per_second()
    ))
}

/// The real editor against typist's own client, per assistant and jobs (best runs):
/// answered cases per second, and the CPU per answered case of typist plus its children
/// (the server; with Neovim, Neovim and the server it started), and the memory per
/// worker (the peak PSS of typist and every process under it, over the jobs; the lowest
/// of the runs), each as a ratio.
fn editor_ratios(editor: EditorKind, tally: &Tally) -> String {
    let Tally {
        best, all_cpu, mem, ..
    } = tally;
    let e = editor.as_str();
    let mut out = format!(
        "\n{e} against typist's own client (best runs):\n\n| assistant | jobs | per second, typist | per second, {e} | ratio | CPU µs per answered (all processes), typist | {e} | ratio | PSS MiB per worker (all processes), typist | {e} | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for ((name, jobs), b) in best {
        let Some(a) = name.strip_suffix("@typist") else {
            continue;
        };
        let key = (format!("{a}@{e}"), *jobs);
        let (Some(n), Some(&cn), Some(&ct)) = (
            best.get(&key),
            all_cpu.get(&key),
            all_cpu.get(&(name.clone(), *jobs)),
        ) else {
            continue;
        };
        let (mt, mn) = (
            mem.get(&(name.clone(), *jobs)).copied().unwrap_or(f64::NAN),
            mem.get(&key).copied().unwrap_or(f64::NAN),
        );
        out.push_str(&format!(
            "| {a} | {jobs} | {:.1} | {:.1} | {:.3}× | {ct:.0} | {cn:.0} | {:.2}× | {mt:.0} | {mn:.0} | {:.1}× |\n",
            b.rate,
            n.rate,
            n.rate / b.rate,
            cn / ct,
            mn / mt
        ));
    }
    out
}

/// Per assistant and jobs: the best rate, the best CPU per answered case, and the rate
/// against the first `--jobs` figure.
fn best_table(best: &BTreeMap<Key, Best>, jobs: &[usize]) -> String {
    let mut out = String::from(
        "| assistant | jobs | answered per second | per hour | typist CPU µs per answered | vs first --jobs |\n\
         |---|---|---|---|---|---|\n",
    );
    for ((assistant, j), b) in best {
        let first = jobs
            .first()
            .and_then(|f| best.get(&(assistant.clone(), *f)))
            .map_or(f64::NAN, |f| b.rate / f.rate);
        out.push_str(&format!(
            "| {assistant} | {j} | {:.1} | {:.0} | {:.0} | {first:.2}× |\n",
            b.rate,
            b.rate * 3600.0,
            b.cpu_us
        ));
    }
    out
}
