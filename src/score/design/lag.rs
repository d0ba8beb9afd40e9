//! The autocorrelation of the cases' contributions against the distance in lines
//! ([`autocorrelation`]) and its sums ([`LagAcc`]), which the walk feeds per assistant.

use serde::Serialize;

use super::components::{Components, Obs};

/// The distance bins of the autocorrelation, in lines (inclusive); the last bound is
/// the window.
pub const BINS: [(u32, u32); 6] = [(1, 5), (6, 10), (11, 20), (21, 50), (51, 100), (101, 200)];

#[derive(Debug, Clone, Serialize)]
pub struct Lag {
    /// Distances `from..=to` lines.
    pub from: u32,
    pub to: u32,
    /// Pairs of cases of one file at such a distance.
    pub pairs: u64,
    pub r: Option<f64>,
}

/// Correlation of `value` between two observations of one file `from..=to` lines
/// apart, for each bin: `Σ z_i z_j / (pairs · s²) + 1/n` (as the ICC), clamped to
/// [−1, 1]. `lines[i]` is observation `i`'s line (None: left out of the pairs).
pub fn autocorrelation(obs: &[Obs], lines: &[Option<u32>], c: &Components) -> Vec<Lag> {
    let mean = obs.iter().map(|o| o.value).sum::<f64>() / obs.len().max(1) as f64;
    // By (repository, file, line), then value: an order of the observations alone.
    let mut at: Vec<(&Obs, Option<u32>)> = obs.iter().zip(lines.iter().copied()).collect();
    at.sort_by(|(x, lx), (y, ly)| {
        (x.repo, x.file, lx)
            .cmp(&(y.repo, y.file, ly))
            .then(x.value.total_cmp(&y.value))
    });
    let mut acc = LagAcc::new(mean);
    for (o, line) in at {
        acc.push((o.repo, o.file), line, o.value);
    }
    acc.finish(c)
}

/// [`autocorrelation`]'s sums, fed one value at a time in (repository, file, line)
/// order, centred on a mean known beforehand.
pub(super) struct LagAcc {
    mean: f64,
    /// The bins' edges ([`BINS`] are adjacent): edge k is bin k's first distance, the
    /// last one past the window.
    edges: [u32; BINS.len() + 1],
    sums: [(f64, u64); BINS.len()],
    /// The current file's (line, z), and the prefix sums of its z.
    file: Vec<(u32, f64)>,
    prefix: Vec<f64>,
    /// The dense path's pointers by line ([`LagAcc::close`]).
    below: Vec<u32>,
    last: Option<(u32, u32)>,
}

/// [`LagAcc::close`] reads pointers from a table by line when the file's lines from
/// its first case to its last (and the window past it) are at most this many per case.
const DENSE_LINES: usize = 8;

impl LagAcc {
    pub(super) fn new(mean: f64) -> LagAcc {
        let mut edges = [0u32; BINS.len() + 1];
        for (b, &(lo, hi)) in BINS.iter().enumerate() {
            debug_assert!(b == 0 || BINS[b - 1].1 + 1 == lo, "BINS must be adjacent");
            edges[b] = lo;
            edges[b + 1] = hi + 1;
        }
        LagAcc {
            mean,
            edges,
            sums: [(0.0, 0); BINS.len()],
            file: Vec::new(),
            prefix: Vec::new(),
            below: Vec::new(),
            last: None,
        }
    }

    pub(super) fn push(&mut self, group: (u32, u32), line: Option<u32>, value: f64) {
        if self.last != Some(group) {
            self.close();
            self.last = Some(group);
        }
        if let Some(l) = line {
            self.file.push((l, value - self.mean));
        }
    }

    /// The current file's pairs: Σ over pairs in a bin of z_i·z_j = Σ_i z_i·(Σ of the
    /// z_j from line l_i + lo to l_i + hi), the inner sum a difference of prefix sums
    /// at pointers (one per edge) that only move forward: O(cases × bins), however
    /// dense the lines.
    ///
    /// Where the file's lines are dense enough (most cases of a file sampled at a high
    /// rate), the pointers are read from a table by line instead: `below[o]` is the
    /// number of the file's cases before line `first + o`, so each pointer is one
    /// indexing rather than a loop. The pointers, and so the sums, are the same. The
    /// table is not taken where a pointer's line would pass `u32::MAX` (the other way
    /// saturates there).
    fn close(&mut self) {
        let n = self.file.len();
        let dense = self
            .span()
            .filter(|&span| n > 0 && span <= DENSE_LINES.saturating_mul(n));
        self.close_by(dense);
    }

