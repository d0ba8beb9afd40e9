//! The first steps of a summary: one record kept per (assistant, pass, case), the
//! bootstrap's resampling units, and each assistant's counts over the scored pass
//! ([`Acc`]: records, errors, latencies, completion lists), accumulated in two halves
//! side by side whose integer sums merge exactly; the answered line cases' sums are
//! added to the same [`Acc`]s by the pair sums (`pairwise::pair_sums`).
//!
//! Records sit in case-major slots; the cases are split between the two halves, and
//! duplicates of one (case, assistant, pass) are reduced to one chosen by its whole
//! content (outcome, distances, rank, latency, hashes, error message, then the place by
//! name), then by its place in the table, one slot per triple and no sort, so the
//! choice does not depend on how the cases are split.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::curve::{Buckets, CURVE_STEPS, bucket};
use super::ranking::{self, Ranking};
use super::records::{Outcome, Place, Row, Table};
use super::sums::{Sums, Terms};

/// Fewer units than this and a p-value says little (four repositories allow at most
/// 35 distinct resamples): the bootstrap resamples files, and pairs are flagged.
pub const MIN_UNITS: usize = 10;

/// The records scored: one per (assistant, pass, case).
pub(crate) struct Kept<'t> {
    /// Records repeating a (case, assistant, pass) already seen.
    pub duplicates: u64,
    /// Whether each row of the table is kept.
    pub keep: Vec<bool>,
    /// The kept rows in (assistant, pass, case) order: only repeat-skip needs them, and
    /// only when there are several passes (empty otherwise).
    pub sorted: Vec<&'t Row>,
    /// The distinct passes of the rows, in order.
    pub passes: Vec<u32>,
}

/// The kept row of each (case, assistant, pass), case-major: at `case · per_case +
/// assistant · passes + the pass's index in [`Kept::passes`]`, the row's index
/// (`u32::MAX`: none). The pair sums find each case's answers here without a scan.
pub(crate) struct Slots {
    pub slots: Vec<u32>,
    /// Slots per case (assistants × passes).
    pub per_case: usize,
}

/// One record per (assistant, pass, case), found through a slot per triple (no sort),
/// the cases split in two halves side by side; among duplicates the one kept is the
/// smallest by content, then the first in the table, so it does not depend on how the
/// cases are split. The slots are first laid out for the first row's pass alone (most
/// tables have one), and again for every pass only when a row of another shows up.
pub(crate) fn keep_one(table: &Table) -> (Kept<'_>, Slots) {
    let first = table.rows.first().map_or(1, |r| r.pass);
    let (pass_values, (slots, duplicates)) = match fill_slots(table, &[first]) {
        Some(filled) => (vec![first], filled),
        None => {
            // The passes of the two halves of the table side by side.
            let half = table.rows.len() / 2;
            let (mut values, high) = rayon::join(
                || passes(&table.rows[..half]),
                || passes(&table.rows[half..]),
            );
            values.extend(high);
            values.sort_unstable();
            values.dedup();
            // (Never `None`: every row's pass is among them.)
            let filled = fill_slots(table, &values).unwrap_or_else(|| {
                let n = table.cases.max(1) * table.assistants.len().max(1) * values.len();
                (vec![u32::MAX; n], 0)
            });
            (values, filled)
        }
    };
    let n_passes = pass_values.len().max(1);
    let per_case = table.assistants.len().max(1) * n_passes;
    let kept = slots.iter().filter(|&&s| s != u32::MAX);
    let sorted: Vec<&Row> = if n_passes > 1 {
        let mut sorted: Vec<&Row> = kept.clone().map(|&s| &table.rows[s as usize]).collect();
        sorted.sort_unstable_by_key(|r| (r.assistant(), r.pass, r.case));
        sorted
    } else {
        Vec::new()
    };
    // Accumulation walks the table in storage order (sequential memory); sums are
    // integers, so the order does not change them. Without duplicates every row has a
    // slot of its own: all are kept.
    let keep = if duplicates == 0 {
        vec![true; table.rows.len()]
    } else {
        let mut keep = vec![false; table.rows.len()];
        for &s in kept {
            keep[s as usize] = true;
        }
        keep
    };
    (
        Kept {
            duplicates,
            keep,
            sorted,
            passes: pass_values,
        },
        Slots { slots, per_case },
    )
}

