//! The HTML report's page: the figures of a summary laid out for the templates in
//! `templates/` (askama, checked at compile time, every value escaped unless `|safe`).
//! Numbers are formatted here; markup is written only by the templates and, for the
//! charts' SVG, by `charts`.
//!
//! The templates (one file per section) are written so the page has no whitespace between
//! elements.

use std::path::PathBuf;

use askama::Template;

use super::charts;
use super::examples::{Examples, examples};
use super::format::{
    INTERVALS_NOTE, count, direction, diverging, num_attr, p_text, pct, share_interval, strength,
};
use super::ranking::{RankPair, RankRow, ranking, ranking_pairs};
use super::run_section::{RunView, run_view};
use super::verdict::{CLEAR_P, Verdict, verdicts};
use crate::score::summary::{AssistantScore, MIN_UNITS};
use crate::score::{Estimate, Pair, Summary};

#[derive(Template)]
#[template(path = "report.html")]
struct Page<'a> {
    head: Head,
    /// Who helps more, per pair, in words: the summary's first lines.
    verdicts: Vec<Verdict<'a>>,
    clear_p: f64,
    headline: Vec<HeadRow<'a>>,
    intervals_note: &'static str,
    names: Vec<&'a str>,
    curves: Curves,
    /// SVG charts.
    intervals: Vec<String>,
    rates: Vec<RateRow<'a>>,
    failures: Vec<FailureRow<'a>>,
    repeat_skip: Vec<RepeatRow<'a>>,
    spread: Vec<SpreadRows<'a>>,
    pvalues: Vec<PMatrix<'a>>,
    p_scale: Vec<PScaleRow>,
    breakdowns: Vec<BreakdownTable<'a>>,
    ranking: Vec<RankRow<'a>>,
    ranking_pairs: Vec<RankPair<'a>>,
    /// found@k against k, and the mean place against the list's length (SVG; empty
    /// when no list has them).
    found_at_chart: String,
    length_chart: String,
    examples: Examples<'a>,
    blocks: Option<super::extras::BlockSection<'a>>,
    golf: Option<super::extras::GolfSection<'a>>,
    checks: Option<super::extras::CheckSection<'a>>,
    tests: Option<super::extras::TestsSection<'a>>,
    design: Option<super::design::DesignSection<'a>>,
    curve_pairs: Option<super::curve_pairs::CurvePairsSection<'a>>,
    run: Option<RunView>,
}

struct Head {
    records: u64,
    sources: String,
    pass: u32,
    bootstrap: usize,
    units: u64,
    unit: &'static str,
    /// "files", "repositories".
    unit_plural: String,
    /// What the bootstrap resamples, for captions: "13 repositories", "57 files of 4
    /// repositories".
    resampled: String,
    seed: u64,
    version: &'static str,
    /// With files as the unit: how many repositories there are.
    few_repositories: Option<u64>,
    min_units: usize,
    /// With files as the unit: what the intervals and p-values are about.
    estimand: Option<String>,
}

/// A share as `data-value` (the number, empty when undefined) and as text.
struct Fig {
    attr: String,
    pct: String,
}

impl From<f64> for Fig {
    fn from(v: f64) -> Fig {
        Fig {
            attr: num_attr(v),
            pct: pct(v),
        }
    }
}

struct HeadRow<'a> {
    name: &'a str,
    cases: u64,
    integral_help: Fig,
    /// The 95% interval, cut to 0..100%.
    integral_help_ci: String,
    exact_share: Fig,
    exact_share_ci: String,
    help_at_0: Fig,
    integral_help_nonempty: Fig,
    empty_rate: Fig,
    error_rate: Fig,
    timeout_rate: Fig,
    p50: String,
    p95: String,
}

struct Curves {
    /// The assistants, comma-separated, in the curves' order.
    assistants: String,
    help: String,
    help_nonempty: String,
}

struct RateRow<'a> {
    name: &'a str,
    pass: u32,
    records: u64,
    empty: String,
    errors: u64,
    timeouts: u64,
}

struct FailureRow<'a> {
    name: &'a str,
    errors: u64,
    timeouts: u64,
    top_error: &'a str,
    repeated: u64,
    differently: String,
    /// Distinct answers per repeated request: "1: n, 2: m, …", the mean and the max.
    distinct: String,
    distinct_mean: String,
    distinct_max: u32,
}

