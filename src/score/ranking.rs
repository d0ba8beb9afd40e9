//! Ranking metrics of completion lists: per typed prefix length, how often the expected
//! item is first, in the top five, found at all, its mean position and the MRR, and how
//! often the list shown was empty (completion sessions have no line cases, so the
//! line-level `cases` and `empty_rate` say nothing of them).
//!
//! Figures are given by typed prefix and by token kind; with the sessions answered and
//! their empty lists (`empty`, and `empty_rate` through `sums::Rates`). Beyond them
//! (issue 45, the whole list kept): found@k for every k (`found_at`, a step curve) and
//! the list's length against the rank (`by_length`, per length bin).

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

/// The whole list's figures of one group (issue 45): found@k for every k, and the
/// list's length against the rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RankCurve {
    /// found@k, the share of sessions whose expected item is at a place ≤ k, as the
    /// steps of its curve: `[k, share]` at every place where an item was found, in
    /// order; between two steps the curve is the earlier step's, past the last it is
    /// `recall` (up to the longest list). Empty without a found item.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found_at: Vec<(u32, f64)>,
    /// The list's length against the rank: per bin of the list's length (items shown),
    /// the sessions, the share found and the mean place where found. Empty when no
    /// record says its list's length (`items`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_length: Vec<LengthBin>,
}

impl RankCurve {
    pub fn is_empty(&self) -> bool {
        self.found_at.is_empty() && self.by_length.is_empty()
    }
}

/// One bin of list lengths (`RankCurve::by_length`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LengthBin {
    /// The lengths held: "0", "1", "2–3", "4–7", … "8192+" (items shown).
    pub items: String,
    pub sessions: u64,
    /// Sessions whose expected item was in the list, over `sessions`.
    pub found: f64,
    /// Mean 1-based place of the expected item where found (`null` when none).
    pub mean_position: f64,
}

/// Ranking counts of completion sessions: how many, and how many found at each rank
/// (so MRR is summed in rank order, whatever the order of the records).
#[derive(Debug, Clone, Default)]
pub(crate) struct RankAcc {
    n: u64,
    empty: u64,
    ranks: BTreeMap<u32, u64>,
    /// By list-length bin (`records::list_bin`, known ones): sessions, found, Σ rank.
    lengths: BTreeMap<u8, [u64; 3]>,
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

    /// found@k's steps and the figures by list length.
    pub(crate) fn curve(&self) -> RankCurve {
        RankCurve {
            found_at: self.found_at(),
            by_length: (self.lengths.iter())
                .map(|(&b, &[n, found, sum])| LengthBin {
                    items: super::records::list_bin_label(b),
                    sessions: n,
                    found: Sums::ratio(found as f64, n),
                    mean_position: Sums::ratio(sum as f64, found),
                })
                .collect(),
        }
    }

    /// The steps of found@k: at each place where an item was found, the share of
    /// sessions found at that place or before.
    fn found_at(&self) -> Vec<(u32, f64)> {
        let mut upto = 0u64;
        (self.ranks.iter())
            .map(|(&r, &c)| {
                upto += c;
                (r, Sums::ratio(upto as f64, self.n))
            })
            .collect()
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
    if r.list_bin() != 0 {
        let l = e.lengths.entry(r.list_bin()).or_default();
        l[0] += 1;
        if r.rank() >= 1 {
            l[1] += 1;
            l[2] += u64::from(r.rank());
        }
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
        for (b, l) in r.lengths {
            let to = e.lengths.entry(b).or_default();
            for (t, x) in to.iter_mut().zip(l) {
                *t += x;
            }
        }
    }
}