/// The slots of [`keep_one`] for the passes `pass_values` (in order) and how many rows
/// repeated a triple; `None` when a row's pass is not among them. The cases are split
/// in two halves, each filling its own run of the slots side by side from a walk of the
/// table in order (one slot array: at 10M records it is 40 MB a pass).
fn fill_slots(table: &Table, pass_values: &[u32]) -> Option<(Vec<u32>, u64)> {
    let n_passes = pass_values.len();
    let per_case = table.assistants.len().max(1) * n_passes;
    let mut slots = vec![u32::MAX; table.cases.max(1) * per_case];
    let mid = table.cases / 2;
    let (low, high) = slots.split_at_mut(mid * per_case);
    let fill = |slots: &mut [u32], from: usize| -> Option<u64> {
        let mut duplicates = 0u64;
        let to = from + slots.len() / per_case;
        for (i, r) in table.rows.iter().enumerate() {
            let case = r.case as usize;
            if case < from || case >= to {
                continue;
            }
            let pass = pass_values.binary_search(&r.pass).ok()?;
            let at = (case - from) * per_case + r.assistant() as usize * n_passes + pass;
            let s = &mut slots[at];
            if *s == u32::MAX {
                *s = i as u32;
            } else {
                duplicates += 1;
                if before(table, r, &table.rows[*s as usize]) {
                    *s = i as u32;
                }
            }
        }
        Some(duplicates)
    };
    let (left, right) = rayon::join(|| fill(low, 0), || fill(high, mid));
    Some((slots, left? + right?))
}

/// The distinct passes of the rows, in order (few: a short scan per change of pass).
fn passes(rows: &[Row]) -> Vec<u32> {
    let mut values: Vec<u32> = Vec::new();
    let mut last = None;
    for r in rows {
        if last != Some(r.pass) {
            last = Some(r.pass);
            if !values.contains(&r.pass) {
                values.push(r.pass);
            }
        }
    }
    values.sort_unstable();
    values
}

/// Whether duplicate `r` is kept before `held`: the smaller by content (outcome,
/// distances, rank, latency, the hashes, the error message, the place by name), so the
/// choice does not depend on the order records arrive in.
fn before(table: &Table, r: &Row, held: &Row) -> bool {
    let key = |r: &Row| {
        let place = table.place(r);
        (
            (
                r.outcome,
                r.ld2(),
                r.ld1(),
                r.rank(),
                r.latency_ms.to_bits(),
            ),
            (
                r.response,
                r.request,
                r.len,
                r.typed,
                r.prefix_len(),
                r.token_kind(),
            ),
            table.errors.get(r.error() as usize),
            table.repos.get(place.repo as usize),
            table.files.get(place.file as usize),
            table.languages.get(place.language as usize),
        )
    };
    key(r) < key(held)
}

/// The bootstrap's resampling units: repositories when there are enough, otherwise files
/// (cases of one file are not independent; files nest in repositories), in name order.
pub(crate) struct Units {
    /// Repository ids in name order.
    pub repo_order: Vec<u32>,
    /// Each repository id's place in `repo_order`.
    pub repo_rank: Vec<usize>,
    pub by_file: bool,
    /// Each place's unit (see [`Table::places`]).
    of_place: Vec<u32>,
    /// How many units there are.
    pub count: usize,
}