struct RepeatRow<'a> {
    name: &'a str,
    paired: u64,
    empty_again: String,
    became_empty: String,
}

/// One assistant's spread across passes: a row per pass, then the sd and the range.
struct SpreadRows<'a> {
    name: &'a str,
    cases: u64,
    passes: Vec<[String; 5]>,
    sd: [String; 4],
    range: [String; 4],
}

/// A matrix of p-values: one row per assistant, a cell per other assistant.
struct PMatrix<'a> {
    title: &'static str,
    metric: &'static str,
    rows: Vec<PRow<'a>>,
}

struct PRow<'a> {
    name: &'a str,
    cells: Vec<PCell<'a>>,
}

/// The diagonal, a compared pair, or a pair without shared cases (`pair` none).
struct PCell<'a> {
    diagonal: bool,
    pair: Option<PPair<'a>>,
}

struct PPair<'a> {
    background: String,
    colour: &'static str,
    /// "higher" (the row's assistant ahead), "lower", or "level".
    direction: &'static str,
    /// ▲, ▼ or =.
    arrow: &'static str,
    /// The column's assistant.
    b: &'a str,
    /// The p-value as `data-value` ("n/a" without one).
    value: String,
    few_units: bool,
    /// Row − column, in points, signed.
    diff: String,
    cases: u64,
    p: String,
}

struct BreakdownTable<'a> {
    title: &'static str,
    key: &'static str,
    rows: Vec<BreakdownRow<'a>>,
}

struct BreakdownRow<'a> {
    name: &'a str,
    key: &'a str,
    cases: u64,
    integral_help: Fig,
    exact_share: Fig,
    help_at_0: Fig,
    empty_rate: Fig,
}

/// The report's HTML page.
pub(super) fn html(
    s: &Summary,
    pairs: &[Pair],
    manifest: Option<&crate::replay::manifest::Manifest>,
    records: &[PathBuf],
) -> askama::Result<String> {
    let names: Vec<&str> = s.assistants.keys().map(String::as_str).collect();
    let page = Page {
        head: head(s, records),
        verdicts: verdicts(s),
        clear_p: CLEAR_P,
        headline: s.assistants.iter().map(|(n, a)| head_row(n, a)).collect(),
        intervals_note: INTERVALS_NOTE,
        curves: curves(s, &names),
        intervals: intervals(s),
        rates: rates(s),
        failures: failures(s),
        repeat_skip: (s.repeat_skip.iter())
            .map(|(n, rs)| RepeatRow {
                name: n,
                paired: rs.paired_cases,
                empty_again: pct(rs.empty_again),
                became_empty: pct(rs.became_empty),
            })
            .collect(),
        spread: spread(s),
        pvalues: [
            ("integral_help", "Integral help"),
            ("exact_share", "Exact-match share"),
        ]
        .into_iter()
        .map(|(metric, title)| p_matrix(s, &names, metric, title))
        .collect(),
        p_scale: p_scale(),
        breakdowns: breakdowns(s),
        ranking: ranking(s),
        ranking_pairs: ranking_pairs(s),
        found_at_chart: super::ranking::list_charts(s).0,
        length_chart: super::ranking::list_charts(s).1,
        examples: examples(&names, pairs, s.pass),
        blocks: super::extras::block_section(s, &names, records),
        golf: super::extras::golf_section(s),
        checks: super::extras::check_section(s),
        tests: super::extras::tests_section(s),
        design: super::design::design_section(s),
        curve_pairs: super::curve_pairs::curve_pairs_section(s),
        run: manifest.map(|m| run_view(m, s)),
        names,
    };
    page.render()
}

fn head(s: &Summary, records: &[PathBuf]) -> Head {
    Head {
        records: s.records,
        sources: (records.iter())
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        pass: s.pass,
        bootstrap: s.bootstrap,
        units: s.units,
        unit: s.unit,
        unit_plural: crate::score::table::plural(s.unit),
        resampled: if s.unit == "file" {
            format!(
                "{} of {}",
                count(s.units, "file"),
                count(s.repositories, "repository")
            )
        } else {
            count(s.units, s.unit)
        },
        seed: s.seed,
        version: env!("CARGO_PKG_VERSION"),
        few_repositories: (s.unit == "file").then_some(s.repositories),
        min_units: MIN_UNITS,
        estimand: s.estimand.clone(),
    }
}

