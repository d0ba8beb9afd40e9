//! Next-edit predictions scored (methodology §13): a prediction is a set of edits against
//! the buffer at a moment of an edit session; it is judged against the person's true next
//! edit by delta-chrF (after Zed's `edit_prediction_cli`), exact edit, location hit and
//! reversal (the share of the predicted change that undoes the person's own recent
//! edits). Per assistant, over the records: the means with the bootstrap of every side
//! figure (repositories resampled, `side_boot`), the false-alarm rate on silence moments
//! apart, and paired differences of delta-chrF and exact share on shared moments.
//!
//! Pure functions over texts: no I/O. Positions are the edit sessions' `[line, column]`,
//! 0-based, the column in characters (as `dataset::edits`, which this layer does not
//! import).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::accumulate::MIN_UNITS;
use super::bootstrap::Estimate;
use super::options::Options;
use super::pairwise::Pairwise;
use super::records::Outcome;
use super::side_boot::{Item, SideBoot, ratio};
use super::sums::{FIX, Rates};
use super::table::{count, plural};

/// A position: `[line, column]`, 0-based, the column in characters: the edit sessions'
/// `dataset::edits::Pos` (the same type; the score layer does not use the dataset's).
pub type Pos = [u32; 2];

/// One predicted edit against the moment's buffer: `start..end` replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictedEdit {
    pub start: Pos,
    pub end: Pos,
    pub text: String,
}

/// Applies `edits` to `buffer`. The edits may come in any order; they are applied as
/// the LSP applies a `TextEdit[]`: by position, insertions at one position in the
/// order given. An edit whose range lies outside the text or ends before it starts, or
/// two edits whose ranges overlap (share a character), are an error.
pub fn apply_edits(buffer: &str, edits: &[PredictedEdit]) -> Result<String, String> {
    let mut spans = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        let at = |p: Pos| offset(buffer, p).map_err(|err| format!("edit {i}: {err}"));
        let (a, b) = (at(e.start)?, at(e.end)?);
        if b < a {
            return Err(format!("edit {i}: its end is before its start"));
        }
        spans.push((a, b, e.text.as_str(), i));
    }
    // Stable: insertions at one position keep their order.
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::with_capacity(buffer.len());
    let (mut at, mut last) = (0, None);
    for (a, b, text, i) in spans {
        if a < at {
            let j = last.unwrap_or(i);
            return Err(format!("edits {j} and {i} overlap"));
        }
        out.push_str(&buffer[at..a]);
        out.push_str(text);
        (at, last) = (b, Some(i));
    }
    out.push_str(&buffer[at..]);
    Ok(out)
}

/// The byte offset of `pos` in `text`; an error naming it when it is beyond the text.
fn offset(text: &str, pos: Pos) -> Result<usize, String> {
    let mut start = 0;
    for _ in 0..pos[0] {
        match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
            Some(i) => start += i + 1,
            None => return Err(format!("line {} is beyond the text", pos[0])),
        }
    }
    let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    let line = &text[start..end];
    match line.char_indices().nth(pos[1] as usize) {
        Some((i, _)) => Ok(start + i),
        None if line.chars().count() == pos[1] as usize => Ok(end),
        None => Err(format!(
            "column {} is beyond line {} ({} characters)",
            pos[1],
            pos[0],
            line.chars().count()
        )),
    }
}

/// Character n-grams of orders 1..=ORDERS.
const ORDERS: usize = 6;
/// Recall weighs β² times precision.
const BETA: f64 = 2.0;

/// Delta-chrF, 0..=100 (after Zed's `edit_prediction_cli`, `metrics.rs`): how well the
/// change `before → predicted` matches the change `before → truth`, by character
/// n-grams.
///
/// Whitespace first: a run of whitespace other than newlines becomes one space, a run
/// of newlines one newline. Then for each order n = 1..6, the change's n-gram delta
/// `counts(after) − counts(before)`; an n-gram whose count went up is an inserted
/// n-gram (counted that many times), one whose count went down a deleted n-gram
/// (counted apart from the inserted one of the same text). The predicted multiset
/// against the true one gives TP = Σ min, FP = what the prediction has beyond the
/// truth, FN = what it lacks; `P_n = TP / (TP + FP)` and `R_n = TP / (TP + FN)` (0 when
/// there is nothing to divide by), and an order at which neither change alters any
/// n-gram counts as matched (`P_n = R_n = 1`). P and R are the means over the six
/// orders, and the score is `100 · (1 + β²)·P·R / (β²·P + R)` with β = 2 (0 when
/// P + R = 0).
///
/// Edge cases: both changes empty (after collapsing whitespace) is 100; exactly one of
/// them empty is 0. An identical change is always 100.
pub fn delta_chrf(before: &str, truth: &str, predicted: &str) -> f64 {
    let (b, t, p) = (collapse(before), collapse(truth), collapse(predicted));
    match (t != b, p != b) {
        (false, false) => return 100.0,
        (true, false) | (false, true) => return 0.0,
        (true, true) => {}
    }
    let (bt, tt) = changed_region(&b, &t);
    let (bp, pp) = changed_region(&b, &p);
    let (mut prec, mut rec) = (0.0, 0.0);
    for n in 1..=ORDERS {
        let (p_n, r_n) = matched(&ngram_delta(bt, tt, n), &ngram_delta(bp, pp, n));
        prec += p_n;
        rec += r_n;
    }
    let (prec, rec) = (prec / ORDERS as f64, rec / ORDERS as f64);
    let b2 = BETA * BETA;
    if prec + rec == 0.0 {
        0.0
    } else {
        100.0 * (1.0 + b2) * prec * rec / (b2 * prec + rec)
    }
}

