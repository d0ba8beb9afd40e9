//! Repository-level (hierarchical) bootstrap: draw as many repositories as there are,
//! with replacement, from a seeded portable RNG (PCG-64, Lemire's unbiased bounded
//! draw), so the same seed gives the same figures on every machine. Costs
//! O(resamples × repositories × columns), never O(resamples × cases): callers pass
//! per-repository sums.
//!
//! With fewer than ten repositories the callers' unit is the (repository, file) instead.
//! The per-unit column sums of eight resamples are taken in one pass over the matrix,
//! compiled for AVX2 where the CPU has it and never with a fused multiply-add, so the
//! bits are the same everywhere (a test compares both paths). [`Estimate`]: sd, `ci95`,
//! percentiles. `Spread`: ±2 sd with files as units, Student's t with R − 1 degrees of
//! freedom with R repositories, and the matching p-values; the t distribution and its
//! quantile are here.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

/// A uniform integer in `0..n` (n > 0), without modulo bias.
pub fn below(rng: &mut Pcg64, n: u64) -> u64 {
    let mut m = (rng.next_u64() as u128) * (n as u128);
    if (m as u64) < n {
        let t = n.wrapping_neg() % n;
        while (m as u64) < t {
            m = (rng.next_u64() as u128) * (n as u128);
        }
    }
    (m >> 64) as u64
}

/// For each resample, the column sums `Σ_r w_r · M[r][k]` where `w_r` is how many times
/// repository `r` was drawn. `matrix` is row-major, `repos × cols`. The draws are made
/// in one sequence from the seed; the sums are then split across the pool's threads.
/// Each resample is summed by itself, row by row, whatever part or group it falls in, so
/// the result does not depend on the number of threads.
pub fn resample_sums(
    matrix: &[f64],
    repos: usize,
    cols: usize,
    resamples: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut counts = vec![0u32; repos * resamples];
    for draw in counts.chunks_exact_mut(repos.max(1)) {
        for _ in 0..repos {
            draw[below(&mut rng, repos as u64) as usize] += 1;
        }
    }
    let avx2 = avx2();
    let weighted = |draws: &[u32]| {
        let group: Vec<&[u32]> = draws.chunks_exact(repos.max(1)).collect();
        if avx2 {
            // SAFETY: the CPU has AVX2 (checked at run time).
            #[cfg(target_arch = "x86_64")]
            return unsafe { sum_group_avx2(matrix, cols, repos, &group) };
        }
        sum_group(matrix, cols, repos, &group)
    };
    // One part per thread of the pool, in order: the parts do not change any sum.
    let per = resamples.div_ceil(rayon::current_num_threads()).max(1);
    let parts: Vec<&[u32]> = counts.chunks(per * repos.max(1)).collect();
    let mut done: Vec<Vec<Vec<f64>>> = vec![Vec::new(); parts.len()];
    rayon::scope(|scope| {
        for (part, slot) in parts.iter().zip(done.iter_mut()) {
            let weighted = &weighted;
            scope.spawn(move |_| {
                *slot = part
                    .chunks(GROUP * repos.max(1))
                    .flat_map(weighted)
                    .collect();
            });
        }
    });
    done.into_iter().flatten().collect()
}

/// Resamples summed at a time: each matrix row is read once per group rather than once
/// per resample.
const GROUP: usize = 8;

/// The sums of a group of resamples (`draws[k][r]`: how often resample `k` drew unit
/// `r`). Each sum adds its rows in order, with a multiplication and an addition per
/// term (never fused), so the figures do not depend on the grouping nor on the
/// instructions the CPU offers.
#[inline(always)]
fn sum_group(matrix: &[f64], cols: usize, repos: usize, draws: &[&[u32]]) -> Vec<Vec<f64>> {
    let mut acc = vec![vec![0.0f64; cols]; draws.len()];
    for (r, row) in matrix.chunks_exact(cols.max(1)).enumerate().take(repos) {
        for (draw, acc) in draws.iter().zip(acc.iter_mut()) {
            let w = draw[r];
            if w == 0 {
                continue;
            }
            let w = w as f64;
            for (a, x) in acc.iter_mut().zip(row) {
                *a += w * x;
            }
        }
    }
    acc
}

/// [`sum_group`] compiled for AVX2: four sums per instruction instead of two. AVX2 has
/// no fused multiply-add (that is the `fma` feature, not enabled here), so each term
/// is rounded as in the baseline build.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_group_avx2(
    matrix: &[f64],
    cols: usize,
    repos: usize,
    draws: &[&[u32]],
) -> Vec<Vec<f64>> {
    sum_group(matrix, cols, repos, draws)
}

fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A point estimate with its bootstrap spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    /// Standard deviation of the resampled values.
    pub sd: f64,
    /// `value ± 2·sd`, as the study reports; with repositories as units, `value ± q·sd`
    /// with q the t quantile of [`Spread::of`].
    pub ci95: [f64; 2],
    /// 2.5th and 97.5th percentiles of the resampled values.
    pub pct95: [f64; 2],
}