fn head_row<'a>(name: &'a str, a: &AssistantScore) -> HeadRow<'a> {
    let (p50, p95) = a
        .latency_ms
        .as_ref()
        .map(|l| (format!("{:.1}", l.p50), format!("{:.1}", l.p95)))
        .unwrap_or_default();
    HeadRow {
        name,
        cases: a.cases,
        integral_help: a.integral_help.value.into(),
        integral_help_ci: share_interval(a.integral_help.value, a.integral_help.half()),
        exact_share: a.exact_share.value.into(),
        exact_share_ci: share_interval(a.exact_share.value, a.exact_share.half()),
        help_at_0: a.help_at_0.value.into(),
        integral_help_nonempty: a.integral_help_nonempty.value.into(),
        empty_rate: a.empty_rate.into(),
        error_rate: a.error_rate.into(),
        timeout_rate: a.timeout_rate.into(),
        p50,
        p95,
    }
}

/// The H(S|t) charts, with and without empty suggestions.
fn curves(s: &Summary, names: &[&str]) -> Curves {
    let chart = |nonempty: bool| {
        let data: Vec<CurveData> = (s.assistants.values())
            .map(|a| {
                let (c, b) = if nonempty {
                    (&a.curve_nonempty, &a.curve_nonempty_band)
                } else {
                    (&a.curve, &a.curve_band)
                };
                (
                    c.iter().map(|p| (p.t, p.help)).collect(),
                    b.iter().map(|p| (p.t, p.lo, p.hi)).collect(),
                )
            })
            .collect();
        let curves: Vec<charts::Curve> = (data.iter().zip(names))
            .map(|((p, b), name)| charts::Curve {
                name,
                points: p,
                band: b,
            })
            .collect();
        charts::curves_svg(&curves, "AI code help H(S|t)")
    };
    Curves {
        assistants: names.join(","),
        help: chart(false),
        help_nonempty: chart(true),
    }
}

/// One assistant's curve points and band points.
type CurveData = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

/// Dot-and-whisker charts of the headline figures.
fn intervals(s: &Summary) -> Vec<String> {
    type Figure = fn(&AssistantScore) -> Estimate;
    let figures: [(&str, Figure); 3] = [
        ("Integral AI code help", |a| a.integral_help),
        ("Exact-match share", |a| a.exact_share),
        ("Help at t = 0", |a| a.help_at_0),
    ];
    figures
        .into_iter()
        .map(|(title, get)| {
            let rows: Vec<(String, f64, f64, f64)> = (s.assistants.iter())
                .map(|(n, a)| {
                    let e = get(a);
                    // Shares: the interval cut to 0..1, as the tables write it.
                    (n.clone(), e.value, e.ci95[0].max(0.0), e.ci95[1].min(1.0))
                })
                .collect();
            charts::intervals_svg(title, &rows)
        })
        .collect()
}

/// Per assistant, a row per pass with several passes, else the scored pass's row.
fn rates(s: &Summary) -> Vec<RateRow<'_>> {
    let mut out = Vec::new();
    for (n, a) in &s.assistants {
        match s.repeat_skip.get(n) {
            Some(rs) => out.extend(rs.passes.iter().map(|p| RateRow {
                name: n,
                pass: p.pass,
                records: p.records,
                empty: pct(p.empty_rate),
                errors: p.errors,
                timeouts: p.timeouts,
            })),
            None => out.push(RateRow {
                name: n,
                pass: s.pass,
                records: a.records,
                empty: pct(a.empty_rate),
                errors: a.errors,
                timeouts: a.timeouts,
            }),
        }
    }
    out
}

