//! Paired comparisons (methodology §4): for each pair of assistants, the difference of
//! each headline metric over the cases both answered, its bootstrap spread on the same
//! resamples, and a two-sided p-value.

use serde::Serialize;

use super::accumulate::{Acc, AccCtx, Kept, MIN_UNITS, Slots, answered_line};
use super::records::{Row, Table};
use super::sums::{Draws, METRICS, PAIR_COLUMNS, PairSide, Terms};

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

/// The pairs of assistants (a before b in name order) and, per pair and bootstrap unit,
/// the sums of each side over the cases both answered.
pub(crate) struct PairSums {
    pub pairs: Vec<(u32, u32)>,
    pub sums: Vec<Vec<(PairSide, PairSide)>>,
}

/// Per-unit sums over the cases both assistants of each pair answered (kept rows of the
/// scored pass), found through the kept rows' slots without a scan; and, from the same
/// terms, each answered line case added to its assistant's sums: the assistants' [`Acc`]s
/// (by id), with `counts` (`accumulate_table`'s) merged in. Two tasks of the pool over
/// the two halves of the cases, whose integer sums merge exactly.
pub(crate) fn pair_sums(
    ctx: &AccCtx,
    table: &Table,
    kept: (&Kept, Slots),
    names: &[u32],
    counts: Vec<Acc>,
) -> (PairSums, Vec<Acc>) {
    let (kept, Slots { slots, per_case }) = kept;
    let pairs: Vec<(u32, u32)> = names
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| names[i + 1..].iter().map(move |&b| (a, b)))
        .collect();
    // The assistants' whole Accs with the counts merged in (the cases' sums added after).
    let whole = |counts: Vec<Acc>| -> Vec<Acc> {
        let mut accs: Vec<Acc> = (0..ctx.assistants).map(|_| Acc::new(ctx)).collect();
        for (acc, c) in accs.iter_mut().zip(counts) {
            acc.merge(c);
        }
        accs
    };
    // No kept row is of the scored pass: no case.
    let Ok(pass) = kept.passes.binary_search(&ctx.pass) else {
        let sums =
            vec![vec![(PairSide::default(), PairSide::default()); ctx.units.count]; pairs.len()];
        return (PairSums { pairs, sums }, whole(counts));
    };
    // Each assistant's (by rank in `names`) slot of the pass within a case's slots.
    let at: Vec<usize> = (names.iter())
        .map(|&a| a as usize * kept.passes.len() + pass)
        .collect();
    let part = |slots: &[u32]| {
        let mut accs: Vec<Acc> = (0..ctx.assistants).map(|_| Acc::new(ctx)).collect();
        let sums = pair_part(
            ctx,
            slots,
            per_case,
            &at,
            pairs.len(),
            &table.rows,
            &mut accs,
        );
        (sums, accs)
    };
    let cut = (table.cases / 2) * per_case;
    let ((mut sums, mut accs), (right, right_accs)) =
        rayon::join(|| part(&slots[..cut]), || part(&slots[cut..]));
    drop(slots);
    for (p, r) in sums.iter_mut().zip(right) {
        for (a, b) in p.iter_mut().zip(r) {
            a.0.merge(&b.0);
            a.1.merge(&b.1);
        }
    }
    for (acc, (r, c)) in accs.iter_mut().zip(right_accs.into_iter().zip(counts)) {
        acc.merge(r);
        acc.merge(c);
    }
    (PairSums { pairs, sums }, accs)
}

/// Per (case, assistant's rank in `names`), at `case · names.len() + rank`: the index of
/// its kept row answering the line in `pass` (`u32::MAX`: none), so that a case's answers
/// are found without sorting.
pub(crate) fn answer_slots(table: &Table, keep: &[bool], pass: u32, names: &[u32]) -> Vec<u32> {
    let n_a = names.len();
    let mut rank_of = vec![0usize; table.assistants.len()];
    for (rank, &a) in names.iter().enumerate() {
        rank_of[a as usize] = rank;
    }
    let mut slot_of = vec![u32::MAX; table.cases * n_a];
    for (i, r) in table.rows.iter().enumerate() {
        if keep[i] && answered_line(r, pass) {
            slot_of[r.case as usize * n_a + rank_of[r.assistant() as usize]] = i as u32;
        }
    }
    slot_of
}

/// The pair sums of the cases whose kept rows' slots are `slots` (`per_case` a case;
/// `at[rank]` the slot of the assistant of that rank in `names`), and their answered
/// line cases added to `accs`.
fn pair_part(
    ctx: &AccCtx,
    slots: &[u32],
    per_case: usize,
    at: &[usize],
    n_pairs: usize,
    rows: &[Row],
    accs: &mut [Acc],
) -> Vec<Vec<(PairSide, PairSide)>> {
    let (n_a, units) = (at.len(), ctx.units);
    let mut sums: Vec<Vec<(PairSide, PairSide)>> =
        vec![vec![(PairSide::default(), PairSide::default()); units.count]; n_pairs];
    let mut present: Vec<(usize, &Row, Terms)> = Vec::with_capacity(n_a);
    for case_slots in slots.chunks_exact(per_case.max(1)) {
        present.clear();
        for (rank, &i) in at.iter().enumerate() {
            let s = case_slots[i];
            if s == u32::MAX {
                continue;
            }
            let r = &rows[s as usize];
            if answered_line(r, ctx.pass) {
                let terms = Terms::of(r);
                accs[r.assistant() as usize].add_case(ctx, r, &terms);
                present.push((rank, r, terms));
            }
        }
        for (i, &(ra, x, ref tx)) in present.iter().enumerate() {
            for &(rb, _, ref ty) in &present[i + 1..] {
                // Pair index of (ra, rb), ra < rb, in the flat upper triangle.
                let p = ra * n_a - ra * (ra + 1) / 2 + (rb - ra - 1);
                let slot = &mut sums[p][units.unit(x)];
                slot.0.add_terms(tx);
                slot.1.add_terms(ty);
            }
        }
    }
    sums
}

/// The paired differences of integral help, exact share and help at 0 of every pair
/// with shared cases. Pair `p`'s bootstrap columns start at `base + p·2·PAIR_COLUMNS` (a's
/// side, then b's).
pub(crate) fn pairwise(
    table: &Table,
    ps: &PairSums,
    draws: &Draws,
    base: usize,
    n_units: usize,
) -> Vec<Pairwise> {
    let mut out = Vec::new();
    for (p, &(a, b)) in ps.pairs.iter().enumerate() {
        let (sa, sb) =
            ps.sums[p]
                .iter()
                .fold((PairSide::default(), PairSide::default()), |mut acc, s| {
                    acc.0.merge(&s.0);
                    acc.1.merge(&s.1);
                    acc
                });
        if sa.cases == 0 {
            continue;
        }
        let (sa, sb) = (sa.sums(), sb.sums());
        let offset = base + p * 2 * PAIR_COLUMNS;
        for (m, point) in [
            (0, sa.integral_help() - sb.integral_help()),
            (1, sa.exact_share() - sb.exact_share()),
            (2, sa.help_at_0() - sb.help_at_0()),
        ] {
            let e = draws.paired(offset, offset + PAIR_COLUMNS, m, point);
            out.push(Pairwise {
                a: table.assistants[a as usize].clone(),
                b: table.assistants[b as usize].clone(),
                metric: METRICS[m].0.to_string(),
                cases: sa.cases,
                diff: point,
                sd: e.sd,
                p_value: (e.sd > 0.0).then(|| draws.1.p_value(point, e.sd)),
                few_units: n_units < MIN_UNITS,
            });
        }
    }
    out
}
