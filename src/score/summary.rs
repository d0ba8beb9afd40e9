//! The score summary of a records table (methodology §2–6): per assistant the help
//! metrics with bootstrap intervals, the H(S|t) curve, outcome rates, latency,
//! breakdowns, ranking metrics for completion lists; paired differences with p-values;
//! repeat-skip. `summarize` composes the parts: [`super::accumulate`] (one record per
//! case, units, sums), [`super::sums`], [`super::curve`], [`super::pairwise`],
//! [`super::ranking`], [`super::repeat`].
//!
//! It also writes the `estimand` sentence (with files as units, what the intervals and
//! p-values are about) and counts failures per assistant.

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::accumulate::{Acc, AccCtx, Kept, Slots, Units, accumulate_table, keep_one};
use super::bootstrap::{Estimate, percentile_unsorted};
use super::curve::{BandPoint, CurvePoint, UnitCurves, curve, curve_bands};
use super::curve_pairs::{CurvePair, curve_pairs};
use super::options::Options;
use super::pairwise::{PairSums, pair_sums, pairwise};
use super::records::Table;
use super::repeat::{nondeterminism, repeat_skip};
use super::sums::{COLUMNS, Draws, PAIR_COLUMNS};

// The one public path of these two: their files are private to `score`.
pub use super::accumulate::MIN_UNITS;
pub use super::rank_boot::RankCi;

use super::blocks::BlockScore;
use super::checks::CheckScore;
use super::pairwise::Pairwise;
use super::ranking::{RankCurve, RankStats};
use super::repeat::{Nondeterminism, RepeatSkip};
use super::sums::{Breakdown, Rates, Sums};

#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssistantScore {
    /// Records of this assistant in the pass, whatever their outcome.
    pub records: u64,
    /// Answered cases (suggestion or empty).
    pub cases: u64,
    /// Empties over answered cases.
    pub empty_rate: f64,
    /// Errors and timeouts over all records.
    pub error_rate: f64,
    pub timeout_rate: f64,
    pub errors: u64,
    pub timeouts: u64,
    /// The most common error message (ties: the first by text), or "timeout" when
    /// every failure timed out.
    pub top_error: Option<String>,
    /// Records that are not cases, by reason (a line no longer than the typed prefix).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, u64>,
    /// Identical requests (same `request_hash`, over every pass) answered differently.
    pub nondeterminism: Nondeterminism,
    pub integral_help: Estimate,
    pub exact_share: Estimate,
    pub help_at_0: Estimate,
    pub integral_help_nonempty: Estimate,
    /// Point values with plain Levenshtein (substitution costs 1), beside the study's ld2.
    pub help_at_0_ld1: f64,
    pub integral_help_ld1: f64,
    pub curve: Vec<CurvePoint>,
    pub curve_nonempty: Vec<CurvePoint>,
    /// Bootstrap bands of the curves (with `curve_bands`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curve_band: Vec<BandPoint>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curve_nonempty_band: Vec<BandPoint>,
    pub latency_ms: Option<Latency>,
    pub by_language: BTreeMap<String, Breakdown>,
    pub by_repo: BTreeMap<String, Breakdown>,
    /// Completion-list records: by typed prefix length ("0".."3", "4+") and "all";
    /// empty when the assistant has none.
    pub ranking: BTreeMap<String, RankStats>,
    /// Completion-list records by token kind (`member`, `call`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ranking_by_kind: BTreeMap<String, RankStats>,
    /// Bootstrap intervals of top-1, top-5 and MRR, keyed as `ranking`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ranking_ci: BTreeMap<String, RankCi>,
    /// The same, keyed as `ranking_by_kind`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ranking_by_kind_ci: BTreeMap<String, RankCi>,
    /// The whole lists' figures (found@k's steps, the list's length against the rank),
    /// keyed as `ranking`; groups without a found item or a known length left out.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ranking_curves: BTreeMap<String, RankCurve>,
}

