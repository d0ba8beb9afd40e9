//! The (expected, predicted) pairs of a records file, with their per-pair scores: the
//! rows of the CSV and the material of the examples browser.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::score::distance::{c_help_from, distances};

#[derive(Debug, Clone, Deserialize)]
struct RawPair {
    case: String,
    repo: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    line: u32,
    #[serde(default)]
    language: Option<String>,
    assistant: String,
    #[serde(default = "one")]
    pass: u32,
    outcome: String,
    expected: String,
    #[serde(default)]
    predicted: Option<String>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    typed: u32,
}

fn one() -> u32 {
    1
}

/// One record with its per-pair scores (the columns of `--csv`).
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub case: String,
    pub repo: String,
    pub file: String,
    pub line: u32,
    pub language: String,
    pub assistant: String,
    pub pass: u32,
    pub outcome: String,
    /// Characters the user typed before asking (k).
    pub typed: u32,
    pub expected: String,
    pub predicted: Option<String>,
    /// `c_help` with ld2 over the `len − k` characters the assistant could type (empty
    /// suggestions: 0; errors, timeouts and lines no longer than k: none).
    pub c_help: Option<f64>,
    pub ld2: Option<usize>,
    pub ld1: Option<usize>,
    pub latency_ms: Option<f64>,
}

/// Reads every line-level record of the files (completion records are left out);
/// malformed lines are skipped, as `typist score` reports them.
pub fn read_pairs(paths: &[PathBuf]) -> Result<Vec<Pair>> {
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for line in text.lines() {
            let Ok(r) = serde_json::from_str::<RawPair>(line) else {
                continue;
            };
            if r.kind.as_deref() == Some("completion") {
                continue;
            }
            let len = r.expected.chars().count().saturating_sub(r.typed as usize);
            let (c, ld2, ld1) = match (r.outcome.as_str(), r.predicted.as_deref()) {
                _ if len == 0 && r.typed > 0 => (None, None, None),
                ("suggestion", Some(p)) => {
                    let (d2, d1) = distances(&r.expected, p);
                    (Some(c_help_from(len, d2)), Some(d2), Some(d1))
                }
                ("suggestion", None) | ("empty", _) => (Some(0.0), None, None),
                _ => (None, None, None),
            };
            out.push(Pair {
                case: r.case,
                repo: r.repo,
                file: r.file,
                line: r.line,
                language: r.language.unwrap_or_else(|| "unknown".into()),
                assistant: r.assistant,
                pass: r.pass,
                outcome: r.outcome,
                typed: r.typed,
                expected: r.expected,
                predicted: r.predicted,
                c_help: c,
                ld2,
                ld1,
                latency_ms: r.latency_ms,
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.assistant, a.pass, &a.repo, &a.file, a.line, &a.case).cmp(&(
            &b.assistant,
            b.pass,
            &b.repo,
            &b.file,
            b.line,
            &b.case,
        ))
    });
    Ok(out)
}

pub fn write_csv(path: &Path, pairs: &[Pair]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for p in pairs {
        w.serialize(p)?;
    }
    w.flush()?;
    Ok(())
}
