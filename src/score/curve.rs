//! The H(S|t) curves (methodology §3): the share of the expected code typed by the
//! suggestions with `c_help ≥ t`, at 101 thresholds, from integer buckets of `c_help`;
//! and their bootstrap percentile bands.
//!
//! The bands are computed from per-unit sums handed in; this file never names the
//! accumulator.

use std::collections::BTreeMap;

use serde::Serialize;

use super::bootstrap::{percentile, resample_sums};
use super::options::Options;
use super::sums::Sums;

/// 101 thresholds t = k/100.
pub const CURVE_STEPS: usize = 100;

/// Thresholds of the curve bands: t = k·BAND_STEP/100.
pub const BAND_STEP: usize = 5;

/// Σ w·c_help of suggestions by `c_help` bucket.
pub(crate) type Buckets = [u64; CURVE_STEPS + 1];

#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    pub t: f64,
    pub help: f64,
}

/// A 95% percentile band of H(S|t) at one threshold.
#[derive(Debug, Clone, Serialize)]
pub struct BandPoint {
    pub t: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The curve of a set of buckets over the denominator `den` (Σ w of the cases counted).
pub(crate) fn curve(buckets: &Buckets, den: u64) -> Vec<CurvePoint> {
    let mut out = vec![];
    let mut acc = 0u64;
    let mut tail = [0u64; CURVE_STEPS + 1];
    for k in (0..=CURVE_STEPS).rev() {
        acc += buckets[k];
        tail[k] = acc;
    }
    for (k, t) in tail.iter().enumerate() {
        out.push(CurvePoint {
            t: k as f64 / CURVE_STEPS as f64,
            help: Sums::ratio(*t as f64, den),
        });
    }
    out
}

/// The bucket of a case's `c_help`: the largest k with c ≥ k/100, exactly, in integers.
pub(crate) fn bucket(len: u32, ld: u32) -> usize {
    let gain = len.saturating_sub(ld) as u64;
    ((gain * CURVE_STEPS as u64) / len.max(1) as u64) as usize
}

/// One assistant's sums per bootstrap unit, as the bands read them: the buckets of
/// `c_help` and the sums (for the denominators).
pub(crate) struct UnitCurves<'a> {
    pub buckets: &'a [Buckets],
    pub sums: &'a [Sums],
}

/// Percentile bands of H(S|t) every `BAND_STEP`/100, with and without empties, on the
/// same draws as every other interval (same seed). `per_assistant` gives an assistant's
/// per-unit sums by its name's index (the accumulator is handed down, never named here).
pub(crate) fn curve_bands<'a>(
    per_assistant: impl Fn(u32) -> UnitCurves<'a>,
    names: &[u32],
    n_units: usize,
    opts: &Options,
) -> BTreeMap<u32, (Vec<BandPoint>, Vec<BandPoint>)> {
    let ks: Vec<usize> = (0..=CURVE_STEPS).step_by(BAND_STEP).collect();
    let per = ks.len() + 2;
    let cols = names.len() * per;
    let mut matrix = vec![0.0f64; n_units * cols];
    for r in 0..n_units {
        for (i, &a) in names.iter().enumerate() {
            let unit = per_assistant(a);
            let row = &mut matrix[r * cols + i * per..r * cols + (i + 1) * per];
            let mut tail = [0u64; CURVE_STEPS + 2];
            for k in (0..=CURVE_STEPS).rev() {
                tail[k] = tail[k + 1] + unit.buckets[r][k];
            }
            for (j, &k) in ks.iter().enumerate() {
                row[j] = tail[k] as f64;
            }
            row[ks.len()] = unit.sums[r].len as f64;
            row[ks.len() + 1] = unit.sums[r].len_nonempty as f64;
        }
    }
    let resamples = resample_sums(&matrix, n_units, cols, opts.bootstrap, opts.seed);
    let mut out = BTreeMap::new();
    for (i, &a) in names.iter().enumerate() {
        let band = |den: usize| band(&resamples, &ks, i * per, den);
        out.insert(a, (band(ks.len()), band(ks.len() + 1)));
    }
    out
}

/// One assistant's band: its columns start at `offset`, the denominator at `den` after.
fn band(resamples: &[Vec<f64>], ks: &[usize], offset: usize, den: usize) -> Vec<BandPoint> {
    ks.iter()
        .enumerate()
        .map(|(j, &k)| {
            let mut v: Vec<f64> = resamples
                .iter()
                .map(|s| {
                    let d = s[offset + den];
                    if d == 0.0 {
                        f64::NAN
                    } else {
                        s[offset + j] / d
                    }
                })
                .filter(|x| !x.is_nan())
                .collect();
            v.sort_by(f64::total_cmp);
            BandPoint {
                t: k as f64 / CURVE_STEPS as f64,
                lo: percentile(&v, 0.025),
                hi: percentile(&v, 0.975),
            }
        })
        .collect()
}