/// The reason a record of a line no longer than the typed prefix is not a case (the
/// replay's own wording).
pub const SKIP_TYPED: &str = "line not longer than the typed prefix";

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub records: u64,
    pub skipped_lines: u64,
    /// Records repeating a (case, assistant, pass) already seen; one is kept.
    pub duplicates: u64,
    pub repositories: u64,
    /// The bootstrap's resampling unit: "repository" with at least [`MIN_UNITS`]
    /// repositories, otherwise "file".
    pub unit: &'static str,
    /// How many units there are.
    pub units: u64,
    /// With fewer than [`MIN_UNITS`] repositories (files resampled), what the intervals
    /// and p-values are about, in one sentence (see [`estimand`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimand: Option<String>,
    pub pass: u32,
    pub bootstrap: usize,
    pub seed: u64,
    pub assistants: BTreeMap<String, AssistantScore>,
    pub pairwise: Vec<Pairwise>,
    /// Each pair's difference of the H(S|t) curves at the bands' thresholds with its
    /// interval and p-value per threshold (with `curve_bands`: `typist score --bands`,
    /// the report).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curve_pairwise: Vec<CurvePair>,
    /// Paired differences of completion-list rankings (`top1`, `top5`, `mrr`, `recall`,
    /// `mean_position`) over the
    /// sessions both assistants answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranking_pairwise: Vec<Pairwise>,
    pub repeat_skip: BTreeMap<String, RepeatSkip>,
    /// Block cases (methodology §9), per assistant; absent without block records.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub blocks: BTreeMap<String, BlockScore>,
    /// Paired differences of `block_integral_help`, `block_exact_share` and
    /// `lines_accepted` over the block cases both assistants answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub block_pairwise: Vec<Pairwise>,
    /// What accepted suggestions do to the file (methodology §11), per assistant; absent
    /// without a checks file beside the records.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, CheckScore>,
    /// Paired differences of `syntax_valid` and `no_new_error`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks_pairwise: Vec<Pairwise>,
    /// Keystrokes saved (methodology §10), per assistant; absent without golf records.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub golf: BTreeMap<String, super::golf::GolfScore>,
    /// Paired differences of `keystrokes_saved` and `one_accept_share`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub golf_pairwise: Vec<Pairwise>,
    /// Does the accepted code still work (methodology §12), per assistant; absent
    /// without a tests sidecar beside the records.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tests: BTreeMap<String, super::tests_score::TestsScore>,
    /// Paired differences of `tests_pass`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tests_pairwise: Vec<Pairwise>,
    /// Per repository, its cases and how many its tests notice.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tests_noticed: BTreeMap<String, super::tests_score::Noticed>,
    /// How many lines are enough: the sampling design read from the records
    /// (docs/metrics.md#sampling-design); absent without answered line cases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub design: Option<super::design::Design>,
}

pub fn summarize(table: &Table, opts: &Options) -> Summary {
    let t0 = std::time::Instant::now();
    let step = |what: &str| tracing::debug!(secs = t0.elapsed().as_secs_f64(), "summary: {what}");
    let (kept, slots) = keep_one(table);
    let units = Units::of(table);
    let mut names: Vec<u32> = (0..table.assistants.len() as u32).collect();
    names.sort_by(|a, b| table.assistants[*a as usize].cmp(&table.assistants[*b as usize]));
    let ctx = AccCtx {
        pass: opts.pass,
        places: &table.places,
        bands: opts.curve_bands,
        assistants: table.assistants.len(),
        languages: table.languages.len(),
        units: &units,
    };
    step("kept one record per case, units");
    // The design section's record-only part (the largest single part of the summary)
    // and the nondeterminism (a scan of the requests) need none of the sums: they are
    // tasks of the pool beside them, so that the cores stay busy.
    let (early, (design, nondet)) = rayon::join(
        || early(table, opts, (&kept, slots), &units, &names, ctx, &step),
        || {
            // The design section first, the longer of the two.
            rayon::join(
                || {
                    let d = super::design::prepare(table, &kept.keep, opts.pass, &units, &names);
                    step("design's records");
                    d
                },
                || {
                    let n = nondeterminism(table, &kept.keep);
                    step("nondeterminism");
                    n
                },
            )
        },
    );
    step("joined");
    summarize_with(
        table, opts, &kept, &units, &names, early, nondet, design, step,
    )
}

