//! The paired difference of the help curves (methodology §3 and §4): for each pair of
//! assistants, `D(t) = H_a(S|t) − H_b(S|t)` over the cases both answered, at the bands'
//! thresholds (every `BAND_STEP`/100), with its bootstrap interval and a two-sided
//! p-value per threshold, from the same resampled units and seed as every other paired
//! figure. The study found one assistant ahead "significantly at low thresholds, not from
//! about t = 0.2": this is the figure that says so.
//!
//! At t = 0 the curve is help at 0 and at t = 1 the exact share, so its first and last
//! p-values are those of the paired `help_at_0` and `exact_share` (the same sums, the
//! same draws; `tests` asserts it).

use serde::Serialize;

use super::accumulate::{MIN_UNITS, Units};
use super::bootstrap::{Estimate, Spread, resample_sums};
use super::curve::{BAND_STEP, CURVE_STEPS, bucket};
use super::options::Options;
use super::pairwise::answer_slots;
use super::records::{Outcome, Table};

/// One threshold of a pair's difference curve.
#[derive(Debug, Clone, Serialize)]
pub struct CurvePairPoint {
    pub t: f64,
    /// `H_a(S|t) − H_b(S|t)` on the shared cases.
    pub diff: f64,
    pub sd: f64,
    /// The 95% interval of the difference, `diff ± q·sd` as every paired figure's.
    pub ci95: [f64; 2],
    /// Null when the resampled difference does not vary: no p-value can be given.
    pub p_value: Option<f64>,
}

/// A pair's difference curve (a before b in name order).
#[derive(Debug, Clone, Serialize)]
pub struct CurvePair {
    pub a: String,
    pub b: String,
    /// Cases answered by both.
    pub cases: u64,
    pub points: Vec<CurvePairPoint>,
    /// Fewer than [`MIN_UNITS`] resampling units: read the p-values with care.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub few_units: bool,
}

/// The thresholds, as bucket indices.
fn thresholds() -> Vec<usize> {
    (0..=CURVE_STEPS).step_by(BAND_STEP).collect()
}

/// The difference curve of every pair with shared cases. `names` are the assistants in
/// name order (as the other paired figures take them).
pub(crate) fn curve_pairs(
    table: &Table,
    keep: &[bool],
    names: &[u32],
    units: &Units,
    opts: &Options,
) -> Vec<CurvePair> {
    let ks = thresholds();
    // Per side: the tail sums Σ w·c·[c ≥ t] at each threshold, then Σ w.
    let side = ks.len() + 1;
    let n_a = names.len();
    if n_a < 2 || units.count == 0 {
        return Vec::new();
    }
    let slot_of = answer_slots(table, keep, opts.pass, names);
    let pairs: Vec<(usize, usize)> = (0..n_a)
        .flat_map(|i| (i + 1..n_a).map(move |j| (i, j)))
        .collect();
    let cols = pairs.len() * 2 * side;
    let mut matrix = vec![0.0f64; units.count * cols];
    let mut shared = vec![0u64; pairs.len()];
    // One row's tail sums: its gain at every threshold at or below its bucket.
    let add = |cells: &mut [f64], r: &super::records::Row| {
        let w = r.weight();
        if r.outcome == Outcome::Suggestion {
            let (b, gain) = (bucket(w, r.ld2()), w.saturating_sub(r.ld2()) as f64);
            for (j, &k) in ks.iter().enumerate() {
                if k <= b {
                    cells[j] += gain;
                }
            }
        }
        cells[ks.len()] += w as f64;
    };
    for case_slots in slot_of.chunks_exact(n_a) {
        for (p, &(i, j)) in pairs.iter().enumerate() {
            let (si, sj) = (case_slots[i], case_slots[j]);
            if si == u32::MAX || sj == u32::MAX {
                continue;
            }
            shared[p] += 1;
            let (x, y) = (&table.rows[si as usize], &table.rows[sj as usize]);
            let o = units.unit(x) * cols + p * 2 * side;
            add(&mut matrix[o..o + side], x);
            add(&mut matrix[o + side..o + 2 * side], y);
        }
    }
    let totals: Vec<f64> = (0..cols)
        .map(|c| (0..units.count).map(|u| matrix[u * cols + c]).sum())
        .collect();
    let resamples = resample_sums(&matrix, units.count, cols, opts.bootstrap, opts.seed);
    let spread = Spread::of(!units.by_file, units.count);
    let ratio = |n: f64, d: f64| if d == 0.0 { f64::NAN } else { n / d };
    let mut out = Vec::new();
    for (p, &(i, j)) in pairs.iter().enumerate() {
        if shared[p] == 0 {
            continue;
        }
        let (oa, ob) = (p * 2 * side, p * 2 * side + side);
        let diff_of = |s: &[f64], k: usize| {
            ratio(s[oa + k], s[oa + ks.len()]) - ratio(s[ob + k], s[ob + ks.len()])
        };
        let points = ks
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let point = diff_of(&totals, k);
                let diffs: Vec<f64> = resamples.iter().map(|s| diff_of(s, k)).collect();
                let e = Estimate::with(point, &diffs, spread);
                CurvePairPoint {
                    t: t as f64 / CURVE_STEPS as f64,
                    diff: point,
                    sd: e.sd,
                    ci95: e.ci95,
                    p_value: (e.sd > 0.0).then(|| spread.p_value(point, e.sd)),
                }
            })
            .collect();
        out.push(CurvePair {
            a: table.assistants[names[i] as usize].clone(),
            b: table.assistants[names[j] as usize].clone(),
            cases: shared[p],
            points,
            few_units: units.count < MIN_UNITS,
        });
    }
    out
}