/// Whitespace collapsed as delta-chrF reads it: a run of whitespace other than `\n`
/// becomes one space, a run of `\n` one `\n`.
fn collapse(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut last = None;
    for c in text.chars() {
        let c = match c {
            '\n' => '\n',
            c if c.is_whitespace() => ' ',
            c => {
                out.push(c);
                last = None;
                continue;
            }
        };
        if last != Some(c) {
            out.push(c);
            last = Some(c);
        }
    }
    out
}

/// The changed part of `before → after` with the n − 1 characters around it that an
/// n-gram crossing its edges needs (n-grams further out are in both and cancel).
fn changed_region<'a>(before: &'a [char], after: &'a [char]) -> (&'a [char], &'a [char]) {
    let (p, s) = affixes(before, after);
    let context = ORDERS - 1;
    let cut = |t: &'a [char]| {
        let from = p.saturating_sub(context);
        let to = (t.len() - s + context).min(t.len());
        &t[from..to]
    };
    (cut(before), cut(after))
}

/// The common prefix and (not overlapping it) common suffix of two slices.
fn affixes<T: PartialEq>(a: &[T], b: &[T]) -> (usize, usize) {
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let most = (a.len() - p).min(b.len() - p);
    let s = (a.iter().rev().zip(b.iter().rev()))
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    (p, s)
}

/// An n-gram of a change: inserted (`true`) or deleted.
type Gram<'a> = (bool, &'a [char]);

/// The change's n-grams of order `n`: `counts(after) − counts(before)` split into
/// inserted and deleted n-grams, each with its count (never 0).
fn ngram_delta<'a>(before: &'a [char], after: &'a [char], n: usize) -> FxHashMap<Gram<'a>, u64> {
    let mut delta: FxHashMap<&[char], i64> = FxHashMap::default();
    for g in after.windows(n) {
        *delta.entry(g).or_default() += 1;
    }
    for g in before.windows(n) {
        *delta.entry(g).or_default() -= 1;
    }
    (delta.into_iter())
        .filter(|(_, d)| *d != 0)
        .map(|(g, d)| ((d > 0, g), d.unsigned_abs()))
        .collect()
}

/// Precision and recall of the predicted n-grams against the true ones; (1, 1) when
/// neither change has any.
fn matched(truth: &FxHashMap<Gram, u64>, predicted: &FxHashMap<Gram, u64>) -> (f64, f64) {
    let want: u64 = truth.values().sum();
    let got: u64 = predicted.values().sum();
    if want == 0 && got == 0 {
        return (1.0, 1.0);
    }
    let tp: u64 = (truth.iter())
        .map(|(g, w)| (*w).min(predicted.get(g).copied().unwrap_or(0)))
        .sum();
    let share = |of: u64| if of == 0 { 0.0 } else { tp as f64 / of as f64 };
    (share(got), share(want))
}

pub use crate::lines::changed_lines;

/// The share (0..=1) of the change `before → predicted` that takes `before` back toward
/// `earlier` (the buffer some events ago): in the manner of Zed's `reversal_tracking.rs`,
/// over texts.
///
/// Both changes are read as character edits of `before` (Myers' diff): the prediction's
/// `P` (`before → predicted`) and the undo `U` (`before → earlier`, which removes what
/// the person added and puts back what they removed). A predicted edit takes back
/// - each character of `before` it removes that `U` removes too (the person's own
///   text), and
/// - of the text it inserts, the longest common subsequence with the text `U` inserts
///   where the two edits meet (their ranges share a character of `before`, or start at
///   one position), at most what it inserts.
///
/// The share is those characters over the prediction's size, Σ (removed + inserted
/// characters) of its edits; 0 for no change. A prediction that restores `earlier`
/// exactly is `U` itself: 1.
pub fn reversal(earlier: &str, before: &str, predicted: &str) -> f64 {
    let (e, b, p) = (chars(earlier), chars(before), chars(predicted));
    let pred = char_edits(&b, &p);
    let undo = char_edits(&b, &e);
    let (mut back, mut size) = (0usize, 0usize);
    for (old, new) in &pred {
        size += old.len() + new.len();
        for (u_old, _) in &undo {
            let lo = old.start.max(u_old.start);
            let hi = old.end.min(u_old.end);
            back += hi.saturating_sub(lo);
        }
        if new.is_empty() {
            continue;
        }
        let restored: usize = (undo.iter())
            .filter(|(u_old, u_new)| {
                !u_new.is_empty()
                    && ((old.start < u_old.end && u_old.start < old.end)
                        || old.start == u_old.start)
            })
            .map(|(_, u_new)| lcs(&e[u_new.clone()], &p[new.clone()]))
            .sum();
        back += restored.min(new.len());
    }
    if size == 0 {
        0.0
    } else {
        back as f64 / size as f64
    }
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// A change as character edits: each the range of `a` replaced and the range of `b`
/// that replaces it (Myers' diff with similar's bounded-work heuristic: the same edits
/// on every machine).
type CharEdit = (std::ops::Range<usize>, std::ops::Range<usize>);

fn char_edits(a: &[char], b: &[char]) -> Vec<CharEdit> {
    capture_diff_slices(Algorithm::Myers, a, b)
        .iter()
        .map(|op| op.as_tag_tuple())
        .filter(|(tag, _, _)| *tag != DiffTag::Equal)
        .map(|(_, old, new)| (old, new))
        .collect()
}

/// The length of the longest common subsequence of two texts.
fn lcs(a: &[char], b: &[char]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diag = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
            diag = up;
        }
    }
    row[b.len()]
}