/// The summary's parts before the nondeterminism and the design section are needed.
struct Early {
    accs: Vec<Acc>,
    ps: PairSums,
    draws: Draws,
    bands: BTreeMap<u32, (Vec<BandPoint>, Vec<BandPoint>)>,
    curve_pairwise: Vec<CurvePair>,
    blocks: (BTreeMap<String, BlockScore>, Vec<Pairwise>),
    checks: (BTreeMap<String, CheckScore>, Vec<Pairwise>),
    golf: (BTreeMap<String, super::golf::GolfScore>, Vec<Pairwise>),
    tests: (
        BTreeMap<String, super::tests_score::TestsScore>,
        Vec<Pairwise>,
        BTreeMap<String, super::tests_score::Noticed>,
    ),
    ranking: (super::rank_boot::RankCis, Vec<Pairwise>),
}

fn early(
    table: &Table,
    opts: &Options,
    (kept, slots): (&Kept, Slots),
    units: &Units,
    names: &[u32],
    ctx: AccCtx,
    step: &impl Fn(&str),
) -> Early {
    let counts = accumulate_table(&ctx, table, &kept.keep);
    step("accumulated");
    // The cases' sums with the pairs' (each case's terms computed once); the slots are
    // not needed after.
    let (ps, accs) = pair_sums(&ctx, table, (kept, slots), names, counts);
    step("pair sums");
    // The bootstrap, and beside it the parts that need none of its draws (each a scan of
    // the table, or of its block, golf, checks and tests records): the cores stay busy
    // while the bootstrap's last part runs.
    let (draws, (bands, curve_pairwise, blocks, checks, golf, tests, ranking)) = rayon::join(
        || draws(&accs, names, &ps, units.count, !units.by_file, opts),
        || {
            let curve_pairwise = if opts.curve_bands {
                curve_pairs(table, &kept.keep, names, units, opts)
            } else {
                Vec::new()
            };
            (
                bands(&accs, names, units, opts),
                curve_pairwise,
                super::blocks::block_scores(table, &kept.keep, units, names, opts),
                super::checks::check_scores(table, units, names, opts),
                super::golf::golf_scores(table, &kept.keep, units, names, opts),
                super::tests_score::tests_scores(table, units, names, opts),
                // Without an answered completion record in the pass (the rankings
                // count each), there is nothing to resample: no scan of the table.
                if accs.iter().any(|a| !a.ranking.is_empty()) {
                    super::rank_boot::rank_boot(table, &kept.keep, units, names, opts)
                } else {
                    Default::default()
                },
            )
        },
    );
    step("bootstrap and ranking");
    Early {
        accs,
        ps,
        draws,
        bands,
        curve_pairwise,
        blocks,
        checks,
        golf,
        tests,
        ranking,
    }
}

