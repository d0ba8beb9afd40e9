//! `typist drill`: the reliability promises of `docs/reliability.md`, measured.
//!
//! Two drills, each running typist itself as a child process, as a user would:
//! - **faults**: a plan against `typist host` with a seeded mix of every fault kind
//!   (`host --fault-mix`). The host logs each request it saw, the fault it met and what it
//!   answered; every record is then checked against that log: one record per planned
//!   case, an `empty` only where the server answered empty, a `suggestion` only where it
//!   answered text, `error`/`timeout` where the fault ended the request.
//! - **kill**: SIGKILL typist at seeded random moments and resume each time; the final
//!   records must equal the bytes of an uninterrupted run.
//!
//! After each, no process started for the drill may be left, and no temporary workspace.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::host::faults::Kind;

/// What `typist drill` is run with.
#[derive(Debug, Clone)]
pub struct DrillOptions {
    /// The dataset replayed (the bundled one by default).
    pub dataset: PathBuf,
    /// Share of the dataset's code lines that are cases.
    pub rate: f64,
    /// Probability that a request meets a fault.
    pub fault_mix: f64,
    /// How many times typist is killed in the kill drill.
    pub kills: u32,
    pub jobs: u32,
    pub seed: u64,
    /// Keep the drill's folder (records, fault log) here instead of a removed temporary one.
    pub keep: Option<PathBuf>,
}

impl DrillOptions {
    /// About a minute on two cores: over 1,000 faults on the bundled dataset, 3 kills.
    pub fn quick(dataset: PathBuf) -> Self {
        DrillOptions {
            dataset,
            rate: 0.8,
            fault_mix: 0.45,
            kills: 3,
            jobs: 2,
            seed: 1,
            keep: None,
        }
    }

    /// The long drill: every code line, a heavier mix, 20 kills.
    pub fn long(dataset: PathBuf) -> Self {
        DrillOptions {
            rate: 1.0,
            fault_mix: 0.6,
            kills: 20,
            ..DrillOptions::quick(dataset)
        }
    }
}

/// The drill's figures; `lost` is what the table ends with.
#[derive(Debug, Default, serde::Serialize)]
pub struct DrillReport {
    pub planned: u64,
    pub records: u64,
    /// Planned cases with no record.
    pub missing: u64,
    /// Records beyond the first for a case.
    pub duplicates: u64,
    /// Records of cases not in the plan, and lines that are not records.
    pub stray: u64,
    pub outcomes: BTreeMap<String, u64>,
    /// Requests that met each fault kind (every attempt counts).
    pub injected: BTreeMap<String, u64>,
    pub injected_total: u64,
    pub requests: u64,
    /// Cases checked against the host's log (a case whose file and line name two
    /// planned cases is not).
    pub checked: u64,
    /// `empty` recorded where the server did not answer empty: an error turned into an
    /// empty suggestion.
    pub false_empties: u64,
    /// `suggestion` recorded where the server answered nothing or something else.
    pub false_answers: u64,
    /// `error`/`timeout` where the server did answer (the client gave up on an answer).
    pub spurious_failures: u64,
    /// Failures recorded as the wrong kind (a hang as `error`, a crash as `timeout`).
    pub wrong_failure_kind: u64,
    pub examples: Vec<String>,
    pub kills: u32,
    pub kills_landed: u32,
    /// Whether the killed and resumed run's records equal the uninterrupted run's.
    pub kill_records_equal: bool,
    pub kill_differing_lines: u64,
    pub leftover_processes: u64,
    pub leftover_workspaces: u64,
    /// Whether every file of the dataset has the same bytes after both drills.
    pub dataset_unchanged: bool,
    pub sessions_started: u64,
    pub restarted_after_exit: u64,
    pub restarted_after_timeouts: u64,
    pub seconds_faults: f64,
    pub seconds_kill: f64,
    /// Planned cases not ending with exactly one record, over both drills.
    pub lost: u64,
}