/// Everything scored for one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The edits apply to the moment's buffer. When they do not, every figure is 0.
    pub applies: bool,
    /// No edits, or edits that change nothing: every figure is 0.
    pub empty: bool,
    /// [`delta_chrf`], 0..=100.
    pub delta_chrf: f64,
    /// The predicted buffer is the true one.
    pub exact: bool,
    /// The lines the prediction changes ([`changed_lines`]) overlap the lines the
    /// person changed next.
    pub location_hit: bool,
    /// [`reversal`], 0..=1.
    pub reversal: f64,
}

/// Judges the prediction `edits` at a moment: `before` the buffer at the moment, `truth`
/// the buffer after the person's next edit, `next_lines` the lines of `before` that edit
/// touched, `earlier` the buffer some events before the moment (for the reversal).
pub fn judge(
    earlier: &str,
    before: &str,
    truth: &str,
    next_lines: [u32; 2],
    edits: &[PredictedEdit],
) -> Judged {
    let zero = Judged {
        applies: true,
        empty: false,
        delta_chrf: 0.0,
        exact: false,
        location_hit: false,
        reversal: 0.0,
    };
    let Ok(predicted) = apply_edits(before, edits) else {
        return Judged {
            applies: false,
            ..zero
        };
    };
    let Some(lines) = changed_lines(before, &predicted) else {
        return Judged {
            empty: true,
            ..zero
        };
    };
    Judged {
        applies: true,
        empty: false,
        delta_chrf: delta_chrf(before, truth, &predicted),
        exact: predicted == truth,
        location_hit: lines[0] <= next_lines[1] && next_lines[0] <= lines[1],
        reversal: reversal(earlier, before, &predicted),
    }
}

/// The inline suggestion of a moment, scored (§2 on the rest of the cursor's line).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InlineRow {
    pub outcome: crate::score::Outcome,
    /// `c_help` of the rest of the line the suggestion gives against the rest the person
    /// typed (0 when empty).
    pub help: f64,
    /// The suggestion gives the person's line exactly.
    pub exact: bool,
}

/// One next-edit record's figures as the scorer reads them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextEditRow {
    pub assistant: String,
    pub repo: String,
    /// The moment (unique within its repository).
    pub case: String,
    /// `suggestion` (edits given), `empty`, `error` or `timeout`.
    pub outcome: Outcome,
    /// A silence moment: any non-empty prediction is a false alarm.
    pub silence: bool,
    /// The true next edit is away from the cursor.
    pub jump: bool,
    /// The judged prediction of a `suggestion` record (`None` elsewhere).
    pub judged: Option<Judged>,
    /// The inline suggestion asked at the moment, scored (absent where none was asked).
    #[serde(default)]
    pub inline: Option<InlineRow>,
}

/// One assistant's next-edit figures.
///
/// Errors and timeouts are never empty predictions: they are counted apart and left
/// out of every figure (methodology §2). Empties (an `empty` record, or edits that change
/// nothing) are in the figures, scoring 0, as the line figures' "with empties".
#[derive(Debug, Clone, Serialize)]
pub struct NextEditScore {
    /// Its records (one per moment).
    pub moments: u64,
    /// Answered: `suggestion` + `empty` records.
    pub answered: u64,
    /// Of those, empty predictions: `empty` records and edits that change nothing.
    pub empty: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// `suggestion` records without figures: counted, left out of the figures.
    pub unjudged: u64,
    /// Empties over answered; errors and timeouts over all records (`Rates`).
    pub empty_rate: f64,
    pub error_rate: f64,
    pub timeout_rate: f64,
    /// Answered moments that are not silence moments: the figures below are over these.
    pub scored: u64,
    /// Of those, jump moments.
    pub jumps: u64,
    /// Of those, non-empty predictions (applying or not).
    pub predictions: u64,
    /// Answered silence moments.
    pub silences: u64,
    /// Mean delta-chrF (0..100) over the scored moments.
    pub delta_chrf: Option<Estimate>,
    /// Share of the scored moments with the exact edit.
    pub exact_share: Option<Estimate>,
    /// Share of the scored moments with a location hit.
    pub location_hit: Option<Estimate>,
    /// The same over the scored jump moments.
    pub jump_location_hit: Option<Estimate>,
    /// Mean reversal (0..1) over the non-empty predictions (one that does not apply: 0).
    pub reversal: Option<Estimate>,
    /// Share of the non-empty predictions that do not apply to the buffer.
    pub not_applies: Option<Estimate>,
    /// Share of the answered silence moments with a non-empty prediction (applying or
    /// not).
    pub false_alarm_rate: Option<Estimate>,
    /// Inline suggestions at the moments where the person goes on typing at the end of
    /// the cursor's line: how many were asked, answered (suggestion or empty), empty,
    /// failed (errors and timeouts, left out), and over the answered ones the mean help
    /// (`c_help` of the line's rest, empty: 0) and the exact share.
    pub inline_asked: u64,
    pub inline_answered: u64,
    pub inline_empty: u64,
    pub inline_failed: u64,
    pub inline_help: Option<Estimate>,
    pub inline_exact: Option<Estimate>,
}

/// The next-edit figures of a set of records.
#[derive(Debug, Clone, Serialize)]
pub struct NextEditSummary {
    /// Rows read, and rows repeating an (assistant, repository, moment) already read
    /// (left out: the first is kept).
    pub records: u64,
    pub duplicates: u64,
    /// The resampling unit is the repository, whatever their number; with fewer than
    /// ten the intervals and p-values say little.
    pub repositories: u64,
    pub bootstrap: usize,
    pub seed: u64,
    pub assistants: BTreeMap<String, NextEditScore>,
    /// For every two assistants, on the moments both answered (silence moments aside):
    /// `delta_chrf` (in points) and `exact_share`.
    pub pairwise: Vec<Pairwise>,
}

