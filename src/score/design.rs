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

use std::collections::BTreeMap;

use serde::Serialize;

use super::accumulate::{Units, answered_line};
use super::bootstrap::Estimate;
use super::pairwise::Pairwise;
use super::records::Table;

/// The sampling rates the widths are projected at, as multiples of this sample's.
pub const RATES: [f64; 3] = [0.5, 2.0, 4.0];

/// The distance bins of the autocorrelation, in lines (inclusive); the last bound is
/// the window.
pub const BINS: [(u32, u32); 6] = [(1, 5), (6, 10), (11, 20), (21, 50), (51, 100), (101, 200)];

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
pub struct Lag {
    /// Distances `from..=to` lines.
    pub from: u32,
    pub to: u32,
    /// Pairs of cases of one file at such a distance.
    pub pairs: u64,
    pub r: Option<f64>,
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

/// A case's place in the design and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obs {
    pub repo: u32,
    /// A file id, unique across repositories.
    pub file: u32,
    pub value: f64,
}

/// The variance components of a set of observations, in pairwise-moment form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    pub n: u64,
    /// `Σ z_i² / (n − 1)` (0 with fewer than two).
    pub s2: f64,
    pub icc_file: Option<f64>,
    pub icc_repo: Option<f64>,
    /// `Σ n_f² / n` and `Σ n_r² / n`: the mean size of the file (repository) a case is in.
    pub mf: f64,
    pub mr: f64,
}

/// [`Components`]' sums, fed one value at a time with its (repository, file), equal
/// groups adjacent (files numbered in repository order), centred on a mean known
/// beforehand. The sums run in the order fed.
struct ComponentsAcc {
    mean: f64,
    n: u64,
    s1: f64,
    sf: f64,
    sr: f64,
    nf2: u64,
    nr2: u64,
    zf: f64,
    zr: f64,
    kf: u64,
    kr: u64,
    last: Option<(u32, u32)>,
}

impl ComponentsAcc {
    fn new(mean: f64) -> ComponentsAcc {
        ComponentsAcc {
            mean,
            n: 0,
            s1: 0.0,
            sf: 0.0,
            sr: 0.0,
            nf2: 0,
            nr2: 0,
            zf: 0.0,
            zr: 0.0,
            kf: 0,
            kr: 0,
            last: None,
        }
    }

    fn push(&mut self, group: (u32, u32), value: f64) {
        if let Some(last) = self.last.filter(|l| *l != group) {
            self.close(last.0 != group.0);
        }
        self.last = Some(group);
        let z = value - self.mean;
        self.n += 1;
        self.s1 += z * z;
        self.zf += z;
        self.zr += z;
        self.kf += 1;
        self.kr += 1;
    }

    /// Ends the current file, and its repository when `repo`.
    fn close(&mut self, repo: bool) {
        self.sf += self.zf * self.zf;
        self.nf2 += self.kf * self.kf;
        (self.zf, self.kf) = (0.0, 0);
        if repo {
            self.sr += self.zr * self.zr;
            self.nr2 += self.kr * self.kr;
            (self.zr, self.kr) = (0.0, 0);
        }
    }

    fn finish(mut self) -> Components {
        if self.last.is_some() {
            self.close(true);
        }
        let n = self.n;
        let s2 = if n >= 2 {
            self.s1 / (n - 1) as f64
        } else {
            0.0
        };
        let nn = n as f64;
        let icc = |cross: f64, pairs: u64| {
            (pairs > 0 && s2 > 0.0)
                .then(|| (cross / (pairs as f64 * s2) + 1.0 / nn).clamp(0.0, 1.0))
        };
        Components {
            n,
            s2,
            icc_file: icc(self.sf - self.s1, self.nf2 - n),
            icc_repo: icc(self.sr - self.sf, self.nr2 - self.nf2),
            mf: self.nf2 as f64 / nn.max(1.0),
            mr: self.nr2 as f64 / nn.max(1.0),
        }
    }
}

impl Components {
    /// Of `obs`, centred on their mean.
    pub fn of(obs: &[Obs]) -> Components {
        // By (repository, file), keeping the input's order within a file (a stable sort).
        let mut order: Vec<&Obs> = obs.iter().collect();
        order.sort_by_key(|o| (o.repo, o.file));
        let mean = obs.iter().map(|o| o.value).sum::<f64>() / obs.len().max(1) as f64;
        let mut acc = ComponentsAcc::new(mean);
        for o in order {
            acc.push((o.repo, o.file), o.value);
        }
        acc.finish()
    }

