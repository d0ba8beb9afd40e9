//! Asking again (methodology §8): repeat-skip (does an assistant skip the same lines in
//! a second pass?) and nondeterminism (identical requests answered differently).
//!
//! Nondeterminism is found in rounds by request hash, in bounded memory, in two tasks
//! side by side: four rounds per scan of the table, each round a share of the hashes of
//! about 2²⁰ rows, sorting 64-bit keys and grouping only the repeated ones.

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::records::{Outcome, Row, Table};
use super::sums::{Rates, Sums, Terms, share};

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
    /// The headline figures of each pass and their spread across passes, over the
    /// cases answered in every pass (docs/metrics.md#spread-across-passes).
    pub spread: Spread,
}

/// One pass's headline figures over the cases answered in every pass.
#[derive(Debug, Clone, Serialize)]
pub struct PassFigures {
    pub pass: u32,
    pub integral_help: f64,
    pub exact_share: f64,
    pub help_at_0: f64,
    pub empty_rate: f64,
}

/// Spread of one figure across K passes: the sample standard deviation (divided by
/// K − 1) and the range.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SpreadStat {
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl SpreadStat {
    /// Of K ≥ 2 values. No values, or a NaN among them (a pass with no case to
    /// score), make every figure NaN (null in JSON, "–" in tables); equal values have
    /// sd exactly 0 (their mean can differ from them in the last bit).
    pub fn of(xs: &[f64]) -> SpreadStat {
        if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
            return SpreadStat {
                sd: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        SpreadStat {
            sd: if min == max {
                0.0
            } else {
                super::bootstrap::sd(xs)
            },
            min,
            max,
        }
    }
}

/// The headline figures across passes (methodology §8, as aider reports a benchmark's
/// spread over repeated runs).
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    /// Cases answered (suggestion or empty) in every pass: the figures of each pass are
    /// over these, so a pass differs only by its answers, not by which cases failed.
    pub cases: u64,
    pub passes: Vec<PassFigures>,
    pub integral_help: SpreadStat,
    pub exact_share: SpreadStat,
    pub help_at_0: SpreadStat,
    pub empty_rate: SpreadStat,
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
    /// Of the repeated requests, how many got 1, 2, 3, … distinct answers (by
    /// `response_hash`): distinct answers → requests.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub distinct: BTreeMap<u32, u64>,
    /// Mean distinct answers per repeated request; absent when none was repeated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_mean: Option<f64>,
    /// The most distinct answers one request got (0 when none was repeated).
    pub distinct_max: u32,
}

/// Rows must be sorted by (assistant, pass, case) and deduplicated.
pub(crate) fn repeat_skip(
    table: &Table,
    rows: &[&Row],
    names: &[u32],
) -> BTreeMap<String, RepeatSkip> {
    let mut out = BTreeMap::new();
    for &a in names {
        // Rows are sorted by assistant first: this assistant's rows are one run.
        let from = rows.partition_point(|r| r.assistant() < a);
        let to = rows.partition_point(|r| r.assistant() <= a);
        // Sorted by pass within the assistant: one pass means nothing to compare.
        if from == to || rows[from].pass == rows[to - 1].pass {
            continue;
        }
        let mine: Vec<&Row> = rows[from..to]
            .iter()
            .copied()
            .filter(|r| !r.completion() && r.is_case())
            .collect();
        let mut passes: Vec<u32> = mine.iter().map(|r| r.pass).collect();
        passes.dedup();
        if passes.len() < 2 {
            continue;
        }
        let stats = passes.iter().map(|&p| pass_stat(&mine, p)).collect();
        let spread = spread(&mine, &passes);
        out.insert(
            table.assistants[a as usize].clone(),
            compare_passes(&mine, passes[0], passes[1], stats, spread),
        );
    }
    out
}

/// Outcome counts of one pass of one assistant's rows.
fn pass_stat(mine: &[&Row], p: u32) -> PassStat {
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
}

