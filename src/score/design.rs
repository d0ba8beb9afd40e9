//! "How many lines are enough" (methodology §1, §4): the sampling design read from the
//! records themselves. Per assistant, on each case's contribution to a headline ratio
//! (integral help ℋ = Σ w·c³ / Σ w, exact share), the intraclass correlations within a
//! file and within a repository, the design effect and the effective number of
//! independent cases, the interval width projected at ½×, 2× and 4× the sampling rate
//! (calibrated on the bootstrap's own width), and the autocorrelation of the
//! contributions against the distance in lines; per pair of assistants, whether the
//! sample resolves the integral-help difference and, if not, about how many times the
//! lines or the repositories it would need. Definitions: docs/metrics.md#sampling-design.
//!
//! The estimator is a moment (pairwise) one, weighted as the headline itself weights
//! cases, so that its clustered variance is the one the bootstrap measures: with `z_i`
//! the centred contributions, `s² = Σ z_i² / (n − 1)`,
//! `ρ_file = Σ_{i≠j same file} z_i z_j / (N_F · s²) + 1/n` over the `N_F = Σ n_f² − n`
//! ordered pairs of one file, `ρ_repo` the same over the `N_R = Σ n_r² − Σ n_f²` pairs of
//! one repository in different files (the `1/n` undoes the centring on the sample mean,
//! which makes an independent pair's product `−s²/n` on average), each truncated to
//! [0, 1].
//!
//! Files: `design/components.rs` the components and their accumulator, `design/lag.rs`
//! the autocorrelation's sums, `design/walk.rs` the cases in one order, walked twice
//! for every assistant and pair at once; here the section itself, its projections and its sentence.

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::{Units, answered_line};
use super::bootstrap::Estimate;
use super::pairwise::Pairwise;
use super::records::Table;

mod components;
mod lag;
mod walk;

pub use components::{Components, Obs};
pub use lag::{BINS, Lag, autocorrelation};
use walk::{Answer, Prepared1, Walk, by_file_and_line};

/// The sampling rates the widths are projected at, as multiples of this sample's.
pub const RATES: [f64; 3] = [0.5, 2.0, 4.0];

/// Fewer pairs than this in a distance bin and its correlation is shown as rough.
pub const FEW_PAIRS: u64 = 30;

