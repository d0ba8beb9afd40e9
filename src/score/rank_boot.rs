//! Bootstrap intervals and paired p-values of completion-list rankings (issue 11): the
//! same resampling units as the help metrics (repositories, or files when there are
//! fewer than ten), per-unit integer sums (sessions, found first, found in the top 5,
//! Σ 1/rank in 2⁻³² fixed point, found anywhere, Σ rank where found), and their own
//! matrix of resamples, so line-level figures are untouched by completion records.

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::{MIN_UNITS, Units};
use super::bootstrap::{Estimate, Spread, resample_sums};
use super::options::Options;
use super::pairwise::Pairwise;
use super::records::{Row, TOKEN_KINDS, Table};

/// Top-1, top-5, MRR, recall and mean position with their bootstrap spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RankCi {
    pub top1: Estimate,
    pub top5: Estimate,
    pub mrr: Estimate,
    /// The share of sessions whose expected item is anywhere in the list.
    pub recall: Estimate,
    /// The mean 1-based place of the expected item where found (a ratio of two sums
    /// over the resampled units; NaN resamples, with nothing found, left out).
    pub mean_position: Estimate,
}

/// Columns per (assistant, group): sessions, top-1, top-5, Σ 2³²/rank, found, Σ rank.
const C: usize = 6;
const ONE: f64 = (1u64 << 32) as f64;
const METRICS: [&str; 5] = ["top1", "top5", "mrr", "recall", "mean_position"];

fn columns(r: &Row) -> [f64; C] {
    let hit = |n: u32| f64::from(u8::from((1..=n).contains(&r.rank())));
    let rr = if r.rank() >= 1 {
        ((1u64 << 32) / r.rank() as u64) as f64
    } else {
        0.0
    };
    let found = f64::from(u8::from(r.rank() >= 1));
    [1.0, hit(1), hit(5), rr, found, f64::from(r.rank())]
}

/// The groups a record counts in: its typed prefix ("0".."3", "4+"), "all", and its
/// token kind ("kind:member", …).
fn groups(r: &Row) -> Vec<String> {
    let mut g = Vec::with_capacity(3);
    match r.prefix_len() {
        u32::MAX => {}
        p if p >= 4 => g.push("4+".to_string()),
        p => g.push(p.to_string()),
    }
    g.push("all".to_string());
    if r.token_kind() != 0 {
        g.push(format!("kind:{}", TOKEN_KINDS[r.token_kind() as usize]));
    }
    g
}

/// Per assistant (by name): intervals by prefix group and "all", and by token kind.
pub(crate) type RankCis = BTreeMap<u32, (BTreeMap<String, RankCi>, BTreeMap<String, RankCi>)>;

/// Where each sum sits in the matrix: (assistant, group) blocks in name order, then
/// each pair of assistants (a's and b's sides over the sessions both answered).
struct Layout<'a> {
    blocks: BTreeMap<(u32, String), usize>,
    by_case: BTreeMap<u32, Vec<&'a Row>>,
    /// (a, b) by their place in `names` → the pair's index.
    pairs: BTreeMap<(usize, usize), usize>,
    base: usize,
    cols: usize,
}

