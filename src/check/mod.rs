//! `typist check` (methodology §11): for each non-empty suggestion of a records file,
//! the file as the user would have it after accepting (`F_pred`) against the original
//! (`F_true`), both parsed by tree-sitter; the results go to the records' sidecar
//! ([`crate::score::checks_file`]), where `typist score` and `typist report` find them.
//! Neither file is ever shown to an assistant: this runs after the replay, on the
//! dataset's own files. Knows records, the dataset and the sidecar; not the replay's
//! insides or scoring's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::dataset::{Dataset, SourceFile, tokens::syntax_problems};
use crate::replay::records::{Record, read_all};
use crate::score::block_terms::trim_blank_tail;
use crate::score::checks_file::{Check, Header, file_hash, write_checks};

/// What `typist check` is told.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub records: Vec<PathBuf>,
    pub dataset: PathBuf,
    pub single_repo: bool,
}

/// What one records file gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    pub records: PathBuf,
    pub sidecar: PathBuf,
    /// Suggestions checked (their file parsed).
    pub checked: usize,
    /// Of those, keeping the syntax valid (`syntax_delta ≤ 0`).
    pub valid: usize,
    /// Suggestions left out: no grammar for the language, or the file not found in the
    /// dataset, or changed since (its line no longer the record's `expected`).
    pub left_out: usize,
}

/// Checks every records file of `opts` and writes each one's sidecar.
pub fn check(opts: &CheckOptions) -> Result<Vec<CheckReport>> {
    let ds = crate::dataset::walk(
        &opts.dataset,
        &crate::dataset::WalkOptions {
            single_repo: opts.single_repo,
            ..Default::default()
        },
    )?;
    opts.records.iter().map(|r| check_file(&ds, r)).collect()
}

fn check_file(ds: &Dataset, path: &Path) -> Result<CheckReport> {
    let hash = file_hash(path)?;
    let records = read_all(path).with_context(|| format!("cannot read {}", path.display()))?;
    let files: HashMap<(&str, &str), &SourceFile> = ds
        .repos
        .iter()
        .flat_map(|r| {
            r.files
                .iter()
                .map(move |f| ((r.name.as_str(), f.rel.as_str()), f))
        })
        .collect();
    let mut true_problems: HashMap<(&str, &str), Option<u64>> = HashMap::new();
    let mut report = CheckReport {
        records: path.to_path_buf(),
        ..Default::default()
    };
    let mut checks = Vec::new();
    for r in records.iter().filter(|r| is_suggestion(r)) {
        let key = (r.repo.as_str(), r.file.as_str());
        let Some(f) = files.get(&key) else {
            report.left_out += 1;
            continue;
        };
        let Some(pred) = accepted_file(f, r) else {
            report.left_out += 1;
            continue;
        };
        let before = *true_problems
            .entry(key)
            .or_insert_with(|| syntax_problems(f.language, &f.rel, &f.text));
        let (Some(before), Some(after)) = (before, syntax_problems(f.language, &f.rel, &pred))
        else {
            report.left_out += 1;
            continue;
        };
        let delta = after as i64 - before as i64;
        report.checked += 1;
        report.valid += usize::from(delta <= 0);
        checks.push(Check {
            assistant: r.assistant.clone(),
            pass: r.pass,
            repo: r.repo.clone(),
            file: r.file.clone(),
            line: r.line,
            case: r.case.clone(),
            language: r.language.clone(),
            syntax_delta: delta,
            new_errors: None,
            checker_error: None,
        });
    }
    report.sidecar = write_checks(
        path,
        &Header {
            records: hash,
            checker: None,
        },
        &mut checks,
    )?;
    Ok(report)
}

/// A line-level record with a suggestion (outcome `suggestion`, not a completion list).
fn is_suggestion(r: &Record) -> bool {
    r.outcome == "suggestion" && r.kind.is_none() && r.predicted.is_some()
}

/// `F_pred`: the file with the accepted text in place of the true text (methodology
/// §11): the record's first line for a line case, the whole suggestion (its trailing
/// blank lines dropped, as §9 compares it) in place of the expected block for a block
/// case. `None` when the file no longer holds the record's line or block there.
pub fn accepted_file(f: &SourceFile, r: &Record) -> Option<String> {
    let lines: Vec<&str> = f.text.split('\n').collect();
    let at = (r.line as usize).checked_sub(1)?;
    if lines.get(at) != Some(&r.expected.as_str()) {
        return None;
    }
    let (replaced, text) = match &r.expected_block {
        Some(t) => {
            let n = t.split('\n').count();
            if lines.get(at..at + n)?.join("\n") != *t {
                return None;
            }
            let p = r.predicted_text.as_deref().or(r.predicted.as_deref())?;
            (n, trim_blank_tail(p))
        }
        None => (1, r.predicted.as_deref()?),
    };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + 8);
    out.extend(&lines[..at]);
    out.push(text);
    out.extend(&lines[at + replaced..]);
    Some(out.join("\n"))
}