impl Units {
    pub(crate) fn of(table: &Table) -> Units {
        let mut repo_order: Vec<u32> = (0..table.repos.len() as u32).collect();
        repo_order.sort_by(|a, b| table.repos[*a as usize].cmp(&table.repos[*b as usize]));
        let mut repo_rank = vec![0usize; table.repos.len()];
        for (rank, id) in repo_order.iter().enumerate() {
            repo_rank[*id as usize] = rank;
        }
        let by_file = table.repos.len() < MIN_UNITS;
        let (of_place, count) = if by_file {
            // The (repository, file) pairs records are in, by name.
            let mut files: Vec<(u32, u32)> =
                table.places.iter().map(|p| (p.repo, p.file)).collect();
            let name = |f: &(u32, u32)| (&table.repos[f.0 as usize], &table.files[f.1 as usize]);
            files.sort_by(|a, b| name(a).cmp(&name(b)));
            files.dedup();
            let rank: FxHashMap<(u32, u32), u32> = files
                .iter()
                .enumerate()
                .map(|(i, f)| (*f, i as u32))
                .collect();
            let of_place = table
                .places
                .iter()
                .map(|p| rank[&(p.repo, p.file)])
                .collect();
            (of_place, files.len())
        } else {
            let of_place = table
                .places
                .iter()
                .map(|p| repo_rank[p.repo as usize] as u32)
                .collect();
            (of_place, table.repos.len())
        };
        Units {
            repo_order,
            repo_rank,
            by_file,
            of_place,
            count,
        }
    }

    /// The bootstrap row of a record: its file's or its repository's rank.
    pub(crate) fn unit(&self, r: &Row) -> usize {
        self.of_place[r.place as usize] as usize
    }
    /// The bootstrap row of the records of place `place` (an index into
    /// [`Table::places`]).
    pub(crate) fn unit_of_place(&self, place: usize) -> usize {
        self.of_place[place] as usize
    }

    /// The bootstrap row by (repository, file) names, for the sidecars' lines (checks,
    /// tests), which name their place.
    pub(crate) fn by_repo_file<'t>(
        &self,
        table: &'t Table,
    ) -> std::collections::BTreeMap<(&'t str, &'t str), usize> {
        (table.places.iter().enumerate())
            .map(|(i, p)| {
                let key = (
                    table.repos[p.repo as usize].as_str(),
                    table.files[p.file as usize].as_str(),
                );
                (key, self.unit_of_place(i))
            })
            .collect()
    }
}

pub(crate) struct AccCtx<'a> {
    pub pass: u32,
    pub places: &'a [Place],
    pub bands: bool,
    pub assistants: usize,
    pub languages: usize,
    pub units: &'a Units,
}

/// One assistant's sums over part of the table.
pub(crate) struct Acc {
    pub records: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// Records of lines no longer than the typed prefix (not cases).
    pub not_cases: u64,
    /// Error records by message.
    pub error_msgs: FxHashMap<u32, u64>,
    /// By repository rank, when files are the units (otherwise `per_unit` is it: see
    /// [`Acc::per_repo`]).
    pub per_repo: Vec<Sums>,
    pub per_lang: Vec<Sums>,
    /// Per bootstrap unit.
    pub per_unit: Vec<Sums>,
    /// Σ w·c_help of suggestions by c_help bucket (empties add nothing, so one set of
    /// buckets serves both curves).
    pub buckets: Buckets,
    /// Per unit, the same buckets (only with curve bands).
    pub unit_buckets: Vec<Buckets>,
    pub latencies: Vec<f64>,
    pub ranking: Ranking,
    /// Completion records by token kind.
    pub ranking_kind: Ranking,
}

impl Acc {
    pub(crate) fn new(ctx: &AccCtx) -> Acc {
        Acc {
            per_repo: if ctx.units.by_file {
                vec![Sums::default(); ctx.units.repo_rank.len()]
            } else {
                Vec::new()
            },
            per_lang: vec![Sums::default(); ctx.languages],
            per_unit: vec![Sums::default(); ctx.units.count],
            unit_buckets: if ctx.bands {
                vec![[0; CURVE_STEPS + 1]; ctx.units.count]
            } else {
                vec![]
            },
            ..Acc::counts()
        }
    }