    /// The clustered part of the design effect, `B = ρ_file·(m_f − 1) + ρ_repo·(m_r −
    /// m_f)` (the repository term only when repositories are the design's unit): the
    /// design effect is `1 + B`. None without spread.
    fn clustered(&self, repositories: bool) -> Option<f64> {
        if self.s2 <= 0.0 || self.n < 2 {
            return None;
        }
        let file = self.icc_file.unwrap_or(0.0) * (self.mf - 1.0);
        let repo = if repositories {
            self.icc_repo.unwrap_or(0.0) * (self.mr - self.mf)
        } else {
            0.0
        };
        Some(file + repo)
    }

    /// The design effect at `k` times this sampling rate (each line kept with k times
    /// the probability; files and repositories as now): `1 + k·B`. Pairs of cases in
    /// one file (or repository) grow as k², the cases as k, so `B`, which counts pairs
    /// per case, grows as k (not `k·m_f − 1`: a file's size in this sample counts its
    /// own case, whose share falls as the rate rises).
    pub fn deff_at(&self, k: f64, repositories: bool) -> Option<f64> {
        Some(1.0 + k * self.clustered(repositories)?)
    }

    pub fn deff(&self, repositories: bool) -> Option<f64> {
        self.deff_at(1.0, repositories)
    }

    /// The interval width at `k` times the rate over the width now:
    /// `√(deff(k) / (k · deff(1)))`.
    pub fn width_ratio(&self, k: f64, repositories: bool) -> Option<f64> {
        let (dk, d1) = (self.deff_at(k, repositories)?, self.deff(repositories)?);
        (d1 > 0.0 && dk > 0.0).then(|| (dk / (k * d1)).sqrt())
    }

