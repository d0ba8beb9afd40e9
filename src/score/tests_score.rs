//! Does the accepted code still work (methodology §12): from the tests sidecar, per
//! assistant the share of its judged suggestions (answered cases its repository's tests
//! notice, the test run not broken) whose tests pass, with the bootstrap of every side
//! figure and paired p-values; the errors (the test run broke) apart; the cross with
//! exact match (an exact suggestion that fails means the check is wrong: it must be 0);
//! and per repository the share of its cases that its tests notice.

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::Units;
use super::bootstrap::Estimate;
use super::options::Options;
use super::pairwise::Pairwise;
use super::records::Table;
use super::side_boot::{Item, SideBoot, ratio};
use super::tests_file::TestResult;

/// One assistant's tests after acceptance.
#[derive(Debug, Clone, Serialize)]
pub struct TestsScore {
    /// Answered cases its tests notice and judged: pass or fail.
    pub judged: u64,
    /// Of those, the share whose selected tests all pass (null when none was judged).
    pub tests_pass: Option<Estimate>,
    /// Noticed cases whose test run broke before judging (collection or import error,
    /// time limit, crash): never a pass or a fail.
    pub errors: u64,
    /// Exact suggestions whose tests fail: 0 unless the check is wrong.
    pub exact_but_fails: u64,
    /// Suggestions that differ from the true text and pass: equivalent code.
    pub not_exact_but_passes: u64,
    /// Answered cases not judged: no test runs the line, the tests do not notice it, or
    /// they do not pass on the true file.
    pub not_covered: u64,
    pub not_noticed: u64,
    pub broken: u64,
}

/// A repository's cases and how many of them its tests notice.
#[derive(Debug, Clone, Serialize)]
pub struct Noticed {
    pub cases: u64,
    pub noticed: u64,
    pub share: Option<f64>,
}

/// Columns per item: judged (pass or fail), pass.
const C: usize = 2;

const TESTS_PASS: fn(&[f64]) -> f64 = |s| ratio(s[1], s[0]);

/// Per assistant, the tests' figures; their paired differences (`tests_pass`, over the
/// cases both had judged); per repository, the noticed share.
pub(crate) fn tests_scores(
    table: &Table,
    units: &Units,
    names: &[u32],
    opts: &Options,
) -> (
    BTreeMap<String, TestsScore>,
    Vec<Pairwise>,
    BTreeMap<String, Noticed>,
) {
    if table.tests.is_empty() {
        return Default::default();
    }
    let sorted: Vec<String> = (names.iter())
        .map(|&a| table.assistants[a as usize].clone())
        .collect();
    let who: BTreeMap<&str, usize> = (sorted.iter().enumerate())
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let unit_of = units.by_repo_file(table);
    // The first result of each (assistant, case) of the pass, of known assistants and
    // files.
    let mut seen = std::collections::BTreeSet::new();
    let scored: Vec<(&TestResult, usize, usize)> = (table.tests.iter())
        .filter(|t| t.pass == opts.pass && seen.insert((&t.assistant, &t.case)))
        .filter_map(|t| {
            let w = *who.get(t.assistant.as_str())?;
            let unit = *unit_of.get(&(t.repo.as_str(), t.file.as_str()))?;
            Some((t, w, unit))
        })
        .collect();
    let mut cases: BTreeMap<&str, u64> = BTreeMap::new();
    let mut items = Vec::new();
    let mut scores: BTreeMap<usize, TestsScore> = BTreeMap::new();
    for &(t, w, unit) in &scored {
        let s = scores.entry(w).or_insert_with(|| TestsScore {
            judged: 0,
            tests_pass: None,
            errors: 0,
            exact_but_fails: 0,
            not_exact_but_passes: 0,
            not_covered: 0,
            not_noticed: 0,
            broken: 0,
        });
        match t.outcome.as_str() {
            "pass" | "fail" => {
                let pass = t.outcome == "pass";
                s.judged += 1;
                s.exact_but_fails += u64::from(t.exact && !pass);
                s.not_exact_but_passes += u64::from(!t.exact && pass);
                let n = cases.len() as u64;
                let case = *cases.entry(t.case.as_str()).or_insert(n);
                items.push(Item {
                    who: w,
                    case,
                    unit,
                    cols: vec![1, u64::from(pass)],
                });
            }
            "error" => s.errors += 1,
            "not_covered" => s.not_covered += 1,
            "not_noticed" => s.not_noticed += 1,
            _ => s.broken += 1,
        }
    }
    let boot = SideBoot::new(&items, names.len(), C, units.count, !units.by_file, opts);
    let mut out = BTreeMap::new();
    for (w, mut s) in scores {
        s.tests_pass = (s.judged > 0).then(|| boot.estimate(w, TESTS_PASS));
        out.insert(sorted[w].clone(), s);
    }
    let pairwise = if items.is_empty() {
        Vec::new()
    } else {
        boot.paired(&sorted, "tests_pass", TESTS_PASS)
    };
    (out, pairwise, noticed(&scored))
}

/// Per repository, its distinct cases among the scored results and how many of them
/// its tests notice (for any assistant).
fn noticed(scored: &[(&TestResult, usize, usize)]) -> BTreeMap<String, Noticed> {
    let mut by: BTreeMap<&str, BTreeMap<&str, bool>> = BTreeMap::new();
    for (t, _, _) in scored {
        *by.entry(t.repo.as_str())
            .or_default()
            .entry(t.case.as_str())
            .or_default() |= t.noticed();
    }
    (by.into_iter())
        .map(|(repo, cases)| {
            let n = cases.len() as u64;
            let k = cases.values().filter(|v| **v).count() as u64;
            let share = (n > 0).then(|| k as f64 / n as f64);
            let row = Noticed {
                cases: n,
                noticed: k,
                share,
            };
            (repo.to_string(), row)
        })
        .collect()
}