/// Where along the thresholds a pair's difference is significant (p < 0.05), in words,
/// in the manner of the study: "typist-ngram is ahead at t ≤ 0.20 (p < 0.05); no clear
/// difference above." Runs of significant thresholds are named by their ends.
pub fn curve_pair_sentence(pair: &CurvePair) -> String {
    let sig = |p: &CurvePairPoint| p.p_value.is_some_and(|v| v < 0.05);
    // Runs of consecutive significant thresholds with the same sign.
    let mut runs: Vec<(usize, usize, bool)> = Vec::new();
    for (i, p) in pair.points.iter().enumerate() {
        if !sig(p) {
            continue;
        }
        let ahead = p.diff > 0.0;
        match runs.last_mut() {
            Some((_, end, s)) if *end + 1 == i && *s == ahead => *end = i,
            _ => runs.push((i, i, ahead)),
        }
    }
    if runs.is_empty() {
        return format!(
            "No clear difference between {} and {} at any threshold (p ≥ 0.05 from t = 0 to 1).",
            pair.a, pair.b
        );
    }
    let n = pair.points.len();
    let t = |i: usize| format!("{:.2}", pair.points[i].t);
    let span = |(s, e, _): &(usize, usize, bool)| match (*s == 0, *e + 1 == n) {
        (true, true) => "every threshold".to_string(),
        _ if s == e => format!("t = {}", t(*s)),
        (true, false) => format!("t ≤ {}", t(*e)),
        (false, true) => format!("t ≥ {}", t(*s)),
        (false, false) => format!("{} ≤ t ≤ {}", t(*s), t(*e)),
    };
    // One clause per direction, in the order each first appears, naming its runs.
    let mut parts: Vec<(bool, Vec<String>)> = Vec::new();
    for run in &runs {
        match parts.iter_mut().find(|(ahead, _)| *ahead == run.2) {
            Some((_, spans)) => spans.push(span(run)),
            None => parts.push((run.2, vec![span(run)])),
        }
    }
    let parts: Vec<String> = parts
        .into_iter()
        .map(|(ahead, spans)| {
            let (lead, behind) = if ahead {
                (&pair.a, &pair.b)
            } else {
                (&pair.b, &pair.a)
            };
            let spans = match spans.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{} and {last}", rest.join(", "))
                }
                _ => spans.join(""),
            };
            format!("{lead} is ahead of {behind} at {spans}")
        })
        .collect();
    let covered: usize = runs.iter().map(|(s, e, _)| e - s + 1).sum();
    let rest = if covered == n {
        String::new()
    } else {
        " No clear difference at the other thresholds.".to_string()
    };
    format!("{} (p < 0.05).{rest}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: f64, diff: f64, p: Option<f64>) -> CurvePairPoint {
        CurvePairPoint {
            t,
            diff,
            sd: 0.01,
            ci95: [diff - 0.02, diff + 0.02],
            p_value: p,
        }
    }

    fn pair(points: Vec<CurvePairPoint>) -> CurvePair {
        CurvePair {
            a: "alpha".into(),
            b: "beta".into(),
            cases: 10,
            points,
            few_units: false,
        }
    }

    #[test]
    fn the_sentence_names_the_runs_of_significant_thresholds() {
        let p = pair(vec![
            point(0.0, 0.1, Some(0.001)),
            point(0.05, 0.1, Some(0.01)),
            point(0.1, 0.05, Some(0.2)),
            point(0.15, -0.1, Some(0.03)),
            point(0.2, 0.0, None),
        ]);
        assert_eq!(
            curve_pair_sentence(&p),
            "alpha is ahead of beta at t ≤ 0.05; beta is ahead of alpha at t = 0.15 \
             (p < 0.05). No clear difference at the other thresholds."
        );
        let none = pair(vec![point(0.0, 0.1, Some(0.2)), point(1.0, 0.0, None)]);
        assert_eq!(
            curve_pair_sentence(&none),
            "No clear difference between alpha and beta at any threshold (p ≥ 0.05 from t = 0 to 1)."
        );
        let all = pair(vec![
            point(0.0, -0.1, Some(0.0)),
            point(1.0, -0.2, Some(0.04)),
        ]);
        assert_eq!(
            curve_pair_sentence(&all),
            "beta is ahead of alpha at every threshold (p < 0.05)."
        );
        let top = pair(vec![
            point(0.0, 0.1, Some(0.5)),
            point(0.5, 0.1, Some(0.04)),
            point(1.0, 0.1, Some(0.01)),
        ]);
        let runs = pair(vec![
            point(0.0, 0.1, Some(0.01)),
            point(0.05, 0.1, Some(0.5)),
            point(0.1, 0.1, Some(0.01)),
            point(0.15, 0.1, Some(0.01)),
            point(0.2, 0.1, Some(0.5)),
            point(0.25, 0.1, Some(0.02)),
        ]);
        assert_eq!(
            curve_pair_sentence(&runs),
            "alpha is ahead of beta at t = 0.00, 0.10 ≤ t ≤ 0.15 and t = 0.25 (p < 0.05). \
             No clear difference at the other thresholds."
        );
        assert_eq!(
            curve_pair_sentence(&top),
            "alpha is ahead of beta at t ≥ 0.50 (p < 0.05). No clear difference at the other thresholds."
        );
    }
}
