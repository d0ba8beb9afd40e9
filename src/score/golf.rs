//! Keystrokes saved (methodology §10, completion golf), per assistant over the golf
//! records of the scored pass (`--golf` runs): saved = 1 − Σ keys / Σ n (lines weighed
//! by their length), requests per line, the share of lines finished by one accept (for
//! completion lists, whose golf records are tokens, one pick with nothing typed);
//! bootstrap intervals and paired differences as every side figure (`side_boot`). Lines
//! with a failed request keep the keys the user pressed (a failure is no suggestion)
//! and are counted apart (`lines_with_failures`), never dropped. Absent without golf
//! records.

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::Units;
use super::bootstrap::Estimate;
use super::options::Options;
use super::pairwise::Pairwise;
pub use super::records::GolfTerms;
use super::records::Table;
use super::side_boot::{Item, SideBoot, ratio};

/// One assistant's golf figures.
#[derive(Debug, Clone, Serialize)]
pub struct GolfScore {
    /// Lines played (non-empty).
    pub lines: u64,
    /// Σ n: characters of those lines.
    pub chars: u64,
    /// Σ keys.
    pub keys: u64,
    /// 1 − Σ keys / Σ n.
    pub keystrokes_saved: Estimate,
    /// Σ requests / lines.
    pub requests_per_line: Estimate,
    /// Lines written by one accept (`GolfTerms::one_accept`).
    pub one_accept_share: Estimate,
    /// Lines with at least one failed request (flagged), and the failed requests.
    pub lines_with_failures: u64,
    pub failures: u64,
    /// Lines that reached `--golf-max-requests`.
    pub capped: u64,
}

/// Columns per line: 1, n, keys, requests, [one accept], [failure], failures, [capped].
const C: usize = 8;

type Metric = fn(&[f64]) -> f64;

/// The metrics of a row of sums; the first is compared in pairs.
const METRICS: [(&str, Metric); 3] = [
    ("keystrokes_saved", |s| 1.0 - ratio(s[2], s[1])),
    ("one_accept_share", |s| ratio(s[4], s[0])),
    ("requests_per_line", |s| ratio(s[3], s[0])),
];

fn columns(t: &GolfTerms) -> Option<[u64; C]> {
    (t.n > 0).then(|| {
        [
            1,
            u64::from(t.n),
            u64::from(t.keys),
            u64::from(t.requests),
            u64::from(t.one_accept()),
            u64::from(t.failures > 0),
            u64::from(t.failures),
            u64::from(t.capped),
        ]
    })
}

/// Every assistant's golf figures (by name) and the paired differences of keystrokes
/// saved and of the one-accept share, or nothing without golf records.
pub(crate) fn golf_scores(
    table: &Table,
    keep: &[bool],
    units: &Units,
    names: &[u32],
    opts: &Options,
) -> (BTreeMap<String, GolfScore>, Vec<Pairwise>) {
    if table.golf.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    let rank = super::side_boot::rank_of(names, table.assistants.len());
    let mut items = Vec::new();
    for &(i, t) in &table.golf {
        let r = &table.rows[i];
        if !keep[i] || r.pass != opts.pass {
            continue;
        }
        let Some(cols) = columns(&t) else { continue };
        items.push(Item {
            who: rank[r.assistant() as usize],
            case: u64::from(r.case),
            unit: units.unit(r),
            cols: cols.to_vec(),
        });
    }
    let boot = SideBoot::new(&items, names.len(), C, units.count, !units.by_file, opts);
    let sorted: Vec<String> = names
        .iter()
        .map(|&a| table.assistants[a as usize].clone())
        .collect();
    let mut scores = BTreeMap::new();
    for (who, name) in sorted.iter().enumerate() {
        let t = boot.totals(who).to_vec();
        if t[0] == 0.0 {
            continue;
        }
        let est = |m: usize| boot.estimate(who, METRICS[m].1);
        scores.insert(
            name.clone(),
            GolfScore {
                lines: t[0] as u64,
                chars: t[1] as u64,
                keys: t[2] as u64,
                keystrokes_saved: est(0),
                one_accept_share: est(1),
                requests_per_line: est(2),
                lines_with_failures: t[5] as u64,
                failures: t[6] as u64,
                capped: t[7] as u64,
            },
        );
    }
    let pairwise = METRICS[..2]
        .iter()
        .flat_map(|(name, m)| boot.paired(&sorted, name, m))
        .collect();
    (scores, pairwise)
}
