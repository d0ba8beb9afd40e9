//! The kill drill: SIGKILL typist at seeded random moments and resume each time; the
//! final records must equal the bytes of an uninterrupted run.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The pause between two looks at whether the killed run has exited.
const EXIT_POLL_INTERVAL: Duration = Duration::from_millis(5);

use anyhow::{Context, Result};

use super::harness::Drill;
use super::report::DrillReport;

/// Runs the plan once uninterrupted, then killed and resumed `opts.kills` times, and
/// compares the records.
pub(super) fn run(drill: &Drill, plan: &Path, report: &mut DrillReport) -> Result<()> {
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
        start_and_kill(drill, &args, &killed, whole, k, report)?;
        k += 1;
    }
    let mut a = args;
    if killed.join("records.jsonl").exists() {
        a.push("--resume".into());
    }
    drill.finish(&a, "the resumed run")?;
    drill.sweep_leftovers(report);
    compare(&reference, &killed, report)
}

/// Start `k` of the killed run (resumed, or afresh after a run that completed), killed
/// at a seeded moment unless it ends first. `whole`: how long the uninterrupted run took.
fn start_and_kill(
    drill: &Drill,
    args: &[String],
    killed: &Path,
    whole: Duration,
    k: u32,
    report: &mut DrillReport,
) -> Result<()> {
    let mut a = args.to_vec();
    if killed.join("records.jsonl").exists() {
        let complete = crate::replay::Manifest::read(&killed.join("manifest.json"))
            .is_ok_and(|m| m.status == crate::replay::RunStatus::Complete);
        if complete {
            std::fs::remove_dir_all(killed)?;
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
        std::thread::sleep(EXIT_POLL_INTERVAL);
    }
    if !ended {
        child.kill()?; // SIGKILL
        report.kills_landed += 1;
    }
    child.wait()?;
    drill.sweep_leftovers(report);
    Ok(())
}

/// The killed and resumed run's records against the uninterrupted run's.
fn compare(reference: &Path, killed: &Path, report: &mut DrillReport) -> Result<()> {
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
