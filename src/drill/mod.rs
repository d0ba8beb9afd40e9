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
//!
//! This file runs both drills in order, reads the plan's cases and takes the dataset's
//! digest (to show the drill left it untouched); `options`, `harness` and `report` hold
//! the rest.

mod fault_drill;
mod harness;
mod kill_drill;
mod options;
mod report;

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::Value;

use harness::Drill;
pub use options::DrillOptions;
pub use report::{DrillReport, table};

/// Runs both drills and returns their figures.
pub fn run(opts: &DrillOptions) -> Result<DrillReport> {
    let before = digest(&opts.dataset)?;
    let drill = Drill::new(opts)?;
    let log = drill.dir.join("faults.jsonl");
    let _ = std::fs::remove_file(&log);
    drill.write_profiles(&log)?;
    let plan = drill.sample_plan()?;
    let cases = read_plan(&plan)?;
    let mut report = DrillReport {
        editor: opts.editor.as_str().to_string(),
        planned: cases.len() as u64,
        kills: opts.kills,
        ..Default::default()
    };
    fault_drill::run(&drill, &cases, &plan, &log, &mut report)?;
    let started = Instant::now();
    kill_drill::run(&drill, &plan, &mut report)?;
    report.seconds_kill = started.elapsed().as_secs_f64();
    drill.count_workspaces(&mut report);
    report.dataset_unchanged = digest(&opts.dataset)? == before;
    Ok(report)
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
        all.extend_from_slice(crate::digest::sha256_hex(&bytes).as_bytes());
    }
    Ok(crate::digest::sha256_hex(&all))
}
