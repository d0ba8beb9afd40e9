//! The bootstrap of the side figures (block cases, methodology §9; checks, §11): each
//! answered case of an assistant gives a few integer column terms; per-unit sums go into
//! their own matrix (so the line figures and their resamples are untouched), resampled
//! with the same units, seed and generator as every other figure; estimates per
//! assistant and paired differences over the cases both assistants have.

use std::collections::BTreeMap;

use super::accumulate::MIN_UNITS;
use super::bootstrap::{Estimate, Spread, resample_sums};
use super::options::Options;
use super::pairwise::Pairwise;

/// One case of one assistant: the assistant's place in name order, the case's key, its
/// resampling unit and its column terms (integers, so sums do not depend on order).
#[derive(Clone)]
pub(crate) struct Item {
    pub who: usize,
    pub case: u64,
    pub unit: usize,
    pub cols: Vec<u64>,
}

/// The resamples of one set of items.
pub(crate) struct SideBoot {
    c: usize,
    /// Pairs (a, b), a before b in name order, with the cases they share.
    pairs: Vec<((usize, usize), u64)>,
    base: usize,
    draws: Vec<Vec<f64>>,
    totals: Vec<f64>,
    spread: Spread,
    units: usize,
}

impl SideBoot {
    /// `c` columns per item; `names` assistants; `units` resampling units (repositories
    /// when `repositories`, else files).
    pub(crate) fn new(
        items: &[Item],
        names: usize,
        c: usize,
        units: usize,
        repositories: bool,
        opts: &Options,
    ) -> SideBoot {
        let mut by_case: BTreeMap<u64, Vec<&Item>> = BTreeMap::new();
        for it in items {
            by_case.entry(it.case).or_default().push(it);
        }
        let mut shared: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        for its in by_case.values() {
            for x in its {
                for y in its {
                    if x.who < y.who {
                        *shared.entry((x.who, y.who)).or_default() += 1;
                    }
                }
            }
        }
        let pairs: Vec<((usize, usize), u64)> = shared.into_iter().collect();
        let index: BTreeMap<(usize, usize), usize> = pairs
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (*p, i))
            .collect();
        let base = names * c;
        let cols = base + pairs.len() * 2 * c;
        let mut sums = vec![0u64; units.max(1) * cols];
        let mut add = |unit: usize, at: usize, it: &Item| {
            for (k, v) in it.cols.iter().enumerate() {
                sums[unit * cols + at + k] += v;
            }
        };
        for it in items {
            add(it.unit, it.who * c, it);
        }
        for its in by_case.values() {
            for x in its {
                for y in its {
                    if let Some(&p) = index.get(&(x.who, y.who)) {
                        let at = base + p * 2 * c;
                        add(x.unit, at, x);
                        add(x.unit, at + c, y);
                    }
                }
            }
        }
        let matrix: Vec<f64> = sums.iter().map(|&v| v as f64).collect();
        let totals: Vec<f64> = (0..cols)
            .map(|k| (0..units).map(|u| sums[u * cols + k]).sum::<u64>() as f64)
            .collect();
        let draws = if units > 0 {
            resample_sums(&matrix, units, cols, opts.bootstrap, opts.seed)
        } else {
            Vec::new()
        };
        SideBoot {
            c,
            pairs,
            base,
            draws,
            totals,
            spread: Spread::of(repositories, units),
            units,
        }
    }

    /// The sums of assistant `who` over all its items.
    pub(crate) fn totals(&self, who: usize) -> &[f64] {
        &self.totals[who * self.c..(who + 1) * self.c]
    }

    /// A metric of assistant `who`'s sums, with its spread over the resamples.
    pub(crate) fn estimate(&self, who: usize, metric: impl Fn(&[f64]) -> f64) -> Estimate {
        let at = who * self.c;
        let v: Vec<f64> = self
            .draws
            .iter()
            .map(|s| metric(&s[at..at + self.c]))
            .collect();
        Estimate::with(metric(self.totals(who)), &v, self.spread)
    }

    /// The paired differences of `metric` (named `name`) for every pair of assistants
    /// with shared cases; `names` in name order.
    pub(crate) fn paired(
        &self,
        names: &[String],
        name: &str,
        metric: impl Fn(&[f64]) -> f64,
    ) -> Vec<Pairwise> {
        let c = self.c;
        self.pairs
            .iter()
            .enumerate()
            .map(|(p, &((a, b), cases))| {
                let at = self.base + p * 2 * c;
                let diff_of = |s: &[f64]| metric(&s[at..at + c]) - metric(&s[at + c..at + 2 * c]);
                let point = diff_of(&self.totals);
                let diffs: Vec<f64> = self.draws.iter().map(|s| diff_of(s)).collect();
                let mut e = Estimate::with(point, &diffs, self.spread);
                // Identical resamples can leave a rounding residue: no spread, no p-value.
                if e.sd < 1e-12 {
                    e.sd = 0.0;
                }
                Pairwise {
                    a: names[a].clone(),
                    b: names[b].clone(),
                    metric: name.to_string(),
                    cases,
                    diff: point,
                    sd: e.sd,
                    p_value: (e.sd > 0.0).then(|| self.spread.p_value(point, e.sd)),
                    few_units: self.units < MIN_UNITS,
                }
            })
            .collect()
    }
}

/// Each assistant's index among `names` (the summary's order), by its index in the
/// table; `usize::MAX` for an assistant not scored.
pub(crate) fn rank_of(names: &[u32], assistants: usize) -> Vec<usize> {
    let mut rank = vec![usize::MAX; assistants];
    for (i, &a) in names.iter().enumerate() {
        rank[a as usize] = i;
    }
    rank
}

/// `n / d`, NaN (null in JSON) for a share of nothing.
pub(crate) fn ratio(n: f64, d: f64) -> f64 {
    if d == 0.0 { f64::NAN } else { n / d }
}