fn failures(s: &Summary) -> Vec<FailureRow<'_>> {
    (s.assistants.iter())
        .map(|(n, a)| FailureRow {
            name: n,
            errors: a.errors,
            timeouts: a.timeouts,
            top_error: a.top_error.as_deref().unwrap_or(""),
            repeated: a.nondeterminism.repeated,
            differently: a.nondeterminism.share.map_or("n/a".to_string(), pct),
            distinct: (a.nondeterminism.distinct.iter())
                .map(|(d, n)| format!("{d}: {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            distinct_mean: (a.nondeterminism.distinct_mean)
                .map_or("n/a".to_string(), |m| format!("{m:.2}")),
            distinct_max: a.nondeterminism.distinct_max,
        })
        .collect()
}

/// Per assistant with several passes, each pass's headline figures over the cases
/// answered in every pass, their sample sd and range (in points).
fn spread(s: &Summary) -> Vec<SpreadRows<'_>> {
    (s.repeat_skip.iter())
        .map(|(n, rs)| {
            let sp = &rs.spread;
            let stats = [
                sp.integral_help,
                sp.exact_share,
                sp.help_at_0,
                sp.empty_rate,
            ];
            SpreadRows {
                name: n,
                cases: sp.cases,
                passes: (sp.passes.iter())
                    .map(|p| {
                        [
                            p.pass.to_string(),
                            pct(p.integral_help),
                            pct(p.exact_share),
                            pct(p.help_at_0),
                            pct(p.empty_rate),
                        ]
                    })
                    .collect(),
                sd: stats.map(|x| pct(x.sd)),
                range: stats.map(|x| format!("{}–{}", pct(x.min), pct(x.max))),
            }
        })
        .collect()
}

/// The heat maps' key: per direction, a cell at each of a few p-values.
struct PScaleRow {
    label: &'static str,
    arrow: &'static str,
    cells: Vec<PScaleCell>,
}

struct PScaleCell {
    background: String,
    colour: &'static str,
    p: &'static str,
}

fn p_scale() -> Vec<PScaleRow> {
    const PS: [(f64, &str); 5] = [
        (0.5, "p = 0.5"),
        (0.1, "p = 0.1"),
        (0.05, "p = 0.05"),
        (0.01, "p = 0.01"),
        (0.001, "p ≤ 0.001"),
    ];
    [(true, "row ahead", "▲"), (false, "row behind", "▼")]
        .into_iter()
        .map(|(ahead, label, arrow)| PScaleRow {
            label,
            arrow,
            cells: PS
                .iter()
                .map(|&(p, text)| {
                    let (background, colour) = diverging(strength(Some(p)), ahead);
                    PScaleCell {
                        background,
                        colour,
                        p: text,
                    }
                })
                .collect(),
        })
        .collect()
}

fn p_matrix<'a>(
    s: &'a Summary,
    names: &[&'a str],
    metric: &'static str,
    title: &'static str,
) -> PMatrix<'a> {
    let cell = |a: &'a str, b: &'a str| -> PCell<'a> {
        if a == b {
            return PCell {
                diagonal: true,
                pair: None,
            };
        }
        let found = s
            .pairwise
            .iter()
            .find(|p| p.metric == metric && ((p.a == a && p.b == b) || (p.a == b && p.b == a)));
        let pair = found.map(|p| {
            let diff = if p.a == a { p.diff } else { -p.diff };
            let (direction, arrow) = direction(diff);
            let (background, colour) = diverging(strength(p.p_value), diff >= 0.0);
            PPair {
                background,
                colour,
                direction,
                arrow,
                b,
                value: p.p_value.map_or("n/a".to_string(), num_attr),
                few_units: p.few_units,
                diff: if diff > 0.0 {
                    format!("+{}", pct(diff))
                } else {
                    pct(diff)
                },
                cases: p.cases,
                p: p_text(p.p_value),
            }
        });
        PCell {
            diagonal: false,
            pair,
        }
    };
    let rows = (names.iter())
        .map(|&a| PRow {
            name: a,
            cells: names.iter().map(|&b| cell(a, b)).collect(),
        })
        .collect();
    PMatrix {
        title,
        metric,
        rows,
    }
}

fn breakdowns(s: &Summary) -> Vec<BreakdownTable<'_>> {
    [("By language", false), ("By repository", true)]
        .into_iter()
        .map(|(title, by_repo)| {
            let mut rows = Vec::new();
            for (n, a) in &s.assistants {
                let parts = if by_repo { &a.by_repo } else { &a.by_language };
                rows.extend(parts.iter().map(|(k, b)| BreakdownRow {
                    name: n,
                    key: k,
                    cases: b.cases,
                    integral_help: b.integral_help.into(),
                    exact_share: b.exact_share.into(),
                    help_at_0: b.help_at_0.into(),
                    empty_rate: b.empty_rate.into(),
                }));
            }
            BreakdownTable {
                title,
                key: if by_repo { "repository" } else { "language" },
                rows,
            }
        })
        .collect()
}