    /// The smallest multiple of the rate at which the half width `half` falls to
    /// `|diff|`, or None when no multiple does (the clustered part alone is wider).
    /// 1 when it is already there.
    pub fn rate_needed(&self, half: f64, diff: f64, repositories: bool) -> Option<f64> {
        if diff.abs() >= half {
            return Some(1.0);
        }
        let b = self.clustered(repositories)?;
        // (half(k)/half)² = (1/k + B)/(1 + B); equal to (diff/half)² at k = 1/(g − B).
        let g = (diff / half).powi(2) * (1.0 + b);
        (g > b).then(|| 1.0 / (g - b))
    }
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
struct LagAcc {
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
    fn new(mean: f64) -> LagAcc {
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

    fn push(&mut self, group: (u32, u32), line: Option<u32>, value: f64) {
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
            debug_assert!(span > file.last().map_or(0, |x| (x.0 - first) as usize) + 200);
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

    fn finish(mut self, c: &Components) -> Vec<Lag> {
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

struct Prepared1 {
    cases: u64,
    files: u64,
    repositories: u64,
    integral_help: Components,
    exact_share: Components,
    autocorrelation: Vec<Lag>,
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
    // Each assistant and each pair a task of the pool (independent figures, the same
    // whatever the threads).
    let mut one: Vec<(u32, Option<Prepared1>)> = names.iter().map(|&a| (a, None)).collect();
    let mut two: Vec<(u32, u32, Option<Components>)> = (names.iter().enumerate())
        .flat_map(|(i, &a)| names[i + 1..].iter().map(move |&b| (a, b, None)))
        .collect();
    rayon::scope(|scope| {
        let walk = &walk;
        for (a, slot) in &mut one {
            let a = *a as usize;
            scope.spawn(move |_| *slot = walk.assistant(a));
        }
        for (a, b, slot) in &mut two {
            let (a, b) = (*a as usize, *b as usize);
            scope.spawn(move |_| *slot = walk.pair(a, b));
        }
    });
    let assistants: Vec<(u32, Prepared1)> = (one.into_iter())
        .filter_map(|(a, p)| p.map(|p| (a, p)))
        .collect();
    let pairs: Vec<(u32, u32, Components)> = (two.into_iter())
        .filter_map(|(a, b, c)| c.map(|c| (a, b, c)))
        .collect();
    step("assistants and pairs");
    Some(Prepared {
        repositories,
        assistants,
        pairs,
    })
}

/// The cases that have a file (`file_of_case[c]` below `files`; `u32::MAX`: none) as
/// (file, line, case), by file and line (a missing line, `u32::MAX` in `lines`, first).
/// A counting sort by file, then each file's cases by line, which records in line order
/// already are: the order of cases of one file and line is left as it comes (the walk
/// puts them in order by their values).
fn by_file_and_line(
    file_of_case: &[u32],
    files: usize,
    lines: &[u32],
) -> Vec<(u32, Option<u32>, u32)> {
    let mut start = vec![0usize; files + 1];
    for &f in file_of_case.iter().filter(|&&f| f != u32::MAX) {
        start[f as usize + 1] += 1;
    }
    for f in 0..files {
        start[f + 1] += start[f];
    }
    let mut order = vec![(0u32, None, 0u32); start[files]];
    let mut next = start.clone();
    for (c, &f) in file_of_case.iter().enumerate() {
        if f != u32::MAX {
            let line = lines.get(c).copied().filter(|&l| l != u32::MAX);
            order[next[f as usize]] = (f, line, c as u32);
            next[f as usize] += 1;
        }
    }
    for w in start.windows(2) {
        let one = &mut order[w[0]..w[1]];
        if !one.is_sorted_by_key(|x| x.1) {
            one.sort_unstable_by_key(|x| x.1);
        }
    }
    order
}

/// The answered cases in the design's one order, walked per assistant or pair without
/// copying them: `answers` holds each (place in the order, assistant)'s [`Answer`];
/// `groups` are the order's runs of one file and line (most of one case), each with its
/// first place, its file and its line.
struct Walk<'a> {
    answers: &'a [Answer],
    n_a: usize,
    repo_of_file: &'a [u32],
    groups: Vec<Group>,
    /// One past the last place.
    end: u32,
}

/// A case's answer: weight (0: none) and gain. Eight bytes, as c_help³ is not kept: at
/// 10M records it would be 80 MB more of a peak whose limit is 1,000 MB.
#[derive(Clone, Copy, Default)]
struct Answer {
    w: u32,
    gain: u32,
}

impl Answer {
    fn cube(self) -> f64 {
        cube(self.w, self.gain)
    }
}

/// A run of the order's places at one file and line (`u32::MAX`: none, as the table's
/// lines); twelve bytes, as there is one per line case.
#[derive(Clone, Copy)]
struct Group {
    first: u32,
    file: u32,
    line: u32,
}

/// c_help³ of a weight and a gain.
fn cube(w: u32, gain: u32) -> f64 {
    let c = gain as f64 / w as f64;
    c * c * c
}

impl<'a> Walk<'a> {
    /// `order` is (file, line, case) by file and line.
    fn new(
        order: &[(u32, Option<u32>, u32)],
        answers: &'a [Answer],
        n_a: usize,
        repo_of_file: &'a [u32],
    ) -> Walk<'a> {
        let mut groups = Vec::with_capacity(order.len());
        let mut first = 0u32;
        for same in order.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
            groups.push(Group {
                first,
                file: same[0].0,
                line: same[0].1.unwrap_or(u32::MAX),
            });
            first += same.len() as u32;
        }
        Walk {
            answers,
            n_a,
            repo_of_file,
            groups,
            end: first,
        }
    }

    /// Each group's (repository, file), line and places `lo..hi`.
    fn spans(&self) -> impl Iterator<Item = ((u32, u32), Option<u32>, usize, usize)> + '_ {
        let ends = (self.groups.iter().skip(1).map(|g| g.first)).chain([self.end]);
        (self.groups.iter().zip(ends)).map(|(g, end)| {
            let at = (self.repo_of_file[g.file as usize], g.file);
            let line = (g.line != u32::MAX).then_some(g.line);
            (at, line, g.first as usize, end as usize)
        })
    }

    /// Calls `f((repository, file), line, answer)` for assistant `a`'s cases, by file
    /// and line, then by weight and gain.
    fn each(&self, a: usize, mut f: impl FnMut((u32, u32), Option<u32>, Answer)) {
        let mut run: Vec<Answer> = Vec::new();
        for (at, line, lo, hi) in self.spans() {
            if hi - lo == 1 {
                // One case at this line (line cases): nothing to put in order.
                let x = self.answers[lo * self.n_a + a];
                if x.w > 0 {
                    f(at, line, x);
                }
                continue;
            }
            run.clear();
            run.extend(
                (lo..hi)
                    .map(|i| self.answers[i * self.n_a + a])
                    .filter(|x| x.w > 0),
            );
            // (c_help³ is a function of the two.)
            run.sort_unstable_by_key(|x| (x.w, x.gain));
            for &x in &run {
                f(at, line, x);
            }
        }
    }