    /// An [`Acc`] for counts only: no sums by unit, repository or language (merged into
    /// a whole one, it adds its counts).
    fn counts() -> Acc {
        Acc {
            records: 0,
            errors: 0,
            timeouts: 0,
            not_cases: 0,
            error_msgs: FxHashMap::default(),
            per_repo: Vec::new(),
            per_lang: Vec::new(),
            per_unit: Vec::new(),
            buckets: [0; CURVE_STEPS + 1],
            unit_buckets: Vec::new(),
            latencies: vec![],
            ranking: BTreeMap::new(),
            ranking_kind: BTreeMap::new(),
        }
    }

    /// The sums over every answered case: those of its languages (each case has one),
    /// added once here rather than once a case.
    pub(crate) fn total(&self) -> Sums {
        let mut t = Sums::default();
        for s in &self.per_lang {
            t.merge(s);
        }
        t
    }

    /// The sums by repository rank.
    pub(crate) fn per_repo(&self) -> &[Sums] {
        if self.per_repo.is_empty() {
            &self.per_unit
        } else {
            &self.per_repo
        }
    }

    pub(crate) fn merge(&mut self, o: Acc) {
        self.records += o.records;
        self.errors += o.errors;
        self.timeouts += o.timeouts;
        self.not_cases += o.not_cases;
        for (m, n) in o.error_msgs {
            *self.error_msgs.entry(m).or_default() += n;
        }
        for (a, b) in self.per_repo.iter_mut().zip(&o.per_repo) {
            a.merge(b);
        }
        for (a, b) in self.per_unit.iter_mut().zip(&o.per_unit) {
            a.merge(b);
        }
        for (a, b) in self.per_lang.iter_mut().zip(&o.per_lang) {
            a.merge(b);
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
        ranking::merge(&mut self.ranking, o.ranking);
        ranking::merge(&mut self.ranking_kind, o.ranking_kind);
    }

    /// Counts an answered line-level case.
    pub(crate) fn add_case(&mut self, ctx: &AccCtx, r: &Row, terms: &Terms) {
        let place = ctx.places[r.place as usize];
        // With repositories as units, `per_unit` is the per-repository sum already.
        if ctx.units.by_file {
            self.per_repo[ctx.units.repo_rank[place.repo as usize]].add_terms(terms);
        }
        self.per_lang[place.language as usize].add_terms(terms);
        let unit = ctx.units.unit(r);
        self.per_unit[unit].add_terms(terms);
        if r.outcome == Outcome::Suggestion {
            let w = r.weight();
            let (b, gain) = (bucket(w, r.ld2()), w.saturating_sub(r.ld2()) as u64);
            self.buckets[b] += gain;
            if let Some(rb) = self.unit_buckets.get_mut(unit) {
                rb[b] += gain;
            }
        }
    }
}

/// Each assistant's counts over the kept rows of the scored pass (records, errors,
/// latencies, completion lists), in [`Acc`]s without sums: the answered line cases'
/// sums are added where their pairs are summed (`pairwise::pair_sums`, which takes
/// these counts), each case's terms computed once for both. Two tasks of the pool over
/// the two halves of the table, then merged: every sum is an integer, so the split
/// does not change any figure.
pub(crate) fn accumulate_table(ctx: &AccCtx, table: &Table, keep: &[bool]) -> Vec<Acc> {
    let mid = table.rows.len() / 2;
    let (mut accs, right) = rayon::join(
        || accumulate(ctx, &table.rows[..mid], &keep[..mid]),
        || accumulate(ctx, &table.rows[mid..], &keep[mid..]),
    );
    for (a, b) in accs.iter_mut().zip(right) {
        a.merge(b);
    }
    accs
}

/// Whether a kept row is an answered line-level case of the scored pass: what the help
/// metrics and their paired differences count.
pub(crate) fn answered_line(r: &Row, pass: u32) -> bool {
    r.pass == pass && !r.completion() && r.is_case() && r.outcome.answered()
}

/// Counts of the kept rows of `rows` in the scored pass (the cases' sums left empty).
fn accumulate(ctx: &AccCtx, rows: &[Row], keep: &[bool]) -> Vec<Acc> {
    let mut accs: Vec<Acc> = (0..ctx.assistants).map(|_| Acc::counts()).collect();
    for (r, _) in rows
        .iter()
        .zip(keep)
        .filter(|(r, k)| **k && r.pass == ctx.pass)
    {
        let a = &mut accs[r.assistant() as usize];
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
                *a.error_msgs.entry(r.error()).or_default() += 1;
            }
            Outcome::Timeout => a.timeouts += 1,
            _ => {}
        }
        if r.completion() && r.outcome.answered() {
            ranking::count(&mut a.ranking, r);
            ranking::count_kind(&mut a.ranking_kind, r);
        }
    }
    accs
}