/// The summary from its early parts, the nondeterminism and the design section's
/// record-only part.
#[allow(clippy::too_many_arguments)]
fn summarize_with(
    table: &Table,
    opts: &Options,
    kept: &Kept,
    units: &Units,
    names: &[u32],
    early: Early,
    nondet: FxHashMap<u32, Nondeterminism>,
    design: Option<super::design::Prepared>,
    step: impl Fn(&str),
) -> Summary {
    let Early {
        mut accs,
        ps,
        draws,
        bands,
        curve_pairwise,
        blocks: (blocks, block_pairwise),
        checks: (checks, checks_pairwise),
        golf: (golf, golf_pairwise),
        tests: (tests, tests_pairwise, tests_noticed),
        ranking: (mut rank_cis, ranking_pairwise),
    } = early;
    // Each assistant's score a task of the pool (its latencies' percentiles are a
    // selection over its records), in name order.
    let mut rank_of = vec![0usize; accs.len()];
    for (i, &a) in names.iter().enumerate() {
        rank_of[a as usize] = i;
    }
    let mut scores: Vec<Option<AssistantScore>> = (accs.par_iter_mut().enumerate())
        .map(|(a, acc)| {
            Some(assistant_score(
                table,
                units,
                acc,
                &draws,
                rank_of[a] * COLUMNS,
            ))
        })
        .collect();
    let mut assistants = BTreeMap::new();
    for &a in names {
        let acc = &accs[a as usize];
        let Some(mut score) = scores[a as usize].take() else {
            continue;
        };
        if let Some((ci, kind_ci)) = rank_cis.remove(&a) {
            score.ranking_ci = ci;
            score.ranking_by_kind_ci = kind_ci;
        }
        score.nondeterminism = nondet.get(&a).cloned().unwrap_or_default();
        if let Some((band, band_nonempty)) = bands.get(&a) {
            score.curve_band = band.clone();
            score.curve_nonempty_band = band_nonempty.clone();
        }
        if acc.records > 0 || acc.not_cases > 0 {
            assistants.insert(table.assistants[a as usize].clone(), score);
        }
    }
    // The sums' tables (an assistant's latencies are 8 bytes a record) are freed by a
    // task of the pool while the rest is written.
    rayon::spawn(move || drop(accs));
    let pairwise = pairwise(table, &ps, &draws, names.len() * COLUMNS, units.count);
    let scores: BTreeMap<String, (Estimate, Estimate)> = assistants
        .iter()
        .map(|(n, s)| (n.clone(), (s.integral_help, s.exact_share)))
        .collect();
    let design = design.map(|d| super::design::finish(d, table, &scores, &pairwise, draws.1.q));
    step("design");
    Summary {
        records: table.rows.len() as u64,
        skipped_lines: table.skipped,
        duplicates: kept.duplicates,
        repositories: table.repos.len() as u64,
        unit: if units.by_file { "file" } else { "repository" },
        units: units.count as u64,
        estimand: estimand(units.by_file, table.repos.len()),
        pass: opts.pass,
        bootstrap: opts.bootstrap,
        seed: opts.seed,
        assistants,
        pairwise,
        curve_pairwise,
        ranking_pairwise,
        repeat_skip: repeat_skip(table, &kept.sorted, names),
        blocks,
        block_pairwise,
        checks,
        checks_pairwise,
        golf,
        golf_pairwise,
        tests,
        tests_pairwise,
        tests_noticed,
        design,
    }
}

/// Per assistant, the bands of H(t) and of H(t) over non-empty suggestions (none
/// unless asked for, or without units).
fn bands(
    accs: &[Acc],
    names: &[u32],
    units: &Units,
    opts: &Options,
) -> BTreeMap<u32, (Vec<BandPoint>, Vec<BandPoint>)> {
    if !opts.curve_bands || units.count == 0 {
        return BTreeMap::new();
    }
    let per_assistant = |a: u32| {
        let acc = &accs[a as usize];
        UnitCurves {
            buckets: &acc.unit_buckets,
            sums: &acc.per_unit,
        }
    };
    curve_bands(per_assistant, names, units.count, opts)
}

/// With files resampled (fewer than [`MIN_UNITS`] repositories), what an interval or a
/// p-value is about: the files of these repositories, not code in general (files of
/// one repository are alike, so the interval is narrow for the wider question:
/// `typist bench coverage`). Shown beside every interval: the table, the JSON, the
/// report and the markdown summary.
pub fn estimand(by_file: bool, repositories: usize) -> Option<String> {
    by_file.then(|| {
        format!(
            "Intervals and p-values are about the files of {}; they do not carry over \
             to other code (that needs at least {MIN_UNITS} repositories).",
            if repositories == 1 {
                "this repository".to_string()
            } else {
                format!("these {repositories} repositories")
            }
        )
    })
}