impl DrillReport {
    /// Whether every promise held.
    pub fn passed(&self) -> bool {
        self.lost == 0
            && self.false_empties == 0
            && self.false_answers == 0
            && self.stray == 0
            && self.kill_records_equal
            && self.leftover_processes == 0
            && self.leftover_workspaces == 0
            && self.dataset_unchanged
    }
}

const HOST_LANGUAGES: &str = "languages = [\"python\", \"javascript\", \"typescript\"]\nextensions = [\"py\", \"js\", \"ts\", \"mjs\", \"cjs\"]\n";

fn write_profile(editors: &Path, name: &str, host_args: &[String], timeout_ms: u64) -> Result<()> {
    let toml = format!(
        "name = \"{name}\"\ncommand = \"@typist\"\nargs = {host_args:?}\ndialect = \"inline\"\n{HOST_LANGUAGES}request_timeout_ms = {timeout_ms}\nrestart_after_timeouts = 3\n"
    );
    std::fs::write(editors.join(format!("{name}.toml")), toml)
        .with_context(|| format!("cannot write the drill's profile in {}", editors.display()))
}

struct Drill {
    exe: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    opts: DrillOptions,
}

impl Drill {
    fn typist(&self) -> Command {
        let mut c = Command::new(&self.exe);
        c.env("TMPDIR", &self.tmp)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    fn run_args(&self, plan: &Path, assistant: &str, out: &Path) -> Vec<String> {
        [
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--max-restarts",
            "1000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            "--dataset".into(),
            self.opts.dataset.display().to_string(),
            "--plan".into(),
            plan.display().to_string(),
            "--editors".into(),
            self.dir.join("editors").display().to_string(),
            "--assistant".into(),
            assistant.into(),
            "--jobs".into(),
            self.opts.jobs.to_string(),
            "--out".into(),
            out.display().to_string(),
        ])
        .collect()
    }

    /// Runs typist to its end; exit 0 and 3 (an assistant that answered nothing) are runs
    /// that finished.
    fn finish(&self, args: &[String], what: &str) -> Result<()> {
        let o = self
            .typist()
            .args(args)
            .output()
            .with_context(|| format!("cannot start {}", self.exe.display()))?;
        if !matches!(o.status.code(), Some(0 | 3)) {
            bail!(
                "{what}: typist {} ended with {}: {}",
                args.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(())
    }

    /// Processes still running that were started for this drill (their command line
    /// names the drill's folder).
    fn leftovers(&self) -> Vec<(u32, String)> {
        let marker = self.dir.display().to_string();
        let me = std::process::id();
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if !zombie && cmd.contains(&marker) {
                out.push((pid, cmd));
            }
        }
        out
    }

    /// Waits up to `grace` for the drill's processes to end, then kills and counts the rest.
    fn sweep_leftovers(&self, grace: Duration, report: &mut DrillReport) {
        let deadline = Instant::now() + grace;
        let mut left = self.leftovers();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            left = self.leftovers();
        }
        for (pid, cmd) in &left {
            report
                .examples
                .push(format!("left running: pid {pid}: {cmd}"));
            // SAFETY: kill(2) on a process this drill started; no memory is touched.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        report.leftover_processes += left.len() as u64;
    }

    fn count_workspaces(&self, report: &mut DrillReport) {
        let n = std::fs::read_dir(&self.tmp)
            .map(|d| d.flatten().count())
            .unwrap_or(0);
        report.leftover_workspaces += n as u64;
        if n > 0 {
            report
                .examples
                .push(format!("{n} folder(s) left in {}", self.tmp.display()));
        }
    }
}

/// `(repo, file, line)` of each planned case.
fn read_plan(plan: &Path) -> Result<Vec<(String, String, u64)>> {
    let text = std::fs::read_to_string(plan)
        .with_context(|| format!("cannot read the drill's plan {}", plan.display()))?;
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not JSON", plan.display(), i + 1))?;
        if let (Some(repo), Some(file), Some(n)) =
            (v["repo"].as_str(), v["file"].as_str(), v["line"].as_u64())
        {
            cases.push((repo.to_string(), file.to_string(), n));
        }
    }
    Ok(cases)
}

