//! `typist bench run --large-repo [SRC]` (issue 47): what a file session's start and
//! the servers' memory cost as one repository grows, for the n-gram baseline
//! (`typist-ngram`, which reads the repository) against the previous-line baseline
//! (`typist-previous-line`, which reads nothing but the open file) in the same run.
//!
//! For each size N it builds `DIR/large-N/`, one repository: the `.py` files of SRC
//! (default: Python's standard library, real code on any machine with python3) in
//! sorted relative-path order, whole files, until they hold N lines (folders named
//! `site-packages` or `dist-packages`, hidden ones, files over 1 MiB and files that are
//! not UTF-8 left out); `DIR/large-N.stamp` says what it was made from, and the folder
//! is reused when that is the same. One plan per size is sampled from it (`typist
//! sample --single-repo --seed 1 --max-per-file 1`, with the `--rate` at which about 60
//! files are expected to be drawn from, or `--lines all` when there are no more files
//! than that: about 60 cases, one per file, so a session per case; [`rate_for`]) and
//! replayed by each assistant with one job, twice in a row: cold, with
//! `TYPIST_CACHE_DIR` (where the host keeps its index cache) a freshly emptied
//! `DIR/cache-N`, then warm, the same run again with that folder as the cold run left it
//! (what a repeated or resumed run costs). Each figure comes from the run's
//! manifest: `sessions.start_seconds` over `sessions.started` (the mean time to start a
//! file session: its workspace, the server, to the answer to `initialize`) and
//! `peak_mb` (the largest server's peak resident memory, and typist's own).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The assistant every figure is a ratio to, and the one measured.
const REFERENCE: &str = "typist-previous-line";
const MEASURED: &str = "typist-ngram";
/// The cases sampled per size, spread over the files (one per file at most).
const CASES: f64 = 60.0;
/// The seed of every size's plan.
const SEED: u64 = 1;
/// Files larger than this are left out (as the dataset walk leaves them out).
const MAX_FILE: u64 = 1 << 20;
/// Issue 47's goals at 200,000 lines: a file session's start (warm, after the first)
/// in ms, and the n-gram host's peak memory in MB (10^6 bytes).
const GOAL_LINES: usize = 200_000;
const GOAL_START_MS: f64 = 50.0;
const GOAL_PEAK_MB: f64 = 150.0;

#[derive(Debug, Clone)]
pub struct LargeOptions {
    /// The folder whose `.py` files make the repository (`None`: Python's standard
    /// library, as `python3`'s `sysconfig` names it).
    pub src: Option<PathBuf>,
    /// The repository sizes in lines, smallest first.
    pub sizes: Vec<usize>,
    /// Where the repositories, plans, caches and runs are kept.
    pub dir: PathBuf,
    /// Runs of each (size, assistant), cold and warm each time: the table gives the
    /// best of them.
    pub runs: usize,
}

/// A repository built for one size.
struct Repo {
    lines: usize,
    files: usize,
    path: PathBuf,
    /// The code lines of each of its files (the lines a case is drawn from).
    code_lines: Vec<usize>,
}

/// What one measured `typist run` said.
#[derive(Clone, Copy)]
struct Figures {
    wall: f64,
    /// Mean seconds to start a session.
    start: f64,
    server_peak: f64,
    typist_peak: f64,
    sessions: u64,
    cases: usize,
}

