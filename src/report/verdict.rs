//! The report's verdict: per pair of assistants, one plain sentence on the headline
//! figure (integral help) — who helps more, by how many points, how sure (the paired
//! p-value of `score::pairwise`), on what (shared cases, resampling units). Says "no
//! clear difference" when the p-value is not below [`CLEAR_P`] or there is none. Words
//! only: every number is the summary's.

use super::format::{count, pct};
use crate::score::Summary;
use crate::score::pairwise::Pairwise;

/// Below this paired p-value a difference is called clear: the conventional 5% level
/// (methodology §4 gives p-values, not a threshold).
pub const CLEAR_P: f64 = 0.05;

/// The metric the verdict is about: the headline.
const METRIC: &str = "integral_help";

/// One pair's verdict: the bold lead and the rest of the sentence.
pub(super) struct Verdict<'a> {
    /// The assistant ahead (the first of the pair when level).
    pub ahead: &'a str,
    pub behind: &'a str,
    /// The p-value is below [`CLEAR_P`].
    pub clear: bool,
    pub lead: String,
    pub rest: String,
}

/// One verdict per pair with shared cases, in the pairs' order.
pub(super) fn verdicts(s: &Summary) -> Vec<Verdict<'_>> {
    (s.pairwise.iter())
        .filter(|p| p.metric == METRIC)
        .map(|p| verdict(s, p))
        .collect()
}

fn verdict<'a>(s: &Summary, p: &'a Pairwise) -> Verdict<'a> {
    let (ahead, behind, diff) = if p.diff < 0.0 {
        (p.b.as_str(), p.a.as_str(), -p.diff)
    } else {
        (p.a.as_str(), p.b.as_str(), p.diff)
    };
    let on_what = on_what(s, p.cases);
    let points = match pct(diff) {
        z if z == "0.0" && diff > 0.0 => "less than 0.1".to_string(),
        d => d,
    };
    let clear = diff > 0.0 && p.p_value.is_some_and(|v| v < CLEAR_P);
    let (lead, rest) = if clear {
        (
            format!("{ahead} helps {points} points more than {behind}"),
            format!(
                " (integral help, {}, {on_what}).",
                p_words(p.p_value.unwrap_or(1.0))
            ),
        )
    } else {
        let why = if diff == 0.0 {
            format!(": the same integral help ({on_what}).")
        } else {
            match p.p_value {
                Some(v) => format!(
                    ": {ahead} is {points} points ahead on integral help, but {} is not \
                     below {CLEAR_P} ({on_what}).",
                    p_words(v)
                ),
                None => format!(
                    ": {ahead} is {points} points ahead on integral help, but the difference \
                     has no spread in the resamples, so no p-value can be given ({on_what})."
                ),
            }
        };
        (
            format!("No clear difference between {ahead} and {behind}"),
            why,
        )
    };
    Verdict {
        ahead,
        behind,
        clear,
        lead,
        rest,
    }
}

/// What a pair was compared on: its shared cases and the units resampled.
fn on_what(s: &Summary, cases: u64) -> String {
    let shared = match count(cases, "case").split_once(' ') {
        Some((n, noun)) => format!("{n} shared {noun}"),
        None => String::new(),
    };
    if s.unit == "file" {
        format!(
            "{shared} in {} of {}; files resampled, so about these files only",
            count(s.units, "file"),
            count(s.repositories, "repository")
        )
    } else {
        format!("{shared} in {}", count(s.units, s.unit))
    }
}

/// A p-value in a sentence: "p = 0.012", "p < 0.001" below that, and a fourth place
/// where three would read as the threshold itself ("p = 0.0502", not "0.050").
fn p_words(p: f64) -> String {
    let three = format!("{p:.3}");
    if p < 0.001 {
        "p < 0.001".into()
    } else if three.parse::<f64>() == Ok(CLEAR_P) {
        format!("p = {p:.4}")
    } else {
        format!("p = {three}")
    }
}
