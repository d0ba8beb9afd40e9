//! Ranking metrics of completion lists: per typed prefix length, how often the expected
//! item is first, in the top five, found at all, its mean position and the MRR, and how
//! often the list shown was empty (completion sessions have no line cases, so the
//! line-level `cases` and `empty_rate` say nothing of them).
//!
//! Figures are given by typed prefix and by token kind; with the sessions answered and
//! their empty lists (`empty`, and `empty_rate` through `sums::Rates`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::records::Row;
use super::sums::{Rates, Sums};

#[derive(Debug, Clone, Default, Serialize)]
pub struct RankStats {
    /// Sessions answered (a list, empty or not); errors and timeouts are not sessions.
    pub sessions: u64,
    /// Sessions whose list, filtered by the typed prefix, was empty.
    pub empty: u64,
    /// `empty` over `sessions` (`null` in JSON without sessions).
    pub empty_rate: f64,
    pub top1: f64,
    pub top5: f64,
    pub recall: f64,
    /// Mean 1-based position of the expected item where it was found.
    pub mean_position: f64,
    pub mrr: f64,
}

/// Ranking counts of completion sessions: how many, and how many found at each rank
/// (so MRR is summed in rank order, whatever the order of the records).
#[derive(Debug, Clone, Default)]
pub(crate) struct RankAcc {
    n: u64,
    empty: u64,
    ranks: BTreeMap<u32, u64>,
}

impl RankAcc {
    pub(crate) fn stats(&self) -> RankStats {
        let count = |f: &dyn Fn(u32) -> bool| -> u64 {
            self.ranks
                .iter()
                .filter(|(r, _)| f(**r))
                .map(|(_, c)| c)
                .sum()
        };
        let found = count(&|_| true);
        let pos: u64 = self.ranks.iter().map(|(r, c)| *r as u64 * c).sum();
        // A fold from +0.0: an empty float sum is -0.0, which would print as "-0.000".
        let rr = (self.ranks.iter()).fold(0.0, |s, (r, c)| s + *c as f64 / *r as f64);
        let f = |x: f64| Sums::ratio(x, self.n);
        RankStats {
            sessions: self.n,
            empty: self.empty,
            empty_rate: Rates::of(self.n, self.n, self.empty, 0, 0).empty_rate,
            top1: f(count(&|r| r == 1) as f64),
            top5: f(count(&|r| r <= 5) as f64),
            recall: f(found as f64),
            mean_position: Sums::ratio(pos as f64, found),
            mrr: f(rr),
        }
    }
}

/// The ranking counts of one assistant, by typed prefix length ("0".."3", "4+") and "all".
pub(crate) type Ranking = BTreeMap<String, RankAcc>;

/// Counts an answered completion record under its prefix length and under "all".
pub(crate) fn count(ranking: &mut Ranking, r: &Row) {
    let key = match r.prefix_len() {
        u32::MAX => None,
        p if p >= 4 => Some("4+".to_string()),
        p => Some(p.to_string()),
    };
    for k in key.into_iter().chain(Some("all".to_string())) {
        add(ranking.entry(k).or_default(), r);
    }
}

fn add(e: &mut RankAcc, r: &Row) {
    e.n += 1;
    if r.outcome == super::records::Outcome::Empty {
        e.empty += 1;
    }
    if r.rank() >= 1 {
        *e.ranks.entry(r.rank()).or_default() += 1;
    }
}

/// Counts an answered completion record under its token kind, if it names one.
pub(crate) fn count_kind(by_kind: &mut Ranking, r: &Row) {
    if r.token_kind() != 0 {
        let k = super::records::TOKEN_KINDS[r.token_kind() as usize];
        add(by_kind.entry(k.to_string()).or_default(), r);
    }
}

/// Adds the counts of `from` to `into` (exact: integers).
pub(crate) fn merge(into: &mut Ranking, from: Ranking) {
    for (k, r) in from {
        let e = into.entry(k).or_default();
        e.n += r.n;
        e.empty += r.empty;
        for (rank, c) in r.ranks {
            *e.ranks.entry(rank).or_default() += c;
        }
    }
}