#[cfg(test)]
mod tests {
    use std::collections::btree_map::Entry;

    use super::*;
    use crate::score::records::RowParts;

    /// Random rows of 3 cases and 2 assistants, in one pass or two (the second only in
    /// the table's last quarter, so the first pass alone is tried and given up), with
    /// duplicates within and across the halves, many equal in content: the rows kept
    /// and the duplicates counted are those of one walk of the table in order, which
    /// keeps a later duplicate only when it is smaller by content.
    #[test]
    fn the_rows_kept_are_the_smallest_then_the_first_whatever_the_split() {
        let mut next = crate::score::distance::tests::xorshift(3);
        for n in [0usize, 1, 2, 7, 40, 300] {
            for two_passes in [false, true] {
                let rows: Vec<Row> = (0..n)
                    .map(|i| {
                        Row::from(RowParts {
                            case: (next() % 3) as u32,
                            assistant: (next() % 2) as u16,
                            pass: if two_passes && i >= n * 3 / 4 { 2 } else { 1 },
                            outcome: Outcome::Suggestion,
                            len: 10,
                            ld2: (next() % 3) as u32,
                            response: next() % 2,
                            ..RowParts::default()
                        })
                    })
                    .collect();
                let name = |s: &str| vec![s.to_string()];
                let table = Table {
                    cases: 3,
                    assistants: vec!["a".into(), "b".into()],
                    places: vec![Place {
                        repo: 0,
                        file: 0,
                        language: 0,
                    }],
                    repos: name("r"),
                    files: name("f"),
                    languages: name("l"),
                    rows,
                    ..Table::default()
                };
                let mut held: BTreeMap<(u32, u32, u32), usize> = BTreeMap::new();
                let mut duplicates = 0;
                for (i, r) in table.rows.iter().enumerate() {
                    match held.entry((r.case, r.assistant(), r.pass)) {
                        Entry::Vacant(e) => {
                            e.insert(i);
                        }
                        Entry::Occupied(mut e) => {
                            duplicates += 1;
                            if before(&table, r, &table.rows[*e.get()]) {
                                e.insert(i);
                            }
                        }
                    }
                }
                let (kept, _) = keep_one(&table);
                let want: Vec<bool> = (0..n).map(|i| held.values().any(|&k| k == i)).collect();
                assert_eq!(kept.keep, want, "{n} rows, two passes: {two_passes}");
                assert_eq!(kept.duplicates, duplicates, "{n}, {two_passes}");
                let mut passes: Vec<u32> = table.rows.iter().map(|r| r.pass).collect();
                passes.sort_unstable();
                passes.dedup();
                if passes.is_empty() {
                    passes.push(1);
                }
                assert_eq!(kept.passes, passes, "{n}, {two_passes}");
            }
        }
    }
}
