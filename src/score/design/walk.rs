//! The design section's cases in one order (by file and line), walked for every
//! assistant and pair of assistants at once (each case's answers read once a walk),
//! without copying them.

use super::components::{Components, ComponentsAcc};
use super::lag::{Lag, LagAcc};

/// One assistant's part of the design section, from the walk ([`Walk::all`]).
pub(super) struct Prepared1 {
    pub(super) cases: u64,
    pub(super) files: u64,
    pub(super) repositories: u64,
    pub(super) integral_help: Components,
    pub(super) exact_share: Components,
    pub(super) autocorrelation: Vec<Lag>,
}

/// The cases that have a file (`file_of_case[c]` below `files`; `u32::MAX`: none) as
/// (file, line, case), by file and line (a missing line, `u32::MAX` in `lines`, first).
/// A counting sort by file, then each file's cases by line, which records in line order
/// already are: the order of cases of one file and line is left as it comes (the walk
/// puts them in order by their values).
pub(super) fn by_file_and_line(
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

/// The answered cases in the design's one order, walked for every assistant and pair
/// at once without copying them: `answers` holds each (place in the order,
/// assistant)'s [`Answer`]; `groups` are the order's runs of one file and line (most of
/// one case), each with its first place, its file and its line.
pub(super) struct Walk<'a> {
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
pub(super) struct Answer {
    pub(super) w: u32,
    pub(super) gain: u32,
}

impl Answer {
    fn cube(self) -> f64 {
        cube(self.w, self.gain)
    }
}

/// Lines a batch holds: their values are computed in one loop over the batch (the
/// divisions independent of each other, and two to an instruction where the compiler
/// pairs them), then fed to the sums in the walk's order. A value is the same whichever
/// way it is computed (each lane of a paired division rounds as a division alone), so
/// no figure depends on the batches.
const BATCH: usize = 256;

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
    pub(super) fn new(
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

    /// Each assistant's part of the design section (by rank in `names`: its counts,
    /// the components of integral help's and exact share's contributions, and the
    /// autocorrelation of integral help's), and the components of the contributions of
    /// the paired integral-help differences `d = c_a³ − c_b³` of each pair `(names[i],
    /// names[j])`, `i < j`, on the cases both answered (weighted by a's weight), in that
    /// order of pairs; None for an assistant without answers or a pair that shares no
    /// case.
    ///
    /// Each case's contribution to a ratio `Σ w·y / Σ w` is its linearization
    /// `w_i·(y_i − R)/w̄`, whose mean is the ratio's error to first order. Two walks for
    /// all the assistants and pairs at once: the sums that give R and w̄, then the
    /// centred contributions (each walk reads every case's answers once, for every
    /// assistant and pair). Each assistant's and pair's sums run in the order its own
    /// walk would take: by file and line, then at a line of several cases an
    /// assistant's answers by weight and gain, a pair's by a's weight and gain and the
    /// difference.
    pub(super) fn all(&self, names: &[usize]) -> (Vec<Option<Prepared1>>, Vec<Option<Components>>) {
        let k = names.len();
        let pairs: Vec<(usize, usize)> = (0..k)
            .flat_map(|i| (i + 1..k).map(move |j| (i, j)))
            .collect();
        // The first walk: each assistant's (n, Σw, Σw·c³, Σw·exact), each pair's
        // (n, Σw, Σw·d).
        let mut ones = vec![(0u64, 0.0f64, 0.0f64, 0.0f64); k];
        let mut sums = vec![(0u64, 0.0f64, 0.0f64); pairs.len()];
        let mut add_one = |r: usize, w: u32, gain: u32, c: f64| {
            let (n, sw, swc, swe) = &mut ones[r];
            let wf = w as f64;
            *n += 1;
            *sw += wf;
            *swc += wf * c;
            *swe += wf * f64::from(u8::from(gain == w));
        };
        let add_pair = |sums: &mut [(u64, f64, f64)], p: usize, w: u32, d: f64| {
            let (n, sw, swd) = &mut sums[p];
            *n += 1;
            *sw += w as f64;
            *swd += w as f64 * d;
        };
        self.each(names, &pairs, |items| match items {
            Items::Lines(b) => {
                for r in 0..k {
                    for t in 0..b.len {
                        if b.w[r][t] > 0 {
                            add_one(r, b.w[r][t], b.gain[r][t], b.cubes[r][t]);
                        }
                    }
                }
                for (p, &(i, j)) in pairs.iter().enumerate() {
                    for t in 0..b.len {
                        let (wa, wb) = (b.w[i][t], b.w[j][t]);
                        if wa > 0 && wb > 0 {
                            add_pair(&mut sums, p, wa, b.cubes[i][t] - b.cubes[j][t]);
                        }
                    }
                }
            }
            Items::One(r, _, _, x) => add_one(r, x.w, x.gain, x.cube()),
            Items::Pair(p, _, w, d) => add_pair(&mut sums, p, w, d),
        });
        // Each assistant's (R of integral help, R of exact share, w̄), each pair's
        // (mean difference, w̄), where it has cases.
        let means_one: Vec<Option<(f64, f64, f64)>> = (ones.iter())
            .map(|&(n, sw, swc, swe)| {
                (n > 0 && sw != 0.0).then(|| (swc / sw, swe / sw, sw / n as f64))
            })
            .collect();
        let means: Vec<Option<(f64, f64)>> = (sums.iter())
            .map(|&(n, sw, swd)| (n > 0 && sw != 0.0).then(|| (swd / sw, sw / n as f64)))
            .collect();
        // The contributions' mean is 0 (Σ w·(y − R) = 0 at the sample's own ratio R):
        // they are centred already, and the 1/n in the ICC undoes that centring.
        let mut accs: Vec<OneAcc> = (0..k).map(|_| OneAcc::new()).collect();
        let mut pair_accs: Vec<ComponentsAcc> =
            pairs.iter().map(|_| ComponentsAcc::new(0.0)).collect();
        let value_c = |(rc, _, wbar): (f64, f64, f64), w: u32, c: f64| w as f64 * (c - rc) / wbar;
        let value_e = |(_, re, wbar): (f64, f64, f64), w: u32, gain: u32| {
            w as f64 * (f64::from(u8::from(gain == w)) - re) / wbar
        };
        let (mut vc, mut ve) = ([0.0f64; BATCH], [0.0f64; BATCH]);
        self.each(names, &pairs, |items| match items {
            Items::Lines(b) => {
                let n = b.len;
                for (r, acc) in accs.iter_mut().enumerate() {
                    let Some(m) = means_one[r] else { continue };
                    // Every line's values (those the assistant did not answer unused),
                    // then the answered ones in order.
                    for (((c, e), &w), (&gain, &cube)) in (vc[..n].iter_mut().zip(&mut ve[..n]))
                        .zip(&b.w[r][..n])
                        .zip(b.gain[r][..n].iter().zip(&b.cubes[r][..n]))
                    {
                        *c = value_c(m, w, cube);
                        *e = value_e(m, w, gain);
                    }
                    for t in 0..n {
                        if b.w[r][t] > 0 {
                            acc.push(b.at[t], b.line[t], vc[t], ve[t]);
                        }
                    }
                }
                for (p, &(i, j)) in pairs.iter().enumerate() {
                    let Some((dd, wbar)) = means[p] else { continue };
                    for (((v, &wa), &ca), &cb) in (vc[..n].iter_mut())
                        .zip(&b.w[i][..n])
                        .zip(&b.cubes[i][..n])
                        .zip(&b.cubes[j][..n])
                    {
                        *v = wa as f64 * ((ca - cb) - dd) / wbar;
                    }
                    for (t, &v) in vc[..n].iter().enumerate() {
                        if b.w[i][t] > 0 && b.w[j][t] > 0 {
                            pair_accs[p].push(b.at[t], v);
                        }
                    }
                }
            }
            Items::One(r, group, line, x) => {
                if let Some(m) = means_one[r] {
                    let (c, e) = (value_c(m, x.w, x.cube()), value_e(m, x.w, x.gain));
                    accs[r].push(group, line, c, e);
                }
            }
            Items::Pair(p, group, w, d) => {
                if let Some((dd, wbar)) = means[p] {
                    pair_accs[p].push(group, w as f64 * (d - dd) / wbar);
                }
            }
        });
        let ones = (accs.into_iter().zip(ones).zip(&means_one))
            .map(|((acc, (n, ..)), m)| m.map(|_| acc.finish(n)))
            .collect();
        let pairs = (pair_accs.into_iter().zip(means))
            .map(|(acc, m)| m.map(|_| acc.finish()))
            .collect();
        (ones, pairs)
    }

    /// Calls `f` with the answered cases by file and line: lines of one case in batches
    /// (each assistant's weight, gain and c_help³ by line, computed once for all its
    /// pairs), and at a line of several cases, each assistant's answers one by one by
    /// weight and gain (`Items::One`), then each pair's answers both gave by a's weight
    /// and gain and the difference (`Items::Pair`). An assistant's or a pair's answers
    /// come in that order, batch or line after batch or line.
    fn each(&self, names: &[usize], pairs: &[(usize, usize)], mut f: impl FnMut(Items)) {
        let n_a = self.n_a;
        let mut batch = Lines::new(names.len());
        let flush = |batch: &mut Lines, f: &mut dyn FnMut(Items)| {
            if batch.len > 0 {
                batch.cube();
                f(Items::Lines(batch));
                batch.len = 0;
            }
        };
        let mut run: Vec<Answer> = Vec::new();
        let mut pair_run: Vec<(u32, u32, f64)> = Vec::new();
        for (at, line, lo, hi) in self.spans() {
            if hi - lo == 1 {
                // One case at this line (line cases): each answer's c_help³ once.
                let row = &self.answers[lo * n_a..(lo + 1) * n_a];
                let t = batch.len;
                (batch.at[t], batch.line[t]) = (at, line);
                for (r, &a) in names.iter().enumerate() {
                    (batch.w[r][t], batch.gain[r][t]) = (row[a].w, row[a].gain);
                }
                batch.len += 1;
                if batch.len == BATCH {
                    flush(&mut batch, &mut f);
                }
                continue;
            }
            flush(&mut batch, &mut f);
            for (r, &a) in names.iter().enumerate() {
                run.clear();
                run.extend(
                    (lo..hi)
                        .map(|i| self.answers[i * n_a + a])
                        .filter(|x| x.w > 0),
                );
                // (c_help³ is a function of the two.)
                run.sort_unstable_by_key(|x| (x.w, x.gain));
                for &x in &run {
                    f(Items::One(r, at, line, x));
                }
            }
            for (p, &(i, j)) in pairs.iter().enumerate() {
                let (a, b) = (names[i], names[j]);
                pair_run.clear();
                pair_run.extend((lo..hi).filter_map(|i| {
                    let (x, y) = (self.answers[i * n_a + a], self.answers[i * n_a + b]);
                    (x.w > 0 && y.w > 0).then(|| (x.w, x.gain, x.cube() - y.cube()))
                }));
                pair_run
                    .sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)).then(x.2.total_cmp(&y.2)));
                for &(w, _, d) in &pair_run {
                    f(Items::Pair(p, at, w, d));
                }
            }
        }
        flush(&mut batch, &mut f);
    }
}