/// How a bootstrap spread becomes an interval and a p-value. With files as units (or
/// many repositories) the study's rule: `value ± 2·sd` and a normal p-value. With R
/// repositories as units, a small-sample correction: the 0.975 quantile of Student's t
/// with R − 1 degrees of freedom in place of 2 where it is larger (R ≤ 61; 2.201 at 12
/// repositories) and the p-value from the same t. `typist bench coverage` measured
/// ±2 sd covering 91% at 12 repositories and the t quantile 93–94%
/// (docs/benchmarks.md#coverage); with files as units the correction would overshoot
/// for what that interval is about (these repositories' files), so it is not applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The multiplier of sd in `ci95`.
    pub q: f64,
    /// Degrees of freedom of the t distribution p-values are read from (normal: none).
    pub df: Option<f64>,
}

impl Spread {
    /// The study's rule: ±2 sd, normal p-values.
    pub const STUDY: Spread = Spread { q: 2.0, df: None };

    /// The rule for `units` resampled units, repositories when `repositories`.
    pub fn of(repositories: bool, units: usize) -> Spread {
        if !repositories || units < 2 {
            return Spread::STUDY;
        }
        let df = (units - 1) as f64;
        Spread {
            q: t_quantile(0.975, df).max(2.0),
            df: Some(df),
        }
    }

    /// The two-sided p-value of `diff` with spread `sd` (see [`p_value`]), from t with
    /// `df` degrees of freedom when set.
    pub fn p_value(&self, diff: f64, sd: f64) -> f64 {
        match self.df {
            Some(df) if sd > 0.0 && !diff.is_nan() => 2.0 * t_cdf(-(diff.abs() / sd), df),
            _ => p_value(diff, sd),
        }
    }
}

impl Estimate {
    /// Half the width of `ci95` (2·sd, or q·sd with repositories as units).
    pub fn half(&self) -> f64 {
        (self.ci95[1] - self.ci95[0]) / 2.0
    }

    /// From a point value and the resampled values (NaNs, from resamples where the
    /// metric is undefined, are left out), with the study's `value ± 2·sd`.
    pub fn new(value: f64, resampled: &[f64]) -> Estimate {
        Estimate::with(value, resampled, Spread::STUDY)
    }

    /// The same with `ci95 = value ± spread.q·sd`.
    pub fn with(value: f64, resampled: &[f64], spread: Spread) -> Estimate {
        let mut v: Vec<f64> = resampled.iter().copied().filter(|x| !x.is_nan()).collect();
        let sd = sd(&v);
        v.sort_by(f64::total_cmp);
        let (lo, hi) = if v.is_empty() {
            (value, value)
        } else {
            (percentile(&v, 0.025), percentile(&v, 0.975))
        };
        Estimate {
            value,
            sd,
            ci95: [value - spread.q * sd, value + spread.q * sd],
            pct95: [lo, hi],
        }
    }
}

/// Sample standard deviation (n − 1); 0 for fewer than two values.
pub fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Linear-interpolated percentile of sorted values (numpy's default), `q` in 0..=1.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    if i + 1 < sorted.len() {
        sorted[i] + (sorted[i + 1] - sorted[i]) * frac
    } else {
        sorted[i]
    }
}

/// The same percentile as [`percentile`], from unsorted values in O(n) (the slice is
/// reordered).
pub fn percentile_unsorted(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    let (_, lo, right) = v.select_nth_unstable_by(i, f64::total_cmp);
    let lo = *lo;
    match right.iter().copied().min_by(f64::total_cmp) {
        Some(hi) if frac > 0.0 => lo + (hi - lo) * frac,
        _ => lo,
    }
}

/// Two-sided p-value of a difference under a normal approximation,
/// `2·(1 − Φ(|diff|/sd))`. With `sd = 0`: 1 for a zero difference, 0 otherwise.
pub fn p_value(diff: f64, sd: f64) -> f64 {
    if diff.is_nan() {
        return f64::NAN;
    }
    if sd == 0.0 || sd.is_nan() {
        return if diff == 0.0 { 1.0 } else { 0.0 };
    }
    // 2·(1 − Φ(z)) = erfc(z/√2)
    libm::erfc(diff.abs() / sd / std::f64::consts::SQRT_2)
}