    /// The length of [`LagAcc::close`]'s table: past the last case's line plus the
    /// widest edge, so every line a pointer asks for is in it. None for no cases, or
    /// where that line would pass `u32::MAX` or the table would not fit in memory.
    fn span(&self) -> Option<usize> {
        let (a, z) = (self.file.first()?, self.file.last()?);
        let reach = u64::from(self.edges[BINS.len()]);
        let past = u64::from(z.0) + reach;
        (past <= u64::from(u32::MAX))
            .then(|| usize::try_from(past - u64::from(a.0) + 1).ok())
            .flatten()
    }

    /// [`LagAcc::close`], its pointers from a table of `span` lines (`Some`) or moved
    /// forward.
    fn close_by(&mut self, dense: Option<usize>) {
        let file = &self.file;
        debug_assert!(file.is_sorted_by_key(|x| x.0), "LagAcc: lines out of order");
        self.prefix.clear();
        self.prefix.push(0.0);
        for x in file {
            self.prefix.push(self.prefix[self.prefix.len() - 1] + x.1);
        }
        let n = file.len();
        let mut at = [0usize; BINS.len() + 1];
        let mut add = |zi: f64, at: &[usize; BINS.len() + 1]| {
            for b in 0..BINS.len() {
                self.sums[b].0 += zi * (self.prefix[at[b + 1]] - self.prefix[at[b]]);
                self.sums[b].1 += (at[b + 1] - at[b]) as u64;
            }
        };
        let first = file.first().map_or(0, |x| x.0);
        if let Some(span) = dense {
            debug_assert!(
                span > file.last().map_or(0, |x| (x.0 - first) as usize)
                    + self.edges[BINS.len()] as usize
            );
            self.below.clear();
            for (j, &(l, _)) in file.iter().enumerate() {
                // Lines after the previous case's, up to this one's: j cases before.
                let o = (l - first) as usize;
                if self.below.len() <= o {
                    self.below.resize(o + 1, j as u32);
                }
            }
            self.below.resize(span, n as u32);
            for &(li, zi) in file {
                let o = (li - first) as usize;
                for (k, e) in self.edges.iter().enumerate() {
                    at[k] = self.below[o + *e as usize] as usize;
                }
                add(zi, &at);
            }
        } else {
            for &(li, zi) in file {
                for (k, e) in self.edges.iter().enumerate() {
                    while at[k] < n && file[at[k]].0 < li.saturating_add(*e) {
                        at[k] += 1;
                    }
                }
                add(zi, &at);
            }
        }
        self.file.clear();
    }

