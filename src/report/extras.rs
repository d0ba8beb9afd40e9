//! The report's sections for block cases (methodology §9), keystrokes saved (§10) and
//! checks (§11), shown only when the summary has them: the figures beside the first
//! line's, the block H(S|t) curve, paired differences, and examples with a character
//! diff of the whole block (read again from the records: the pairs hold first lines
//! only).

use std::io::BufRead;
use std::path::PathBuf;

use serde::Deserialize;

use super::charts;
use super::examples::{Seg, diff_lines};
use super::format::{num_attr, p_text, pct};
use crate::score::block_terms::block_terms;
use crate::score::pairwise::Pairwise;
use crate::score::{Estimate, Outcome, Summary};

pub(super) struct BlockSection<'a> {
    pub rows: Vec<BlockRow<'a>>,
    pub curve: String,
    pub pairs: Vec<PairRow<'a>>,
    pub examples: Vec<BlockExamples>,
}

pub(super) struct BlockRow<'a> {
    pub name: &'a str,
    pub cases: u64,
    pub integral_help: Shown,
    pub exact_share: Shown,
    pub lines_accepted: Shown,
    pub chars_accepted: Shown,
    pub first_line: Shown,
}

/// A figure as `data-value` and as text (with its ±95% half-width when it has one).
pub(super) struct Shown {
    pub attr: String,
    pub text: String,
}

fn shown(e: &Estimate) -> Shown {
    Shown {
        attr: num_attr(e.value),
        text: format!("{} ± {}", pct(e.value), pct(e.half())),
    }
}

fn plain(v: f64) -> Shown {
    Shown {
        attr: num_attr(v),
        text: pct(v),
    }
}

pub(super) struct PairRow<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub metric: &'a str,
    pub cases: u64,
    pub diff: String,
    pub p: String,
}

fn pair_rows(rows: &[Pairwise]) -> Vec<PairRow<'_>> {
    rows.iter()
        .map(|p| PairRow {
            a: &p.a,
            b: &p.b,
            metric: &p.metric,
            cases: p.cases,
            diff: pct(p.diff),
            p: format!(
                "{}{}",
                p_text(p.p_value),
                if p.few_units { "*" } else { "" }
            ),
        })
        .collect()
}

pub(super) struct BlockExamples {
    pub name: String,
    pub rows: Vec<BlockExample>,
}

pub(super) struct BlockExample {
    pub place: String,
    pub title: &'static str,
    pub c_help: String,
    pub expected: Vec<Seg>,
    pub predicted: Vec<Seg>,
}

pub(super) struct GolfSection<'a> {
    pub rows: Vec<GolfRow<'a>>,
    pub pairs: Vec<GolfPair<'a>>,
}

pub(super) struct GolfRow<'a> {
    pub name: &'a str,
    pub lines: u64,
    pub chars: u64,
    pub keys: u64,
    pub saved: Shown,
    pub one_accept: Shown,
    /// Requests per line (a count, not a share), with its ±95% half-width.
    pub requests: Shown,
    pub lines_with_failures: u64,
    pub failures: u64,
    pub capped: u64,
}

/// A paired difference with its values as attributes, for readers of the page.
pub(super) struct GolfPair<'a> {
    pub row: PairRow<'a>,
    pub diff_attr: String,
    pub p_attr: String,
}

pub(super) struct CheckSection<'a> {
    pub rows: Vec<CheckRow<'a>>,
    pub pairs: Vec<PairRow<'a>>,
}

pub(super) struct CheckRow<'a> {
    pub name: &'a str,
    pub checked: u64,
    pub syntax_valid: Shown,
    pub diagnosed: String,
    pub no_new_error: Shown,
}

pub(super) fn block_section<'a>(
    s: &'a Summary,
    names: &[&'a str],
    records: &[PathBuf],
) -> Option<BlockSection<'a>> {
    if s.blocks.is_empty() {
        return None;
    }
    let rows = s
        .blocks
        .iter()
        .map(|(n, b)| BlockRow {
            name: n,
            cases: b.cases,
            integral_help: shown(&b.integral_help),
            exact_share: shown(&b.exact_share),
            lines_accepted: shown(&b.lines_accepted),
            chars_accepted: plain(b.chars_accepted.value),
            first_line: plain(
                s.assistants
                    .get(n)
                    .map_or(f64::NAN, |a| a.integral_help.value),
            ),
        })
        .collect();
    // Every assistant in the headline's order, so colours match the other charts.
    let data: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| {
            s.blocks
                .get(*n)
                .map(|b| b.curve.iter().map(|p| (p.t, p.help)).collect())
                .unwrap_or_default()
        })
        .collect();
    let curves: Vec<charts::Curve> = data
        .iter()
        .map(|p| charts::Curve {
            points: p,
            band: &[],
        })
        .collect();
    Some(BlockSection {
        rows,
        curve: charts::curves_svg(&curves, "block help H(S|t)"),
        pairs: pair_rows(&s.block_pairwise),
        examples: block_examples(records, s.pass),
    })
}

