//! Sums over answered cases, from which every help metric is a ratio, and the outcome
//! rates. Sums are kept in integers or fixed point so the result does not depend on the
//! order of the records.
//!
//! `Terms`: the per-case metric terms with typed-prefix weights: Σ w and Σ max(0, w − ld)
//! in integers, Σ w·c³ in 2⁻³² fixed point. `Rates` is the one place outcome rates are
//! computed. Also the breakdowns, the bootstrap's columns and `Draws` (the resamples,
//! each metric's estimate and paired difference), shared by `summarize` and `typist bench
//! coverage`.

use serde::Serialize;

use super::bootstrap::{Estimate, Spread, resample_sums};
use super::records::{Outcome, Row};

/// Fixed-point scale for sums of non-integer terms: integer addition is associative,
/// so the total is the same whatever the order of the records.
pub(crate) const FIX: f64 = (1u64 << 32) as f64;

/// Sums over a set of answered cases, from which every help metric is a ratio. A
/// case's weight `w = len − k` is the characters the assistant could type for the user
/// (k: what the user typed before asking; 0 without a typed prefix, which gives the
/// study's figures exactly).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    pub cases: u64,
    pub empties: u64,
    /// Σ w
    pub len: u64,
    /// Σ w·c_help = Σ max(0, w − ld2)
    pub help: u64,
    /// Σ w·[c_help = 1]
    pub exact: u64,
    /// Σ w·c_help³, fixed point
    pub cube: i128,
    /// The same with ld1.
    pub help_ld1: u64,
    pub cube_ld1: i128,
    /// Over non-empty suggestions only.
    pub len_nonempty: u64,
    pub cube_nonempty: i128,
}

fn cube_fixed(len: u32, ld: u32) -> i64 {
    if len == 0 {
        return 0;
    }
    if ld == 0 && len <= 1 << 17 {
        // An exact line: g³/l² is l itself, exactly (l³ is exact below 2⁵³).
        return i64::from(len) << 32;
    }
    let g = len.saturating_sub(ld) as f64;
    let l = len as f64;
    // Saturating, as `as` does: a term can never wrap.
    round_nonneg(g * g * g / (l * l) * FIX).min(i64::MAX as u64) as i64
}

/// `x.round() as u64` for every `x` (negative and NaN: 0), saturating as `as` does,
/// without the call to libm's `round` that a baseline x86-64 build makes (a few per
/// case): below 2⁶³ the truncation and its way back are one instruction each, and
/// `x − trunc(x)` is exact (from 2⁵² on `x` is whole).
#[inline]
pub(crate) fn round_nonneg(x: f64) -> u64 {
    if x < (1u64 << 63) as f64 {
        let t = x as i64;
        let r = if x - t as f64 >= 0.5 { t + 1 } else { t };
        r.max(0) as u64
    } else {
        x as u64
    }
}

/// One answered case's contribution to [`Sums`], computed once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terms {
    empty: bool,
    len: u32,
    gain: u32,
    gain_ld1: u32,
    /// Fixed point (at most the line's length times 2^32): a line would need 2^31
    /// characters before this saturates.
    cube: i64,
    cube_ld1: i64,
}

impl Terms {
    /// With k typed characters and `w = len − k`: `c_help = max(0, w − ld2(true, pred)) / w`.
    pub fn of(r: &Row) -> Terms {
        let w = r.weight();
        if r.outcome == Outcome::Empty {
            return Terms {
                empty: true,
                len: w,
                ..Default::default()
            };
        }
        Terms {
            empty: false,
            len: w,
            gain: w.saturating_sub(r.ld2()),
            gain_ld1: w.saturating_sub(r.ld1()),
            cube: cube_fixed(w, r.ld2()),
            cube_ld1: cube_fixed(w, r.ld1()),
        }
    }
}

/// A share, NaN when there is nothing to share.
pub fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        f64::NAN
    } else {
        n as f64 / of as f64
    }
}

/// The outcome rates of a set of records, computed in one place for every table:
/// `empty_rate` over the answered cases (suggestion + empty), `error_rate` and
/// `timeout_rate` over all records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub empty_rate: f64,
    pub error_rate: f64,
    pub timeout_rate: f64,
}

impl Rates {
    pub fn of(records: u64, answered: u64, empties: u64, errors: u64, timeouts: u64) -> Rates {
        Rates {
            empty_rate: share(empties, answered),
            error_rate: share(errors, records),
            timeout_rate: share(timeouts, records),
        }
    }
}

