//! The examples browser: per assistant the best, typical and worst suggestions with a
//! character diff, and a few lines side by side across assistants.

use std::collections::BTreeMap;

use crate::score::{Outcome, Pair};

/// A run of a line: plain, or marked `del` (what a suggestion lacks) or `ins` (what it
/// adds).
pub(super) struct Seg {
    pub class: Option<&'static str>,
    pub text: String,
}

pub(super) struct Examples<'a> {
    pub assistants: Vec<ExampleSet<'a>>,
    /// With more than one assistant.
    pub side_by_side: Option<Vec<SideLine<'a>>>,
}

pub(super) struct ExampleSet<'a> {
    pub name: &'a str,
    pub suggestions: usize,
    pub groups: Vec<Group>,
}

pub(super) struct Group {
    pub title: &'static str,
    pub rows: Vec<ExampleRow>,
}

pub(super) struct ExampleRow {
    /// repository/file
    pub place: String,
    pub line: u32,
    pub c_help: String,
    pub expected: Vec<Seg>,
    pub predicted: Vec<Seg>,
}

pub(super) struct SideLine<'a> {
    pub place: String,
    pub line: u32,
    pub expected: &'a str,
    /// One per assistant, in name order.
    pub cells: Vec<Option<SideCell<'a>>>,
}

pub(super) struct SideCell<'a> {
    pub predicted: Vec<Seg>,
    pub outcome: &'a str,
    pub c_help: String,
}

/// The expected line with what the prediction lacks marked `del`, and the predicted line
/// with what it adds marked `ins` (a character diff).
pub(super) fn diff_lines(expected: &str, predicted: &str) -> (Vec<Seg>, Vec<Seg>) {
    let diff = similar::TextDiff::from_chars(expected, predicted);
    let (mut e, mut p) = (Vec::new(), Vec::new());
    let seg = |class, text: &str| Seg {
        class,
        text: text.to_string(),
    };
    for op in diff.iter_all_changes() {
        let v = op.value();
        match op.tag() {
            similar::ChangeTag::Equal => {
                e.push(seg(None, v));
                p.push(seg(None, v));
            }
            similar::ChangeTag::Delete => e.push(seg(Some("del"), v)),
            similar::ChangeTag::Insert => p.push(seg(Some("ins"), v)),
        }
    }
    (e, p)
}

fn example_row(p: &Pair) -> ExampleRow {
    let (expected, predicted) = diff_lines(&p.expected, p.predicted.as_deref().unwrap_or(""));
    ExampleRow {
        place: format!("{}/{}", p.repo, p.file),
        line: p.line,
        c_help: p
            .c_help
            .map(|c| format!("{c:.2}"))
            .unwrap_or_else(|| "–".into()),
        expected,
        predicted,
    }
}

pub(super) fn examples<'a>(names: &[&'a str], pairs: &'a [Pair], pass: u32) -> Examples<'a> {
    let mut by_assistant: BTreeMap<&str, Vec<&Pair>> = BTreeMap::new();
    for p in pairs
        .iter()
        .filter(|p| p.pass == pass && p.outcome == Outcome::Suggestion.as_str())
    {
        by_assistant.entry(&p.assistant).or_default().push(p);
    }
    let assistants = names
        .iter()
        .filter_map(|n| Some(example_set(n, by_assistant.get(n)?)))
        .collect();
    Examples {
        assistants,
        side_by_side: (names.len() > 1).then(|| side_by_side(names, pairs, pass)),
    }
}

/// The best, typical and worst five of one assistant's suggestions (by c_help, longest
/// lines first among ties).
fn example_set<'a>(name: &'a str, list: &[&Pair]) -> ExampleSet<'a> {
    let mut sorted = list.to_vec();
    sorted.sort_by(|a, b| {
        b.c_help
            .unwrap_or(0.0)
            .total_cmp(&a.c_help.unwrap_or(0.0))
            .then(b.expected.len().cmp(&a.expected.len()))
            .then(a.case.cmp(&b.case))
    });
    let k = 5.min(sorted.len());
    let mid = sorted.len() / 2;
    let typical =
        &sorted[mid.saturating_sub(k / 2)..(mid.saturating_sub(k / 2) + k).min(sorted.len())];
    let worst: Vec<&Pair> = sorted.iter().rev().take(k).copied().collect();
    let groups = [
        ("best", &sorted[..k]),
        ("typical", typical),
        ("worst", &worst[..]),
    ]
    .into_iter()
    .map(|(title, rows)| Group {
        title,
        rows: rows.iter().map(|p| example_row(p)).collect(),
    })
    .collect();
    ExampleSet {
        name,
        suggestions: sorted.len(),
        groups,
    }
}

/// Up to ten lines every assistant answered, evenly spread over the cases by name.
fn side_by_side<'a>(names: &[&'a str], pairs: &'a [Pair], pass: u32) -> Vec<SideLine<'a>> {
    let mut by_case: BTreeMap<&str, Vec<&Pair>> = BTreeMap::new();
    for p in pairs
        .iter()
        .filter(|p| p.pass == pass && p.c_help.is_some())
    {
        by_case.entry(&p.case).or_default().push(p);
    }
    let shared: Vec<(&&str, &Vec<&Pair>)> = by_case
        .iter()
        .filter(|(_, v)| v.len() == names.len())
        .collect();
    let step = (shared.len() / 10).max(1);
    shared
        .iter()
        .step_by(step)
        .take(10)
        .map(|(_, v)| {
            let first = v[0];
            let cells = names
                .iter()
                .map(|n| {
                    let p = v.iter().find(|p| p.assistant == *n)?;
                    let (_, predicted) =
                        diff_lines(&p.expected, p.predicted.as_deref().unwrap_or(""));
                    Some(SideCell {
                        predicted,
                        outcome: &p.outcome,
                        c_help: p.c_help.map(|c| format!("{c:.2}")).unwrap_or_default(),
                    })
                })
                .collect();
            SideLine {
                place: format!("{}/{}", first.repo, first.file),
                line: first.line,
                expected: &first.expected,
                cells,
            }
        })
        .collect()
}