/// A digest of every file under `dir` (paths and bytes, in path order).
fn digest(dir: &Path) -> Result<String> {
    let mut files = Vec::new();
    for e in ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .build()
    {
        let e = e?;
        if e.file_type().is_some_and(|t| t.is_file()) {
            files.push(e.into_path());
        }
    }
    files.sort();
    let mut all = Vec::new();
    for f in files {
        all.extend_from_slice(f.to_string_lossy().as_bytes());
        all.push(0);
        let bytes = std::fs::read(&f).with_context(|| format!("cannot read {}", f.display()))?;
        all.extend_from_slice(crate::dataset::sha256_hex(&bytes).as_bytes());
    }
    Ok(crate::dataset::sha256_hex(&all))
}

/// Runs both drills and returns their figures.
pub fn run(opts: &DrillOptions) -> Result<DrillReport> {
    let before = digest(&opts.dataset)?;
    let exe = std::env::current_exe().context("cannot find typist's own executable")?;
    let holder;
    let dir = match &opts.keep {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            d.canonicalize()?
        }
        None => {
            holder = tempfile::Builder::new().prefix("typist-drill-").tempdir()?;
            holder.path().canonicalize()?
        }
    };
    let tmp = dir.join("tmp");
    let editors = dir.join("editors");
    for d in [&tmp, &editors] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let drill = Drill {
        exe,
        dir: dir.clone(),
        tmp,
        opts: opts.clone(),
    };
    let log = dir.join("faults.jsonl");
    let _ = std::fs::remove_file(&log);
    let host = |extra: &[String]| -> Vec<String> {
        let mut a: Vec<String> = ["host", "--backend", "ngram"].map(String::from).to_vec();
        a.extend_from_slice(extra);
        a
    };
    write_profile(
        &editors,
        "drill-faults",
        &host(&[
            "--fault-mix".into(),
            opts.fault_mix.to_string(),
            "--fault-seed".into(),
            opts.seed.to_string(),
            "--fault-log".into(),
            log.display().to_string(),
        ]),
        300,
    )?;
    // No faults; the log flag only marks the drill's servers for the process search.
    write_profile(
        &editors,
        "drill-plain",
        &host(&[
            "--fault-log".into(),
            dir.join("plain.jsonl").display().to_string(),
        ]),
        5_000,
    )?;

    let plan = dir.join("plan.jsonl");
    drill.finish(
        &[
            "sample".into(),
            "--dataset".into(),
            opts.dataset.display().to_string(),
            "--rate".into(),
            opts.rate.to_string(),
            "--seed".into(),
            opts.seed.to_string(),
            "--out".into(),
            plan.display().to_string(),
        ],
        "sampling the drill's plan",
    )?;
    let cases = read_plan(&plan)?;
    let mut report = DrillReport {
        planned: cases.len() as u64,
        kills: opts.kills,
        ..Default::default()
    };

    // The fault drill.
    let started = Instant::now();
    let out = dir.join("faults-run");
    let _ = std::fs::remove_dir_all(&out);
    drill.finish(
        &drill.run_args(&plan, "drill-faults", &out),
        "the fault drill",
    )?;
    report.seconds_faults = started.elapsed().as_secs_f64();
    drill.sweep_leftovers(Duration::from_secs(3), &mut report);
    drill.count_workspaces(&mut report);
    check_faults(&cases, &out, &log, &mut report)?;

    // The kill drill.
    let started = Instant::now();
    kill_drill(&drill, &plan, &mut report)?;
    report.seconds_kill = started.elapsed().as_secs_f64();
    drill.count_workspaces(&mut report);
    report.dataset_unchanged = digest(&opts.dataset)? == before;
    Ok(report)
}

fn read_records(path: &Path, report: &mut DrillReport) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => out.push(v),
            Err(_) => report.stray += 1,
        }
    }
    Ok(out)
}