/// Each run's figures kept at their best (lowest) over the runs.
fn best(a: Option<Figures>, b: Figures) -> Figures {
    let Some(a) = a else { return b };
    Figures {
        wall: a.wall.min(b.wall),
        start: a.start.min(b.start),
        server_peak: a.server_peak.min(b.server_peak),
        typist_peak: a.typist_peak.min(b.typist_peak),
        ..b
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cache {
    Cold,
    Warm,
}

impl Cache {
    fn as_str(self) -> &'static str {
        match self {
            Cache::Cold => "cold",
            Cache::Warm => "warm",
        }
    }
}

/// Python's standard library, as `python3` names it.
fn python_stdlib() -> Result<PathBuf> {
    let o = Command::new("python3")
        .args([
            "-c",
            "import sysconfig;print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .context("--large-repo without a folder reads Python's standard library, and python3 could not be started: give --large-repo DIR")?;
    let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
    if !o.status.success() || path.is_empty() {
        bail!(
            "python3 did not name its standard library ({}): give --large-repo DIR",
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(PathBuf::from(path))
}

/// The `.py` files under `src`, relative to it, in sorted order (components compared
/// one by one), with those left out as the module doc says.
fn python_files(src: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = src.join(&rel);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for e in entries {
            let e = e?;
            let name = e.file_name();
            let Some(n) = name.to_str() else { continue };
            let t = e.file_type()?;
            if n.starts_with('.') || t.is_symlink() {
                continue;
            }
            if t.is_dir() {
                if n != "site-packages" && n != "dist-packages" && n != "__pycache__" {
                    stack.push(rel.join(n));
                }
            } else if t.is_file() && n.ends_with(".py") && e.metadata()?.len() <= MAX_FILE {
                out.push(rel.join(n));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `DIR/large-N`: whole files of `src` in order until they hold `n` lines; reused when
/// its stamp says it was made from the same folder and size.
fn build_repo(src: &Path, n: usize, dir: &Path) -> Result<Repo> {
    let path = dir.join(format!("large-{n}"));
    let stamp = dir.join(format!("large-{n}.stamp"));
    let want = format!("source: {}\nlines wanted: {n}\n", src.display());
    if std::fs::read_to_string(&stamp).is_ok_and(|t| t.starts_with(&want)) && path.is_dir() {
        return read_repo(path);
    }
    let _ = std::fs::remove_file(&stamp);
    if path.exists() {
        std::fs::remove_dir_all(&path)
            .with_context(|| format!("cannot remove {}", path.display()))?;
    }
    let (mut lines, mut files) = (0, 0);
    for rel in python_files(src)? {
        if lines >= n {
            break;
        }
        // Unreadable and not UTF-8: left out.
        let Ok(Ok(text)) = std::fs::read(src.join(&rel)).map(String::from_utf8) else {
            continue;
        };
        let to = path.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&to, &text).with_context(|| format!("cannot write {}", to.display()))?;
        lines += text.lines().count();
        files += 1;
    }
    if lines < n {
        bail!(
            "{} holds {lines} lines of Python in {files} files, fewer than the {n} asked for",
            src.display()
        );
    }
    std::fs::write(&stamp, format!("{want}lines: {lines}\nfiles: {files}\n"))
        .with_context(|| format!("cannot write {}", stamp.display()))?;
    read_repo(path)
}

/// A built repository's files, lines and code lines, as `typist sample` and `typist
/// run` see its folder (one repository).
fn read_repo(path: PathBuf) -> Result<Repo> {
    let opts = crate::dataset::WalkOptions {
        single_repo: true,
        ..Default::default()
    };
    let ds = crate::dataset::walk(&path, &opts)?;
    let files: Vec<_> = ds.repos.iter().flat_map(|r| &r.files).collect();
    let code = |f: &crate::dataset::SourceFile| {
        crate::dataset::classify::code_lines(&f.text, f.language)
            .into_iter()
            .filter(|c| *c)
            .count()
    };
    Ok(Repo {
        lines: files.iter().map(|f| f.text.lines().count()).sum(),
        files: files.len(),
        code_lines: files.iter().map(|f| code(f)).collect(),
        path,
    })
}

/// The sampling rate at which about `cases` files are expected to be drawn from (each
/// code line drawn with probability r, a file of L code lines is drawn from with
/// probability 1 - (1 - r)^L), with 3 significant digits; `None` when there are no
/// more files than that: every file then gives one case.
fn rate_for(code_lines: &[usize], cases: f64) -> Option<f64> {
    if code_lines.len() as f64 <= cases {
        return None;
    }
    let expected = |r: f64| -> f64 {
        code_lines
            .iter()
            .map(|&l| 1.0 - (1.0 - r).powi(l.min(i32::MAX as usize) as i32))
            .sum()
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if expected(mid) < cases {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    format!("{hi:.2e}").parse().ok()
}

/// Samples the plan of a size: about [`CASES`] cases, one per file at most, so a
/// session per case.
fn sample_plan(repo: &Repo, n: usize, dir: &Path) -> Result<PathBuf> {
    let plan = dir.join(format!("large-{n}-plan.jsonl"));
    let how = match rate_for(&repo.code_lines, CASES) {
        Some(r) => ["--rate".to_string(), r.to_string()],
        None => ["--lines".to_string(), "all".to_string()],
    };
    let seed = SEED.to_string();
    let mut args = vec!["--single-repo", "--seed", &seed, &how[0], &how[1]];
    args.extend(["--max-per-file", "1", "--force"]);
    let what = format!("typist sample of {}", repo.path.display());
    super::run::sample(&what, &args, &repo.path, &plan)?;
    Ok(plan)
}

/// Empties `cache` (made afresh).
fn empty(cache: &Path) -> Result<()> {
    if cache.exists() {
        std::fs::remove_dir_all(cache)
            .with_context(|| format!("cannot empty {}", cache.display()))?;
    }
    std::fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))
}

/// One `typist run` of `plan` against `assistant` with one job (and `passes`), its
/// host keeping its cache in `cache`; its figures from wall time and its manifest.
fn time_run(
    plan: &Path,
    assistant: &str,
    passes: u32,
    cache: &Path,
    out: &Path,
) -> Result<Figures> {
    let _ = std::fs::remove_dir_all(out);
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--plan")
        .arg(plan)
        .args(["--assistant", assistant, "--jobs", "1"])
        .args(["--passes", &passes.to_string()])
        .arg("--out")
        .arg(out)
        .env("TYPIST_CACHE_DIR", cache);
    let t = super::child::timed(&mut cmd, &out.with_extension("stdout.txt"))
        .with_context(|| format!("typist run against {assistant} failed"))?;
    let m = crate::replay::Manifest::read(&out.join("manifest.json"))?;
    let sessions = m.sessions.map_or(0, |s| s.started);
    let start_seconds = m.sessions.and_then(|s| s.start_seconds);
    let peak = |f: fn(&crate::replay::manifest::PeakMb) -> Option<f64>| {
        m.peak_mb.as_ref().and_then(f).unwrap_or(f64::NAN)
    };
    Ok(Figures {
        wall: t.seconds,
        start: start_seconds.map_or(f64::NAN, |s| s / sessions.max(1) as f64),
        server_peak: peak(|p| p.servers),
        typist_peak: peak(|p| p.typist),
        sessions,
        cases: m.plan.cases,
    })
}

/// The measured figures: by size, assistant and cache.
type Table = BTreeMap<(usize, &'static str, Cache), Figures>;

/// `typist bench run --large-repo`: the table, the ratios, the growth, the goals and the
/// two-pass figure.
pub fn large(opts: &LargeOptions) -> Result<String> {
    let mut sizes = opts.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() || sizes[0] == 0 {
        bail!("--sizes needs at least one size above 0 lines");
    }
    let (src, src_words) = match &opts.src {
        Some(s) => (s.clone(), String::new()),
        None => (python_stdlib()?, " (Python's standard library)".to_string()),
    };
    let src = std::path::absolute(&src).unwrap_or(src);
    std::fs::create_dir_all(&opts.dir)
        .with_context(|| format!("cannot create {}", opts.dir.display()))?;
    let dir = std::path::absolute(&opts.dir).unwrap_or(opts.dir.clone());
    let load_before = super::child::load_average();
    let runs = opts.runs.max(1);
    let mut table = Table::new();
    let mut repos = BTreeMap::new();
    let mut plans = BTreeMap::new();
    for &n in &sizes {
        let repo = build_repo(&src, n, &dir)?;
        let plan = sample_plan(&repo, n, &dir)?;
        let cache = dir.join(format!("cache-{n}"));
        for assistant in [REFERENCE, MEASURED] {
            for _ in 0..runs {
                empty(&cache)?;
                for c in [Cache::Cold, Cache::Warm] {
                    let out = dir.join(format!("large-{n}-{assistant}-{}", c.as_str()));
                    let f = time_run(&plan, assistant, 1, &cache, &out)?;
                    tracing::info!(
                        "{n} lines, {assistant}, {}: {:.2} s, session start {:.1} ms",
                        c.as_str(),
                        f.wall,
                        1e3 * f.start
                    );
                    let key = (n, assistant, c);
                    table.insert(key, best(table.get(&key).copied(), f));
                }
            }
        }
        repos.insert(n, repo);
        plans.insert(n, plan);
    }
    // The largest size's plan, twice, by the n-gram host with its cache warm: the
    // cache folder holds what that size's runs left.
    let largest = *sizes.last().expect("one size at least");
    let cache = dir.join(format!("cache-{largest}"));
    let mut two: Option<Figures> = None;
    for _ in 0..runs {
        let out = dir.join(format!("large-{largest}-{MEASURED}-2-passes"));
        let f = time_run(&plans[&largest], MEASURED, 2, &cache, &out)?;
        two = Some(best(two, f));
    }
    let two = two.expect("one run at least");
    Ok(format!(
        "source: {}{src_words}; every size one repository under {}, one job, best of {runs} \
         (each column's lowest)\n\
         load average at the start: {load_before}; at the end: {}\n\n{}\n{}\n{}\n{}\n\
         {MEASURED}, 2 passes of the {} cases at {largest} lines, cache warm: {:.2} s \
         (session start {:.1} ms)\n",
        src.display(),
        dir.display(),
        super::child::load_average(),
        rows(&table, &repos),
        ratios(&table, &sizes),
        growth(&table, &sizes, &repos),
        goals(&table, largest),
        two.cases,
        two.wall,
        1e3 * two.start,
    ))
}

/// A row per (size, assistant, cache).
fn rows(table: &Table, repos: &BTreeMap<usize, Repo>) -> String {
    let mut out = String::from(
        "| size: lines (files, cases, sessions) | assistant | cache | wall s | mean session start ms | server peak MiB | typist peak MiB |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (&(n, assistant, cache), f) in table {
        let r = &repos[&n];
        out.push_str(&format!(
            "| {n}: {} ({} files, {} cases, {} sessions) | {assistant} | {} | {:.2} | {:.1} | {:.1} | {:.1} |\n",
            r.lines,
            r.files,
            f.cases,
            f.sessions,
            cache.as_str(),
            f.wall,
            1e3 * f.start,
            f.server_peak,
            f.typist_peak
        ));
    }
    out
}

/// At each size, the measured assistant over the reference: session start and server
/// peak memory, cold and warm.
fn ratios(table: &Table, sizes: &[usize]) -> String {
    let mut out = format!(
        "{MEASURED} / {REFERENCE}:\n\n\
         | size | session start, cold | warm | server peak memory, cold | warm |\n\
         |---|---|---|---|---|\n"
    );
    for &n in sizes {
        let r = |c: Cache, f: fn(&Figures) -> f64| match (
            table.get(&(n, MEASURED, c)),
            table.get(&(n, REFERENCE, c)),
        ) {
            (Some(a), Some(b)) => f(a) / f(b),
            _ => f64::NAN,
        };
        out.push_str(&format!(
            "| {n} | {:.2}× | {:.2}× | {:.2}× | {:.2}× |\n",
            r(Cache::Cold, |f| f.start),
            r(Cache::Warm, |f| f.start),
            r(Cache::Cold, |f| f.server_peak),
            r(Cache::Warm, |f| f.server_peak)
        ));
    }
    out
}

/// From the smallest size to the largest, per assistant and cache: the growth of the
/// session start and of the server's peak memory, beside the growth of the lines.
fn growth(table: &Table, sizes: &[usize], repos: &BTreeMap<usize, Repo>) -> String {
    let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
    let lines = repos[&hi].lines as f64 / repos[&lo].lines as f64;
    let mut out = format!(
        "growth from {lo} to {hi} lines ({lines:.2}× the lines):\n\n\
         | assistant | cache | session start | server peak memory |\n\
         |---|---|---|---|\n"
    );
    for assistant in [REFERENCE, MEASURED] {
        for c in [Cache::Cold, Cache::Warm] {
            let (Some(a), Some(b)) = (
                table.get(&(lo, assistant, c)),
                table.get(&(hi, assistant, c)),
            ) else {
                continue;
            };
            out.push_str(&format!(
                "| {assistant} | {} | {:.2}× | {:.2}× |\n",
                c.as_str(),
                b.start / a.start,
                b.server_peak / a.server_peak
            ));
        }
    }
    out
}

/// Issue 47's goals, against the measured assistant's figures at the largest size.
fn goals(table: &Table, largest: usize) -> String {
    let met = |ok: bool| if ok { "met" } else { "not met" };
    let warm = table.get(&(largest, MEASURED, Cache::Warm));
    let cold = table.get(&(largest, MEASURED, Cache::Cold));
    let (Some(warm), Some(cold)) = (warm, cold) else {
        return String::new();
    };
    let start_ms = 1e3 * warm.start;
    // MiB to MB (10^6 bytes).
    let peak_mb = cold.server_peak.max(warm.server_peak) * 1.048_576;
    let at = if largest >= GOAL_LINES {
        String::new()
    } else {
        format!(" (the goals are for {GOAL_LINES} lines; the largest size here is {largest})")
    };
    format!(
        "issue 47's goals at {largest} lines{at}: {MEASURED}'s session start, cache warm, \
         {start_ms:.1} ms against {GOAL_START_MS} ms ({}); its server's peak memory, cold \
         and warm, {peak_mb:.0} MB against {GOAL_PEAK_MB} MB ({})\n",
        met(start_ms < GOAL_START_MS),
        met(peak_mb < GOAL_PEAK_MB)
    )
}

#[cfg(test)]
mod tests {
    use super::rate_for;

    /// At most as many files as cases: every file, one case each. More: the rate at
    /// which the files expected to be drawn from are about that many.
    #[test]
    fn the_rate_draws_from_about_as_many_files_as_cases() {
        assert_eq!(rate_for(&[100; 60], 60.0), None);
        for lines in [vec![300; 600], (1..=900).map(|i| i % 700 + 5).collect()] {
            let r = rate_for(&lines, 60.0).unwrap();
            let expected: f64 = lines.iter().map(|&l| 1.0 - (1.0 - r).powi(l as i32)).sum();
            assert!((expected - 60.0).abs() < 0.5, "{r}: {expected}");
        }
    }
}