/// The bootstrap's resamples of one matrix: per unit, [`COLUMNS`] columns per assistant
/// (in name order), then `2·PAIR_COLUMNS` per pair (a's side, then b's).
fn draws(
    accs: &[Acc],
    names: &[u32],
    ps: &PairSums,
    n_units: usize,
    repositories: bool,
    opts: &Options,
) -> Draws {
    let cols = names.len() * COLUMNS + ps.pairs.len() * 2 * PAIR_COLUMNS;
    let mut matrix = vec![0.0f64; n_units * cols];
    for r in 0..n_units {
        let row = &mut matrix[r * cols..(r + 1) * cols];
        for (i, &a) in names.iter().enumerate() {
            row[i * COLUMNS..(i + 1) * COLUMNS]
                .copy_from_slice(&accs[a as usize].per_unit[r].columns());
        }
        let base = names.len() * COLUMNS;
        for (p, sums) in ps.sums.iter().enumerate() {
            let o = base + p * 2 * PAIR_COLUMNS;
            row[o..o + PAIR_COLUMNS].copy_from_slice(&sums[r].0.columns());
            row[o + PAIR_COLUMNS..o + 2 * PAIR_COLUMNS].copy_from_slice(&sums[r].1.columns());
        }
    }
    Draws::of(
        &matrix,
        n_units,
        cols,
        opts.bootstrap,
        opts.seed,
        repositories,
    )
}

/// One assistant's score from its sums; its bootstrap columns start at `offset`. The
/// nondeterminism and the curve bands are the caller's.
fn assistant_score(
    table: &Table,
    units: &Units,
    acc: &mut Acc,
    draws: &Draws,
    offset: usize,
) -> AssistantScore {
    let t = acc.total();
    let est = |m: usize, v: f64| draws.estimate(offset, m, v);
    let rates = Rates::of(acc.records, t.cases, t.empties, acc.errors, acc.timeouts);
    AssistantScore {
        records: acc.records,
        cases: t.cases,
        empty_rate: rates.empty_rate,
        error_rate: rates.error_rate,
        timeout_rate: rates.timeout_rate,
        errors: acc.errors,
        timeouts: acc.timeouts,
        top_error: top_error(table, acc),
        skipped: if acc.not_cases > 0 {
            BTreeMap::from([(SKIP_TYPED.to_string(), acc.not_cases)])
        } else {
            BTreeMap::new()
        },
        nondeterminism: Nondeterminism::default(),
        integral_help: est(0, t.integral_help()),
        exact_share: est(1, t.exact_share()),
        help_at_0: est(2, t.help_at_0()),
        integral_help_nonempty: est(3, t.integral_help_nonempty()),
        help_at_0_ld1: t.help_at_0_ld1(),
        integral_help_ld1: t.integral_help_ld1(),
        curve: curve(&acc.buckets, t.len),
        curve_nonempty: curve(&acc.buckets, t.len_nonempty),
        curve_band: Vec::new(),
        curve_nonempty_band: Vec::new(),
        latency_ms: (!acc.latencies.is_empty()).then(|| Latency {
            p50: percentile_unsorted(&mut acc.latencies, 0.5),
            p95: percentile_unsorted(&mut acc.latencies, 0.95),
        }),
        by_language: breakdowns(&acc.per_lang, |l| table.languages[l].clone()),
        by_repo: breakdowns(acc.per_repo(), |r| {
            table.repos[units.repo_order[r] as usize].clone()
        }),
        ranking: acc
            .ranking
            .iter()
            .map(|(k, r)| (k.clone(), r.stats()))
            .collect(),
        ranking_by_kind: acc
            .ranking_kind
            .iter()
            .map(|(k, r)| (k.clone(), r.stats()))
            .collect(),
        ranking_ci: BTreeMap::new(),
        ranking_by_kind_ci: BTreeMap::new(),
        ranking_curves: (acc.ranking.iter())
            .map(|(k, r)| (k.clone(), r.curve()))
            .filter(|(_, c)| !c.is_empty())
            .collect(),
    }
}