/// Columns of a scored moment: 1, delta-chrF/100 (2⁻³² fixed point), exact, location
/// hit, jump, jump's location hit, non-empty, reversal (fixed point), does not apply.
const C: usize = 9;
/// Columns of a silence moment: 1, false alarm.
const C_SILENCE: usize = 2;
/// Columns of an answered inline ask: 1, help (fixed point), exact.
const C_INLINE: usize = 3;
const INLINE_HELP: Metric = |s| ratio(s[1] / FIX, s[0]);
const INLINE_EXACT: Metric = |s| ratio(s[2], s[0]);

type Metric = fn(&[f64]) -> f64;
const DELTA_CHRF: Metric = |s| 100.0 * ratio(s[1] / FIX, s[0]);
const EXACT: Metric = |s| ratio(s[2], s[0]);
const LOCATION: Metric = |s| ratio(s[3], s[0]);
const JUMP_LOCATION: Metric = |s| ratio(s[5], s[4]);
const REVERSAL: Metric = |s| ratio(s[7] / FIX, s[6]);
const NOT_APPLIES: Metric = |s| ratio(s[8], s[6]);
const FALSE_ALARM: Metric = |s| ratio(s[1], s[0]);

fn fixed(share: f64) -> u64 {
    (share.clamp(0.0, 1.0) * FIX).round() as u64
}

/// The figures of a moment's judged prediction (an `empty` record: all 0).
fn columns(judged: Option<&Judged>, jump: bool) -> Vec<u64> {
    let j = judged.filter(|j| !j.empty);
    let b = |x: bool| u64::from(x);
    let applies = j.is_some_and(|j| j.applies);
    let f = |get: fn(&Judged) -> f64| j.filter(|j| j.applies).map_or(0, |j| fixed(get(j)));
    let hit = applies && j.is_some_and(|j| j.location_hit);
    vec![
        1,
        f(|j| j.delta_chrf / 100.0),
        b(applies && j.is_some_and(|j| j.exact)),
        b(hit),
        b(jump),
        b(jump && hit),
        b(j.is_some()),
        f(|j| j.reversal),
        b(j.is_some() && !applies),
    ]
}

/// Per assistant, the next-edit figures of `rows` with bootstrap intervals (`resamples`
/// draws of repositories from `seed`, as every side figure), and the paired differences.
/// One row per (assistant, repository, moment): later repeats are left out and counted.
///
/// Errors and timeouts are never empty predictions: they are counted apart and left
/// out of every mean, share and pair (methodology §2). Empty predictions are in, at 0;
/// the false-alarm rate is over the silence moments, every other figure over the rest.
pub fn summarize(rows: &[NextEditRow], resamples: usize, seed: u64) -> NextEditSummary {
    let mut seen = BTreeSet::new();
    let kept: Vec<&NextEditRow> = (rows.iter())
        .filter(|r| seen.insert((&r.assistant, &r.repo, &r.case)))
        .collect();
    let names: Vec<String> = (kept.iter().map(|r| r.assistant.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let who = |a: &str| names.binary_search_by(|n| n.as_str().cmp(a)).unwrap_or(0);
    let repos: Vec<&str> = (kept.iter().map(|r| r.repo.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cases: BTreeMap<(&str, &str), u64> = (kept.iter())
        .map(|r| (r.repo.as_str(), r.case.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as u64))
        .collect();

    let mut tally = vec![[0u64; 6]; names.len()];
    let mut inline_tally = vec![[0u64; 4]; names.len()];
    let (mut scored, mut silent, mut inline) = (Vec::new(), Vec::new(), Vec::new());
    for r in &kept {
        let w = who(&r.assistant);
        if let Some(i) = &r.inline {
            let t = &mut inline_tally[w];
            t[0] += 1;
            match i.outcome {
                Outcome::Error | Outcome::Timeout => t[3] += 1,
                o => {
                    t[1] += 1;
                    t[2] += u64::from(o == Outcome::Empty);
                    inline.push(Item {
                        who: w,
                        case: cases[&(r.repo.as_str(), r.case.as_str())],
                        unit: repos.binary_search(&r.repo.as_str()).unwrap_or(0),
                        cols: vec![1, fixed(i.help), u64::from(i.exact)],
                    });
                }
            }
        }
        let t = &mut tally[w];
        t[0] += 1;
        match r.outcome {
            Outcome::Error => t[3] += 1,
            Outcome::Timeout => t[4] += 1,
            Outcome::Suggestion if r.judged.is_none() => t[5] += 1,
            o => {
                let judged = r.judged.as_ref().filter(|_| o == Outcome::Suggestion);
                let empty = judged.is_none_or(|j| j.empty);
                t[1] += 1;
                t[2] += u64::from(empty);
                let item = |cols| Item {
                    who: w,
                    case: cases[&(r.repo.as_str(), r.case.as_str())],
                    unit: repos.binary_search(&r.repo.as_str()).unwrap_or(0),
                    cols,
                };
                if r.silence {
                    silent.push(item(vec![1, u64::from(!empty)]));
                } else {
                    scored.push(item(columns(judged, r.jump)));
                }
            }
        }
    }
    let opts = Options {
        bootstrap: resamples,
        seed,
        ..Options::default()
    };
    let boot = SideBoot::new(&scored, names.len(), C, repos.len(), true, &opts);
    let boot_silent = SideBoot::new(&silent, names.len(), C_SILENCE, repos.len(), true, &opts);
    let boot_inline = SideBoot::new(&inline, names.len(), C_INLINE, repos.len(), true, &opts);
    let mut assistants = BTreeMap::new();
    for (w, name) in names.iter().enumerate() {
        let [moments, answered, empty, errors, timeouts, unjudged] = tally[w];
        let rates = Rates::of(moments, answered, empty, errors, timeouts);
        let s = boot.totals(w);
        let est = |over: f64, m: Metric| (over > 0.0).then(|| boot.estimate(w, m));
        let over_silent = boot_silent.totals(w)[0];
        let over_inline = boot_inline.totals(w)[0];
        let [inline_asked, inline_answered, inline_empty, inline_failed] = inline_tally[w];
        assistants.insert(
            name.clone(),
            NextEditScore {
                moments,
                answered,
                empty,
                errors,
                timeouts,
                unjudged,
                empty_rate: rates.empty_rate,
                error_rate: rates.error_rate,
                timeout_rate: rates.timeout_rate,
                scored: s[0] as u64,
                jumps: s[4] as u64,
                predictions: s[6] as u64,
                silences: over_silent as u64,
                delta_chrf: est(s[0], DELTA_CHRF),
                exact_share: est(s[0], EXACT),
                location_hit: est(s[0], LOCATION),
                jump_location_hit: est(s[4], JUMP_LOCATION),
                reversal: est(s[6], REVERSAL),
                not_applies: est(s[6], NOT_APPLIES),
                false_alarm_rate: (over_silent > 0.0).then(|| boot_silent.estimate(w, FALSE_ALARM)),
                inline_asked,
                inline_answered,
                inline_empty,
                inline_failed,
                inline_help: (over_inline > 0.0).then(|| boot_inline.estimate(w, INLINE_HELP)),
                inline_exact: (over_inline > 0.0).then(|| boot_inline.estimate(w, INLINE_EXACT)),
            },
        );
    }
    let by_chrf = boot.paired(&names, "delta_chrf", DELTA_CHRF);
    let by_exact = boot.paired(&names, "exact_share", EXACT);
    let pairwise = (by_chrf.into_iter().zip(by_exact))
        .flat_map(|(a, b)| [a, b])
        .collect();
    NextEditSummary {
        records: rows.len() as u64,
        duplicates: (rows.len() - kept.len()) as u64,
        repositories: repos.len() as u64,
        bootstrap: resamples,
        seed,
        assistants,
        pairwise,
    }
}

/// A share as a percentage with one decimal ("-" when undefined).
fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * x)
    }
}

/// An estimate as `value ± half` (of a share in %, or of points as they are).
fn pm(e: Option<&Estimate>, share: bool) -> String {
    let k = if share { 100.0 } else { 1.0 };
    match e {
        Some(e) if !e.value.is_nan() => format!("{:.1} ± {:.1}", k * e.value, k * e.half()),
        _ => "-".into(),
    }
}

fn markdown_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t
}