/// The cases answered in both passes: which pass-1 empties are empty again, which
/// pass-1 suggestions became empty.
fn compare_passes(
    mine: &[&Row],
    p1: u32,
    p2: u32,
    passes: Vec<PassStat>,
    spread: Spread,
) -> RepeatSkip {
    let first: FxHashMap<u32, Outcome> = mine
        .iter()
        .filter(|r| r.pass == p1)
        .map(|r| (r.case, r.outcome))
        .collect();
    let (mut paired, mut e1, mut e_again, mut s1, mut s_became) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for r in mine.iter().filter(|r| r.pass == p2 && r.outcome.answered()) {
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
    RepeatSkip {
        passes,
        paired_cases: paired,
        empty_again: Sums::ratio(e_again as f64, e1),
        became_empty: Sums::ratio(s_became as f64, s1),
        spread,
    }
}

/// Each pass's figures over the cases answered in every one of `passes` (at least two),
/// and their spread.
fn spread(mine: &[&Row], passes: &[u32]) -> Spread {
    // Rows are sorted by pass, then case: count per case the passes that answered it.
    let mut answered: FxHashMap<u32, usize> = FxHashMap::default();
    for r in mine.iter().filter(|r| r.outcome.answered()) {
        *answered.entry(r.case).or_default() += 1;
    }
    let every = |r: &Row| r.outcome.answered() && answered.get(&r.case) == Some(&passes.len());
    let figures: Vec<PassFigures> = passes
        .iter()
        .map(|&p| {
            let mut s = Sums::default();
            for r in mine.iter().filter(|r| r.pass == p && every(r)) {
                s.add_terms(&Terms::of(r));
            }
            PassFigures {
                pass: p,
                integral_help: s.integral_help(),
                exact_share: s.exact_share(),
                help_at_0: s.help_at_0(),
                empty_rate: s.empty_rate(),
            }
        })
        .collect();
    let stat =
        |f: fn(&PassFigures) -> f64| SpreadStat::of(&figures.iter().map(f).collect::<Vec<_>>());
    Spread {
        cases: answered.values().filter(|&&n| n == passes.len()).count() as u64,
        integral_help: stat(|f| f.integral_help),
        exact_share: stat(|f| f.exact_share),
        help_at_0: stat(|f| f.help_at_0),
        empty_rate: stat(|f| f.empty_rate),
        passes: figures,
    }
}

/// Per assistant: of the requests (by `request_hash`, over every pass) answered more
/// than once, how many got different answers (by `response_hash`). The requests are
/// split into rounds by hash (about a million answers each at most, so memory stays
/// small at any scale), each a task of the pool. A round has one 64-bit word per
/// answer: the top bits of a key (the request mixed with the assistant), the row's
/// index below them; it sorts those that may share their key bits ([`sharing`]). Words
/// whose key bits are equal (rare) give their rows, whose answers are then grouped
/// exactly by (assistant, request); keys that only share their top bits make runs of one
/// there, which count for nothing.
pub(crate) fn nondeterminism(table: &Table, keep: &[bool]) -> FxHashMap<u32, Nondeterminism> {
    const ROUND: usize = 1 << 20;
    // A power of two, at least two, of rounds: a round is the request's top bits.
    let rounds = table.rows.len().div_ceil(ROUND).max(2).next_power_of_two() as u64;
    let shift = 64 - rounds.trailing_zeros();
    // The bits of a row's index (rows are indexed by `u32`), below the key's bits.
    let index = (1u64 << (u64::BITS - (table.rows.len() as u64).leading_zeros())) - 1;
    // The answers of rows `from..to` that count, with their index.
    let rows = |from: usize, to: usize| {
        ((from..to).zip(&table.rows[from..to]).zip(&keep[from..to])).filter_map(|((i, r), k)| {
            (*k && r.request != 0 && !r.completion() && r.is_case() && r.outcome.answered())
                .then_some((i, r))
        })
    };
    let key = |r: &Row| r.request ^ u64::from(r.assistant()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // Rounds taken together by one scan of the table (a scan reads every row: one per
    // round made 10M records cost 16 reads of the table), its two halves side by side;
    // then each round a task of the pool.
    const GROUP: u64 = 8;
    let mut out: FxHashMap<u32, Nondeterminism> = FxHashMap::default();
    for first in (0..rounds).step_by(GROUP as usize) {
        let last = (first + GROUP).min(rounds);
        let words_of = |from: usize, to: usize| {
            let mut words: Vec<Vec<u64>> = vec![Vec::new(); (last - first) as usize];
            for (i, r) in rows(from, to) {
                let round = r.request >> shift;
                if (first..last).contains(&round) {
                    words[(round - first) as usize].push((key(r) & !index) | i as u64);
                }
            }
            words
        };
        let half = table.rows.len() / 2;
        let (mut words, high) =
            rayon::join(|| words_of(0, half), || words_of(half, table.rows.len()));
        for (w, h) in words.iter_mut().zip(high) {
            w.extend(h);
        }
        let counts: Vec<FxHashMap<u32, Nondeterminism>> = (words.into_par_iter())
            .map(|words| {
                let words = sharing(words, index);
                let answers: Vec<(u32, u64, u64)> = (words.chunk_by(|x, y| (x ^ y) & !index == 0))
                    .filter(|run| run.len() > 1)
                    .flatten()
                    .map(|&w| {
                        let r = &table.rows[(w & index) as usize];
                        (r.assistant(), r.request, r.response)
                    })
                    .collect();
                let mut counts = FxHashMap::default();
                count_repeated(answers, &mut counts);
                counts
            })
            .collect();
        for (a, part) in counts.into_iter().flatten() {
            let n = out.entry(a).or_default();
            n.repeated += part.repeated;
            n.differing += part.differing;
            for (d, c) in part.distinct {
                *n.distinct.entry(d).or_default() += c;
            }
        }
    }
    for n in out.values_mut() {
        n.share = (n.repeated > 0).then(|| share(n.differing, n.repeated));
        let total: u64 = n.distinct.iter().map(|(&d, &c)| u64::from(d) * c).sum();
        n.distinct_mean = (n.repeated > 0).then(|| total as f64 / n.repeated as f64);
        n.distinct_max = n.distinct.keys().next_back().copied().unwrap_or(0);
    }
    out
}

/// The words of a round whose key bits (above `index`) may be another word's, sorted:
/// every repeated key's, and some that only share the bits a filter reads (two bit
/// tables, seen once and seen twice, of about eight bits a word). Sorting only these
/// rather than all the round's words (where nothing repeats, all but about a tenth are
/// left out) gives the same runs of equal keys.
fn sharing(words: Vec<u64>, index: u64) -> Vec<u64> {
    let shift = index.count_ones();
    let bits = (words.len() * 8)
        .next_power_of_two()
        .clamp(1 << 10, 1 << 26);
    let bit = |w: u64| ((w >> shift) as usize) & (bits - 1);
    let (mut once, mut twice) = (vec![0u64; bits / 64], vec![0u64; bits / 64]);
    for &w in &words {
        let (b, m) = (bit(w) / 64, 1u64 << (bit(w) % 64));
        twice[b] |= once[b] & m;
        once[b] |= m;
    }
    drop(once);
    let mut shared: Vec<u64> = (words.into_iter())
        .filter(|&w| twice[bit(w) / 64] & (1 << (bit(w) % 64)) != 0)
        .collect();
    shared.sort_unstable();
    shared
}

/// Adds to `counts` (per assistant: requests repeated, of them answered differently,
/// distinct answers per request) the `(assistant, request, response)` answers of one
/// round.
fn count_repeated(mut answers: Vec<(u32, u64, u64)>, counts: &mut FxHashMap<u32, Nondeterminism>) {
    answers.sort_unstable();
    for run in answers.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        if run.len() > 1 {
            let c = counts.entry(run[0].0).or_default();
            c.repeated += 1;
            // Sorted by response within the run: it differs iff the ends do, and its
            // distinct answers are its runs of equal responses.
            c.differing += u64::from(run[0].2 != run[run.len() - 1].2);
            let distinct = run.chunk_by(|x, y| x.2 == y.2).count() as u32;
            *c.distinct.entry(distinct).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SpreadStat;

    /// The filtered, sorted words give the runs of equal keys a sort of all the words
    /// gives, with repeated keys, keys sharing only the filter's bits, and none.
    #[test]
    fn the_filter_keeps_every_repeated_key() {
        let mut next = crate::score::distance::tests::xorshift(11);
        let index = (1u64 << 16) - 1;
        for n in [0usize, 1, 2, 3, 100, 5000, 40000] {
            let mut words: Vec<u64> = (0..n).map(|i| (next() & !index) | i as u64).collect();
            for i in 0..n / 10 {
                let j = (next() % n as u64) as usize;
                words[i] = (words[j] & !index) | i as u64;
            }
            let mut all = words.clone();
            all.sort_unstable();
            let runs = |v: &[u64]| -> Vec<u64> {
                (v.chunk_by(|x, y| (x ^ y) & !index == 0))
                    .filter(|r| r.len() > 1)
                    .flatten()
                    .copied()
                    .collect()
            };
            let shared = super::sharing(words, index);
            assert!(
                shared.len() < n / 2 || n < 100,
                "{n}: {} kept",
                shared.len()
            );
            assert_eq!(runs(&shared), runs(&all), "{n}");
        }
    }

    /// Requests that differ only in the bits a round's sort gives to the row's index
    /// share the sort's key bits: they are no repeat. By hand, for assistant 0: R
    /// answered x, x, y (repeated, differing, 2 distinct); R ^ 1 and R ^ 6 once each
    /// (no repeat, though their top bits are R's); S answered z twice (repeated, 1
    /// distinct); for assistant 1, R once (no repeat: the assistant is in the key).
    #[test]
    fn requests_sharing_only_their_top_bits_are_no_repeat() {
        use crate::score::records::{Outcome, Row, RowParts, Table};
        let (r, s) = (0x8123_4567_89ab_cd00u64, 0x0fed_cba9_8765_4300u64);
        let row = |case: u32, assistant: u16, request: u64, response: u64| {
            Row::from(RowParts {
                case,
                assistant,
                outcome: Outcome::Suggestion,
                len: 10,
                request,
                response,
                ..RowParts::default()
            })
        };
        let rows = vec![
            row(0, 0, r, 1),
            row(1, 0, r, 1),
            row(2, 0, r, 2),
            row(3, 0, r ^ 1, 3),
            row(4, 0, r ^ 6, 4),
            row(5, 0, s, 5),
            row(6, 0, s, 5),
            row(7, 1, r, 6),
        ];
        let table = Table {
            cases: rows.len(),
            assistants: vec!["a".into(), "b".into()],
            rows,
            ..Table::default()
        };
        let keep = vec![true; table.rows.len()];
        let n = super::nondeterminism(&table, &keep);
        let a = &n[&0];
        assert_eq!((a.repeated, a.differing, a.distinct_max), (2, 1, 2));
        assert_eq!(a.distinct, [(1, 1), (2, 1)].into_iter().collect());
        assert!(!n.contains_key(&1));
    }

    #[test]
    fn sample_sd_and_range_of_three_passes() {
        // 0.2, 0.4, 0.9: mean 0.5; deviations −0.3, −0.1, 0.4; squares 0.09 + 0.01 +
        // 0.16 = 0.26; over K − 1 = 2: 0.13; sd √0.13 = 0.360555…; range 0.2 to 0.9.
        let s = SpreadStat::of(&[0.4, 0.9, 0.2]);
        assert!((s.sd - 0.13f64.sqrt()).abs() < 1e-12, "{}", s.sd);
        assert_eq!((s.min, s.max), (0.2, 0.9));
        // Two passes alike: no spread.
        let s = SpreadStat::of(&[0.25, 0.25]);
        assert_eq!((s.sd, s.min, s.max), (0.0, 0.25, 0.25));
        // Three alike whose mean is not exactly them ((0.1 + 0.1 + 0.1) / 3 is
        // 0.10000000000000002): still exactly no spread.
        assert_ne!((0.1f64 + 0.1 + 0.1) / 3.0, 0.1);
        let s = SpreadStat::of(&[0.1, 0.1, 0.1]);
        assert_eq!((s.sd, s.min, s.max), (0.0, 0.1, 0.1));
    }

    #[test]
    fn no_case_in_every_pass_gives_undefined_figures_not_infinities() {
        // With no case answered in every pass each pass's ratio is 0/0.
        for xs in [&[f64::NAN, f64::NAN][..], &[0.3, f64::NAN], &[]] {
            let s = SpreadStat::of(xs);
            assert!(
                s.sd.is_nan() && s.min.is_nan() && s.max.is_nan(),
                "{xs:?}: {s:?}"
            );
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, r#"{"sd":null,"min":null,"max":null}"#);
        }
    }
}