/// One assistant's second-walk sums: the components of integral help's and exact
/// share's contributions, the autocorrelation of integral help's, and the files and
/// repositories its cases are in.
struct OneAcc {
    ih: ComponentsAcc,
    ex: ComponentsAcc,
    lags: LagAcc,
    files: u64,
    repos: u64,
    last: Option<(u32, u32)>,
}

impl OneAcc {
    fn new() -> OneAcc {
        OneAcc {
            ih: ComponentsAcc::new(0.0),
            ex: ComponentsAcc::new(0.0),
            lags: LagAcc::new(0.0),
            files: 0,
            repos: 0,
            last: None,
        }
    }

    /// A case at `group` and `line`, its contributions to integral help and exact share.
    fn push(&mut self, group: (u32, u32), line: Option<u32>, c: f64, e: f64) {
        if self.last != Some(group) {
            self.files += 1;
            self.repos += u64::from(self.last.is_none_or(|l| l.0 != group.0));
            self.last = Some(group);
        }
        self.ih.push(group, c);
        self.ex.push(group, e);
        self.lags.push(group, line, c);
    }

    fn finish(self, cases: u64) -> Prepared1 {
        let integral_help = self.ih.finish();
        Prepared1 {
            cases,
            files: self.files,
            repositories: self.repos,
            exact_share: self.ex.finish(),
            autocorrelation: self.lags.finish(&integral_help),
            integral_help,
        }
    }
}