impl Sums {
    pub fn add_terms(&mut self, t: &Terms) {
        self.cases += 1;
        self.len += t.len as u64;
        if t.empty {
            self.empties += 1;
            return;
        }
        let (len, gain, cube) = (t.len as u64, t.gain as u64, t.cube as i128);
        self.help += gain;
        if t.gain == t.len {
            self.exact += len;
        }
        self.cube += cube;
        self.help_ld1 += t.gain_ld1 as u64;
        self.cube_ld1 += t.cube_ld1 as i128;
        self.len_nonempty += len;
        self.cube_nonempty += cube;
    }
    /// Adds another set's sums (exact: every field is an integer).
    pub(crate) fn merge(&mut self, s: &Sums) {
        self.cases += s.cases;
        self.empties += s.empties;
        self.len += s.len;
        self.help += s.help;
        self.exact += s.exact;
        self.cube += s.cube;
        self.help_ld1 += s.help_ld1;
        self.cube_ld1 += s.cube_ld1;
        self.len_nonempty += s.len_nonempty;
        self.cube_nonempty += s.cube_nonempty;
    }
    pub(crate) fn ratio(n: f64, d: u64) -> f64 {
        if d == 0 { f64::NAN } else { n / d as f64 }
    }
    pub fn integral_help(&self) -> f64 {
        Self::ratio(self.cube as f64 / FIX, self.len)
    }
    pub fn help_at_0(&self) -> f64 {
        Self::ratio(self.help as f64, self.len)
    }
    pub fn exact_share(&self) -> f64 {
        Self::ratio(self.exact as f64, self.len)
    }
    pub fn integral_help_nonempty(&self) -> f64 {
        Self::ratio(self.cube_nonempty as f64 / FIX, self.len_nonempty)
    }
    /// Point values with plain Levenshtein (ld1).
    pub fn help_at_0_ld1(&self) -> f64 {
        Self::ratio(self.help_ld1 as f64, self.len)
    }
    pub fn integral_help_ld1(&self) -> f64 {
        Self::ratio(self.cube_ld1 as f64 / FIX, self.len)
    }
    pub fn empty_rate(&self) -> f64 {
        Rates::of(self.cases, self.cases, self.empties, 0, 0).empty_rate
    }
    /// The bootstrap columns: len, help, exact, cube, len_nonempty, cube_nonempty.
    pub(crate) fn columns(&self) -> [f64; COLUMNS] {
        [
            self.len as f64,
            self.help as f64,
            self.exact as f64,
            self.cube as f64 / FIX,
            self.len_nonempty as f64,
            self.cube_nonempty as f64 / FIX,
        ]
    }
}

/// Bootstrap columns per set of sums (see [`Sums::columns`]).
pub(crate) const COLUMNS: usize = 6;

/// One side of a pair's sums over the cases both assistants answered: the [`Sums`] the
/// paired metrics read (cases, len, help, exact, cube), added as [`Sums::add_terms`]
/// adds them, and no more (the pair sums add two a pair and case).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PairSide {
    pub cases: u64,
    pub len: u64,
    pub help: u64,
    pub exact: u64,
    pub cube: i128,
}

impl PairSide {
    pub(crate) fn add_terms(&mut self, t: &Terms) {
        self.cases += 1;
        self.len += t.len as u64;
        if t.empty {
            return;
        }
        self.help += t.gain as u64;
        if t.gain == t.len {
            self.exact += t.len as u64;
        }
        self.cube += t.cube as i128;
    }
    pub(crate) fn merge(&mut self, s: &PairSide) {
        self.cases += s.cases;
        self.len += s.len;
        self.help += s.help;
        self.exact += s.exact;
        self.cube += s.cube;
    }
    /// As [`Sums`] (the fields a pair does not keep at 0), for its metrics.
    pub(crate) fn sums(&self) -> Sums {
        Sums {
            cases: self.cases,
            len: self.len,
            help: self.help,
            exact: self.exact,
            cube: self.cube,
            ..Sums::default()
        }
    }
    /// The first [`PAIR_COLUMNS`] of [`Sums::columns`].
    pub(crate) fn columns(&self) -> [f64; PAIR_COLUMNS] {
        let c = self.sums().columns();
        [c[0], c[1], c[2], c[3]]
    }
}

/// Bootstrap columns of each side of a pair of assistants: the first of [`COLUMNS`] (len,
/// help, exact, cube), all that the paired metrics (the first three of [`METRICS`])
/// read. A column's resampled sums do not depend on the others, so leaving a side's
/// last two out changes no figure.
pub(crate) const PAIR_COLUMNS: usize = 4;