impl<'a> Layout<'a> {
    fn new(rows: &[&'a Row], names: &[u32]) -> Layout<'a> {
        let mut blocks: BTreeMap<(u32, String), usize> = BTreeMap::new();
        for r in rows {
            for g in groups(r) {
                let n = blocks.len();
                blocks.entry((r.assistant(), g)).or_insert(n);
            }
        }
        let mut by_case: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
        for r in rows {
            by_case.entry(r.case).or_default().push(r);
        }
        let mut pairs: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for rs in by_case.values() {
            for x in rs {
                for y in rs {
                    let (ra, rb) = (place(names, x.assistant()), place(names, y.assistant()));
                    if ra < rb {
                        let n = pairs.len();
                        pairs.entry((ra, rb)).or_insert(n);
                    }
                }
            }
        }
        let base = blocks.len() * C;
        let cols = base + pairs.len() * 2 * C;
        Layout {
            blocks,
            by_case,
            pairs,
            base,
            cols,
        }
    }

    /// Per-unit column sums: every record under its groups, and each shared session
    /// under its pair.
    fn matrix(&self, rows: &[&Row], units: &Units, names: &[u32]) -> Vec<f64> {
        let cols = self.cols;
        let mut matrix = vec![0.0f64; units.count * cols];
        let add = |m: &mut [f64], unit: usize, at: usize, r: &Row| {
            let row = &mut m[unit * cols + at..unit * cols + at + C];
            for (a, x) in row.iter_mut().zip(columns(r)) {
                *a += x;
            }
        };
        for r in rows {
            for g in groups(r) {
                add(
                    &mut matrix,
                    units.unit(r),
                    self.blocks[&(r.assistant(), g)] * C,
                    r,
                );
            }
        }
        for rs in self.by_case.values() {
            for x in rs {
                for y in rs {
                    let (ra, rb) = (place(names, x.assistant()), place(names, y.assistant()));
                    if let Some(&p) = self.pairs.get(&(ra, rb)) {
                        let at = self.base + p * 2 * C;
                        add(&mut matrix, units.unit(x), at, x);
                        add(&mut matrix, units.unit(x), at + C, y);
                    }
                }
            }
        }
        matrix
    }
}

fn place(names: &[u32], a: u32) -> usize {
    names.iter().position(|&n| n == a).unwrap_or(usize::MAX)
}

/// Metric `m` (top1, top5, mrr, recall, mean_position) of the block at `at` in a row
/// of sums.
fn metric(s: &[f64], at: usize, m: usize) -> f64 {
    let n = s[at];
    if n == 0.0 {
        return f64::NAN;
    }
    match m {
        0 => s[at + 1] / n,
        1 => s[at + 2] / n,
        2 => s[at + 3] / ONE / n,
        3 => s[at + 4] / n,
        _ if s[at + 4] == 0.0 => f64::NAN,
        _ => s[at + 5] / s[at + 4],
    }
}

/// The intervals of every assistant with answered completion records in the scored
/// pass, and the paired differences of each pair of assistants over the sessions both
/// answered (`metric` top1, top5, mrr, recall, mean_position).
pub(crate) fn rank_boot(
    table: &Table,
    keep: &[bool],
    units: &Units,
    names: &[u32],
    opts: &Options,
) -> (RankCis, Vec<Pairwise>) {
    let rows: Vec<&Row> = table
        .rows
        .iter()
        .zip(keep)
        .filter(|(r, k)| **k && r.pass == opts.pass && r.completion() && r.outcome.answered())
        .map(|(r, _)| r)
        .collect();
    if rows.is_empty() || units.count == 0 {
        return (BTreeMap::new(), Vec::new());
    }
    let layout = Layout::new(&rows, names);
    let matrix = layout.matrix(&rows, units, names);
    let cols = layout.cols;
    let draws = resample_sums(&matrix, units.count, cols, opts.bootstrap, opts.seed);
    let totals: Vec<f64> = (0..cols)
        .map(|c| (0..units.count).map(|u| matrix[u * cols + c]).sum())
        .collect();
    let spread = Spread::of(!units.by_file, units.count);
    let cis = intervals(&layout, &draws, &totals, spread);
    let pairs = paired(&layout, &draws, &totals, table, names, units);
    (cis, pairs)
}

fn intervals(layout: &Layout, draws: &[Vec<f64>], totals: &[f64], spread: Spread) -> RankCis {
    let estimate = |at: usize, m: usize| {
        let v: Vec<f64> = draws.iter().map(|s| metric(s, at, m)).collect();
        Estimate::with(metric(totals, at, m), &v, spread)
    };
    let mut cis: RankCis = BTreeMap::new();
    for ((a, g), &b) in &layout.blocks {
        let ci = RankCi {
            top1: estimate(b * C, 0),
            top5: estimate(b * C, 1),
            mrr: estimate(b * C, 2),
            recall: estimate(b * C, 3),
            mean_position: estimate(b * C, 4),
        };
        let e = cis.entry(*a).or_default();
        match g.strip_prefix("kind:") {
            Some(k) => e.1.insert(k.to_string(), ci),
            None => e.0.insert(g.clone(), ci),
        };
    }
    cis
}

fn paired(
    layout: &Layout,
    draws: &[Vec<f64>],
    totals: &[f64],
    table: &Table,
    names: &[u32],
    units: &Units,
) -> Vec<Pairwise> {
    let mut out = Vec::new();
    for (&(ra, rb), &p) in &layout.pairs {
        let at = layout.base + p * 2 * C;
        for (m, name) in METRICS.iter().enumerate() {
            let point = metric(totals, at, m) - metric(totals, at + C, m);
            let diffs: Vec<f64> = draws
                .iter()
                .map(|s| metric(s, at, m) - metric(s, at + C, m))
                .collect();
            let spread = Spread::of(!units.by_file, units.count);
            let mut e = Estimate::with(point, &diffs, spread);
            // Identical resamples (one unit) can leave a rounding residue in the sd:
            // no spread, so no p-value.
            if e.sd < 1e-12 || point.is_nan() {
                e.sd = 0.0;
            }
            out.push(Pairwise {
                a: table.assistants[names[ra] as usize].clone(),
                b: table.assistants[names[rb] as usize].clone(),
                metric: name.to_string(),
                cases: totals[at] as u64,
                diff: point,
                sd: e.sd,
                p_value: (e.sd > 0.0).then(|| spread.p_value(point, e.sd)),
                few_units: units.count < MIN_UNITS,
            });
        }
    }
    out
}