#[derive(Debug, Clone, Serialize)]
pub struct Design {
    /// The design the intervals assume: "repository" (repositories resampled) or
    /// "file" (files resampled, fewer than `MIN_UNITS` repositories).
    pub unit: &'static str,
    pub assistants: BTreeMap<String, AssistantDesign>,
    /// Per pair of assistants (name order), the integral-help difference against its
    /// interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairDesign>,
    /// Whether the sample is large enough for the differences seen, in one sentence.
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssistantDesign {
    /// Answered line cases, the files and repositories they are in.
    pub cases: u64,
    pub files: u64,
    pub repositories: u64,
    pub integral_help: MetricDesign,
    pub exact_share: MetricDesign,
    /// Correlation of the integral-help contributions of two cases of one file, by
    /// their distance in lines ([`BINS`]).
    pub autocorrelation: Vec<Lag>,
}

/// The design figures of one headline ratio. `None` (null) where not defined: no
/// pair of cases in one file (or repository), no spread.
#[derive(Debug, Clone, Serialize)]
pub struct MetricDesign {
    pub icc_file: Option<f64>,
    pub icc_repo: Option<f64>,
    /// Variance of the estimate under the clustered design over its variance were the
    /// cases independent.
    pub deff: Option<f64>,
    /// `n / deff`.
    pub n_eff: Option<f64>,
    /// The bootstrap's 95% interval width (`ci95`) now.
    pub width: Option<f64>,
    /// The width projected at each of [`RATES`] times this sampling rate.
    pub projected: Vec<Projection>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Projection {
    /// Multiple of this sample's rate.
    pub rate: f64,
    pub width: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairDesign {
    pub a: String,
    pub b: String,
    /// Integral help of a minus b on the cases both answered, and its interval's half
    /// width.
    pub diff: f64,
    pub half: f64,
    /// The interval excludes 0.
    pub resolved: bool,
    /// The design effect of the paired differences.
    pub deff: Option<f64>,
    /// About how many times this sampling rate (files and repositories as now) would
    /// narrow the interval to the difference; null when resolved, or when more lines
    /// alone cannot (the within-file correlation keeps the width above it).
    pub lines_factor: Option<f64>,
    /// About how many times the repositories (each sampled as these are) would.
    pub repos_factor: Option<f64>,
    pub sentence: String,
}

fn metric_design(c: &Components, width: Option<f64>, repositories: bool) -> MetricDesign {
    let deff = c.deff(repositories);
    MetricDesign {
        icc_file: c.icc_file,
        icc_repo: if repositories { c.icc_repo } else { None },
        deff,
        n_eff: deff.filter(|d| *d > 0.0).map(|d| c.n as f64 / d),
        width,
        projected: RATES
            .iter()
            .map(|&k| Projection {
                rate: k,
                width: width.and_then(|w| c.width_ratio(k, repositories).map(|r| w * r)),
            })
            .collect(),
    }
}

fn width(e: &Estimate) -> Option<f64> {
    let w = e.ci95[1] - e.ci95[0];
    w.is_finite().then_some(w)
}

/// The record-only part of the design section, computed beside the bootstrap (it
/// needs neither the estimates nor the paired differences): per assistant its counts,
/// the two ratios' variance components and the autocorrelation; per pair (in name
/// order) the components of the paired integral-help differences.
pub(crate) struct Prepared {
    repositories: bool,
    assistants: Vec<(u32, Prepared1)>,
    pairs: Vec<(u32, u32, Components)>,
}

/// The design section of a summary from [`prepare`]'s part: `scores` are each
/// assistant's (integral help, exact share) estimates by name, `pairwise` the
/// summary's paired differences, `q` the multiplier of sd in their intervals.
pub(crate) fn finish(
    prepared: Prepared,
    table: &Table,
    scores: &BTreeMap<String, (Estimate, Estimate)>,
    pairwise: &[Pairwise],
    q: f64,
) -> Design {
    let repositories = prepared.repositories;
    let assistants: BTreeMap<String, AssistantDesign> = (prepared.assistants.into_iter())
        .filter_map(|(a, p)| {
            let name = &table.assistants[a as usize];
            let (ih, ex) = scores.get(name)?;
            Some((
                name.clone(),
                AssistantDesign {
                    cases: p.cases,
                    files: p.files,
                    repositories: p.repositories,
                    integral_help: metric_design(&p.integral_help, width(ih), repositories),
                    exact_share: metric_design(&p.exact_share, width(ex), repositories),
                    autocorrelation: p.autocorrelation,
                },
            ))
        })
        .collect();
    let pairs: Vec<PairDesign> = (prepared.pairs.iter())
        .filter_map(|(a, b, c)| {
            let (na, nb) = (
                &table.assistants[*a as usize],
                &table.assistants[*b as usize],
            );
            let p = pairwise
                .iter()
                .find(|p| &p.a == na && &p.b == nb && p.metric == "integral_help")?;
            Some(pair_design(na, nb, p.diff, q * p.sd, c, repositories))
        })
        .collect();
    let sentence = sentence(&pairs, table.repos.len(), repositories);
    Design {
        unit: if repositories { "repository" } else { "file" },
        assistants,
        pairs,
        sentence,
    }
}

/// The part of the design section the records alone give ([`Prepared`]); None without
/// answered line cases.
pub(crate) fn prepare(
    table: &Table,
    keep: &[bool],
    pass: u32,
    units: &Units,
    names: &[u32],
) -> Option<Prepared> {
    let repositories = !units.by_file;
    let t0 = std::time::Instant::now();
    let step = |what: &str| tracing::debug!(secs = t0.elapsed().as_secs_f64(), "design: {what}");
    // Files numbered in (repository, file name) order, so that no figure depends on the
    // order of the records (files of one name in two repositories differ).
    let mut files: Vec<(usize, &str, usize)> = (table.places.iter().enumerate())
        .map(|(i, p)| {
            (
                units.repo_rank.get(p.repo as usize).copied().unwrap_or(0),
                table.files.get(p.file as usize).map_or("", String::as_str),
                i,
            )
        })
        .collect();
    files.sort_unstable();
    let mut file_of_place = vec![0u32; table.places.len()];
    let mut id = 0u32;
    for (k, f) in files.iter().enumerate() {
        if k > 0 && (files[k - 1].0, files[k - 1].1) != (f.0, f.1) {
            id += 1;
        }
        file_of_place[f.2] = id;
    }
    let mut repo_of_file = vec![0u32; id as usize + 1];
    for f in &files {
        repo_of_file[file_of_place[f.2] as usize] = f.0 as u32;
    }
    let n_a = table.assistants.len();
    // The answered line cases (weight above 0) of the pass, each once per assistant.
    let answered = || {
        (table.rows.iter().zip(keep))
            .filter(|(r, k)| **k && answered_line(r, pass) && r.weight() > 0)
            .map(|(r, _)| r)
    };
    // Every answered case by file (numbered in repository order) and line: one order
    // for every assistant and pair. Cases of one file and line are then put in order
    // by their values (`Walk`), so no sum depends on the order of the records.
    let mut file_of_case: Vec<u32> = vec![u32::MAX; table.cases];
    for r in answered() {
        file_of_case[r.case as usize] = file_of_place[r.place as usize];
    }
    let order = by_file_and_line(&file_of_case, repo_of_file.len(), &table.lines);
    drop(file_of_case);
    if order.is_empty() {
        return None;
    }
    step("cases");
    // Per (place in that order, assistant): the weight (w, 0 where none) and gain
    // (w·c_help; 0 for an empty), so that every walk reads them front to back.
    let mut place_of_case = vec![0u32; table.cases];
    for (i, x) in order.iter().enumerate() {
        place_of_case[x.2 as usize] = i as u32;
    }
    let mut answers: Vec<Answer> = vec![Answer::default(); order.len() * n_a];
    for r in answered() {
        let w = r.weight();
        let gain = if r.outcome == super::records::Outcome::Suggestion {
            w.saturating_sub(r.ld2())
        } else {
            0
        };
        answers[place_of_case[r.case as usize] as usize * n_a + r.assistant() as usize] =
            Answer { w, gain };
    }
    drop(place_of_case);
    step("sorted");
    let walk = Walk::new(&order, &answers, n_a, &repo_of_file);
    // The walk has its runs: the order's cases are not needed any more.
    drop(order);
    // Every assistant and pair in one pair of walks over the answers.
    let names_at: Vec<usize> = names.iter().map(|&a| a as usize).collect();
    let (one, two) = walk.all(&names_at);
    let assistants: Vec<(u32, Prepared1)> = (names.iter().zip(one))
        .filter_map(|(&a, p)| p.map(|p| (a, p)))
        .collect();
    let pairs: Vec<(u32, u32, Components)> = (names.iter().enumerate())
        .flat_map(|(i, &a)| names[i + 1..].iter().map(move |&b| (a, b)))
        .zip(two)
        .filter_map(|((a, b), c)| c.map(|c| (a, b, c)))
        .collect();
    step("assistants and pairs");
    Some(Prepared {
        repositories,
        assistants,
        pairs,
    })
}

/// Rounds a factor for a sentence: three decimals below 1.1 (a difference at the edge
/// of its interval), two below 2, one below 10, whole above.
fn times(x: f64) -> String {
    if x < 1.1 {
        format!("{x:.3}×")
    } else if x < 2.0 {
        format!("{x:.2}×")
    } else if x < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{:.0}×", x.round())
    }
}

fn pair_design(
    a: &str,
    b: &str,
    diff: f64,
    half: f64,
    c: &Components,
    repositories: bool,
) -> PairDesign {
    let resolved = half > 0.0 && diff.abs() > half || (half == 0.0 && diff != 0.0);
    let (lines_factor, repos_factor) = if resolved || diff == 0.0 || !diff.is_finite() {
        (None, None)
    } else {
        (
            c.rate_needed(half, diff, repositories),
            Some((half / diff).powi(2)),
        )
    };
    let sentence = if resolved {
        format!(
            "{a} − {b}: integral help differs by {:+.2} points, beyond its interval (±{:.2}): \
             the sample resolves it.",
            100.0 * diff,
            100.0 * half
        )
    } else if diff == 0.0 || !diff.is_finite() {
        format!("{a} − {b}: no integral-help difference to resolve.")
    } else {
        let lines = match lines_factor {
            Some(k) => format!("about {} the lines per file", times(k)),
            None => "no number of lines per file (the within-file correlation keeps the \
                     interval wider than the difference)"
                .to_string(),
        };
        format!(
            "{a} − {b}: integral help differs by {:+.2} points, within its interval (±{:.2}): \
             resolving it would take {lines}, or about {} the repositories.",
            100.0 * diff,
            100.0 * half,
            times(repos_factor.unwrap_or(f64::NAN))
        )
    };
    PairDesign {
        a: a.to_string(),
        b: b.to_string(),
        diff,
        half,
        resolved,
        deff: c.deff(repositories),
        lines_factor,
        repos_factor,
        sentence,
    }
}

/// Whether the sample is large enough for the differences seen, in one sentence, with
/// its caveats (one repository, files as units, no pair).
fn sentence(pairs: &[PairDesign], repos: usize, repositories: bool) -> String {
    let caveat = if repos == 1 {
        " With one repository, the figures are about its files only."
    } else if !repositories {
        " With so few repositories, files are the units: the figures are about these \
         repositories' files, and the repository-level correlation is not counted."
    } else {
        ""
    };
    if pairs.is_empty() {
        return format!("One assistant: no difference to resolve.{caveat}");
    }
    let open: Vec<&PairDesign> = pairs.iter().filter(|p| !p.resolved).collect();
    let head = if open.is_empty() {
        format!(
            "The sample is large enough: every integral-help difference ({}) lies beyond its interval.",
            pairs.len()
        )
    } else {
        let worst = open
            .iter()
            .map(|p| p.repos_factor.unwrap_or(f64::INFINITY))
            .fold(0.0, f64::max);
        let lines = open
            .iter()
            .map(|p| p.lines_factor.unwrap_or(f64::INFINITY))
            .fold(0.0, f64::max);
        let need = if lines.is_finite() {
            format!(
                "about {} the lines per file or {} the repositories",
                times(lines),
                times(worst)
            )
        } else if worst.is_finite() {
            format!(
                "about {} the repositories (more lines per file alone would not do)",
                times(worst)
            )
        } else {
            "more data than can be projected".to_string()
        };
        if pairs.len() == 1 {
            format!(
                "The sample is not large enough for the integral-help difference: \
                 resolving it would take {need}."
            )
        } else {
            format!(
                "The sample is not large enough for {} of {} integral-help differences: \
                 resolving them all would take {need}.",
                open.len(),
                pairs.len()
            )
        }
    };
    format!("{head}{caveat}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(v: &[(u32, u32, f64)]) -> Vec<Obs> {
        v.iter()
            .map(|&(repo, file, value)| Obs { repo, file, value })
            .collect()
    }

    /// 2 repositories × 2 files × 2 lines:
    /// repo 0: file 0 [1, 3], file 1 [5, 7]; repo 1: file 2 [0, 2], file 3 [0, 6].
    /// n = 8, mean = 24/8 = 3; z = [−2, 0 | 2, 4 | −3, −1 | −3, 3].
    /// Σz² = 4+0+4+16+9+1+9+9 = 52, s² = 52/7.
    /// Files: Z = −2, 6, −4, 0, ΣZ_f² = 4+36+16+0 = 56; same-file cross = 56 − 52 = 4,
    /// N_F = Σn_f² − n = 16 − 8 = 8: ρ_file = 4/(8·52/7) + 1/8 = 7/104 + 13/104 = 20/104.
    /// Repos: Z = 4, −4, ΣZ_r² = 32; cross in repo, other file = 32 − 56 = −24,
    /// N_R = Σn_r² − Σn_f² = 32 − 16 = 16: ρ_repo = −24/(16·52/7) + 1/8
    /// = −21/104 + 13/104 < 0 → 0.
    /// m_f = 16/8 = 2, m_r = 32/8 = 4. deff (repository design)
    /// = 1 + (20/104)(2 − 1) + 0 = 124/104; n_eff = 8·104/124 = 832/124.
    #[test]
    fn nested_components_by_hand() {
        let o = obs(&[
            (0, 0, 1.0),
            (0, 0, 3.0),
            (0, 1, 5.0),
            (0, 1, 7.0),
            (1, 2, 0.0),
            (1, 2, 2.0),
            (1, 3, 0.0),
            (1, 3, 6.0),
        ]);
        let c = Components::of(&o);
        assert_eq!(c.n, 8);
        assert!((c.s2 - 52.0 / 7.0).abs() < 1e-12);
        assert!((c.icc_file.unwrap() - 20.0 / 104.0).abs() < 1e-12);
        assert_eq!(c.icc_repo, Some(0.0));
        assert_eq!((c.mf, c.mr), (2.0, 4.0));
        let deff = c.deff(true).unwrap();
        assert!((deff - 124.0 / 104.0).abs() < 1e-12);
        let d = metric_design(&Components::of(&o), Some(0.3), true);
        assert!((d.n_eff.unwrap() - 832.0 / 124.0).abs() < 1e-12);
        // At 2×: deff(2) = 1 + 2·(20/104)(2 − 1) = 144/104; width ratio
        // √(144/(2·124)) = √(144/248).
        let r2 = c.width_ratio(2.0, true).unwrap();
        assert!((r2 - (144.0f64 / 248.0).sqrt()).abs() < 1e-12);
        assert!((d.projected[1].width.unwrap() - 0.3 * r2).abs() < 1e-12);
        // At ½×: deff = 1 + ½·20/104 = 114/104, ratio √(114/(0.5·124)) = √(228/124).
        let rh = c.width_ratio(0.5, true).unwrap();
        assert!((rh - (228.0f64 / 124.0).sqrt()).abs() < 1e-12);
    }

    /// A design where repositories matter: repo 0 all 4, repo 1 all 0, two files of
    /// two lines each. mean 2, z = ±2 everywhere, s² = 32/7; same file cross: each file
    /// Z = ±4, ΣZ_f² = 64, cross = 64 − 32 = 32, N_F = 8: ρ_file = 32/(8·32/7) + 1/8
    /// = 7/8 + 1/8 = 1. Repo cross (other file) = ΣZ_r² − ΣZ_f² = 128 − 64 = 64, N_R =
    /// 16: ρ_repo = 64/(16·32/7) + 1/8 = 1. deff = 1 + 1·(2 − 1) + 1·(4 − 2) = 4 (the
    /// repository mean of 4 cases is the one thing measured), n_eff = 2; with files as
    /// units, deff = 2. At 4× the width barely falls: B = 3, deff(4) = 1 + 4·3 = 13,
    /// ratio √(13/(4·4)) (what falls is only the noise of how many lines of each
    /// repository the sample drew); no number of lines resolves a difference half the
    /// half width: (1/k + 3)/4 ≥ 3/4 > (1/2)².
    #[test]
    fn repositories_that_differ_are_the_whole_variance() {
        let o = obs(&[
            (0, 0, 4.0),
            (0, 0, 4.0),
            (0, 1, 4.0),
            (0, 1, 4.0),
            (1, 2, 0.0),
            (1, 2, 0.0),
            (1, 3, 0.0),
            (1, 3, 0.0),
        ]);
        let c = Components::of(&o);
        assert_eq!((c.icc_file, c.icc_repo), (Some(1.0), Some(1.0)));
        assert_eq!(c.deff(true), Some(4.0));
        assert_eq!(c.deff(false), Some(2.0));
        assert_eq!(c.width_ratio(4.0, true), Some((13.0f64 / 16.0).sqrt()));
        assert_eq!(c.rate_needed(0.5, 0.25, true), None);
        let p = pair_design("a", "b", 0.25, 0.5, &c, true);
        assert!(!p.resolved);
        assert_eq!(p.lines_factor, None);
        // (0.5/0.25)² = 4 times the repositories.
        assert_eq!(p.repos_factor, Some(4.0));
        assert!(p.sentence.contains("no number of lines"), "{}", p.sentence);
    }

    /// Independent lines (ρ = 0): the width falls as 1/√k, and a difference half the
    /// half width needs 4× the lines. Values 0, 2 in each of four files of two repos:
    /// mean 1, z = ±1, s² = 8/7; each file Z = 0: cross = 0 − 8 = −8, N_F = 8,
    /// ρ_file = −8/(8·8/7) + 1/8 = −7/8 + 1/8 < 0 → 0; repo Z = 0 too, cross = 0,
    /// ρ_repo = 0 + 1/8 = 1/8 (a pair of unrelated cases, after the centring); with
    /// files as units it does not count: deff = 1.
    #[test]
    fn independent_lines_fall_as_one_over_root_k() {
        let o = obs(&[
            (0, 0, 0.0),
            (0, 0, 2.0),
            (0, 1, 0.0),
            (0, 1, 2.0),
            (1, 2, 0.0),
            (1, 2, 2.0),
            (1, 3, 0.0),
            (1, 3, 2.0),
        ]);
        let c = Components::of(&o);
        assert_eq!(c.icc_file, Some(0.0));
        assert!((c.icc_repo.unwrap() - 0.125).abs() < 1e-12);
        assert_eq!(c.deff(false), Some(1.0));
        assert_eq!(c.width_ratio(4.0, false), Some(0.5));
        // (1/k + B)/(1 + B) = (1/2)² with B = 0: k = 4.
        assert_eq!(c.rate_needed(0.5, 0.25, false), Some(4.0));
        assert_eq!(c.rate_needed(0.5, 0.75, false), Some(1.0));
    }

    /// Degenerate designs: one file (no pair across files, no repository pair), one
    /// case per file, no spread: n/a, never NaN.
    #[test]
    fn degenerate_designs_give_none() {
        // One file of three lines 1, 2, 3: mean 2, z = −1, 0, 1, s² = 1; file Z = 0,
        // cross = −2, N_F = 6: ρ_file = −2/6 + 1/3 = 0. No repository pairs.
        let c = Components::of(&obs(&[(0, 0, 1.0), (0, 0, 2.0), (0, 0, 3.0)]));
        assert!(c.icc_file.unwrap().abs() < 1e-12);
        assert_eq!(c.icc_repo, None);
        assert!((c.deff(false).unwrap() - 1.0).abs() < 1e-12);
        // One case per file, one repository each: no pair at all.
        let c = Components::of(&obs(&[(0, 0, 1.0), (1, 1, 2.0)]));
        assert_eq!((c.icc_file, c.icc_repo), (None, None));
        assert_eq!(c.deff(true), Some(1.0));
        // No spread.
        let o = obs(&[(0, 0, 1.0), (0, 0, 1.0), (1, 1, 1.0)]);
        let c = Components::of(&o);
        assert_eq!((c.icc_file, c.icc_repo, c.deff(true)), (None, None, None));
        let d = metric_design(&Components::of(&o), Some(0.0), true);
        assert_eq!((d.deff, d.n_eff), (None, None));
        assert!(d.projected.iter().all(|p| p.width.is_none()));
        let json = serde_json::to_string(&d).unwrap();
        assert!(!json.contains("NaN") && json.contains("null"), "{json}");
        // No case.
        let c = Components::of(&[]);
        assert_eq!(c.deff(true), None);
        let lags = autocorrelation(&[], &[], &c);
        assert!(lags.iter().all(|l| l.pairs == 0 && l.r.is_none()));
        // A single case.
        assert_eq!(Components::of(&obs(&[(0, 0, 1.0)])).deff(true), None);
    }

    #[test]
    fn the_sentence_says_what_is_resolved() {
        let c = Components::of(&obs(&[(0, 0, 0.0), (0, 0, 2.0), (1, 1, 0.0), (1, 1, 2.0)]));
        let resolved = pair_design("a", "b", 0.2, 0.1, &c, false);
        assert!(resolved.resolved && resolved.lines_factor.is_none());
        let s = sentence(std::slice::from_ref(&resolved), 2, false);
        assert!(s.starts_with("The sample is large enough"), "{s}");
        assert!(s.contains("files are the units"), "{s}");
        // ρ = 0 (see above: z = ±1 in two files, each summing to 0): B = 0, and a
        // difference half the half width needs (1/2)⁻² = 4× the lines, 4× the repositories.
        let open = pair_design("a", "c", 0.25, 0.5, &c, false);
        assert_eq!(
            (open.lines_factor, open.repos_factor),
            (Some(4.0), Some(4.0))
        );
        let s = sentence(&[resolved, open.clone()], 1, false);
        assert!(s.contains("1 of 2"), "{s}");
        assert!(
            s.contains("4.0× the lines per file or 4.0× the repositories"),
            "{s}"
        );
        assert!(s.contains("one repository"), "{s}");
        let s = sentence(&[open], 12, true);
        assert!(
            s.starts_with("The sample is not large enough for the integral-help difference"),
            "{s}"
        );
        assert_eq!(
            sentence(&[], 12, true),
            "One assistant: no difference to resolve."
        );
    }
}
