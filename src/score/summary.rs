//! The score summary of a records table (methodology §2–6): per assistant the help
//! metrics with bootstrap intervals, the H(S|t) curve, outcome rates, latency,
//! breakdowns, ranking metrics for completion lists; paired differences with p-values;
//! repeat-skip. Sums are kept in integers or fixed point so the result does not depend
//! on the order of the records.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::bootstrap::{Estimate, p_value, percentile_unsorted, resample_sums};
use super::records::{Outcome, Row, Table};

#[derive(Debug, Clone)]
pub struct Options {
    pub bootstrap: usize,
    pub seed: u64,
    pub pass: u32,
    /// Also bootstrap the H(S|t) curves (percentile bands every 0.05); off by default,
    /// as it costs more than every other interval together.
    pub curve_bands: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bootstrap: 1000,
            seed: 0,
            pass: 1,
            curve_bands: false,
        }
    }
}

/// Thresholds of the curve bands: t = k·BAND_STEP/100.
pub const BAND_STEP: usize = 5;

/// A 95% percentile band of H(S|t) at one threshold.
#[derive(Debug, Clone, Serialize)]
pub struct BandPoint {
    pub t: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Fixed-point scale for sums of non-integer terms: integer addition is associative,
/// so the total is the same whatever the order of the records.
const FIX: f64 = (1u64 << 32) as f64;

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
    let g = len.saturating_sub(ld) as f64;
    let l = len as f64;
    // `as` saturates: a term can never wrap.
    (g * g * g / (l * l) * FIX).round() as i64
}

/// One answered case's contribution to [`Sums`], computed once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terms {
    empty: bool,
    len: u32,
    gain: u32,
    gain_ld1: u32,
    /// Fixed point; a line would need 2^21 characters before this saturates.
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
            gain: w.saturating_sub(r.ld2),
            gain_ld1: w.saturating_sub(r.ld1),
            cube: cube_fixed(w, r.ld2),
            cube_ld1: cube_fixed(w, r.ld1),
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
    fn ratio(n: f64, d: u64) -> f64 {
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
    pub fn empty_rate(&self) -> f64 {
        Rates::of(self.cases, self.cases, self.empties, 0, 0).empty_rate
    }
    /// The bootstrap columns: len, help, exact, cube, len_nonempty, cube_nonempty.
    fn columns(&self) -> [f64; 6] {
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

#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    pub t: f64,
    pub help: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
}

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

#[derive(Debug, Clone, Default, Serialize)]
pub struct RankStats {
    pub sessions: u64,
    pub top1: f64,
    pub top5: f64,
    pub recall: f64,
    /// Mean 1-based position of the expected item where it was found.
    pub mean_position: f64,
    pub mrr: f64,
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
}

/// Determinism evidence (methodology §8): of the requests asked more than once with
/// an answer each time, how many got different answers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Nondeterminism {
    /// Distinct requests answered at least twice.
    pub repeated: u64,
    /// Of those, answered differently at least once.
    pub differing: u64,
    /// `differing / repeated`; null when no request was repeated.
    pub share: Option<f64>,
}

/// The reason a record of a line no longer than the typed prefix is not a case (the
/// replay's own wording).
pub const SKIP_TYPED: &str = "line not longer than the typed prefix";

/// Fewer units than this and a p-value says little (four repositories allow at most
/// 35 distinct resamples): the bootstrap resamples files, and pairs are flagged.
pub const MIN_UNITS: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Pairwise {
    pub a: String,
    pub b: String,
    pub metric: String,
    /// Cases answered by both.
    pub cases: u64,
    /// `metric(a) − metric(b)` on the shared cases.
    pub diff: f64,
    pub sd: f64,
    /// Null when the bootstrap spread is zero (one unit, or identical figures in every
    /// resample): no p-value can be given.
    pub p_value: Option<f64>,
    /// Fewer than [`MIN_UNITS`] resampling units: read the p-value with care.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub few_units: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassStat {
    pub pass: u32,
    pub records: u64,
    pub answered: u64,
    pub empty_rate: f64,
    pub errors: u64,
    pub timeouts: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RepeatSkip {
    pub passes: Vec<PassStat>,
    /// Cases answered in both pass 1 and pass 2.
    pub paired_cases: u64,
    /// Share of pass-1 empties that are empty again in pass 2.
    pub empty_again: f64,
    /// Share of pass-1 suggestions that became empty in pass 2.
    pub became_empty: f64,
}

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
    pub pass: u32,
    pub bootstrap: usize,
    pub seed: u64,
    pub assistants: BTreeMap<String, AssistantScore>,
    pub pairwise: Vec<Pairwise>,
    pub repeat_skip: BTreeMap<String, RepeatSkip>,
}

