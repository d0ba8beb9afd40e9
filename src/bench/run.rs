//! `typist bench run`: the driver's overhead against a server that answers at once, and
//! the n-gram baseline's throughput, each with 1 and 2 jobs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// One measured `typist run`.
struct RunTiming {
    cases: usize,
    wall: f64,
    typist_cpu: f64,
    server_cpu: f64,
}

fn time_run(dataset: &Path, assistant: &str, jobs: usize, out: &Path) -> Result<RunTiming> {
    let _ = std::fs::remove_dir_all(out);
    let exe = std::env::current_exe()?;
    let start = Instant::now();
    let status = Command::new(&exe)
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--lines",
            "all",
            "--dataset",
        ])
        .arg(dataset)
        .args([
            "--assistant",
            assistant,
            "--jobs",
            &jobs.to_string(),
            "--out",
        ])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
        .context("cannot start typist run")?;
    let wall = start.elapsed().as_secs_f64();
    if !status.success() {
        bail!("typist run against {assistant} failed ({status})");
    }
    let m = crate::replay::Manifest::read(&out.join("manifest.json"))?;
    let cpu = m.cpu_seconds;
    Ok(RunTiming {
        cases: m.records.unwrap_or(0),
        wall,
        typist_cpu: cpu.and_then(|c| c.typist).unwrap_or(f64::NAN),
        server_cpu: cpu.and_then(|c| c.servers).unwrap_or(f64::NAN),
    })
}

/// `typist bench run`: the driver's overhead against a server that answers at once
/// (`typist-fixed`), and the n-gram baseline's throughput, each with 1 and 2 jobs, on
/// every code line of `dataset`. Prints a table and the ratios.
pub fn run(dataset: &Path, dir: &Path, runs: usize) -> Result<String> {
    std::fs::create_dir_all(dir)?;
    let mut rows = vec![];
    let mut best: BTreeMap<(&str, usize), f64> = BTreeMap::new();
    for assistant in ["typist-fixed", "typist-ngram"] {
        for jobs in [1usize, 2] {
            for _ in 0..runs.max(1) {
                let t = time_run(
                    dataset,
                    assistant,
                    jobs,
                    &dir.join(format!("{assistant}-{jobs}")),
                )?;
                let rate = t.cases as f64 / t.wall;
                let b = best.entry((assistant, jobs)).or_insert(0.0);
                *b = b.max(rate);
                rows.push(format!(
                    "| {assistant} | {jobs} | {} | {:.2} | {:.0} | {:.0} | {:.2} ({:.0}%) | {:.2} |",
                    t.cases,
                    t.wall,
                    rate,
                    rate * 3600.0,
                    t.typist_cpu,
                    100.0 * t.typist_cpu / t.wall,
                    t.server_cpu
                ));
            }
        }
    }
    let ratio = |a: &str| {
        best.get(&(a, 2)).copied().unwrap_or(0.0) / best.get(&(a, 1)).copied().unwrap_or(f64::NAN)
    };
    Ok(format!(
        "dataset: {} (every code line), wall time includes start-up, scoring and the final sort\n\n\
         | assistant | jobs | suggestions | wall s | per second | per hour | typist CPU s (share of wall) | server CPU s |\n\
         |---|---|---|---|---|---|---|---|\n{}\n\n\
         best typist-fixed: {:.0}/s with 1 job, {:.0}/s with 2 (target: 2,000/s; the study's script: ~1,000 an hour)\n\
         typist-ngram, 2 jobs / 1 job: {:.2}x (target: 1.7x)\n",
        dataset.display(),
        rows.join("\n"),
        best.get(&("typist-fixed", 1)).copied().unwrap_or(0.0),
        best.get(&("typist-fixed", 2)).copied().unwrap_or(0.0),
        ratio("typist-ngram"),
    ))
}
