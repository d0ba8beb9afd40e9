//! `typist bench tests`: how fast `typist check --tests` judges cases, against running
//! the whole suite per case, on the same cases in one run (methodology §12: tests are
//! selected by coverage, never the whole suite per case).
//!
//! Both ways start from an empty cache (a cache of the call's own; the dataset's is
//! neither read nor written) and work on a copy of the records, so the user's sidecar
//! is untouched:
//! - **selected**: `check --tests` as a user runs it, timed whole: the coverage once per
//!   repository, each case's noticed check (its tests on the true and the blanked
//!   file), then each answered record of a noticed case on `F_pred`;
//! - **whole suite**: the same check with every test of the repository (that passes
//!   on the true files) instead of the selected ones, in each case's noticed check and
//!   on each `F_pred`; timed without the coverage, which it needs only to pick the
//!   same cases (so lines no test runs cost it nothing: the comparison favours it).
//!
//! Cases per hour count the answered records judged (pass, fail or error).

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use super::tests_run::{TestsOptions, TestsReport, check_tests};

#[derive(Debug, Clone, Serialize)]
pub struct Way {
    pub name: &'static str,
    /// Answered records judged (pass, fail or error).
    pub cases: u64,
    /// Test runs made (the coverage's one per repository not counted).
    pub runs: u64,
    pub seconds: f64,
    pub cases_per_hour: f64,
    /// By outcome.
    pub outcomes: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchTests {
    pub records: PathBuf,
    pub jobs: usize,
    pub selected: Way,
    pub whole_suite: Way,
    /// Selected cases per hour over whole-suite cases per hour.
    pub ratio: f64,
    /// Per repository: (cases, of which noticed).
    pub noticed: std::collections::BTreeMap<String, (u64, u64)>,
}

fn judged(r: &TestsReport) -> u64 {
    ["pass", "fail", "error"]
        .iter()
        .map(|k| r.outcomes.get(*k).copied().unwrap_or(0))
        .sum()
}

fn way(name: &'static str, r: &TestsReport, seconds: f64, runs: u64) -> Way {
    let cases = judged(r);
    Way {
        name,
        cases,
        runs,
        seconds,
        cases_per_hour: if seconds > 0.0 {
            cases as f64 * 3600.0 / seconds
        } else {
            0.0
        },
        outcomes: r.outcomes.clone(),
    }
}

/// Times both ways on `opts.records` (one file).
pub fn bench_tests(opts: &TestsOptions) -> Result<BenchTests> {
    let records = opts
        .records
        .first()
        .context("typist bench tests needs a records file")?
        .clone();
    let scratch = tempfile::Builder::new()
        .prefix("typist-bench-tests-")
        .tempdir()
        .context("cannot make a scratch folder")?;
    let copy = scratch.path().join("records.jsonl");
    std::fs::copy(&records, &copy).with_context(|| format!("cannot copy {}", records.display()))?;
    let base = TestsOptions {
        records: vec![copy],
        cache: false,
        ..opts.clone()
    };
    let selected = check_tests(&TestsOptions {
        whole_suite: false,
        ..base.clone()
    })?
    .remove(0);
    let whole = check_tests(&TestsOptions {
        whole_suite: true,
        ..base
    })?
    .remove(0);
    let selected_way = way(
        "selected by coverage",
        &selected,
        selected.seconds,
        selected.runs,
    );
    let whole_way = way(
        "whole suite per case",
        &whole,
        whole.seconds - whole.coverage_seconds,
        whole.runs,
    );
    let ratio = if whole_way.cases_per_hour > 0.0 {
        selected_way.cases_per_hour / whole_way.cases_per_hour
    } else {
        f64::NAN
    };
    Ok(BenchTests {
        records,
        jobs: opts.jobs,
        selected: selected_way,
        whole_suite: whole_way,
        ratio,
        noticed: selected.noticed,
    })
}

/// The bench as a table, and the ratio line.
pub fn table(b: &BenchTests) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN)
        .set_header(vec![
            "way",
            "cases judged",
            "pass / fail / error",
            "test runs",
            "seconds",
            "cases per hour",
        ]);
    for w in [&b.selected, &b.whole_suite] {
        let n = |k: &str| w.outcomes.get(k).copied().unwrap_or(0);
        t.add_row(vec![
            w.name.to_string(),
            w.cases.to_string(),
            format!("{} / {} / {}", n("pass"), n("fail"), n("error")),
            w.runs.to_string(),
            format!("{:.1}", w.seconds),
            format!("{:.0}", w.cases_per_hour),
        ]);
    }
    let noticed: Vec<String> = b
        .noticed
        .iter()
        .map(|(repo, (cases, n))| format!("{repo} {n}/{cases}"))
        .collect();
    format!(
        "{t}\nselected / whole suite: {:.2}× the cases per hour ({} jobs; {}; whole suite: without the coverage)\nnoticed cases by repository: {}",
        b.ratio,
        b.jobs,
        b.records.display(),
        if noticed.is_empty() {
            "none".to_string()
        } else {
            noticed.join(", ")
        }
    )
}