/// 101 thresholds t = k/100.
pub const CURVE_STEPS: usize = 100;

fn curve(buckets: &[u64; CURVE_STEPS + 1], den: u64) -> Vec<CurvePoint> {
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
fn bucket(len: u32, ld: u32) -> usize {
    let gain = len.saturating_sub(ld) as u64;
    ((gain * CURVE_STEPS as u64) / len.max(1) as u64) as usize
}

pub fn summarize(table: &Table, opts: &Options) -> Summary {
    // One record per (assistant, pass, case), found in one pass over the table through a
    // slot per triple (no sort); among duplicates the one kept is the smallest by content,
    // so it does not depend on the input order.
    let tie = |r: &Row| (r.outcome, r.ld2, r.ld1, r.rank, r.latency_ms.to_bits());
    let pass_values: Vec<u32> = {
        let set: std::collections::BTreeSet<u32> = table.rows.iter().map(|r| r.pass).collect();
        set.into_iter().collect()
    };
    let n_cases = table.cases.len().max(1);
    let n_passes = pass_values.len().max(1);
    let pass_index = |p: u32| pass_values.binary_search(&p).unwrap_or(0);
    let slot = |r: &Row| {
        (r.assistant as usize * n_passes + pass_index(r.pass)) * n_cases + r.case as usize
    };
    let mut slots = vec![u32::MAX; table.assistants.len().max(1) * n_passes * n_cases];
    let mut duplicates = 0u64;
    for (i, r) in table.rows.iter().enumerate() {
        let s = &mut slots[slot(r)];
        if *s == u32::MAX {
            *s = i as u32;
        } else {
            duplicates += 1;
            let held = &table.rows[*s as usize];
            if (tie(r), i as u32) < (tie(held), *s) {
                *s = i as u32;
            }
        }
    }
    // Rows in (assistant, pass, case) order: only repeat-skip needs them, and only when
    // there are several passes.
    let rows: Vec<&Row> = if n_passes > 1 {
        slots
            .iter()
            .filter(|&&s| s != u32::MAX)
            .map(|&s| &table.rows[s as usize])
            .collect()
    } else {
        Vec::new()
    };
    // Accumulation walks the table in storage order (sequential memory); sums are
    // integers, so the order does not change them.
    let mut keep = vec![false; table.rows.len()];
    for &s in slots.iter().filter(|&&s| s != u32::MAX) {
        keep[s as usize] = true;
    }
    drop(slots);

    // Repositories in name order: the bootstrap's rows.
    let mut repo_order: Vec<u32> = (0..table.repos.len() as u32).collect();
    repo_order.sort_by(|a, b| table.repos[*a as usize].cmp(&table.repos[*b as usize]));
    let mut repo_rank = vec![0usize; table.repos.len()];
    for (rank, id) in repo_order.iter().enumerate() {
        repo_rank[*id as usize] = rank;
    }
    let n_repos = table.repos.len();
    // The resampling unit: repositories when there are enough, otherwise files (cases
    // of one file are not independent; files nest in repositories).
    let by_file = n_repos < MIN_UNITS;
    let file_rank: FxHashMap<(u32, u32), usize> = if by_file {
        let mut files: Vec<(u32, u32)> = table
            .rows
            .iter()
            .map(|r| (r.repo, r.file))
            .collect::<std::collections::HashSet<_>>()
            .into_iter()
            .collect();
        files.sort_by(|a, b| {
            (&table.repos[a.0 as usize], &table.files[a.1 as usize])
                .cmp(&(&table.repos[b.0 as usize], &table.files[b.1 as usize]))
        });
        files.into_iter().enumerate().map(|(i, f)| (f, i)).collect()
    } else {
        FxHashMap::default()
    };
    let n_units = if by_file { file_rank.len() } else { n_repos };
    let mut names: Vec<u32> = (0..table.assistants.len() as u32).collect();
    names.sort_by(|a, b| table.assistants[*a as usize].cmp(&table.assistants[*b as usize]));

    // Accumulate on two threads over the two halves of the table, then merge: every
    // sum is an integer, so the split does not change any figure.
    let ctx = AccCtx {
        pass: opts.pass,
        bands: opts.curve_bands,
        assistants: table.assistants.len(),
        repos: n_repos,
        languages: table.languages.len(),
        repo_rank: &repo_rank,
        units: n_units,
        file_rank: &file_rank,
        by_file,
    };
    let mid = table.rows.len() / 2;
    let ((mut accs, mut shared), (right, right_shared)) = std::thread::scope(|scope| {
        let left = scope.spawn(|| accumulate(&ctx, &table.rows[..mid], &keep[..mid]));
        let right = accumulate(&ctx, &table.rows[mid..], &keep[mid..]);
        (
            left.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            right,
        )
    });
    for (a, b) in accs.iter_mut().zip(right) {
        a.merge(b);
    }
    shared.extend(right_shared);
    let nondet = nondeterminism(table, &keep);

    // Pairs: per-repository sums over the cases both assistants answered. One slot per
    // (case, assistant) finds them without sorting.
    let n_a = names.len();
    let mut slot_of = vec![u32::MAX; table.cases.len() * n_a];
    let mut name_rank = vec![0usize; n_a];
    for (rank, &a) in names.iter().enumerate() {
        name_rank[a as usize] = rank;
    }
    for (i, (r, _)) in shared.iter().enumerate() {
        slot_of[r.case as usize * n_a + name_rank[r.assistant as usize]] = i as u32;
    }
    let pairs: Vec<(u32, u32)> = names
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| names[i + 1..].iter().map(move |&b| (a, b)))
        .collect();
    // Two threads over the two halves of the cases; integer sums merge exactly.
    let pair_part = |slots: &[u32]| {
        let mut sums: Vec<Vec<(Sums, Sums)>> =
            vec![vec![(Sums::default(), Sums::default()); n_units]; pairs.len()];
        let mut present = Vec::with_capacity(n_a);
        for case_slots in slots.chunks_exact(n_a.max(1)) {
            present.clear();
            present.extend(
                case_slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s != u32::MAX)
                    .map(|(rank, s)| (rank, &shared[*s as usize])),
            );
            for (i, &(ra, (x, tx))) in present.iter().enumerate() {
                for &(rb, (_, ty)) in &present[i + 1..] {
                    // Pair index of (ra, rb), ra < rb, in the flat upper triangle.
                    let p = ra * n_a - ra * (ra + 1) / 2 + (rb - ra - 1);
                    let slot = &mut sums[p][ctx.unit(x)];
                    slot.0.add_terms(tx);
                    slot.1.add_terms(ty);
                }
            }
        }
        sums
    };
    let cut = (table.cases.len() / 2) * n_a;
    let (mut pair_sums, right) = std::thread::scope(|scope| {
        let left = scope.spawn(|| pair_part(&slot_of[..cut]));
        let right = pair_part(&slot_of[cut..]);
        (
            left.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            right,
        )
    });
    for (p, r) in pair_sums.iter_mut().zip(right) {
        for (a, b) in p.iter_mut().zip(r) {
            merge(&mut a.0, &b.0);
            merge(&mut a.1, &b.1);
        }
    }
    drop(slot_of);

    // The bootstrap matrix: per unit, 6 columns per assistant, 6 per pair side.
    let a_cols = 6;
    let cols = names.len() * a_cols + pairs.len() * 2 * a_cols;
    let mut matrix = vec![0.0f64; n_units * cols];
    for r in 0..n_units {
        let row = &mut matrix[r * cols..(r + 1) * cols];
        for (i, &a) in names.iter().enumerate() {
            row[i * a_cols..(i + 1) * a_cols]
                .copy_from_slice(&accs[a as usize].per_unit[r].columns());
        }
        let base = names.len() * a_cols;
        for (p, sums) in pair_sums.iter().enumerate() {
            let o = base + p * 2 * a_cols;
            row[o..o + a_cols].copy_from_slice(&sums[r].0.columns());
            row[o + a_cols..o + 2 * a_cols].copy_from_slice(&sums[r].1.columns());
        }
    }
    let resamples = if n_units == 0 {
        vec![]
    } else {
        resample_sums(&matrix, n_units, cols, opts.bootstrap, opts.seed)
    };
    let ratio = |n: f64, d: f64| if d == 0.0 { f64::NAN } else { n / d };
    // Metric k of a column block: (numerator column, denominator column).
    const METRICS: [(&str, usize, usize); 4] = [
        ("integral_help", 3, 0),
        ("exact_share", 2, 0),
        ("help_at_0", 1, 0),
        ("integral_help_nonempty", 5, 4),
    ];
    let resampled = |offset: usize, m: usize| -> Vec<f64> {
        let (n, d) = (METRICS[m].1, METRICS[m].2);
        resamples
            .iter()
            .map(|s| ratio(s[offset + n], s[offset + d]))
            .collect()
    };

    let bands = if opts.curve_bands && n_units > 0 {
        curve_bands(&accs, &names, n_units, opts)
    } else {
        BTreeMap::new()
    };

    let mut assistants = BTreeMap::new();
    for (i, &a) in names.iter().enumerate() {
        let acc = &mut accs[a as usize];
        let t = acc.total;
        let est = |m: usize, v: f64| Estimate::new(v, &resampled(i * a_cols, m));
        let rates = Rates::of(acc.records, t.cases, t.empties, acc.errors, acc.timeouts);
        let top_error = acc
            .error_msgs
            .iter()
            .map(|(&m, &n)| (std::cmp::Reverse(n), &table.errors[m as usize]))
            .min()
            .map(|(_, m)| m.clone())
            .or_else(|| (acc.timeouts > 0).then(|| "timeout".to_string()));
        let score = AssistantScore {
            records: acc.records,
            cases: t.cases,
            empty_rate: rates.empty_rate,
            error_rate: rates.error_rate,
            timeout_rate: rates.timeout_rate,
            errors: acc.errors,
            timeouts: acc.timeouts,
            top_error,
            skipped: if acc.not_cases > 0 {
                BTreeMap::from([(SKIP_TYPED.to_string(), acc.not_cases)])
            } else {
                BTreeMap::new()
            },
            nondeterminism: nondet.get(&a).cloned().unwrap_or_default(),
            integral_help: est(0, t.integral_help()),
            exact_share: est(1, t.exact_share()),
            help_at_0: est(2, t.help_at_0()),
            integral_help_nonempty: est(3, t.integral_help_nonempty()),
            help_at_0_ld1: Sums::ratio(t.help_ld1 as f64, t.len),
            integral_help_ld1: Sums::ratio(t.cube_ld1 as f64 / FIX, t.len),
            curve: curve(&acc.buckets, t.len),
            curve_nonempty: curve(&acc.buckets, t.len_nonempty),
            curve_band: bands.get(&a).map(|b| b.0.clone()).unwrap_or_default(),
            curve_nonempty_band: bands.get(&a).map(|b| b.1.clone()).unwrap_or_default(),
            latency_ms: (!acc.latencies.is_empty()).then(|| Latency {
                p50: percentile_unsorted(&mut acc.latencies, 0.5),
                p95: percentile_unsorted(&mut acc.latencies, 0.95),
            }),
            by_language: acc
                .per_lang
                .iter()
                .enumerate()
                .filter(|(_, s)| s.cases > 0)
                .map(|(l, s)| (table.languages[l].clone(), Breakdown::from(s)))
                .collect(),
            by_repo: acc
                .per_repo
                .iter()
                .enumerate()
                .filter(|(_, s)| s.cases > 0)
                .map(|(r, s)| {
                    (
                        table.repos[repo_order[r] as usize].clone(),
                        Breakdown::from(s),
                    )
                })
                .collect(),
            ranking: acc
                .ranking
                .iter()
                .map(|(k, r)| (k.clone(), r.stats()))
                .collect(),
        };
        if acc.records > 0 || acc.not_cases > 0 {
            assistants.insert(table.assistants[a as usize].clone(), score);
        }
    }

    let mut pairwise = Vec::new();
    for (p, &(a, b)) in pairs.iter().enumerate() {
        let (sa, sb) =
            pair_sums[p]
                .iter()
                .fold((Sums::default(), Sums::default()), |mut acc, s| {
                    merge(&mut acc.0, &s.0);
                    merge(&mut acc.1, &s.1);
                    acc
                });
        if sa.cases == 0 {
            continue;
        }
        let base = names.len() * a_cols + p * 2 * a_cols;
        for (m, point) in [
            (0, sa.integral_help() - sb.integral_help()),
            (1, sa.exact_share() - sb.exact_share()),
            (2, sa.help_at_0() - sb.help_at_0()),
        ] {
            let ra = resampled(base, m);
            let rb = resampled(base + a_cols, m);
            let diffs: Vec<f64> = ra.iter().zip(&rb).map(|(x, y)| x - y).collect();
            let e = Estimate::new(point, &diffs);
            pairwise.push(Pairwise {
                a: table.assistants[a as usize].clone(),
                b: table.assistants[b as usize].clone(),
                metric: METRICS[m].0.to_string(),
                cases: sa.cases,
                diff: point,
                sd: e.sd,
                p_value: (e.sd > 0.0).then(|| p_value(point, e.sd)),
                few_units: n_units < MIN_UNITS,
            });
        }
    }

    Summary {
        records: table.rows.len() as u64,
        skipped_lines: table.skipped,
        duplicates,
        repositories: n_repos as u64,
        unit: if by_file { "file" } else { "repository" },
        units: n_units as u64,
        pass: opts.pass,
        bootstrap: opts.bootstrap,
        seed: opts.seed,
        assistants,
        pairwise,
        repeat_skip: repeat_skip(table, &rows, &names),
    }
}

