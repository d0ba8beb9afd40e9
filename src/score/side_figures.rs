//! The side figures of a summary (blocks §9, keystrokes saved §10, checks §11, tests
//! §12) as rows:
//! which columns each has, what each format titles them (or that it leaves one out), and
//! every assistant's values, decided here once. The terminal table (`score::table`), the
//! markdown and the HTML report (`report::markdown`, `report::extras`) only write the
//! values in their format.

use super::bootstrap::Estimate;
use super::pairwise::Pairwise;
use super::summary::Summary;

/// One value of a side figure's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Count(u64),
    /// A share, shown as a percentage.
    Share(f64),
    /// A share and its 95% interval's half-width.
    Interval(f64, f64),
    /// A mean that is no share (requests per line) and its 95% interval's half-width.
    Mean(f64, f64),
    /// Keys over characters.
    Ratio(u64, u64),
    /// Lines with failed requests and the failed requests, flagged when any.
    Failures(u64, u64),
    /// Three counts shown as `a / b / c`.
    Triple(u64, u64, u64),
    /// Not measured (no checker ran, the assistant has no line figure).
    Missing,
}

/// A column of a side figure: its metric's name, its title in each format (`None`: the
/// format leaves it out), and whether it holds counts (the page gives counts no
/// sortable value, but in a table of metrics).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub metric: &'static str,
    pub text: Option<&'static str>,
    pub markdown: Option<&'static str>,
    pub html: Option<&'static str>,
    pub count: bool,
}

/// Which of the three the figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blocks,
    Golf,
    Checks,
    Tests,
}

/// One side figure: its columns, one row of values per assistant (in the columns'
/// order), and its paired differences with the metric the markdown lists.
#[derive(Debug, Clone)]
pub struct SideFigure<'a> {
    pub kind: Kind,
    pub columns: &'static [Column],
    pub rows: Vec<(&'a str, Vec<Value>)>,
    pub pairwise: &'a [Pairwise],
    /// The metric whose paired differences the markdown lists.
    pub headline: &'static str,
    /// The page gives each cell its metric and each row its assistant, for readers of
    /// the page.
    pub metrics_on_page: bool,
}

impl SideFigure<'_> {
    /// The columns a format shows, with their titles and their places in the rows.
    pub fn shown(
        &self,
        title: fn(&Column) -> Option<&'static str>,
    ) -> Vec<(usize, &'static str, Column)> {
        self.columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| title(c).map(|t| (i, t, *c)))
            .collect()
    }
}

const fn col(
    metric: &'static str,
    text: Option<&'static str>,
    markdown: Option<&'static str>,
    html: Option<&'static str>,
    count: bool,
) -> Column {
    Column {
        metric,
        text,
        markdown,
        html,
        count,
    }
}

const BLOCKS: &[Column] = &[
    col(
        "cases",
        Some("block cases"),
        Some("block cases"),
        Some("block cases"),
        true,
    ),
    col(
        "block_integral_help",
        Some("block integral help % (±95%)"),
        Some("block integral help %"),
        Some("block integral help % [95%]"),
        false,
    ),
    col(
        "block_exact_share",
        Some("block exact share % (±95%)"),
        Some("block exact share %"),
        Some("block exact share % [95%]"),
        false,
    ),
    col("block_help_at_0", Some("block help@0 %"), None, None, false),
    col(
        "lines_accepted",
        Some("lines accepted % (±95%)"),
        Some("lines accepted %"),
        Some("lines accepted % [95%]"),
        false,
    ),
    col(
        "chars_accepted",
        Some("chars accepted %"),
        Some("chars accepted %"),
        Some("chars accepted %"),
        false,
    ),
    col(
        "first_line_integral_help",
        Some("first line integral help %"),
        Some("first line integral help %"),
        Some("first line integral help %"),
        false,
    ),
];

const GOLF: &[Column] = &[
    col("lines", Some("lines"), Some("lines"), Some("lines"), true),
    col("keys_of_chars", Some("keys / chars"), None, None, true),
    col("chars", None, None, Some("characters"), true),
    col("keys", None, None, Some("keys"), true),
    col(
        "keystrokes_saved",
        Some("keystrokes saved % (±95%)"),
        Some("keystrokes saved %"),
        Some("keystrokes saved % [95%]"),
        false,
    ),
    col(
        "one_accept_share",
        Some("one accept % (±95%)"),
        Some("one accept %"),
        Some("one accept % [95%]"),
        false,
    ),
    col(
        "requests_per_line",
        Some("requests / line"),
        Some("requests / line"),
        Some("requests / line [95%]"),
        false,
    ),
    col(
        "lines_with_failures",
        None,
        Some("lines with failures"),
        Some("lines with failures"),
        true,
    ),
    col("flagged", Some("lines with failures"), None, None, true),
    col("failures", None, None, Some("failed requests"), true),
    col("capped", None, None, Some("capped"), true),
];

const CHECKS: &[Column] = &[
    col(
        "checked",
        Some("checked"),
        Some("checked"),
        Some("checked"),
        true,
    ),
    col(
        "syntax_valid",
        Some("syntax valid % (±95%)"),
        Some("syntax valid %"),
        Some("syntax valid % [95%]"),
        false,
    ),
    col(
        "diagnosed",
        Some("diagnosed"),
        None,
        Some("diagnosed"),
        true,
    ),
    col(
        "no_new_error",
        Some("no new error % (±95%)"),
        Some("no new error %"),
        Some("no new error % [95%]"),
        false,
    ),
    col("checker_failed", Some("checker failed"), None, None, true),
];

