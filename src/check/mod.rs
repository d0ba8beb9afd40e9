//! `typist check` (methodology §11): for each non-empty suggestion of a records file,
//! the file as the user would have it after accepting (`F_pred`) against the original
//! (`F_true`), both parsed by tree-sitter; the results go to the records' sidecar
//! ([`crate::score::checks_file`]), where `typist score` and `typist report` find them.
//! Neither file is ever shown to an assistant: this runs after the replay, on the
//! dataset's own files. With a checker profile (`--with pyright`), each file with
//! suggestions is opened in a session of the checker's own (no assistant shares it):
//! `F_true` first, then each `F_pred` as a change of the same document, and the
//! error-severity diagnostics of `F_pred` that `F_true` lacks (by code and message, not
//! position) are `new_errors`. Knows records, the dataset, editor sessions and the
//! sidecar; not the replay's insides or scoring's.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

pub mod tests_bench;
pub mod tests_run;

use crate::dataset::{Dataset, Repo, SourceFile, tokens::syntax_problems};
use crate::editor::typist::TypistSession;
use crate::editor::{Conditions, Profile, SessionOptions};
use crate::replay::records::{Record, read_all};
use crate::score::block_terms::trim_blank_tail;
use crate::score::checks_file::{
    Check, Header, NewDiagnostic, file_hash, message_class, write_checks,
};
use crate::score::records::Outcome;

/// What `typist check` is told.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub records: Vec<PathBuf>,
    pub dataset: PathBuf,
    pub single_repo: bool,
    /// A checker profile: its error diagnostics new in `F_pred` (methodology §11).
    pub checker: Option<Profile>,
}

/// How long a checker may stay silent after its last diagnostics of a document before
/// they are taken as final (servers publish in stages).
pub const DIAGNOSTICS_QUIET: Duration = Duration::from_millis(1500);
/// The least time a checker has to publish a file's diagnostics, whatever its profile's
/// `request_timeout_ms` (a first analysis of a file can take seconds).
pub const MIN_DIAGNOSTICS_WAIT: Duration = Duration::from_secs(10);

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
    /// With a checker: suggestions it answered for, and of those adding no error.
    pub diagnosed: usize,
    pub no_new_error: usize,
    /// With a checker: suggestions it gave no diagnostics for (counted apart).
    pub checker_failed: usize,
}

/// Checks every records file of `opts` and writes each one's sidecar.
pub async fn check(opts: &CheckOptions) -> Result<Vec<CheckReport>> {
    let ds = crate::dataset::walk(
        &opts.dataset,
        &crate::dataset::WalkOptions {
            single_repo: opts.single_repo,
            ..Default::default()
        },
    )?;
    let mut out = Vec::new();
    for r in &opts.records {
        out.push(check_file(&ds, r, opts.checker.as_ref()).await?);
    }
    Ok(out)
}

async fn check_file(ds: &Dataset, path: &Path, checker: Option<&Profile>) -> Result<CheckReport> {
    let hash = file_hash(path)?;
    let records = read_all(path).with_context(|| format!("cannot read {}", path.display()))?;
    let files = files_by_place(ds);
    let mut true_problems: HashMap<(&str, &str), Option<u64>> = HashMap::new();
    let mut report = CheckReport {
        records: path.to_path_buf(),
        ..Default::default()
    };
    let mut checks = Vec::new();
    // With a checker: per file, the suggestions' F_pred and their checks' places.
    let mut to_diagnose: BTreeMap<(&str, &str), Vec<(usize, String)>> = BTreeMap::new();
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
        // A checker is asked only about the languages its profile serves.
        if checker.is_some_and(|p| p.language_for(Path::new(&f.rel)).is_some()) {
            to_diagnose
                .entry(key)
                .or_default()
                .push((checks.len(), pred));
        }
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
            diagnostics: Vec::new(),
        });
    }
    if let Some(profile) = checker {
        diagnose_all(ds, &files, profile, &to_diagnose, &mut checks, &mut report).await;
    }
    report.sidecar = write_checks(
        path,
        &Header {
            records: hash,
            checker: checker.map(|p| p.name.clone()),
        },
        &mut checks,
    )?;
    Ok(report)
}

/// Asks the checker about every file's suggestions (`to_diagnose`: per file, the
/// places in `checks` and the predicted files) and writes what it found into `checks`
/// and the counts of `report`.
async fn diagnose_all(
    ds: &Dataset,
    files: &HashMap<(&str, &str), &SourceFile>,
    profile: &Profile,
    to_diagnose: &BTreeMap<(&str, &str), Vec<(usize, String)>>,
    checks: &mut [Check],
    report: &mut CheckReport,
) {
    for ((repo, rel), preds) in to_diagnose {
        let Some(repo) = ds.repos.iter().find(|r| r.name == *repo) else {
            continue;
        };
        let Some(f) = files.get(&(repo.name.as_str(), *rel)) else {
            continue;
        };
        let found = diagnose(profile, repo, f, preds).await;
        for ((i, _), got) in preds.iter().zip(found) {
            match got {
                Ok(new) => {
                    let n = new.iter().map(|d| d.count).sum();
                    report.diagnosed += 1;
                    report.no_new_error += usize::from(n == 0);
                    checks[*i].new_errors = Some(n);
                    checks[*i].diagnostics = new;
                }
                Err(e) => {
                    report.checker_failed += 1;
                    checks[*i].checker_error = Some(crate::secrets::scrub(&e).into_owned());
                }
            }
        }
    }
}

