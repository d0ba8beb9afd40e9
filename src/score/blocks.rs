//! Block cases' figures (methodology §9), per assistant over the answered block records
//! of the scored pass: block integral help, exact share and help at 0 (each case
//! weighed by `w = len(T) − k`), `lines_accepted` as a share of `T`'s lines and of its
//! characters, the block H(S|t) curve; bootstrap intervals and paired differences over
//! the cases both assistants answered. The first-line §2 figures of the same records are
//! the summary's line figures. Absent for line and token records.

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::Units;
use super::block_terms::BlockTerms;
use super::bootstrap::Estimate;
use super::curve::{Buckets, CURVE_STEPS, CurvePoint, bucket, curve};
use super::options::Options;
use super::pairwise::Pairwise;
use super::records::{Outcome, Table};
use super::side_boot::{Item, SideBoot, ratio};
use super::sums::FIX;

/// One assistant's block figures.
#[derive(Debug, Clone, Serialize)]
pub struct BlockScore {
    /// Answered block cases (suggestion or empty).
    pub cases: u64,
    /// Σ w·c_help_block³ / Σ w.
    pub integral_help: Estimate,
    /// Σ w·[P = T] / Σ w.
    pub exact_share: Estimate,
    /// Σ w·c_help_block / Σ w.
    pub help_at_0: Estimate,
    /// Σ lines_accepted / Σ lines of T.
    pub lines_accepted: Estimate,
    /// Characters of the accepted lines (less the typed prefix) / Σ w.
    pub chars_accepted: Estimate,
    /// H(S|t) of the blocks at t = 0, 0.01, …, 1.
    pub curve: Vec<CurvePoint>,
}

/// Columns per case: 1, w, w·c³ (fixed point), w·[exact], max(0, w − ld2), lines of T,
/// lines accepted, characters accepted.
const C: usize = 8;

/// A metric of a row of sums.
type Metric = fn(&[f64]) -> f64;

/// The metrics of a row of sums, by name; the first three are compared in pairs.
const METRICS: [(&str, Metric); 5] = [
    ("block_integral_help", |s| ratio(s[2] / FIX, s[1])),
    ("block_exact_share", |s| ratio(s[3], s[1])),
    ("lines_accepted", |s| ratio(s[6], s[5])),
    ("block_help_at_0", |s| ratio(s[4], s[1])),
    ("chars_accepted", |s| ratio(s[7], s[1])),
];

/// One case's columns; `None` when the block is no longer than what the user typed.
fn columns(t: &BlockTerms, typed: u32, outcome: Outcome) -> Option<[u64; C]> {
    let w = t.len.checked_sub(typed).filter(|w| *w > 0)?;
    let ld = if outcome == Outcome::Suggestion {
        t.ld2
    } else {
        t.len
    };
    let gain = w.saturating_sub(ld);
    let (g, l) = (f64::from(gain), f64::from(w));
    let cube = super::sums::round_nonneg(g * g * g / (l * l) * FIX);
    let chars = if t.lines_ok > 0 {
        t.chars_ok.saturating_sub(typed)
    } else {
        0
    };
    Some([
        1,
        u64::from(w),
        cube,
        if ld == 0 { u64::from(w) } else { 0 },
        u64::from(gain),
        u64::from(t.lines),
        u64::from(t.lines_ok),
        u64::from(chars),
    ])
}

/// Every assistant's block figures (by name) and the paired differences, or nothing
/// when the table has no block records.
pub(crate) fn block_scores(
    table: &Table,
    keep: &[bool],
    units: &Units,
    names: &[u32],
    opts: &Options,
) -> (BTreeMap<String, BlockScore>, Vec<Pairwise>) {
    if table.blocks.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    let rank = super::side_boot::rank_of(names, table.assistants.len());
    let mut items = Vec::new();
    let mut buckets: Vec<Buckets> = vec![[0u64; CURVE_STEPS + 1]; names.len()];
    for &(i, t) in &table.blocks {
        let r = &table.rows[i];
        if !keep[i] || r.pass != opts.pass || r.completion() || !r.outcome.answered() {
            continue;
        }
        let Some(cols) = columns(&t, r.typed, r.outcome) else {
            continue;
        };
        let who = rank[r.assistant() as usize];
        buckets[who][bucket(cols[1] as u32, cols[1] as u32 - cols[4] as u32)] += cols[4];
        items.push(Item {
            who,
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
        let t = boot.totals(who);
        if t[0] == 0.0 {
            continue;
        }
        let est = |m: usize| boot.estimate(who, METRICS[m].1);
        scores.insert(
            name.clone(),
            BlockScore {
                cases: t[0] as u64,
                integral_help: est(0),
                exact_share: est(1),
                lines_accepted: est(2),
                help_at_0: est(3),
                chars_accepted: est(4),
                curve: curve(&buckets[who], t[1] as u64),
            },
        );
    }
    let pairwise = METRICS[..3]
        .iter()
        .flat_map(|(name, m)| boot.paired(&sorted, name, m))
        .collect();
    (scores, pairwise)
}