    pub(super) fn finish(mut self, c: &Components) -> Vec<Lag> {
        self.close();
        BINS.iter()
            .zip(self.sums)
            .map(|(&(from, to), (s, pairs))| Lag {
                from,
                to,
                pairs,
                r: (pairs > 0 && c.s2 > 0.0)
                    .then(|| (s / (pairs as f64 * c.s2) + 1.0 / c.n as f64).clamp(-1.0, 1.0)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file, lines 1..=40, value +1 on odd lines and −1 on even ones: mean 0,
    /// z = ±1, s² = 40/39, n = 40. Pairs at distance d: 40 − d, of product (−1)^d.
    /// Bin 1–5: 39+38+37+36+35 = 185 pairs, Σ = −39+38−37+36−35 = −37,
    /// r = −37/(185·40/39) + 1/40 = −1443/7400 + 185/7400 = −1258/7400.
    /// Bin 6–10: 34+33+32+31+30 = 160 pairs, Σ = 34−33+32−31+30 = 32,
    /// r = 32/(160·40/39) + 1/40 = 1248/6400 + 160/6400 = 1408/6400.
    /// Bin 11–20: Σ_{d=11}^{20} (40 − d) = 245 pairs; 21–50: Σ_{d=21}^{39} (40 − d) = 190.
    #[test]
    fn autocorrelation_reads_the_structure_of_a_file() {
        let mut o = Vec::new();
        let mut lines = Vec::new();
        for l in 1..=40u32 {
            let value = if l % 2 == 1 { 1.0 } else { -1.0 };
            o.push(Obs {
                repo: 0,
                file: 0,
                value,
            });
            lines.push(Some(l));
        }
        let c = Components::of(&o);
        let lags = autocorrelation(&o, &lines, &c);
        let pairs: Vec<u64> = lags.iter().map(|l| l.pairs).collect();
        assert_eq!(pairs, [185, 160, 245, 190, 0, 0]);
        assert!((lags[0].r.unwrap() + 1258.0 / 7400.0).abs() < 1e-12);
        assert!((lags[1].r.unwrap() - 1408.0 / 6400.0).abs() < 1e-12);
        assert!(lags[4].r.is_none() && lags[5].r.is_none());
        // A case without a line is left out of the pairs.
        let mut no_line = lines.clone();
        no_line[0] = None;
        assert_eq!(autocorrelation(&o, &no_line, &c)[0].pairs, 185 - 5);
        // Exactly: one file with two cases two lines apart, values 1 and 3 and an
        // unrelated file with 2: mean 2, z = −1, 1, 0, s² = 1, n = 3; the pair's product
        // −1: r = −1/(1·1) + 1/3 = −2/3, in bin 1–5 with 1 pair.
        let o = vec![
            Obs {
                repo: 0,
                file: 0,
                value: 1.0,
            },
            Obs {
                repo: 0,
                file: 0,
                value: 3.0,
            },
            Obs {
                repo: 0,
                file: 1,
                value: 2.0,
            },
        ];
        let c = Components::of(&o);
        let lags = autocorrelation(&o, &[Some(10), Some(12), Some(11)], &c);
        assert_eq!(lags[0].pairs, 1);
        assert!((lags[0].r.unwrap() + 2.0 / 3.0).abs() < 1e-12);
        assert!(lags[1..].iter().all(|l| l.pairs == 0));
    }

    #[test]
    fn the_lag_sums_by_table_are_the_sums_by_pointer() {
        let mut next = crate::score::distance::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut ends_near_the_top = 0;
        for case in 0..300 {
            // Files of 1 to 120 cases, lines 0 to 40 apart (0: the same line twice).
            // One in ten ends at u32::MAX − 1, the last line a case can have (u32::MAX
            // is no line): its pointers saturate, and the table is not taken.
            let n = 1 + (next() % 120) as usize;
            let gaps: Vec<u32> = (0..n).map(|_| (next() % 41) as u32).collect();
            let start = if case % 10 == 0 {
                u32::MAX - 1 - gaps[1..].iter().sum::<u32>()
            } else {
                (next() % 500) as u32
            };
            let mut line = start;
            let mut file = Vec::new();
            for (i, gap) in gaps.iter().enumerate() {
                if i > 0 {
                    line += gap;
                }
                file.push((line, (next() % 2001) as f64 / 1000.0 - 1.0));
            }
            let mut acc = LagAcc::new(0.0);
            acc.file = file.clone();
            let span = acc.span();
            if case % 10 == 0 {
                assert_eq!(line, u32::MAX - 1);
                assert_eq!(span, None, "case {case}");
                ends_near_the_top += 1;
            }
            // The table of the lines the pointers ask for, whether or not close takes it.
            let table = (line - start) as usize + BINS[BINS.len() - 1].1 as usize + 2;
            let sums = |dense: Option<usize>| {
                let mut acc = LagAcc::new(0.0);
                acc.file = file.clone();
                acc.close_by(dense);
                acc.sums
            };
            let b = sums(None);
            let a = if span.is_some() { sums(Some(table)) } else { b };
            assert!(span.is_none() || span == Some(table), "case {case}");
            for (x, y) in a.iter().zip(&b) {
                assert_eq!((x.0.to_bits(), x.1), (y.0.to_bits(), y.1), "case {case}");
            }
            // And the pairs counted are those of the bins, by hand.
            for (k, &(lo, hi)) in BINS.iter().enumerate() {
                let mut pairs = 0u64;
                for i in 0..n {
                    for j in i + 1..n {
                        let d = file[j].0 - file[i].0;
                        pairs += u64::from(d >= lo && d <= hi);
                    }
                }
                assert_eq!(a[k].1, pairs, "case {case}, bin {k}");
            }
        }
        assert_eq!(ends_near_the_top, 30);
    }
}