fn check_faults(
    cases: &[(String, String, u64)],
    out: &Path,
    log: &Path,
    report: &mut DrillReport,
) -> Result<()> {
    let records = read_records(&out.join("records.jsonl"), report)?;
    report.records = records.len() as u64;
    let manifest: Value = std::fs::read_to_string(out.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let sessions = &manifest["sessions"];
    report.sessions_started = sessions["started"].as_u64().unwrap_or(0);
    report.restarted_after_exit = sessions["restarted_after_exit"].as_u64().unwrap_or(0);
    report.restarted_after_timeouts = sessions["restarted_after_timeouts"].as_u64().unwrap_or(0);

    // The host's log: the last request for each (file, 0-based line) wins (a retry).
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut last: HashMap<(String, u64), Value> = HashMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        report.requests += 1;
        if let Some(kind) = v["fault"].as_str() {
            *report.injected.entry(kind.to_string()).or_default() += 1;
            report.injected_total += 1;
        }
        if let (Some(f), Some(l)) = (v["file"].as_str(), v["line"].as_u64()) {
            last.insert((f.to_string(), l), v);
        }
    }

    let mut per_file_line: HashMap<(&str, u64), u32> = HashMap::new();
    for (_, f, l) in cases {
        *per_file_line.entry((f.as_str(), *l)).or_default() += 1;
    }
    let mut seen: HashMap<(&str, &str, u64), u32> = cases
        .iter()
        .map(|(r, f, l)| ((r.as_str(), f.as_str(), *l), 0))
        .collect();
    for r in &records {
        let (Some(repo), Some(file), Some(line), Some(outcome)) = (
            r["repo"].as_str(),
            r["file"].as_str(),
            r["line"].as_u64(),
            r["outcome"].as_str(),
        ) else {
            report.stray += 1;
            continue;
        };
        *report.outcomes.entry(outcome.to_string()).or_default() += 1;
        match seen.get_mut(&(repo, file, line)) {
            Some(n) => {
                *n += 1;
                if *n > 1 {
                    report.duplicates += 1;
                    continue;
                }
            }
            None => {
                report.stray += 1;
                continue;
            }
        }
        if per_file_line.get(&(file, line)).copied().unwrap_or(0) > 1 {
            continue;
        }
        report.checked += 1;
        let entry = last.get(&(file.to_string(), line - 1));
        let fault = entry
            .and_then(|e| e["fault"].as_str())
            .and_then(|k| Kind::ALL.into_iter().find(|x| x.name() == k));
        let answer = entry.and_then(|e| e["answer"].as_str());
        let case = format!("{repo}/{file}:{line}");
        let fault_name = fault.map(Kind::name).unwrap_or("none");
        let mut flag = |counter: &mut u64, what: &str| {
            *counter += 1;
            if report.examples.len() < 12 {
                report.examples.push(format!(
                    "{case}: {what} (fault {fault_name}, recorded {outcome})"
                ));
            }
        };
        match (outcome, fault.and_then(Kind::ends_request), answer) {
            ("empty", None, Some("")) => {}
            ("empty", _, _) => flag(&mut report.false_empties, "empty without an empty answer"),
            ("suggestion", None, Some(a)) if !a.is_empty() => {}
            ("suggestion", _, _) => flag(
                &mut report.false_answers,
                "a suggestion the server did not give",
            ),
            ("error" | "timeout", Some(expected), _) if expected == outcome => {}
            ("error" | "timeout", Some(_), _) => {
                flag(&mut report.wrong_failure_kind, "the wrong kind of failure")
            }
            // The answer was sent, then the server died: the answer may not have left.
            ("error", None, _) if fault == Some(Kind::CrashAfter) => {}
            // The host itself failed (no answer logged).
            ("error", None, None) if entry.is_some() => {}
            ("error" | "timeout", _, _) => flag(
                &mut report.spurious_failures,
                "a failure where the server answered",
            ),
            _ => report.stray += 1,
        }
    }
    report.missing = seen.values().filter(|&&n| n == 0).count() as u64;
    report.lost += report.missing + report.duplicates;
    Ok(())
}