/// The summary as the text table people read: a line on the data, the figures per
/// assistant, notes, and the pairwise table when there are pairs.
pub fn table(s: &NextEditSummary) -> String {
    let few = (s.repositories as usize) < MIN_UNITS;
    let mut out = format!(
        "next edits (methodology §13): {}, {}, {} resamples of repositories (seed {}){}",
        count(s.records, "record"),
        count(s.repositories, "repository"),
        s.bootstrap,
        s.seed,
        if few {
            " — fewer than 10 repositories: read the intervals and p-values with care"
        } else {
            ""
        }
    );
    let mut t = markdown_table();
    t.set_header([
        "assistant",
        "moments",
        "scored",
        "empty %",
        "error %",
        "timeout %",
        "delta-chrF (±95%)",
        "exact % (±95%)",
        "location % (±95%)",
        "jump location % (±95%)",
        "reversal % (±95%)",
        "not applying %",
        "silences",
        "false alarms % (±95%)",
        "inline asked",
        "inline help % (±95%)",
        "inline exact % (±95%)",
    ]);
    for (name, a) in &s.assistants {
        t.add_row([
            name.clone(),
            a.moments.to_string(),
            a.scored.to_string(),
            pct(a.empty_rate),
            pct(a.error_rate),
            pct(a.timeout_rate),
            pm(a.delta_chrf.as_ref(), false),
            pm(a.exact_share.as_ref(), true),
            pm(a.location_hit.as_ref(), true),
            pm(a.jump_location_hit.as_ref(), true),
            pm(a.reversal.as_ref(), true),
            a.not_applies.map_or("-".into(), |e| pct(e.value)),
            a.silences.to_string(),
            pm(a.false_alarm_rate.as_ref(), true),
            a.inline_asked.to_string(),
            pm(a.inline_help.as_ref(), true),
            pm(a.inline_exact.as_ref(), true),
        ]);
    }
    out.push_str(&format!("\n\n{t}"));
    for (name, a) in &s.assistants {
        if a.errors + a.timeouts > 0 {
            out.push_str(&format!(
                "\n{name}: {} error(s), {} timeout(s), left out of the figures",
                a.errors, a.timeouts
            ));
        }
        if a.unjudged > 0 {
            out.push_str(&format!(
                "\n{name}: {} answered record(s) without figures, not scored",
                a.unjudged
            ));
        }
    }
    if s.duplicates > 0 {
        out.push_str(&format!(
            "\n{} repeated record(s) left out (the first of each moment kept)",
            s.duplicates
        ));
    }
    if s.pairwise.is_empty() {
        return out;
    }
    let mut p = markdown_table();
    p.set_header([
        "a",
        "b",
        "metric",
        "shared moments",
        "diff (a-b)",
        "sd",
        "p-value",
    ]);
    for r in &s.pairwise {
        let k = if r.metric == "delta_chrf" { 1.0 } else { 100.0 };
        p.add_row([
            r.a.clone(),
            r.b.clone(),
            r.metric.replace("_share", " %").replace('_', "-"),
            r.cases.to_string(),
            format!("{:.1}", k * r.diff),
            format!("{:.1}", k * r.sd),
            match r.p_value {
                Some(p) => format!("{p:.4}{}", if r.few_units { "*" } else { "" }),
                None => "n/a".to_string(),
            },
        ]);
    }
    out.push_str(&format!("\n\n{p}"));
    if s.pairwise.iter().any(|r| r.few_units) {
        out.push_str(&format!(
            "\n* {} {} resampled (fewer than 10): read with care",
            s.repositories,
            plural("repository")
        ));
    }
    if s.pairwise.iter().any(|r| r.p_value.is_none()) {
        out.push_str("\nn/a: no spread in the resamples, so no p-value");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal within the 2⁻³² fixed point of the sums (times 100 for delta-chrF).
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-7
    }

    fn edit(start: Pos, end: Pos, text: &str) -> PredictedEdit {
        PredictedEdit {
            start,
            end,
            text: text.to_string(),
        }
    }

    #[test]
    fn delta_chrf_of_the_true_change_is_100_and_of_an_unrelated_one_0() {
        assert_eq!(
            delta_chrf("let x = 1;\n", "let x = 42;\n", "let x = 42;\n"),
            100.0
        );
        // Every order n = 1..6 has n-grams on both sides and none in common: TP = 0,
        // P_n = R_n = 0, so P = R = 0 and the score is 0.
        assert_eq!(delta_chrf("", "abcdef", "uvwxyz"), 0.0);
    }

    #[test]
    fn delta_chrf_of_a_partial_insertion_by_hand() {
        // Truth inserts "abc", prediction "abd", into an empty buffer (all deltas > 0).
        // n=1: truth {a,b,c}, pred {a,b,d}: TP 2, FP 1, FN 1 -> P 2/3, R 2/3.
        // n=2: {ab,bc} vs {ab,bd}: TP 1, FP 1, FN 1 -> 1/2, 1/2.
        // n=3: {abc} vs {abd}: TP 0 -> 0, 0.
        // n=4..6: neither change has an n-gram -> 1, 1 each.
        // P = R = (2/3 + 1/2 + 0 + 3)/6 = 25/36; F2 = 5PR/(4P + R) = P -> 69.44.
        let score = delta_chrf("", "abc", "abd");
        assert!(close(score, 100.0 * 25.0 / 36.0), "{score}");
    }

    #[test]
    fn delta_chrf_of_deletions_by_hand() {
        // "abcd": truth deletes "bc" ("ad"), prediction deletes "b" ("acd"). ¬ marks a
        // deleted n-gram.
        // n=1: truth {¬b,¬c}, pred {¬b}: TP 1, FP 0, FN 1 -> P 1, R 1/2.
        // n=2: truth {¬ab,¬bc,¬cd,ad}, pred {¬ab,¬bc,ac}: TP 2 -> P 2/3, R 2/4.
        // n=3: truth {¬abc,¬bcd}, pred {¬abc,¬bcd,acd}: TP 2 -> P 2/3, R 1.
        // n=4: both {¬abcd} -> 1, 1. n=5, 6: no n-grams -> 1, 1.
        // P = (1 + 2/3 + 2/3 + 3)/6 = 8/9; R = (1/2 + 1/2 + 4)/6 = 5/6;
        // F2 = 5·(8/9)(5/6) / (4·8/9 + 5/6) = 200/237 -> 84.39.
        let score = delta_chrf("abcd", "ad", "acd");
        assert!(close(score, 100.0 * 200.0 / 237.0), "{score}");
    }

    #[test]
    fn delta_chrf_collapses_whitespace_runs() {
        // "x  \n\n\ny" collapses to "x \ny", which the prediction is.
        assert_eq!(delta_chrf("x", "x  \n\n\ny", "x \ny"), 100.0);
        assert_eq!(delta_chrf("x", "x \t\ny", "x \n\ny"), 100.0);
        // Collapsed, not removed: a space is still a character.
        assert!(delta_chrf("x", "x \ny", "x\ny") < 100.0);
    }

    #[test]
    fn delta_chrf_when_a_change_is_empty() {
        // Both changes empty: 100, also when they only differ in whitespace runs.
        assert_eq!(delta_chrf("same", "same", "same"), 100.0);
        assert_eq!(delta_chrf("a  b", "a b", "a\tb"), 100.0);
        // Exactly one empty: 0.
        assert_eq!(delta_chrf("abc", "abcd", "abc"), 0.0);
        assert_eq!(delta_chrf("abc", "abc", "abcd"), 0.0);
    }

    #[test]
    fn apply_edits_refuses_ranges_outside_the_text_and_overlaps() {
        let buf = "ab\ncd";
        assert!(apply_edits(buf, &[edit([5, 0], [5, 0], "x")]).is_err());
        // Line 0 has 2 characters: column 3 is beyond it.
        assert!(apply_edits(buf, &[edit([0, 3], [0, 3], "x")]).is_err());
        assert!(apply_edits(buf, &[edit([1, 1], [0, 1], "x")]).is_err());
        let overlapping = [edit([0, 0], [0, 2], "x"), edit([0, 1], [1, 1], "y")];
        assert!(apply_edits(buf, &overlapping).is_err());
        // Touching is no overlap: "ab" -> "x", then "\n" -> "-".
        let touching = [edit([0, 0], [0, 2], "x"), edit([0, 2], [1, 0], "-")];
        assert_eq!(apply_edits(buf, &touching).unwrap(), "x-cd");
    }

    #[test]
    fn apply_edits_in_any_order_give_the_same_text() {
        let buf = "one two\nthree";
        let mut edits = vec![edit([0, 0], [0, 3], "ONE"), edit([1, 5], [1, 5], "!")];
        assert_eq!(apply_edits(buf, &edits).unwrap(), "ONE two\nthree!");
        edits.reverse();
        assert_eq!(apply_edits(buf, &edits).unwrap(), "ONE two\nthree!");
        // Insertions at one position keep the order given (as the LSP's TextEdit[]).
        let same = [edit([0, 3], [0, 3], "a"), edit([0, 3], [0, 3], "b")];
        assert_eq!(apply_edits(buf, &same).unwrap(), "oneab two\nthree");
        assert_eq!(apply_edits(buf, &[]).unwrap(), buf);
    }

    #[test]
    fn apply_edits_columns_count_characters() {
        // "héllo wörld": 'w' is character 6 (byte 7); "wörld" is characters 6..11.
        let buf = "héllo wörld\n🦀x";
        let e = [edit([0, 6], [0, 11], "there"), edit([1, 1], [1, 2], "y")];
        assert_eq!(apply_edits(buf, &e).unwrap(), "héllo there\n🦀y");
        assert!(apply_edits(buf, &[edit([1, 3], [1, 3], "z")]).is_err());
    }

    #[test]
    fn changed_lines_of_inserts_deletes_and_replacements() {
        let buf = "a\nb\nc\n";
        assert_eq!(changed_lines(buf, buf), None);
        // Typed inside line 1.
        assert_eq!(changed_lines(buf, "a\nbx\nc\n"), Some([1, 1]));
        // A line inserted between "a" and "b": before line 1.
        assert_eq!(changed_lines(buf, "a\nx\nb\nc\n"), Some([1, 1]));
        // Line 1 deleted: "b\n" is bytes 2..4, all on line 1.
        assert_eq!(changed_lines(buf, "a\nc\n"), Some([1, 1]));
        // "b\nc" replaced by "X\nY": lines 1 to 2.
        assert_eq!(changed_lines(buf, "a\nX\nY\n"), Some([1, 2]));
        // At the end: the line the insertion starts on (after a final newline, the empty one).
        assert_eq!(changed_lines("a\nb", "a\nb\nc"), Some([1, 1]));
        assert_eq!(changed_lines(buf, "a\nb\nc\nd\n"), Some([3, 3]));
        assert_eq!(changed_lines("", "x"), Some([0, 0]));
        // 'é' and 'ê' share their first byte: the change starts at the character.
        assert_eq!(changed_lines("x\né\n", "x\nê\n"), Some([1, 1]));
    }

    #[test]
    fn reversal_by_hand() {
        // The prediction puts back exactly what the person had: all of it undoes.
        let (earlier, before) = ("let a = 1;\n", "let ab = 2;\n");
        assert_eq!(reversal(earlier, before, earlier), 1.0);
        // The person added "0" on line 0; the prediction changes "2" to "3" on line 1:
        // nothing of it is the person's edit. 0 of 2 characters.
        let (earlier, before) = ("x = 1\ny = 2\n", "x = 10\ny = 2\n");
        assert_eq!(reversal(earlier, before, "x = 10\ny = 3\n"), 0.0);
        // The person typed "XY"; the prediction replaces "Y" by "Z": it removes 1 of the
        // person's characters and inserts 1 new one: 1/2.
        assert_eq!(reversal("ab", "abXY", "abXZ"), 0.5);
        // The person deleted "b"; the prediction puts it back and adds "d": 1/2.
        assert_eq!(reversal("abc", "ac", "abcd"), 0.5);
        // No predicted change: 0.
        assert_eq!(reversal("a", "b", "b"), 0.0);
    }

    #[test]
    fn judge_scores_what_does_not_apply_as_zero_and_the_oracle_in_full() {
        let earlier = "fn f() {\n}\n";
        let before = "fn f() {\n    x\n}\n";
        let truth = "fn f() {\n    x + 1\n}\n";
        let zeros = Judged {
            applies: false,
            empty: false,
            delta_chrf: 0.0,
            exact: false,
            location_hit: false,
            reversal: 0.0,
        };
        let wrong = [edit([9, 0], [9, 0], "x")];
        assert_eq!(judge(earlier, before, truth, [1, 1], &wrong), zeros);
        // The true edit: " + 1" after "x" (line 1, column 5). It removes nothing the
        // person typed and puts back nothing they deleted: reversal 0.
        let oracle = [edit([1, 5], [1, 5], " + 1")];
        let j = judge(earlier, before, truth, [1, 1], &oracle);
        assert_eq!(
            j,
            Judged {
                applies: true,
                empty: false,
                delta_chrf: 100.0,
                exact: true,
                location_hit: true,
                reversal: 0.0,
            }
        );
        // Right text, wrong lines: no location hit.
        assert!(!judge(earlier, before, truth, [2, 2], &oracle).location_hit);
        // Empty: no edits, or edits that change nothing.
        let empty = Judged {
            applies: true,
            empty: true,
            ..zeros
        };
        assert_eq!(judge(earlier, before, truth, [1, 1], &[]), empty);
        let same = [edit([1, 4], [1, 5], "x")];
        assert_eq!(judge(earlier, before, truth, [1, 1], &same), empty);
    }

    fn judged(delta_chrf: f64, exact: bool, location_hit: bool, reversal: f64) -> Judged {
        Judged {
            applies: true,
            empty: false,
            delta_chrf,
            exact,
            location_hit,
            reversal,
        }
    }

    /// Two assistants, three repositories: r1 has moments c1, c2 (c2 a jump), r2 c3, c4,
    /// r3 the silence moments c5, c6.
    fn rows() -> Vec<NextEditRow> {
        let not_applying = Judged {
            applies: false,
            ..judged(0.0, false, false, 0.0)
        };
        let empty = Judged {
            empty: true,
            ..judged(0.0, false, false, 0.0)
        };
        let row = |a: &str, case: &str, outcome, judged: Option<Judged>| {
            let n: u32 = case[1..].parse().unwrap();
            NextEditRow {
                assistant: a.to_string(),
                repo: format!("r{}", n.div_ceil(2)),
                case: case.to_string(),
                outcome,
                silence: n >= 5,
                jump: n == 2,
                judged,
                inline: None,
            }
        };
        use Outcome::*;
        vec![
            row("A", "c1", Suggestion, Some(judged(100.0, true, true, 0.0))),
            row("A", "c2", Suggestion, Some(judged(50.0, false, true, 0.5))),
            row("A", "c3", Empty, None),
            row("A", "c4", Error, None),
            row("A", "c5", Suggestion, Some(judged(0.0, false, false, 0.0))),
            row("A", "c6", Empty, None),
            row("B", "c1", Suggestion, Some(judged(40.0, false, false, 0.3))),
            row("B", "c2", Timeout, None),
            row("B", "c3", Suggestion, Some(not_applying)),
            row("B", "c4", Suggestion, Some(judged(80.0, false, true, 0.0))),
            row("B", "c5", Suggestion, Some(empty)),
            row("B", "c6", Suggestion, Some(judged(0.0, false, false, 0.0))),
        ]
    }

    #[test]
    fn summarize_by_hand() {
        let s = summarize(&rows(), 200, 7);
        assert_eq!((s.records, s.duplicates, s.repositories), (12, 0, 3));
        let v = |e: &Option<Estimate>| e.as_ref().unwrap().value;
        let a = &s.assistants["A"];
        // A answered c1, c2, c3 (empty), c5, c6 (empty); c4 is an error.
        assert_eq!(
            (a.moments, a.answered, a.empty, a.errors, a.timeouts),
            (6, 5, 2, 1, 0)
        );
        assert!(close(a.empty_rate, 2.0 / 5.0) && close(a.error_rate, 1.0 / 6.0));
        // Scored: c1, c2, c3; c2 the jump; c1 and c2 non-empty; silences c5, c6.
        assert_eq!((a.scored, a.jumps, a.predictions, a.silences), (3, 1, 2, 2));
        // delta-chrF (100 + 50 + 0)/3; exact 1/3 (c1); location 2/3 (c1, c2); the jump
        // c2 hit; reversal (0 + 0.5)/2 over c1, c2; none fails to apply; false alarm
        // c5 of c5, c6.
        assert!(close(v(&a.delta_chrf), 50.0));
        assert!(close(v(&a.exact_share), 1.0 / 3.0));
        assert!(close(v(&a.location_hit), 2.0 / 3.0));
        assert!(close(v(&a.jump_location_hit), 1.0));
        assert!(close(v(&a.reversal), 0.25));
        assert!(close(v(&a.not_applies), 0.0));
        assert!(close(v(&a.false_alarm_rate), 0.5));
        let b = &s.assistants["B"];
        // B: c2 timed out; c5's edits change nothing (empty).
        assert_eq!(
            (b.moments, b.answered, b.empty, b.errors, b.timeouts),
            (6, 5, 1, 0, 1)
        );
        // Scored c1, c3 (does not apply), c4; no jump moment answered.
        assert_eq!((b.scored, b.jumps, b.predictions, b.silences), (3, 0, 3, 2));
        // delta-chrF (40 + 0 + 80)/3; exact 0; location 1/3 (c4); reversal
        // (0.3 + 0 + 0)/3; 1 of 3 predictions does not apply; false alarm c6 of 2.
        assert!(close(v(&b.delta_chrf), 40.0));
        assert!(close(v(&b.exact_share), 0.0));
        assert!(close(v(&b.location_hit), 1.0 / 3.0));
        assert!(b.jump_location_hit.is_none());
        assert!(close(v(&b.reversal), 0.1));
        assert!(close(v(&b.not_applies), 1.0 / 3.0));
        assert!(close(v(&b.false_alarm_rate), 0.5));
        for e in [&a.delta_chrf, &b.exact_share, &b.false_alarm_rate] {
            let e = e.as_ref().unwrap();
            assert!(e.sd >= 0.0 && e.ci95[0] <= e.value && e.value <= e.ci95[1]);
        }
        // Shared scored moments c1 and c3: A (100 + 0)/2 − B (40 + 0)/2 = 30 points;
        // exact 1/2 − 0.
        let p: Vec<(&str, u64, f64)> = (s.pairwise.iter())
            .map(|p| (p.metric.as_str(), p.cases, p.diff))
            .collect();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].0, p[0].1), ("delta_chrf", 2));
        assert!(close(p[0].2, 30.0));
        assert_eq!((p[1].0, p[1].1), ("exact_share", 2));
        assert!(close(p[1].2, 0.5));
        assert!(s.pairwise.iter().all(|p| p.few_units && p.a == "A"));
        let t = table(&s);
        assert!(
            t.contains("50.0 ±") && t.contains("A: 1 error(s), 0 timeout(s)"),
            "{t}"
        );
    }

    #[test]
    fn summarize_is_deterministic() {
        let json = |rows: &[NextEditRow], seed| {
            serde_json::to_string(&summarize(rows, 200, seed)).unwrap()
        };
        let mut rows = rows();
        let first = json(&rows, 7);
        assert_eq!(json(&rows, 7), first);
        // Nor does the order of the records matter.
        rows.reverse();
        assert_eq!(json(&rows, 7), first);
        // A repeated record is left out and counted.
        rows.push(rows[0].clone());
        let s = summarize(&rows, 200, 7);
        assert_eq!((s.records, s.duplicates), (13, 1));
    }
}
