//! The fault drill: a plan against `typist host` with a seeded mix of every fault kind.
//! The host logs each request it saw, the fault it met and what it answered; every
//! record is then checked against that log.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::Value;

use super::harness::Drill;
use super::report::DrillReport;
use crate::host::faults::Kind;
use crate::score::Outcome;

/// Runs the plan against the `drill-faults` profile, whose host logs to `log`, and
/// checks its records.
pub(super) fn run(
    drill: &Drill,
    cases: &[(String, String, u64)],
    plan: &Path,
    log: &Path,
    report: &mut DrillReport,
) -> Result<()> {
    let started = Instant::now();
    let out = drill.dir.join("faults-run");
    let _ = std::fs::remove_dir_all(&out);
    drill.finish(
        &drill.run_args(plan, "drill-faults", &out),
        "the fault drill",
    )?;
    report.seconds_faults = started.elapsed().as_secs_f64();
    drill.sweep_leftovers(report);
    drill.count_workspaces(report);
    check_faults(cases, &out, log, report)
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

/// Checks the records in `out` against the planned `cases` and the host's `log`: one
/// record per planned case, an `empty` only where the server answered empty, a
/// `suggestion` only where it answered text, `error`/`timeout` where the fault ended
/// the request.
fn check_faults(
    cases: &[(String, String, u64)],
    out: &Path,
    log: &Path,
    report: &mut DrillReport,
) -> Result<()> {
    let records = read_records(&out.join("records.jsonl"), report)?;
    report.records = records.len() as u64;
    read_sessions(out, report);
    let last = read_fault_log(log, report);
    let mut per_file_line: HashMap<(&str, u64), u32> = HashMap::new();
    for (_, f, l) in cases {
        *per_file_line.entry((f.as_str(), *l)).or_default() += 1;
    }
    let mut seen: HashMap<(&str, &str, u64), u32> = cases
        .iter()
        .map(|(r, f, l)| ((r.as_str(), f.as_str(), *l), 0))
        .collect();
    for r in &records {
        check_record(r, &mut seen, &per_file_line, &last, report);
    }
    report.missing = seen.values().filter(|&&n| n == 0).count() as u64;
    report.lost += report.missing + report.duplicates;
    Ok(())
}

/// The run manifest's counts of sessions started and restarted.
fn read_sessions(out: &Path, report: &mut DrillReport) {
    let sessions = crate::replay::Manifest::read(&out.join("manifest.json"))
        .ok()
        .and_then(|m| m.sessions);
    if let Some(s) = sessions {
        report.sessions_started = s.started;
        report.restarted_after_exit = s.restarted_after_exit;
        report.restarted_after_timeouts = s.restarted_after_timeouts;
    }
}

/// The host's log, counted: the last request for each (file, 0-based line) wins (a
/// retry).
fn read_fault_log(log: &Path, report: &mut DrillReport) -> HashMap<(String, u64), Value> {
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
    last
}

/// One record: counted, matched with its planned case, and judged against the log
/// (unless its file and line name two planned cases).
fn check_record<'a>(
    r: &'a Value,
    seen: &mut HashMap<(&'a str, &'a str, u64), u32>,
    per_file_line: &HashMap<(&'a str, u64), u32>,
    last: &HashMap<(String, u64), Value>,
    report: &mut DrillReport,
) {
    let (Some(repo), Some(file), Some(line), Some(outcome)) = (
        r["repo"].as_str(),
        r["file"].as_str(),
        r["line"].as_u64(),
        r["outcome"].as_str(),
    ) else {
        report.stray += 1;
        return;
    };
    *report.outcomes.entry(outcome.to_string()).or_default() += 1;
    match seen.get_mut(&(repo, file, line)) {
        Some(n) => {
            *n += 1;
            if *n > 1 {
                report.duplicates += 1;
                return;
            }
        }
        None => {
            report.stray += 1;
            return;
        }
    }
    if per_file_line.get(&(file, line)).copied().unwrap_or(0) > 1 {
        return;
    }
    report.checked += 1;
    let entry = last.get(&(file.to_string(), line - 1));
    let fault = entry
        .and_then(|e| e["fault"].as_str())
        .and_then(|k| Kind::ALL.into_iter().find(|x| x.name() == k));
    let answer = entry.and_then(|e| e["answer"].as_str());
    let (counter, what) = match judge(outcome, fault, answer, entry.is_some()) {
        Verdict::Fine => return,
        Verdict::Stray => {
            report.stray += 1;
            return;
        }
        Verdict::FalseEmpty => (&mut report.false_empties, "empty without an empty answer"),
        Verdict::FalseAnswer => (
            &mut report.false_answers,
            "a suggestion the server did not give",
        ),
        Verdict::WrongFailureKind => (&mut report.wrong_failure_kind, "the wrong kind of failure"),
        Verdict::SpuriousFailure => (
            &mut report.spurious_failures,
            "a failure where the server answered",
        ),
    };
    *counter += 1;
    if report.examples.len() < 12 {
        let fault_name = fault.map(Kind::name).unwrap_or("none");
        report.examples.push(format!(
            "{repo}/{file}:{line}: {what} (fault {fault_name}, recorded {outcome})"
        ));
    }
}

/// What a record's outcome is, against what the server met and answered.
enum Verdict {
    Fine,
    FalseEmpty,
    FalseAnswer,
    WrongFailureKind,
    SpuriousFailure,
    Stray,
}

/// `outcome` recorded where the host met `fault` and answered `answer` (`logged`: the
/// host logged the request); an outcome this version does not know is stray.
fn judge(outcome: &str, fault: Option<Kind>, answer: Option<&str>, logged: bool) -> Verdict {
    use Outcome::{Empty, Error, Suggestion, Timeout};
    let Some(outcome) = Outcome::parse(outcome) else {
        return Verdict::Stray;
    };
    match (outcome, fault.and_then(Kind::ends_request), answer) {
        (Empty, None, Some("")) => Verdict::Fine,
        (Empty, _, _) => Verdict::FalseEmpty,
        (Suggestion, None, Some(a)) if !a.is_empty() => Verdict::Fine,
        (Suggestion, _, _) => Verdict::FalseAnswer,
        (Error | Timeout, Some(expected), _) if expected == outcome => Verdict::Fine,
        (Error | Timeout, Some(_), _) => Verdict::WrongFailureKind,
        // The answer was sent, then the server died: the answer may not have left.
        (Error, None, _) if fault == Some(Kind::CrashAfter) => Verdict::Fine,
        // The host itself failed (no answer logged).
        (Error, None, None) if logged => Verdict::Fine,
        (Error | Timeout, _, _) => Verdict::SpuriousFailure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drill::table;

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
