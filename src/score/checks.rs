//! What accepted suggestions do to the file (methodology §11), per assistant over the
//! checked non-empty suggestions of the scored pass: the share that keeps the syntax
//! valid (`syntax_delta ≤ 0`) and, with a checker, the share that adds no error;
//! bootstrap intervals with the run's units and paired differences over the cases both
//! assistants have. From the sidecar `typist check` writes ([`super::checks_file`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::Units;
use super::bootstrap::Estimate;
pub use super::checks_file::Check;
use super::options::Options;
use super::pairwise::Pairwise;
use super::records::Table;
use super::side_boot::{Item, SideBoot, ratio};

/// One assistant's checks.
#[derive(Debug, Clone, Serialize)]
pub struct CheckScore {
    /// Non-empty suggestions whose file was parsed.
    pub checked: u64,
    /// Of those, the share with `syntax_delta ≤ 0`.
    pub syntax_valid: Estimate,
    /// Suggestions the checker answered for (absent without a checker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosed: Option<u64>,
    /// Of those, the share adding no error diagnostic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_new_error: Option<Estimate>,
    /// Suggestions the checker failed on (counted apart, never as no error).
    #[serde(skip_serializing_if = "is_zero")]
    pub checker_failed: u64,
    /// The new errors by `source:code` (docs/metrics.md#new-errors-by-code); absent
    /// without a checker or with checks written before codes were recorded.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub new_errors_by_code: BTreeMap<String, ErrorKind>,
    /// The new errors by message class (quoted text and numbers replaced).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub new_errors_by_class: BTreeMap<String, ErrorKind>,
}

/// New errors of one code or message class.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ErrorKind {
    /// How many new errors of this kind, over every diagnosed suggestion.
    pub errors: u64,
    /// Diagnosed suggestions with at least one.
    pub cases: u64,
    /// `cases` over the suggestions the checker answered for (`diagnosed`).
    pub share: f64,
}

/// A diagnostic's code key: `source:code`, `(no code)` for a code left empty.
pub fn code_key(d: &super::checks_file::NewDiagnostic) -> String {
    let code = if d.code.is_empty() {
        "(no code)"
    } else {
        &d.code
    };
    if d.source.is_empty() {
        code.to_string()
    } else {
        format!("{}:{code}", d.source)
    }
}

/// Adds one diagnosed suggestion's new errors to `by` (keys by `key`).
fn add_kinds(
    by: &mut BTreeMap<String, ErrorKind>,
    c: &Check,
    key: impl Fn(&super::checks_file::NewDiagnostic) -> String,
) {
    let mut here: BTreeMap<String, u64> = BTreeMap::new();
    for d in &c.diagnostics {
        *here.entry(key(d)).or_default() += d.count;
    }
    for (k, n) in here {
        let e = by.entry(k).or_default();
        e.errors += n;
        e.cases += 1;
    }
}

/// New errors by code and by message class.
type Kinds = (BTreeMap<String, ErrorKind>, BTreeMap<String, ErrorKind>);