    /// Assistant `a`'s counts, the components of integral help's and exact share's
    /// contributions, and the autocorrelation of integral help's. Each case's
    /// contribution to a ratio `Σ w·y / Σ w` is its linearization `w_i·(y_i − R)/w̄`,
    /// whose mean is the ratio's error to first order.
    fn assistant(&self, a: usize) -> Option<Prepared1> {
        let (mut n, mut sw, mut swc, mut swe) = (0u64, 0.0, 0.0, 0.0);
        self.each(a, |_, _, x| {
            let wf = x.w as f64;
            n += 1;
            sw += wf;
            swc += wf * x.cube();
            swe += wf * f64::from(u8::from(x.gain == x.w));
        });
        if n == 0 || sw == 0.0 {
            return None;
        }
        let (rc, re, wbar) = (swc / sw, swe / sw, sw / n as f64);
        let value_c = |x: Answer| x.w as f64 * (x.cube() - rc) / wbar;
        let value_e = |x: Answer| x.w as f64 * (f64::from(u8::from(x.gain == x.w)) - re) / wbar;
        // The contributions' mean is 0 (Σ w·(y − R) = 0 at the sample's own ratio R):
        // they are centred already, and the 1/n in the ICC undoes that centring.
        let (mut ih, mut ex, mut lags) = (
            ComponentsAcc::new(0.0),
            ComponentsAcc::new(0.0),
            LagAcc::new(0.0),
        );
        let (mut files, mut repos, mut last) = (0u64, 0u64, None::<(u32, u32)>);
        self.each(a, |group, line, x| {
            if last != Some(group) {
                files += 1;
                repos += u64::from(last.is_none_or(|l| l.0 != group.0));
                last = Some(group);
            }
            let v = value_c(x);
            ih.push(group, v);
            ex.push(group, value_e(x));
            lags.push(group, line, v);
        });
        let integral_help = ih.finish();
        Some(Prepared1 {
            cases: n,
            files,
            repositories: repos,
            exact_share: ex.finish(),
            autocorrelation: lags.finish(&integral_help),
            integral_help,
        })
    }

    /// The components of the contributions of the paired integral-help differences
    /// `d = c_a³ − c_b³` on the cases both answered (weighted by a's weight; in a's
    /// order, ties by the difference). None when they share no case.
    fn pair(&self, a: usize, b: usize) -> Option<Components> {
        let (mut n, mut sw, mut swd) = (0u64, 0.0, 0.0);
        self.each_both(a, b, |_, w, d| {
            n += 1;
            sw += w as f64;
            swd += w as f64 * d;
        });
        if n == 0 || sw == 0.0 {
            return None;
        }
        let (dd, wbar) = (swd / sw, sw / n as f64);
        let value = |w: u32, d: f64| w as f64 * (d - dd) / wbar;
        let mut acc = ComponentsAcc::new(0.0); // centred already, as an assistant's
        self.each_both(a, b, |group, w, d| acc.push(group, value(w, d)));
        Some(acc.finish())
    }

    /// Calls `f((repository, file), w_a, c_a³ − c_b³)` for the cases both `a` and `b`
    /// answered, by file and line, then by a's weight and gain and the difference.
    fn each_both(&self, a: usize, b: usize, mut f: impl FnMut((u32, u32), u32, f64)) {
        let both = |i: usize| {
            let (x, y) = (
                self.answers[i * self.n_a + a],
                self.answers[i * self.n_a + b],
            );
            (x.w > 0 && y.w > 0).then(|| (x.w, x.gain, x.cube() - y.cube()))
        };
        let mut run: Vec<(u32, u32, f64)> = Vec::new();
        for (at, _, lo, hi) in self.spans() {
            if hi - lo == 1 {
                if let Some((w, _, d)) = both(lo) {
                    f(at, w, d);
                }
                continue;
            }
            run.clear();
            run.extend((lo..hi).filter_map(both));
            run.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)).then(x.2.total_cmp(&y.2)));
            for &(w, _, d) in &run {
                f(at, w, d);
            }
        }
    }
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

    #[test]
    fn cases_by_file_and_line_are_those_a_sort_gives() {
        let mut next = crate::score::distance::tests::xorshift(7);
        for size in [0usize, 1, 5, 300, 5000] {
            let files = 1 + (next() % 40) as usize;
            let file_of_case: Vec<u32> = (0..size)
                .map(|_| match next() % 10 {
                    0 => u32::MAX,
                    _ => (next() % files as u64) as u32,
                })
                .collect();
            let lines: Vec<u32> = (0..size)
                .map(|_| match next() % 8 {
                    0 => u32::MAX,
                    _ => (next() % 60) as u32,
                })
                .collect();
            let got = by_file_and_line(&file_of_case, files, &lines);
            let mut want: Vec<(u32, Option<u32>, u32)> = (file_of_case.iter().enumerate())
                .filter(|(_, f)| **f != u32::MAX)
                .map(|(c, &f)| (f, Some(lines[c]).filter(|&l| l != u32::MAX), c as u32))
                .collect();
            want.sort_unstable();
            let keys =
                |v: &[(u32, Option<u32>, u32)]| v.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want), "size {size}");
            let mut got = got;
            got.sort_unstable();
            assert_eq!(got, want, "size {size}");
        }
    }
}