fn kill_drill(drill: &Drill, plan: &Path, report: &mut DrillReport) -> Result<()> {
    let reference = drill.dir.join("kill-reference");
    let killed = drill.dir.join("kill-run");
    for d in [&reference, &killed] {
        let _ = std::fs::remove_dir_all(d);
    }
    let started = Instant::now();
    drill.finish(
        &drill.run_args(plan, "drill-plain", &reference),
        "the uninterrupted run",
    )?;
    let whole = started.elapsed();
    let args = drill.run_args(plan, "drill-plain", &killed);
    // Each kill must land while the run still has work: a run that ended first is tried
    // again (from a fresh folder, since nothing was left to resume), up to three times
    // as many starts as kills.
    let mut k = 0;
    while report.kills_landed < drill.opts.kills && k < drill.opts.kills * 3 {
        let mut a = args.clone();
        if killed.join("records.jsonl").exists() {
            let complete = std::fs::read_to_string(killed.join("manifest.json"))
                .is_ok_and(|m| m.contains("\"status\": \"complete\""));
            if complete {
                std::fs::remove_dir_all(&killed)?;
            } else {
                a.push("--resume".into());
            }
        }
        let mut child = drill
            .typist()
            .args(&a)
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start typist for the kill drill")?;
        // Anywhere from start-up to well past the middle of what is left to do.
        let done = std::fs::read_to_string(killed.join("records.jsonl"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let left = 1.0 - done as f64 / report.planned.max(1) as f64;
        let u = crate::dataset::draw(drill.opts.seed, "kill", "", k);
        let wait = whole.mul_f64((0.05 + 0.8 * u) * left.max(0.05));
        let until = Instant::now() + wait;
        let mut ended = false;
        while Instant::now() < until {
            if child.try_wait()?.is_some() {
                ended = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if !ended {
            child.kill()?; // SIGKILL
            report.kills_landed += 1;
        }
        child.wait()?;
        drill.sweep_leftovers(Duration::from_secs(3), report);
        k += 1;
    }
    let mut a = args;
    if killed.join("records.jsonl").exists() {
        a.push("--resume".into());
    }
    drill.finish(&a, "the resumed run")?;
    drill.sweep_leftovers(Duration::from_secs(3), report);
    let want = std::fs::read_to_string(reference.join("records.jsonl"))?;
    let got = std::fs::read_to_string(killed.join("records.jsonl"))?;
    report.kill_records_equal = want == got;
    let want_lines: std::collections::HashSet<&str> = want.lines().collect();
    let got_lines: std::collections::HashSet<&str> = got.lines().collect();
    report.kill_differing_lines = want_lines.symmetric_difference(&got_lines).count() as u64;
    let planned_records = want.lines().count() as i64;
    report.lost += (planned_records - got.lines().count() as i64).unsigned_abs();
    if !report.kill_records_equal {
        report.examples.push(format!(
            "kill drill: {} line(s) differ between {} and {}",
            report.kill_differing_lines,
            reference.display(),
            killed.display()
        ));
    }
    Ok(())
}

/// The drill's table, ending with `lost: N`.
pub fn table(r: &DrillReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fault drill: {} planned cases, {:.1} s",
        r.planned, r.seconds_faults
    );
    let _ = writeln!(s, "  {:<28} {:>8}", "fault injected", "requests");
    for k in Kind::ALL {
        let n = r.injected.get(k.name()).copied().unwrap_or(0);
        let _ = writeln!(s, "  {:<28} {:>8}", k.name(), n);
    }
    let _ = writeln!(s, "  {:<28} {:>8}", "all faults", r.injected_total);
    let _ = writeln!(s, "  {:<28} {:>8}", "requests seen by servers", r.requests);
    let _ = writeln!(s, "  {:<28} {:>8}", "records", r.records);
    for (o, n) in &r.outcomes {
        let _ = writeln!(s, "    {:<26} {:>8}", o, n);
    }
    let rows: [(&str, u64); 10] = [
        ("sessions started", r.sessions_started),
        ("restarts after an exit", r.restarted_after_exit),
        ("restarts after timeouts", r.restarted_after_timeouts),
        ("cases checked against log", r.checked),
        ("false empties", r.false_empties),
        ("false answers", r.false_answers),
        ("wrong failure kind", r.wrong_failure_kind),
        ("failures where answered", r.spurious_failures),
        ("duplicate records", r.duplicates),
        ("stray records", r.stray),
    ];
    for (name, n) in rows {
        let _ = writeln!(s, "  {:<28} {:>8}", name, n);
    }
    let _ = writeln!(
        s,
        "kill drill: {} SIGKILLs ({} landed before the run ended), {:.1} s",
        r.kills, r.kills_landed, r.seconds_kill
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "records equal to one run",
        if r.kill_records_equal { "yes" } else { "NO" }
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "differing lines", r.kill_differing_lines
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "dataset unchanged",
        if r.dataset_unchanged { "yes" } else { "NO" }
    );
    let _ = writeln!(s, "left behind");
    let _ = writeln!(s, "  {:<28} {:>8}", "processes", r.leftover_processes);
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "temporary workspaces", r.leftover_workspaces
    );
    for e in &r.examples {
        let _ = writeln!(s, "! {e}");
    }
    let _ = writeln!(s, "lost: {}", r.lost);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(file: &str, line: u64, outcome: &str) -> String {
        format!(
            "{{\"repo\":\"r\",\"file\":\"{file}\",\"line\":{line},\"outcome\":\"{outcome}\"}}\n"
        )
    }

    fn log(file: &str, line0: u64, fault: Option<&str>, answer: Option<&str>) -> String {
        serde_json::json!({"file": file, "line": line0, "fault": fault, "answer": answer})
            .to_string()
            + "\n"
    }

    /// The checker catches each way a client can betray the log: it is what makes the
    /// drill able to fail.
    #[test]
    fn the_checker_flags_every_kind_of_betrayal() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let cases: Vec<(String, String, u64)> = (1..=9)
            .map(|l| ("r".to_string(), "a.py".to_string(), l))
            .collect();
        let records = [
            rec("a.py", 1, "empty"),            // answered empty: fine
            rec("a.py", 2, "empty"),            // hung: a false empty
            rec("a.py", 3, "suggestion"),       // crashed: a false answer
            rec("a.py", 4, "error"),            // hung: the wrong failure kind
            rec("a.py", 5, "timeout"),          // answered text: a failure where answered
            rec("a.py", 6, "suggestion"),       // answered text after garbage: fine
            rec("a.py", 6, "suggestion"),       // a duplicate
            rec("a.py", 7, "error"),            // crash after answering: may be lost, fine
            rec("b.py", 1, "empty"),            // not planned: stray
            "{\"repo\":\"r\",\"fi".to_string(), // cut: stray
        ]
        .concat();
        std::fs::write(out.join("records.jsonl"), records).unwrap();
        let faults = [
            log("a.py", 0, None, Some("")),
            log("a.py", 1, Some("hang"), None),
            log("a.py", 2, Some("crash"), None),
            log("a.py", 3, Some("hang"), None),
            log("a.py", 4, None, Some("x = 1")),
            log("a.py", 5, Some("garbage"), Some("y = 2")),
            log("a.py", 6, Some("crash-after"), Some("z")),
        ]
        .concat();
        let log_path = dir.path().join("faults.jsonl");
        std::fs::write(&log_path, faults).unwrap();
        let mut r = DrillReport::default();
        check_faults(&cases, &out, &log_path, &mut r).unwrap();
        assert_eq!(r.false_empties, 1);
        assert_eq!(r.false_answers, 1);
        assert_eq!(r.wrong_failure_kind, 1);
        assert_eq!(r.spurious_failures, 1);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.stray, 2);
        assert_eq!(r.missing, 2, "lines 8 and 9 have no record");
        assert_eq!(r.lost, 3);
        assert_eq!(r.injected_total, 5);
        assert_eq!(r.injected["hang"], 2);
        assert!(!r.passed());
        assert!(table(&r).ends_with("lost: 3\n"));
    }
}
