//! The report's sections for block cases (methodology §9), keystrokes saved (§10) and
//! checks (§11), shown only when the summary has them: the figures beside the first
//! line's, the block H(S|t) curve, paired differences, and examples with a character
//! diff of the whole block (read again from the records: the pairs hold first lines
//! only).

use std::io::BufRead;
use std::path::PathBuf;

use serde::Deserialize;

use super::charts;
use super::examples::{Seg, diff_lines, pick};
use super::format::{mean_with_interval, num_attr, p_text, pct, share_with_interval};
use crate::score::block_terms::block_terms;
use crate::score::pairwise::Pairwise;
use crate::score::side_figures::{self, Column, SideFigure, Value};
use crate::score::{Outcome, Summary};

pub(super) struct BlockSection<'a> {
    pub table: SideTable<'a>,
    pub curve: String,
    pub pairs: Vec<PairRow<'a>>,
    pub examples: Vec<BlockExamples>,
}

/// A side figure's table as the page writes it (`side_table` in extras.html).
pub(super) struct SideTable<'a> {
    pub headers: Vec<&'static str>,
    pub rows: Vec<SideRow<'a>>,
    /// Rows carry their assistant and cells their metric, for readers of the page.
    pub metrics: bool,
}

pub(super) struct SideRow<'a> {
    pub name: &'a str,
    pub cells: Vec<Cell>,
}

/// A cell: its metric and `data-value` when it has them, and its text.
pub(super) struct Cell {
    pub metric: Option<&'static str>,
    pub value: Option<String>,
    pub text: String,
}

/// A side figure's columns the page shows, each value as a cell.
fn side_table<'a>(fig: &SideFigure<'a>) -> SideTable<'a> {
    let cols = fig.shown(|c| c.html);
    let metrics = fig.metrics_on_page;
    SideTable {
        headers: cols.iter().map(|(_, h, _)| *h).collect(),
        rows: fig
            .rows
            .iter()
            .map(|(name, values)| SideRow {
                name,
                cells: cols
                    .iter()
                    .map(|(i, _, c)| cell(values[*i], c, metrics))
                    .collect(),
            })
            .collect(),
        metrics,
    }
}

/// A value as the page writes it: counts bare (but in a table of metrics), any other
/// figure with its value for sorting, `–` where not measured.
fn cell(v: Value, c: &Column, metrics: bool) -> Cell {
    let (value, text) = match v {
        Value::Count(n) => (n.to_string(), n.to_string()),
        Value::Share(x) => (num_attr(x), pct(x)),
        Value::Interval(x, half) => (num_attr(x), share_with_interval(x, half)),
        Value::Mean(x, half) => (num_attr(x), mean_with_interval(x, half, f64::INFINITY, 2)),
        Value::Ratio(a, b) => (String::new(), format!("{a} / {b}")),
        Value::Failures(lines, _) => (lines.to_string(), lines.to_string()),
        Value::Triple(a, b, c) => (String::new(), format!("{a} / {b} / {c}")),
        Value::Missing => (String::new(), "–".into()),
    };
    Cell {
        metric: metrics.then_some(c.metric),
        value: (metrics || !c.count).then_some(value),
        text,
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
    pub table: SideTable<'a>,
    pub pairs: Vec<GolfPair<'a>>,
}

/// A paired difference with its values as attributes, for readers of the page.
pub(super) struct GolfPair<'a> {
    pub row: PairRow<'a>,
    pub diff_attr: String,
    pub p_attr: String,
}

pub(super) struct CheckSection<'a> {
    pub table: SideTable<'a>,
    pub pairs: Vec<PairRow<'a>>,
    /// Per assistant with new errors, its most frequent codes.
    pub codes: Vec<CodeTable<'a>>,
}

/// One assistant's most frequent new-error codes (at most [`TOP_CODES`]).
pub(super) struct CodeTable<'a> {
    pub name: &'a str,
    /// Code, errors, suggestions with one, their share (%) of the diagnosed.
    pub rows: Vec<(&'a str, u64, u64, String)>,
}