/// The error-severity diagnostics of each `F_pred` of file `f` not in `F_true`'s, from
/// one session of the checker over repository `repo` (the file as it is on disk): the
/// true file opened first, then each predicted file as a change of it. A failure (the
/// session could not start, no diagnostics in time) is that suggestion's error.
async fn diagnose(
    profile: &Profile,
    repo: &Repo,
    f: &SourceFile,
    preds: &[(usize, String)],
) -> Vec<Result<Vec<NewDiagnostic>, String>> {
    let fail = |e: String| preds.iter().map(|_| Err(e.clone())).collect();
    let contents = repo.workspace_contents(&f.rel, &f.text);
    let mut session = match TypistSession::start(
        profile,
        &Conditions::default(),
        SessionOptions {
            contents,
            ..Default::default()
        },
    )
    .await
    {
        Ok(s) => s,
        Err(e) => return fail(format!("checker {}: {e}", profile.name)),
    };
    let deadline = profile.request_timeout().max(MIN_DIAGNOSTICS_WAIT);
    let seen = session.diagnostics_seen(&f.rel);
    let truth = match session.open(&f.rel, &f.text) {
        Ok(()) => {
            session
                .diagnostics_after(&f.rel, seen, DIAGNOSTICS_QUIET, deadline)
                .await
        }
        Err(e) => return fail(format!("checker {}: {e}", profile.name)),
    };
    let Some(truth) = truth else {
        let _ = session.shutdown().await;
        return fail(format!(
            "checker {}: no diagnostics of the true file in time",
            profile.name
        ));
    };
    let truth = errors(&truth);
    // The document's text and its errors: a suggestion that leaves the text as it is
    // (no change to send, so nothing to wait for) gets them again.
    let mut shown = (f.text.clone(), truth.clone());
    let mut out = Vec::with_capacity(preds.len());
    for (_, pred) in preds {
        if *pred == shown.0 {
            out.push(Ok(new_errors(&truth, &shown.1)));
            continue;
        }
        let seen = session.diagnostics_seen(&f.rel);
        if let Err(e) = session.set_text(&f.rel, pred) {
            out.push(Err(format!("checker {}: {e}", profile.name)));
            continue;
        }
        let got = session
            .diagnostics_after(&f.rel, seen, DIAGNOSTICS_QUIET, deadline)
            .await;
        out.push(match got {
            Some(d) => {
                shown = (pred.clone(), errors(&d));
                Ok(new_errors(&truth, &shown.1))
            }
            None => Err(format!("checker {}: no diagnostics in time", profile.name)),
        });
    }
    let _ = session.shutdown().await;
    out
}

/// The error-severity diagnostics (severity 1) as (source, code, message), counted.
fn errors(d: &[serde_json::Value]) -> BTreeMap<(String, String, String), u64> {
    let mut out = BTreeMap::new();
    for x in d {
        if x.get("severity").and_then(serde_json::Value::as_u64) != Some(1) {
            continue;
        }
        let code = x.get("code").map_or(String::new(), |c| match c {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let msg = x
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string();
        let source = x
            .get("source")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string();
        *out.entry((source, code, msg)).or_insert(0) += 1;
    }
    out
}

/// Errors of `pred` beyond those of `truth` with the same source, code and message, by
/// (source, code, message class).
fn new_errors(
    truth: &BTreeMap<(String, String, String), u64>,
    pred: &BTreeMap<(String, String, String), u64>,
) -> Vec<NewDiagnostic> {
    let mut by: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for (k, n) in pred {
        let new = n.saturating_sub(truth.get(k).copied().unwrap_or(0));
        if new > 0 {
            *by.entry((k.0.clone(), k.1.clone(), message_class(&k.2)))
                .or_default() += new;
        }
    }
    by.into_iter()
        .map(|((source, code, class), count)| NewDiagnostic {
            source,
            code,
            class,
            count,
        })
        .collect()
}

/// The dataset's files by (repository, path in it), to find a record's file.
fn files_by_place(ds: &Dataset) -> HashMap<(&str, &str), &SourceFile> {
    (ds.repos.iter())
        .flat_map(|r| {
            r.files
                .iter()
                .map(move |f| ((r.name.as_str(), f.rel.as_str()), f))
        })
        .collect()
}

/// A line-level record with a suggestion (outcome `suggestion`, not a completion list).
fn is_suggestion(r: &Record) -> bool {
    r.outcome == Outcome::Suggestion && r.kind.is_none() && r.predicted.is_some()
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

#[cfg(test)]
mod tests {
    use super::{errors, new_errors};
    use crate::score::checks_file::NewDiagnostic;
    use serde_json::json;

    #[test]
    fn new_errors_are_counted_by_source_code_and_message_class() {
        let d = |code: &str, msg: &str| json!({"severity": 1, "source": "Pyright", "code": code, "message": msg});
        let undefined = |name: &str| {
            d(
                "reportUndefinedVariable",
                &format!("\"{name}\" is not defined"),
            )
        };
        // The true file: x undefined once, and a warning (severity 2, never counted).
        let truth = errors(&[
            undefined("x"),
            json!({"severity": 2, "source": "Pyright", "message": "\"y\" is unused"}),
        ]);
        // The predicted file: x undefined twice (one new), y undefined (new), a bracket
        // left open (new, no code). Classes: `"_" is not defined` 1 + 1 = 2, `"_" was
        // not closed` 1; 3 new errors in all.
        let pred = errors(&[
            undefined("x"),
            undefined("x"),
            undefined("y"),
            json!({"severity": 1, "source": "Pyright", "message": "\"(\" was not closed"}),
        ]);
        let kind = |code: &str, class: &str, count| NewDiagnostic {
            source: "Pyright".into(),
            code: code.into(),
            class: class.into(),
            count,
        };
        assert_eq!(
            new_errors(&truth, &pred),
            [
                kind("", "\"_\" was not closed", 1),
                kind("reportUndefinedVariable", "\"_\" is not defined", 2),
            ]
        );
        assert_eq!(new_errors(&pred, &truth), []);
    }
}