/// Per assistant (by place in `sorted`), the new errors by code and by message class
/// of the diagnosed suggestions among the scored checks (`scored`: the same ones the
/// rates count, so a share is of the same suggestions as `diagnosed`).
fn kinds(scored: &[(&Check, usize, usize)], n: usize) -> Vec<Kinds> {
    let mut out: Vec<Kinds> = vec![Default::default(); n];
    let mut diagnosed = vec![0u64; n];
    for &(c, w, _) in scored {
        if c.new_errors.is_none() {
            continue;
        }
        diagnosed[w] += 1;
        add_kinds(&mut out[w].0, c, code_key);
        add_kinds(&mut out[w].1, c, |d| d.class.clone());
    }
    for (w, (codes, classes)) in out.iter_mut().enumerate() {
        for e in codes.values_mut().chain(classes.values_mut()) {
            e.share = super::sums::share(e.cases, diagnosed[w]);
        }
    }
    out
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Columns per case: 1, syntax valid, diagnosed, no new error, checker failed.
const C: usize = 5;

const SYNTAX_VALID: fn(&[f64]) -> f64 = |s| ratio(s[1], s[0]);
const NO_NEW_ERROR: fn(&[f64]) -> f64 = |s| ratio(s[3], s[2]);

/// Every assistant's checks (by name) and the paired differences (`syntax_valid`,
/// `no_new_error`), or nothing when the table has no checks.
pub(crate) fn check_scores(
    table: &Table,
    units: &Units,
    names: &[u32],
    opts: &Options,
) -> (BTreeMap<String, CheckScore>, Vec<Pairwise>) {
    if table.checks.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    let sorted: Vec<String> = names
        .iter()
        .map(|&a| table.assistants[a as usize].clone())
        .collect();
    let scored = scored(table, units, &sorted, opts);
    let items = items(&scored);
    let boot = SideBoot::new(&items, names.len(), C, units.count, !units.by_file, opts);
    let mut kinds = kinds(&scored, sorted.len());
    let mut scores = BTreeMap::new();
    for (w, name) in sorted.iter().enumerate() {
        let t = boot.totals(w);
        if t[0] == 0.0 {
            continue;
        }
        let diagnosed = t[2] > 0.0 || t[4] > 0.0;
        scores.insert(
            name.clone(),
            CheckScore {
                checked: t[0] as u64,
                syntax_valid: boot.estimate(w, SYNTAX_VALID),
                diagnosed: diagnosed.then_some(t[2] as u64),
                no_new_error: (t[2] > 0.0).then(|| boot.estimate(w, NO_NEW_ERROR)),
                checker_failed: t[4] as u64,
                new_errors_by_code: std::mem::take(&mut kinds[w].0),
                new_errors_by_class: std::mem::take(&mut kinds[w].1),
            },
        );
    }
    let mut pairwise = boot.paired(&sorted, "syntax_valid", SYNTAX_VALID);
    // No new error is paired over the suggestions the checker answered for on both sides.
    let diagnosed: Vec<Item> = items.into_iter().filter(|i| i.cols[2] == 1).collect();
    if !diagnosed.is_empty() {
        let boot = SideBoot::new(
            &diagnosed,
            names.len(),
            C,
            units.count,
            !units.by_file,
            opts,
        );
        pairwise.extend(boot.paired(&sorted, "no_new_error", NO_NEW_ERROR));
    }
    (scores, pairwise)
}

/// The checks the score counts: pass `opts.pass`, the first check of each (assistant,
/// case), of an assistant in `sorted` and a file the records know; with the
/// assistant's place in `sorted` and the bootstrap unit.
fn scored<'t>(
    table: &'t Table,
    units: &Units,
    sorted: &[String],
    opts: &Options,
) -> Vec<(&'t Check, usize, usize)> {
    let who: BTreeMap<&str, usize> = sorted
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let unit_of = units.by_repo_file(table);
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for c in &table.checks {
        if c.pass != opts.pass || !seen.insert((&c.assistant, &c.case)) {
            continue;
        }
        let (Some(&w), Some(&unit)) = (
            who.get(c.assistant.as_str()),
            unit_of.get(&(c.repo.as_str(), c.file.as_str())),
        ) else {
            continue;
        };
        out.push((c, w, unit));
    }
    out
}

/// The scored checks as items (their columns: 1, syntax valid, diagnosed, no new error,
/// checker failed).
fn items(scored: &[(&Check, usize, usize)]) -> Vec<Item> {
    let mut cases: BTreeMap<&str, u64> = BTreeMap::new();
    let mut items = Vec::new();
    for &(c, w, unit) in scored {
        let n = cases.len() as u64;
        let case = *cases.entry(c.case.as_str()).or_insert(n);
        items.push(Item {
            who: w,
            case,
            unit,
            cols: vec![
                1,
                u64::from(c.syntax_delta <= 0),
                u64::from(c.new_errors.is_some()),
                u64::from(c.new_errors == Some(0)),
                u64::from(c.checker_error.is_some()),
            ],
        });
    }
    items
}
