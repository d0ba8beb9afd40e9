//! The tests sidecar (methodology §12): what `typist check --tests` found for each
//! answered case of a records file, in `NAME.tests.jsonl` beside `NAME.jsonl`. Its
//! first line names the records file's sha256: a sidecar of other records is left out
//! with a warning, never scored against the wrong cases. Plain values and files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One answered case's result, a line of the sidecar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    pub assistant: String,
    pub pass: u32,
    pub repo: String,
    pub file: String,
    pub line: u32,
    pub case: String,
    /// The suggestion is the expected text exactly (methodology §3).
    pub exact: bool,
    /// `pass`, `fail`, `error` (the tests on `F_pred`); `not_noticed` (the tests do not
    /// notice the line going: left out), `not_covered` (no test runs it), `broken`
    /// (the tests do not pass on the true file: left out).
    pub outcome: String,
    /// Why, for `error`, `not_noticed` and `broken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The tests selected for the line.
    pub tests: usize,
}

impl TestResult {
    /// The tests judged the suggestion (`pass`, `fail` or `error`): the case is
    /// noticed by its tests.
    pub fn noticed(&self) -> bool {
        matches!(self.outcome.as_str(), "pass" | "fail" | "error")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    /// The records file's sha256 (`checks_file::file_hash`).
    records: String,
    dataset: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct HeaderLine {
    tests: Header,
}

/// `NAME.tests.jsonl` beside `NAME.jsonl`.
pub fn tests_path(records: &Path) -> PathBuf {
    let stem = records
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    records.with_file_name(format!("{stem}.tests.jsonl"))
}

/// Writes the sidecar whole (a new file renamed over the old one).
pub fn write_tests(
    path: &Path,
    records_hash: &str,
    dataset: &Path,
    results: &[TestResult],
) -> Result<()> {
    let mut text = serde_json::to_string(&HeaderLine {
        tests: Header {
            records: records_hash.to_string(),
            dataset: dataset.display().to_string(),
        },
    })?;
    text.push('\n');
    for r in results {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// The results of the sidecars beside `records` that were made from them (others are
/// left out with a warning naming them).
pub fn read_beside(records: &[PathBuf]) -> Result<Vec<TestResult>> {
    let mut out = Vec::new();
    for r in records {
        let path = tests_path(r);
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut lines = text.lines();
        let header: HeaderLine = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .with_context(|| {
                format!(
                    "{}:1: not a tests sidecar's header (run `typist check --tests` again)",
                    path.display()
                )
            })?;
        if header.tests.records != super::checks_file::file_hash(r)? {
            tracing::warn!(
                "{} was made from other records than {} (run `typist check --tests` again): left out",
                path.display(),
                r.display()
            );
            continue;
        }
        for (i, l) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            out.push(serde_json::from_str(l).with_context(|| {
                format!(
                    "{}:{}: malformed (run `typist check --tests` again)",
                    path.display(),
                    i + 2
                )
            })?);
        }
    }
    Ok(out)
}