const _: () = {
    let mut m = 0;
    while m < 3 {
        assert!(METRICS[m].1 < PAIR_COLUMNS && METRICS[m].2 < PAIR_COLUMNS);
        m += 1;
    }
};

/// A metric as a ratio of two bootstrap columns: (name, numerator, denominator).
pub(crate) const METRICS: [(&str, usize, usize); 4] = [
    ("integral_help", 3, 0),
    ("exact_share", 2, 0),
    ("help_at_0", 1, 0),
    ("integral_help_nonempty", 5, 4),
];

/// Help figures of part of the table (a language, a repository).
#[derive(Debug, Clone, Serialize)]
pub struct Breakdown {
    pub cases: u64,
    pub empty_rate: f64,
    pub integral_help: f64,
    pub exact_share: f64,
    pub help_at_0: f64,
}

impl From<&Sums> for Breakdown {
    fn from(s: &Sums) -> Self {
        Breakdown {
            cases: s.cases,
            empty_rate: s.empty_rate(),
            integral_help: s.integral_help(),
            exact_share: s.exact_share(),
            help_at_0: s.help_at_0(),
        }
    }
}

/// The bootstrap's resampled column sums (one row per resample), the metrics read
/// from them, and how their spread becomes an interval.
pub(crate) struct Draws(pub Vec<Vec<f64>>, pub Spread);

impl Draws {
    /// The bootstrap of a row-major `units × cols` matrix of per-unit columns
    /// (repositories when `repositories`, else files), as `typist score` makes it
    /// (`typist bench coverage` makes it the same way).
    pub(crate) fn of(
        matrix: &[f64],
        units: usize,
        cols: usize,
        resamples: usize,
        seed: u64,
        repositories: bool,
    ) -> Draws {
        let sums = if units == 0 {
            vec![]
        } else {
            resample_sums(matrix, units, cols, resamples, seed)
        };
        Draws(sums, Spread::of(repositories, units))
    }

    /// Metric `m` of the sums whose columns start at `offset`: its point value with the
    /// resamples' spread.
    pub(crate) fn estimate(&self, offset: usize, m: usize, point: f64) -> Estimate {
        Estimate::with(point, &self.metric(offset, m), self.1)
    }

    /// The paired difference of metric `m` between the sums at `a` and those at `b`
    /// (the same units, so the same resamples): `point` with the spread of the
    /// resampled differences.
    pub(crate) fn paired(&self, a: usize, b: usize, m: usize, point: f64) -> Estimate {
        let (ra, rb) = (self.metric(a, m), self.metric(b, m));
        let diffs: Vec<f64> = ra.iter().zip(&rb).map(|(x, y)| x - y).collect();
        Estimate::with(point, &diffs, self.1)
    }

    /// Metric `m` of [`METRICS`] in every resample, from the columns starting at `offset`
    /// (NaN where the denominator is 0).
    pub(crate) fn metric(&self, offset: usize, m: usize) -> Vec<f64> {
        let ratio = |n: f64, d: f64| if d == 0.0 { f64::NAN } else { n / d };
        let (n, d) = (METRICS[m].1, METRICS[m].2);
        self.0
            .iter()
            .map(|s| ratio(s[offset + n], s[offset + d]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_nonneg_is_round() {
        let mut xs = vec![
            0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            2.4999999999999996,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1e18,
            9.3e18,
            1.8e19,
            1e300,
            f64::INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            super::FIX - 0.5,
        ];
        let mut v = 0.123f64;
        for _ in 0..100_000 {
            v = (v * 7.77 + 0.31) % 1.0;
            xs.extend([v * super::FIX, v * 8.0, v * 1.8e19]);
        }
        for x in xs {
            assert_eq!(super::round_nonneg(x), x.round() as u64, "{x:e}");
            let as_i64 = super::round_nonneg(x).min(i64::MAX as u64) as i64;
            assert_eq!(as_i64, x.round() as i64, "{x:e}");
        }
    }

    #[test]
    fn an_exact_line_s_cube_is_the_formula_s() {
        for len in (1..=1u32 << 17).chain([u32::MAX, (1 << 17) + 1]) {
            let l = f64::from(len);
            let formula = (l * l * l / (l * l) * super::FIX).round() as i64;
            assert_eq!(super::cube_fixed(len, 0), formula, "{len}");
        }
    }
}