/// The most common error message (ties: the first by text), or "timeout" when every
/// failure timed out.
fn top_error(table: &Table, acc: &Acc) -> Option<String> {
    acc.error_msgs
        .iter()
        .map(|(&m, &n)| (std::cmp::Reverse(n), &table.errors[m as usize]))
        .min()
        .map(|(_, m)| m.clone())
        .or_else(|| (acc.timeouts > 0).then(|| "timeout".to_string()))
}

/// The breakdowns of the parts with cases, by name.
fn breakdowns(parts: &[Sums], name: impl Fn(usize) -> String) -> BTreeMap<String, Breakdown> {
    parts
        .iter()
        .enumerate()
        .filter(|(_, s)| s.cases > 0)
        .map(|(i, s)| (name(i), Breakdown::from(s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of `repos` repositories, three files each, lines 1 to 120 sampled about
    /// one in three, three assistants, two passes; suggestions, empties and errors, the
    /// predictions cut, extended or edited, and some requests answered twice differently.
    fn records(repos: u32) -> String {
        let mut next = crate::score::distance::tests::xorshift(5);
        let mut out = String::new();
        for r in 0..repos {
            for f in 0..3 {
                for line in 1..=120u32 {
                    if !next().is_multiple_of(3) {
                        continue;
                    }
                    let expected = format!("    value_{line} = compute(x{f}, y{r}) + {line}");
                    for a in 0..3 {
                        for pass in 1..=2 {
                            let request = next();
                            let (outcome, predicted) = match next() % 10 {
                                0 => ("error", None),
                                1 => ("empty", Some(String::new())),
                                2..=4 => ("suggestion", Some(expected.clone())),
                                5 | 6 => (
                                    "suggestion",
                                    Some(expected[..expected.len() / 2].to_string()),
                                ),
                                7 => ("suggestion", Some(format!("{expected} # more"))),
                                _ => ("suggestion", Some(expected.replace("compute", "comp"))),
                            };
                            let predicted = predicted
                                .map(|p| format!(",\"predicted\":{}", serde_json::json!(p)))
                                .unwrap_or_default();
                            out.push_str(&format!(
                                "{{\"case\":\"repo{r}/f{f}.py:{line}\",\"repo\":\"repo{r}\",\
                                 \"file\":\"f{f}.py\",\"line\":{line},\"language\":\"python\",\
                                 \"assistant\":\"a{a}\",\"pass\":{pass},\"outcome\":\"{outcome}\",\
                                 \"expected\":{}{predicted},\"latency_ms\":{},\
                                 \"request_hash\":\"{:016x}\",\"response_hash\":\"{:016x}\"}}\n",
                                serde_json::json!(expected),
                                next() % 2000,
                                request % 50,
                                next() % 3,
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    /// Every part's split is fixed, or changes only which resamples are summed side by
    /// side: the summary is the same bytes on a pool of any size.
    #[test]
    fn the_summary_is_the_same_on_pools_of_one_two_and_three_threads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, records(30)).unwrap();
        let table = crate::score::read_records(&[path], false, 0).unwrap();
        let opts = Options {
            bootstrap: 200,
            ..Default::default()
        };
        let json = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| serde_json::to_string(&summarize(&table, &opts)).unwrap())
        };
        let one = json(1);
        assert!(one.contains("\"design\""), "the design section is computed");
        assert_eq!(json(2), one);
        assert_eq!(json(3), one);
    }
}