/// How many codes the report shows per assistant.
pub(super) const TOP_CODES: usize = 10;

/// The codes of an assistant's new errors, most errors first (ties: by code), at most
/// [`TOP_CODES`].
pub(super) fn top_codes(
    by: &std::collections::BTreeMap<String, crate::score::checks::ErrorKind>,
) -> Vec<(&str, &crate::score::checks::ErrorKind)> {
    let mut v: Vec<_> = by.iter().map(|(k, e)| (k.as_str(), e)).collect();
    v.sort_by(|a, b| b.1.errors.cmp(&a.1.errors).then(a.0.cmp(b.0)));
    v.truncate(TOP_CODES);
    v
}

pub(super) fn block_section<'a>(
    s: &'a Summary,
    names: &[&'a str],
    records: &[PathBuf],
) -> Option<BlockSection<'a>> {
    let table = side_table(&side_figures::blocks(s)?);
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
    let curves: Vec<charts::Curve> = (data.iter().zip(names))
        .map(|(p, name)| charts::Curve {
            name,
            points: p,
            band: &[],
        })
        .collect();
    Some(BlockSection {
        table,
        curve: charts::curves_svg(&curves, "block help H(S|t)"),
        pairs: pair_rows(&s.block_pairwise),
        examples: block_examples(records, s.pass),
    })
}

pub(super) fn golf_section(s: &Summary) -> Option<GolfSection<'_>> {
    let table = side_table(&side_figures::golf(s)?);
    let pairs = pair_rows(&s.golf_pairwise)
        .into_iter()
        .zip(&s.golf_pairwise)
        .map(|(row, p)| GolfPair {
            row,
            diff_attr: num_attr(p.diff),
            p_attr: p.p_value.map_or(String::new(), num_attr),
        })
        .collect();
    Some(GolfSection { table, pairs })
}

pub(super) fn check_section(s: &Summary) -> Option<CheckSection<'_>> {
    Some(CheckSection {
        table: side_table(&side_figures::checks(s)?),
        pairs: pair_rows(&s.checks_pairwise),
        codes: (s.checks.iter())
            .filter(|(_, c)| !c.new_errors_by_code.is_empty())
            .map(|(n, c)| CodeTable {
                name: n,
                rows: top_codes(&c.new_errors_by_code)
                    .into_iter()
                    .map(|(k, e)| (k, e.errors, e.cases, pct(e.share)))
                    .collect(),
            })
            .collect(),
    })
}

pub(super) struct TestsSection<'a> {
    pub table: SideTable<'a>,
    pub pairs: Vec<PairRow<'a>>,
    /// Per repository: name, cases, noticed, noticed %.
    pub noticed: Vec<(&'a str, u64, u64, String)>,
}

pub(super) fn tests_section(s: &Summary) -> Option<TestsSection<'_>> {
    Some(TestsSection {
        table: side_table(&side_figures::tests(s)?),
        pairs: pair_rows(&s.tests_pairwise),
        noticed: (s.tests_noticed.iter())
            .map(|(r, n)| {
                (
                    r.as_str(),
                    n.cases,
                    n.noticed,
                    n.share.map_or("–".into(), pct),
                )
            })
            .collect(),
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
/// by `c_help_block` (ties: by case id; chosen as the line examples are, no case twice),
/// each with a character diff of the whole block.
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
            // Rounded as shown: scores that print alike count as one.
            let shown: Vec<i64> = list.iter().map(|e| (e.0 * 100.0).round() as i64).collect();
            let picks = pick(&shown, 2);
            let rows = (picks.best.into_iter().map(|i| ("best", i)))
                .chain(picks.typical.into_iter().map(|i| ("typical", i)))
                .chain(picks.worst.into_iter().map(|i| ("worst", i)))
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