/// Per assistant: of the requests (by `request_hash`, over every pass) answered more
/// than once, how many got different answers (by `response_hash`).
fn nondeterminism(table: &Table, keep: &[bool]) -> FxHashMap<u32, Nondeterminism> {
    use std::collections::hash_map::Entry;
    // (assistant, request) -> (first response, asked again, answered differently)
    let mut seen: FxHashMap<(u32, u64), (u64, bool, bool)> = FxHashMap::default();
    for (r, _) in table.rows.iter().zip(keep).filter(|(r, k)| {
        **k && r.request != 0 && !r.completion && r.is_case() && r.outcome.answered()
    }) {
        match seen.entry((r.assistant, r.request)) {
            Entry::Vacant(e) => {
                e.insert((r.response, false, false));
            }
            Entry::Occupied(mut e) => {
                let v = e.get_mut();
                v.1 = true;
                v.2 |= v.0 != r.response;
            }
        }
    }
    let mut out: FxHashMap<u32, Nondeterminism> = FxHashMap::default();
    for ((a, _), (_, again, differs)) in seen {
        let n = out.entry(a).or_default();
        n.repeated += again as u64;
        n.differing += differs as u64;
    }
    for n in out.values_mut() {
        n.share = (n.repeated > 0).then(|| share(n.differing, n.repeated));
    }
    out
}

