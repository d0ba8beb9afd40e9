//! The examples browser: per assistant the best, typical and worst suggestions with a
//! character diff (or, for lines mostly unrelated, the whole lines as removed and
//! added), and a few lines side by side across assistants. The three groups never show
//! one case twice, and "typical" is drawn from the scores between the worst and the
//! best where there are any, so that it does not repeat the worst.

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
    pub case: String,
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

/// Below this similarity (`similar`'s ratio: twice the characters in common over both
/// lengths, leading whitespace aside) two lines are shown whole as removed and added: a
/// character diff of unrelated lines only marks scattered letters they happen to share.
pub(super) const RELATED: f32 = 0.5;

/// The expected line with what the prediction lacks marked `del`, and the predicted line
/// with what it adds marked `ins` (a character diff); lines less alike than [`RELATED`]
/// are marked whole.
pub(super) fn diff_lines(expected: &str, predicted: &str) -> (Vec<Seg>, Vec<Seg>) {
    let seg = |class, text: &str| Seg {
        class,
        text: text.to_string(),
    };
    let alike =
        similar::TextDiff::from_chars(expected.trim_start(), predicted.trim_start()).ratio();
    if alike < RELATED {
        // The indentation stays plain: only the code is removed and added.
        let whole = |class, text: &str| {
            let code = text.trim_start();
            let indent = &text[..text.len() - code.len()];
            [(None, indent), (Some(class), code)]
                .into_iter()
                .filter(|(_, t)| !t.is_empty())
                .map(|(c, t)| seg(c, t))
                .collect()
        };
        return (whole("del", expected), whole("ins", predicted));
    }
    let diff = similar::TextDiff::from_chars(expected, predicted);
    let (mut e, mut p) = (Vec::new(), Vec::new());
    for op in diff.iter_all_changes() {
        let v = op.value();
        match op.tag() {
            similar::ChangeTag::Equal => {
                push(&mut e, None, v);
                push(&mut p, None, v);
            }
            similar::ChangeTag::Delete => push(&mut e, Some("del"), v),
            similar::ChangeTag::Insert => push(&mut p, Some("ins"), v),
        }
    }
    (e, p)
}

/// Appends `text` to the last run when it is of the same class: one span per run, not
/// one per character.
fn push(line: &mut Vec<Seg>, class: Option<&'static str>, text: &str) {
    match line.last_mut() {
        Some(last) if last.class == class => last.text.push_str(text),
        _ => line.push(Seg {
            class,
            text: text.to_string(),
        }),
    }
}

fn example_row(p: &Pair) -> ExampleRow {
    let (expected, predicted) = diff_lines(&p.expected, p.predicted.as_deref().unwrap_or(""));
    ExampleRow {
        case: p.case.clone(),
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
/// lines first among ties), as [`pick`] chooses them.
fn example_set<'a>(name: &'a str, list: &[&Pair]) -> ExampleSet<'a> {
    let mut sorted = list.to_vec();
    sorted.sort_by(|a, b| {
        b.c_help
            .unwrap_or(0.0)
            .total_cmp(&a.c_help.unwrap_or(0.0))
            .then(b.expected.len().cmp(&a.expected.len()))
            .then(a.case.cmp(&b.case))
    });
    // Rounded as shown: scores that print alike count as one.
    let shown: Vec<i64> = (sorted.iter())
        .map(|p| (p.c_help.unwrap_or(0.0) * 100.0).round() as i64)
        .collect();
    let picks = pick(&shown, 5);
    let groups = [
        ("best", picks.best),
        ("typical", picks.typical),
        ("worst", picks.worst),
    ]
    .into_iter()
    .map(|(title, rows)| Group {
        title,
        rows: rows.iter().map(|&i| example_row(sorted[i])).collect(),
    })
    .collect();
    ExampleSet {
        name,
        suggestions: sorted.len(),
        groups,
    }
}

/// Places in a list of scores (sorted from best to worst) to show as examples.
#[derive(Debug, PartialEq)]
pub(super) struct Picks {
    pub best: Vec<usize>,
    pub typical: Vec<usize>,
    pub worst: Vec<usize>,
}

/// Up to `k` best, `k` worst (worst first) and `k` typical places of `scores`, sorted
/// from best to worst, no place twice. Typical: around the middle of the places left
/// whose score differs from every best and worst score shown, where there are such
/// places; else around the middle of the places left. So with most scores 0, the worst
/// are zeros and the typical ones are not.
pub(super) fn pick<T: PartialEq>(scores: &[T], k: usize) -> Picks {
    let n = scores.len();
    let best: Vec<usize> = (0..k.min(n)).collect();
    let worst: Vec<usize> = (best.len()..n).rev().take(k).collect();
    let shown = |i: usize| best.iter().chain(&worst).any(|&j| scores[j] == scores[i]);
    let left: Vec<usize> = (best.len()..n).filter(|i| !worst.contains(i)).collect();
    let distinct: Vec<usize> = left.iter().copied().filter(|&i| !shown(i)).collect();
    let pool = if distinct.is_empty() { left } else { distinct };
    let start = (pool.len() / 2).saturating_sub(k / 2);
    let typical = pool[start..(start + k).min(pool.len())].to_vec();
    Picks {
        best,
        typical,
        worst,
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