/// The standard normal distribution function, `Φ(x) = erfc(−x/√2)/2`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// Student's t distribution function with `df` degrees of freedom (through the
/// regularized incomplete beta function).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` degrees of freedom, by
/// bisection on [`t_cdf`] (to 1e-12).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (-1e3, 1e3);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid
        } else {
            hi = mid
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued fraction
/// (modified Lentz), on the side where it converges fast.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_follow_the_normal_tail() {
        assert!((p_value(1.96, 1.0) - 0.05).abs() < 1e-3);
        assert_eq!(p_value(0.0, 1.0), 1.0);
        assert_eq!(p_value(0.0, 0.0), 1.0);
        assert_eq!(p_value(0.3, 0.0), 0.0);
        assert!((p_value(-1.0, 1.0) - 0.3173).abs() < 1e-4);
    }

    #[test]
    fn the_spread_widens_only_repository_intervals_with_few_repositories() {
        assert_eq!(Spread::of(false, 16), Spread::STUDY);
        let s = Spread::of(true, 12);
        assert!((s.q - 2.200985).abs() < 1e-5);
        assert_eq!(Spread::of(true, 200).q, 2.0);
        let e = Estimate::with(0.5, &[0.4, 0.5, 0.6], s);
        assert!((e.ci95[1] - 0.5 - s.q * 0.1).abs() < 1e-12);
        // t's tails are heavier than the normal's: p-values grow.
        assert!(s.p_value(0.2, 0.1) > p_value(0.2, 0.1));
        assert!((s.p_value(0.2201, 0.1) - 0.05).abs() < 1e-3);
        assert_eq!(s.p_value(0.0, 0.0), 1.0);
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // R's qt(0.975, df) for df 3, 11, 19, 39, and the normal limit.
        for (df, q) in [
            (3.0, 3.182446305),
            (11.0, 2.200985160),
            (19.0, 2.093024054),
            (39.0, 2.022690901),
            (1e6, 1.959966),
        ] {
            assert!((t_quantile(0.975, df) - q).abs() < 1e-6, "df {df}");
        }
        assert!((t_cdf(0.0, 5.0) - 0.5).abs() < 1e-12);
        assert!((normal_cdf(1.959963985) - 0.975).abs() < 1e-9);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.5);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 4.0);
        assert!((percentile(&v, 0.025) - 1.075).abs() < 1e-12);
        for q in [0.0, 0.025, 0.5, 0.95, 1.0] {
            let mut shuffled = [3.0, 1.0, 4.0, 2.0];
            assert_eq!(
                percentile_unsorted(&mut shuffled, q),
                percentile(&v, q),
                "q {q}"
            );
        }
    }

    #[test]
    fn the_rng_is_portable_and_bounded() {
        // Fixed figures: a change of generator or draw method must show up here.
        let mut rng = Pcg64::seed_from_u64(42);
        let draws: Vec<u64> = (0..8).map(|_| below(&mut rng, 10)).collect();
        let mut rng2 = Pcg64::seed_from_u64(42);
        let again: Vec<u64> = (0..8).map(|_| below(&mut rng2, 10)).collect();
        assert_eq!(draws, again);
        assert!(draws.iter().all(|&d| d < 10));
        let mut rng = Pcg64::seed_from_u64(7);
        let mut hist = [0u32; 3];
        for _ in 0..30_000 {
            hist[below(&mut rng, 3) as usize] += 1;
        }
        assert!(
            hist.iter().all(|&h| (9_500..10_500).contains(&h)),
            "{hist:?}"
        );
    }

    #[test]
    fn every_resample_draws_as_many_repositories_as_there_are() {
        // One column of ones: each resample's sum is the number of draws.
        let m = vec![1.0; 5];
        for s in resample_sums(&m, 5, 1, 20, 3) {
            assert_eq!(s, vec![5.0]);
        }
    }

    /// The grouped (and, where the CPU has it, AVX2) sums are bit for bit the sums of
    /// one resample at a time, row by row in order, in the baseline instructions.
    #[test]
    fn grouped_sums_are_the_plain_sums_bit_for_bit() {
        let (repos, cols, resamples) = (37, 11, 21);
        let mut rng = Pcg64::seed_from_u64(9);
        let matrix: Vec<f64> = (0..repos * cols)
            .map(|_| (rng.next_u64() as f64 / u64::MAX as f64 - 0.5) * 1e3)
            .collect();
        let sums = resample_sums(&matrix, repos, cols, resamples, 5);
        let mut rng = Pcg64::seed_from_u64(5);
        let mut draws: Vec<Vec<u32>> = Vec::new();
        for s in &sums {
            let mut w = vec![0u32; repos];
            for _ in 0..repos {
                w[below(&mut rng, repos as u64) as usize] += 1;
            }
            draws.push(w.clone());
            let mut plain = vec![0.0f64; cols];
            for (r, &w) in w.iter().enumerate() {
                if w > 0 {
                    for (a, x) in plain.iter_mut().zip(&matrix[r * cols..(r + 1) * cols]) {
                        *a += std::hint::black_box(w as f64 * x);
                    }
                }
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(s), bits(&plain));
        }
        assert_eq!(sums.len(), resamples);
        // The baseline copy too, where the run above took the AVX2 one.
        let group: Vec<&[u32]> = draws.iter().map(|w| w.as_slice()).collect();
        assert_eq!(sum_group(&matrix, cols, repos, &group), sums);
    }
}