struct AccCtx<'a> {
    pass: u32,
    bands: bool,
    assistants: usize,
    repos: usize,
    languages: usize,
    repo_rank: &'a [usize],
    units: usize,
    /// (repository, file) → rank, when files are the units.
    file_rank: &'a FxHashMap<(u32, u32), usize>,
    by_file: bool,
}

impl AccCtx<'_> {
    /// The bootstrap row of a record: its file's or its repository's rank.
    fn unit(&self, r: &Row) -> usize {
        if self.by_file {
            self.file_rank[&(r.repo, r.file)]
        } else {
            self.repo_rank[r.repo as usize]
        }
    }
}

/// Ranking counts of completion sessions: how many, and how many found at each rank
/// (so MRR is summed in rank order, whatever the order of the records).
#[derive(Debug, Clone, Default)]
struct RankAcc {
    n: u64,
    ranks: BTreeMap<u32, u64>,
}

impl RankAcc {
    fn stats(&self) -> RankStats {
        let count = |f: &dyn Fn(u32) -> bool| -> u64 {
            self.ranks
                .iter()
                .filter(|(r, _)| f(**r))
                .map(|(_, c)| c)
                .sum()
        };
        let found = count(&|_| true);
        let pos: u64 = self.ranks.iter().map(|(r, c)| *r as u64 * c).sum();
        let rr: f64 = self.ranks.iter().map(|(r, c)| *c as f64 / *r as f64).sum();
        let f = |x: f64| Sums::ratio(x, self.n);
        RankStats {
            sessions: self.n,
            top1: f(count(&|r| r == 1) as f64),
            top5: f(count(&|r| r <= 5) as f64),
            recall: f(found as f64),
            mean_position: Sums::ratio(pos as f64, found),
            mrr: f(rr),
        }
    }
}