pub(super) fn golf_section(s: &Summary) -> Option<GolfSection<'_>> {
    if s.golf.is_empty() {
        return None;
    }
    let rows = s
        .golf
        .iter()
        .map(|(n, g)| GolfRow {
            name: n,
            lines: g.lines,
            chars: g.chars,
            keys: g.keys,
            saved: shown(&g.keystrokes_saved),
            one_accept: shown(&g.one_accept_share),
            requests: Shown {
                attr: num_attr(g.requests_per_line.value),
                text: format!(
                    "{:.2} ± {:.2}",
                    g.requests_per_line.value,
                    g.requests_per_line.half()
                ),
            },
            lines_with_failures: g.lines_with_failures,
            failures: g.failures,
            capped: g.capped,
        })
        .collect();
    let pairs = pair_rows(&s.golf_pairwise)
        .into_iter()
        .zip(&s.golf_pairwise)
        .map(|(row, p)| GolfPair {
            row,
            diff_attr: num_attr(p.diff),
            p_attr: p.p_value.map_or(String::new(), num_attr),
        })
        .collect();
    Some(GolfSection { rows, pairs })
}

pub(super) fn check_section(s: &Summary) -> Option<CheckSection<'_>> {
    if s.checks.is_empty() {
        return None;
    }
    Some(CheckSection {
        rows: s
            .checks
            .iter()
            .map(|(n, c)| CheckRow {
                name: n,
                checked: c.checked,
                syntax_valid: shown(&c.syntax_valid),
                diagnosed: c.diagnosed.map_or("–".into(), |d| d.to_string()),
                no_new_error: c.no_new_error.as_ref().map_or(
                    Shown {
                        attr: String::new(),
                        text: "–".into(),
                    },
                    shown,
                ),
            })
            .collect(),
        pairs: pair_rows(&s.checks_pairwise),
    })
}

/// What the examples need of a block record.
#[derive(Deserialize)]
struct BlockRecord {
    case: String,
    assistant: String,
    #[serde(default = "one")]
    pass: u32,
    outcome: Outcome,
    expected_block: Option<String>,
    predicted: Option<String>,
    predicted_text: Option<String>,
}

fn one() -> u32 {
    1
}

/// Per assistant (by name), the best, typical and worst two non-empty block suggestions
/// by `c_help_block` (ties: by case id), each with a character diff of the whole block.
fn block_examples(records: &[PathBuf], pass: u32) -> Vec<BlockExamples> {
    let mut by: std::collections::BTreeMap<String, Vec<(f64, String, String, String)>> =
        Default::default();
    for path in records {
        let Ok(f) = std::fs::File::open(path) else {
            continue;
        };
        for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
            if !line.contains("\"expected_block\"") {
                continue;
            }
            let Ok(r) = serde_json::from_str::<BlockRecord>(&line) else {
                continue;
            };
            let (Some(t), Outcome::Suggestion) = (r.expected_block, r.outcome) else {
                continue;
            };
            if r.pass != pass {
                continue;
            }
            let p = r.predicted_text.or(r.predicted).unwrap_or_default();
            let terms = block_terms(&t, Some(&p));
            let c = f64::from(terms.len.saturating_sub(terms.ld2)) / f64::from(terms.len.max(1));
            by.entry(r.assistant).or_default().push((c, r.case, t, p));
        }
    }
    by.into_iter()
        .map(|(name, mut list)| {
            list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            list.dedup_by(|a, b| a.1 == b.1);
            let n = list.len();
            let mut picks: Vec<(&'static str, usize)> = Vec::new();
            for i in 0..2.min(n) {
                picks.push(("best", i));
            }
            for i in (n / 2).saturating_sub(1)..(n / 2 + 1).min(n) {
                picks.push(("typical", i));
            }
            for i in (n.saturating_sub(2)..n).rev() {
                picks.push(("worst", i));
            }
            let mut seen = std::collections::BTreeSet::new();
            let rows = picks
                .into_iter()
                .filter(|(_, i)| seen.insert(*i))
                .map(|(title, i)| {
                    let (c, case, t, p) = &list[i];
                    let (expected, predicted) = diff_lines(t, p);
                    BlockExample {
                        place: case.clone(),
                        title,
                        c_help: format!("{c:.2}"),
                        expected,
                        predicted,
                    }
                })
                .collect();
            BlockExamples { name, rows }
        })
        .collect()
}