/// Lines of one case in the walk's order, by column: (repository, file), line, and each
/// assistant's (by rank in the names) weight, gain and c_help³ (not a number where it
/// has no answer).
struct Lines {
    len: usize,
    at: Box<[(u32, u32); BATCH]>,
    line: Box<[Option<u32>; BATCH]>,
    w: Vec<[u32; BATCH]>,
    gain: Vec<[u32; BATCH]>,
    cubes: Vec<[f64; BATCH]>,
}

impl Lines {
    fn new(assistants: usize) -> Lines {
        Lines {
            len: 0,
            at: Box::new([(0, 0); BATCH]),
            line: Box::new([None; BATCH]),
            w: vec![[0; BATCH]; assistants],
            gain: vec![[0; BATCH]; assistants],
            cubes: vec![[0.0; BATCH]; assistants],
        }
    }

    fn cube(&mut self) {
        let n = self.len;
        for ((c, w), g) in self.cubes.iter_mut().zip(&self.w).zip(&self.gain) {
            for ((c, &w), &g) in c[..n].iter_mut().zip(&w[..n]).zip(&g[..n]) {
                *c = cube(w, g);
            }
        }
    }
}

/// What [`Walk::each`] hands over.
enum Items<'b> {
    /// Lines of one case.
    Lines(&'b Lines),
    /// Assistant r's answer at a line of several cases: (repository, file), line.
    One(usize, (u32, u32), Option<u32>, Answer),
    /// Pair p's answer at a line of several cases: (repository, file), a's weight,
    /// c_a³ − c_b³.
    Pair(usize, (u32, u32), u32, f64),
}

#[cfg(test)]
mod tests;