/// One assistant's sums over part of the table.
struct Acc {
    records: u64,
    errors: u64,
    timeouts: u64,
    /// Records of lines no longer than the typed prefix (not cases).
    not_cases: u64,
    /// Error records by message.
    error_msgs: FxHashMap<u32, u64>,
    total: Sums,
    per_repo: Vec<Sums>,
    per_lang: Vec<Sums>,
    /// Per bootstrap unit.
    per_unit: Vec<Sums>,
    /// Σ w·c_help of suggestions by c_help bucket (empties add nothing, so one set of
    /// buckets serves both curves).
    buckets: [u64; CURVE_STEPS + 1],
    /// Per unit, the same buckets (only with curve bands).
    unit_buckets: Vec<[u64; CURVE_STEPS + 1]>,
    latencies: Vec<f64>,
    ranking: BTreeMap<String, RankAcc>,
}

impl Acc {
    fn new(ctx: &AccCtx) -> Acc {
        Acc {
            records: 0,
            errors: 0,
            timeouts: 0,
            not_cases: 0,
            error_msgs: FxHashMap::default(),
            total: Sums::default(),
            per_repo: vec![Sums::default(); ctx.repos],
            per_lang: vec![Sums::default(); ctx.languages],
            per_unit: vec![Sums::default(); ctx.units],
            buckets: [0; CURVE_STEPS + 1],
            unit_buckets: if ctx.bands {
                vec![[0; CURVE_STEPS + 1]; ctx.units]
            } else {
                vec![]
            },
            latencies: vec![],
            ranking: BTreeMap::new(),
        }
    }