const TESTS: &[Column] = &[
    col(
        "judged",
        Some("judged"),
        Some("judged"),
        Some("judged"),
        true,
    ),
    col(
        "tests_pass",
        Some("tests pass % (±95%)"),
        Some("tests pass %"),
        Some("tests pass % [95%]"),
        false,
    ),
    col(
        "errors",
        Some("test run broke"),
        None,
        Some("test run broke"),
        true,
    ),
    col(
        "exact_but_fails",
        Some("exact but fails"),
        None,
        Some("exact but fails"),
        true,
    ),
    col(
        "not_exact_but_passes",
        Some("not exact, passes"),
        None,
        Some("not exact, passes"),
        true,
    ),
    col(
        "not_judged",
        Some("not covered / not noticed / broken"),
        None,
        None,
        false,
    ),
];

fn interval(e: &Estimate) -> Value {
    Value::Interval(e.value, e.half())
}

/// Block figures beside the first line's (§2) integral help; `None` without blocks.
pub fn blocks(s: &Summary) -> Option<SideFigure<'_>> {
    let rows = s.blocks.iter().map(|(name, b)| {
        let first_line = s
            .assistants
            .get(name)
            .map_or(Value::Missing, |a| Value::Share(a.integral_help.value));
        let values = vec![
            Value::Count(b.cases),
            interval(&b.integral_help),
            interval(&b.exact_share),
            Value::Share(b.help_at_0.value),
            interval(&b.lines_accepted),
            Value::Share(b.chars_accepted.value),
            first_line,
        ];
        (name.as_str(), values)
    });
    figure(Kind::Blocks, BLOCKS, rows.collect(), &s.block_pairwise)
}

/// Keystrokes saved, requests and one-accept lines; `None` without golf records.
pub fn golf(s: &Summary) -> Option<SideFigure<'_>> {
    let rows = s.golf.iter().map(|(name, g)| {
        let values = vec![
            Value::Count(g.lines),
            Value::Ratio(g.keys, g.chars),
            Value::Count(g.chars),
            Value::Count(g.keys),
            interval(&g.keystrokes_saved),
            interval(&g.one_accept_share),
            Value::Mean(g.requests_per_line.value, g.requests_per_line.half()),
            Value::Count(g.lines_with_failures),
            Value::Failures(g.lines_with_failures, g.failures),
            Value::Count(g.failures),
            Value::Count(g.capped),
        ];
        (name.as_str(), values)
    });
    figure(Kind::Golf, GOLF, rows.collect(), &s.golf_pairwise)
}

/// Syntax kept valid and errors not added; `None` without checks.
pub fn checks(s: &Summary) -> Option<SideFigure<'_>> {
    let rows = s.checks.iter().map(|(name, c)| {
        let values = vec![
            Value::Count(c.checked),
            interval(&c.syntax_valid),
            c.diagnosed.map_or(Value::Missing, Value::Count),
            c.no_new_error.as_ref().map_or(Value::Missing, interval),
            Value::Count(c.checker_failed),
        ];
        (name.as_str(), values)
    });
    figure(Kind::Checks, CHECKS, rows.collect(), &s.checks_pairwise)
}

/// Tests after acceptance (§12): the judged cases, the share passing, the runs that
/// broke, the cross with exact match; `None` without a tests sidecar.
pub fn tests(s: &Summary) -> Option<SideFigure<'_>> {
    let rows = s.tests.iter().map(|(name, t)| {
        let values = vec![
            Value::Count(t.judged),
            t.tests_pass.as_ref().map_or(Value::Missing, interval),
            Value::Count(t.errors),
            Value::Count(t.exact_but_fails),
            Value::Count(t.not_exact_but_passes),
            Value::Triple(t.not_covered, t.not_noticed, t.broken),
        ];
        (name.as_str(), values)
    });
    figure(Kind::Tests, TESTS, rows.collect(), &s.tests_pairwise)
}

/// The four, in the order every format shows them (those the summary has).
pub fn all(s: &Summary) -> Vec<SideFigure<'_>> {
    [blocks(s), golf(s), checks(s), tests(s)]
        .into_iter()
        .flatten()
        .collect()
}

fn figure<'a>(
    kind: Kind,
    columns: &'static [Column],
    rows: Vec<(&'a str, Vec<Value>)>,
    pairwise: &'a [Pairwise],
) -> Option<SideFigure<'a>> {
    if rows.is_empty() {
        return None;
    }
    Some(SideFigure {
        kind,
        columns,
        rows,
        pairwise,
        headline: match kind {
            Kind::Blocks => "block_integral_help",
            Kind::Golf => "keystrokes_saved",
            Kind::Checks => "syntax_valid",
            Kind::Tests => "tests_pass",
        },
        metrics_on_page: kind == Kind::Golf,
    })
}

#[cfg(test)]
mod tests {
    use super::{BLOCKS, CHECKS, GOLF, TESTS};

    /// Every column is shown somewhere, and metric names are unique in a figure.
    #[test]
    fn columns_are_shown_and_named_once() {
        for cols in [BLOCKS, CHECKS, GOLF, TESTS] {
            let mut names: Vec<_> = cols.iter().map(|c| c.metric).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), cols.len());
            assert!(
                cols.iter()
                    .all(|c| c.text.or(c.markdown).or(c.html).is_some())
            );
        }
    }
}