    fn merge(&mut self, o: Acc) {
        self.records += o.records;
        self.errors += o.errors;
        self.timeouts += o.timeouts;
        self.not_cases += o.not_cases;
        for (m, n) in o.error_msgs {
            *self.error_msgs.entry(m).or_default() += n;
        }
        merge(&mut self.total, &o.total);
        for (a, b) in self.per_repo.iter_mut().zip(&o.per_repo) {
            merge(a, b);
        }
        for (a, b) in self.per_unit.iter_mut().zip(&o.per_unit) {
            merge(a, b);
        }
        for (a, b) in self.per_lang.iter_mut().zip(&o.per_lang) {
            merge(a, b);
        }
        for (a, b) in self.buckets.iter_mut().zip(o.buckets) {
            *a += b;
        }
        for (ra, rb) in self.unit_buckets.iter_mut().zip(&o.unit_buckets) {
            for (a, b) in ra.iter_mut().zip(rb) {
                *a += b;
            }
        }
        self.latencies.extend(o.latencies);
        for (k, r) in o.ranking {
            let e = self.ranking.entry(k).or_default();
            e.n += r.n;
            for (rank, c) in r.ranks {
                *e.ranks.entry(rank).or_default() += c;
            }
        }
    }
}

/// Sums of the kept rows of `rows` in the scored pass, and the answered inline cases
/// with their terms (for the pairs).
fn accumulate<'t>(
    ctx: &AccCtx,
    rows: &'t [Row],
    keep: &[bool],
) -> (Vec<Acc>, Vec<(&'t Row, Terms)>) {
    let mut accs: Vec<Acc> = (0..ctx.assistants).map(|_| Acc::new(ctx)).collect();
    let mut shared = Vec::new();
    for (r, _) in rows
        .iter()
        .zip(keep)
        .filter(|(r, k)| **k && r.pass == ctx.pass)
    {
        let a = &mut accs[r.assistant as usize];
        if !r.is_case() {
            a.not_cases += 1;
            continue;
        }
        a.records += 1;
        if !r.latency_ms.is_nan() {
            a.latencies.push(r.latency_ms);
        }
        match r.outcome {
            Outcome::Error => {
                a.errors += 1;
                *a.error_msgs.entry(r.error).or_default() += 1;
            }
            Outcome::Timeout => a.timeouts += 1,
            _ => {}
        }
        if r.completion {
            if r.outcome.answered() {
                let key = match r.prefix_len {
                    u32::MAX => None,
                    p if p >= 4 => Some("4+".to_string()),
                    p => Some(p.to_string()),
                };
                for k in key.into_iter().chain(Some("all".to_string())) {
                    let e = a.ranking.entry(k).or_default();
                    e.n += 1;
                    if r.rank >= 1 {
                        *e.ranks.entry(r.rank).or_default() += 1;
                    }
                }
            }
            continue;
        }
        if !r.outcome.answered() {
            continue;
        }
        let terms = Terms::of(r);
        a.total.add_terms(&terms);
        a.per_repo[ctx.repo_rank[r.repo as usize]].add_terms(&terms);
        a.per_lang[r.language as usize].add_terms(&terms);
        let unit = ctx.unit(r);
        a.per_unit[unit].add_terms(&terms);
        if r.outcome == Outcome::Suggestion {
            let w = r.weight();
            let (b, gain) = (bucket(w, r.ld2), w.saturating_sub(r.ld2) as u64);
            a.buckets[b] += gain;
            if let Some(rb) = a.unit_buckets.get_mut(unit) {
                rb[b] += gain;
            }
        }
        shared.push((r, terms));
    }
    (accs, shared)
}

/// Percentile bands of H(S|t) every `BAND_STEP`/100, with and without empties, on the
/// same draws as every other interval (same seed).
fn curve_bands(
    accs: &[Acc],
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
            let acc = &accs[a as usize];
            let row = &mut matrix[r * cols + i * per..r * cols + (i + 1) * per];
            let mut tail = [0u64; CURVE_STEPS + 2];
            for k in (0..=CURVE_STEPS).rev() {
                tail[k] = tail[k + 1] + acc.unit_buckets[r][k];
            }
            for (j, &k) in ks.iter().enumerate() {
                row[j] = tail[k] as f64;
            }
            row[ks.len()] = acc.per_unit[r].len as f64;
            row[ks.len() + 1] = acc.per_unit[r].len_nonempty as f64;
        }
    }
    let resamples = resample_sums(&matrix, n_units, cols, opts.bootstrap, opts.seed);
    let mut out = BTreeMap::new();
    for (i, &a) in names.iter().enumerate() {
        let band = |den: usize| -> Vec<BandPoint> {
            ks.iter()
                .enumerate()
                .map(|(j, &k)| {
                    let mut v: Vec<f64> = resamples
                        .iter()
                        .map(|s| {
                            let d = s[i * per + den];
                            if d == 0.0 {
                                f64::NAN
                            } else {
                                s[i * per + j] / d
                            }
                        })
                        .filter(|x| !x.is_nan())
                        .collect();
                    v.sort_by(f64::total_cmp);
                    BandPoint {
                        t: k as f64 / CURVE_STEPS as f64,
                        lo: super::bootstrap::percentile(&v, 0.025),
                        hi: super::bootstrap::percentile(&v, 0.975),
                    }
                })
                .collect()
        };
        out.insert(a, (band(ks.len()), band(ks.len() + 1)));
    }
    out
}

fn merge(into: &mut Sums, s: &Sums) {
    into.cases += s.cases;
    into.empties += s.empties;
    into.len += s.len;
    into.help += s.help;
    into.exact += s.exact;
    into.cube += s.cube;
    into.help_ld1 += s.help_ld1;
    into.cube_ld1 += s.cube_ld1;
    into.len_nonempty += s.len_nonempty;
    into.cube_nonempty += s.cube_nonempty;
}

/// Rows must be sorted by (assistant, pass, case) and deduplicated.
fn repeat_skip(table: &Table, rows: &[&Row], names: &[u32]) -> BTreeMap<String, RepeatSkip> {
    let mut out = BTreeMap::new();
    for &a in names {
        // Rows are sorted by assistant first: this assistant's rows are one run.
        let from = rows.partition_point(|r| r.assistant < a);
        let to = rows.partition_point(|r| r.assistant <= a);
        // Sorted by pass within the assistant: one pass means nothing to compare.
        if from == to || rows[from].pass == rows[to - 1].pass {
            continue;
        }
        let mine: Vec<&Row> = rows[from..to]
            .iter()
            .copied()
            .filter(|r| !r.completion && r.is_case())
            .collect();
        let mut passes: Vec<u32> = mine.iter().map(|r| r.pass).collect();
        passes.dedup();
        if passes.len() < 2 {
            continue;
        }
        let stats = passes
            .iter()
            .map(|&p| {
                let of: Vec<&&Row> = mine.iter().filter(|r| r.pass == p).collect();
                let count = |o: Outcome| of.iter().filter(|r| r.outcome == o).count() as u64;
                let answered = count(Outcome::Suggestion) + count(Outcome::Empty);
                let (errors, timeouts) = (count(Outcome::Error), count(Outcome::Timeout));
                let rates = Rates::of(
                    of.len() as u64,
                    answered,
                    count(Outcome::Empty),
                    errors,
                    timeouts,
                );
                PassStat {
                    pass: p,
                    records: of.len() as u64,
                    answered,
                    empty_rate: rates.empty_rate,
                    errors,
                    timeouts,
                }
            })
            .collect();
        let first: FxHashMap<u32, Outcome> = mine
            .iter()
            .filter(|r| r.pass == passes[0])
            .map(|r| (r.case, r.outcome))
            .collect();
        let (mut paired, mut e1, mut e_again, mut s1, mut s_became) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        for r in mine
            .iter()
            .filter(|r| r.pass == passes[1] && r.outcome.answered())
        {
            let Some(o1) = first.get(&r.case).filter(|o| o.answered()) else {
                continue;
            };
            paired += 1;
            let empty2 = r.outcome == Outcome::Empty;
            if *o1 == Outcome::Empty {
                e1 += 1;
                e_again += empty2 as u64;
            } else {
                s1 += 1;
                s_became += empty2 as u64;
            }
        }
        out.insert(
            table.assistants[a as usize].clone(),
            RepeatSkip {
                passes: stats,
                paired_cases: paired,
                empty_again: Sums::ratio(e_again as f64, e1),
                became_empty: Sums::ratio(s_became as f64, s1),
            },
        );
    }
    out
}
