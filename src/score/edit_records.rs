//! The records of an edits plan's run (methodology §13): one `next_edit` record per
//! (moment, assistant, pass) in `records.jsonl`, written by the replay
//! (`replay::edits`) and read by the scorer (`score::next_edit`). A record carries the
//! texts its figures are computed from, cut to a *window*: the lines of the moment's
//! file around everything that differs between the buffer at the moment, the truth, the
//! prediction and the buffer some events before (for reversal), with three lines of
//! context (more while those hold fewer than 5 characters that are not blanks). Every
//! character n-gram a change makes or removes lies inside it, so delta-chrF is the whole
//! file's (`docs/records.md#next-edit-records`); the reversal's character diff may
//! align a little differently on the window than on the whole file.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::records::Outcome;

/// Lines of context kept around the changes in a window.
pub const WINDOW_CONTEXT: usize = 3;

/// The texts a next-edit record is scored on, cut to the same lines of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The window's first line in the buffer at the moment (0-based).
    pub line: u32,
    /// The buffer some events before the moment (the reversal's reference).
    pub earlier: String,
    /// The buffer at the moment.
    pub before: String,
    /// The buffer after the person's true next edit.
    pub truth: String,
    /// The buffer after the prediction; `None` when it does not apply or is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<String>,
}

/// The inline suggestion asked at a moment where the person goes on typing at the end
/// of the cursor's line (methodology §13): the line they typed, against the line as
/// accepting the suggestion leaves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InlineAsk {
    pub outcome: Outcome,
    /// The cursor's line up to the cursor: what the person had typed of it.
    pub typed: String,
    /// The cursor's line once the person's next edit is made.
    pub expected: String,
    /// The cursor's line after accepting the suggestion (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<String>,
    pub latency_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One `next_edit` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditRecord {
    /// `SESSION#MOMENT`.
    pub case: String,
    pub session: String,
    pub moment: u32,
    pub repo: String,
    /// The file with the cursor at the moment.
    pub file: String,
    pub language: String,
    pub assistant: String,
    pub pass: u32,
    /// Always `next_edit`.
    pub kind: String,
    pub outcome: Outcome,
    /// The moment is a silence case: any prediction is a false alarm.
    #[serde(default)]
    pub silence: bool,
    /// The person's next edit is away from the cursor (another file, or not within a
    /// line of it).
    #[serde(default)]
    pub jump: bool,
    pub cursor: [u32; 2],
    pub next_file: String,
    /// Lines of the buffer (0-based, inclusive) the person's next edit touched.
    pub next_lines: [u32; 2],
    /// Edits proposed for the moment's file, and for other files (not scored).
    #[serde(default)]
    pub edits: usize,
    #[serde(default)]
    pub elsewhere: usize,
    /// Whether the proposed edits apply to the buffer (`None` without edits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// The inline suggestion at the cursor, when the person's next edit goes on typing
    /// at the end of the cursor's line (else absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline: Option<InlineAsk>,
    pub latency_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_hash: Option<String>,
}

/// The start of a next edit's error when the editor cannot ask one (VS Code with
/// extensions measured alone, or a completion-list server).
pub const NOT_ASKED: &str = "not asked:";

impl EditRecord {
    /// The moment failed: its next edit or its inline ask is an error or a timeout (a
    /// next edit the editor cannot ask is not a failure to ask again).
    pub fn failed(&self) -> bool {
        let bad = |o: Outcome| matches!(o, Outcome::Error | Outcome::Timeout);
        (bad(self.outcome)
            && !self
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with(NOT_ASKED)))
            || self.inline.as_ref().is_some_and(|i| bad(i.outcome))
    }
}

/// Whether a records file holds next-edit records (its first record's `kind`).
pub fn is_edit_records(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    std::io::BufReader::new(f).read_line(&mut first).is_ok()
        && first.contains("\"kind\":\"next_edit\"")
}

/// Reads next-edit records; a malformed line is an error naming the file and line,
/// except a last line cut short (a run killed mid-write), which is left out with a
/// warning.
pub fn read_edit_records(path: &Path) -> Result<Vec<EditRecord>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read records {}", path.display()))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<EditRecord>(l) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {
                tracing::warn!("{}: its last line is cut short; left out", path.display());
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("{}:{}: malformed next-edit record", path.display(), i + 1)
                });
            }
        }
    }
    Ok(out)
}

/// The scorer's row of a record: its prediction judged on its window (methodology §13),
/// the next edit's lines made relative to the window (an edit in another file: lines no
/// prediction in this one touches).
pub fn row(r: &EditRecord) -> super::next_edit::NextEditRow {
    use super::next_edit::{NextEditRow, PredictedEdit, judge};
    let judged = r.window.as_ref().map(|w| {
        let end = {
            let lines = w.before.matches('\n').count() as u32;
            let last = w.before.rsplit('\n').next().unwrap_or("");
            [lines, last.chars().count() as u32]
        };
        let edits = match (&w.predicted, r.applies) {
            (Some(p), _) => vec![PredictedEdit {
                start: [0, 0],
                end,
                text: p.clone(),
            }],
            // Edits that do not apply: one beyond the text, which does not either.
            (None, Some(false)) => vec![PredictedEdit {
                start: [u32::MAX, 0],
                end: [u32::MAX, 0],
                text: String::new(),
            }],
            (None, _) => Vec::new(),
        };
        // The next edit's lines in the window; lines above it (or in another file) are
        // lines no prediction inside the window touches.
        let next = if r.next_file == r.file && r.next_lines[1] >= w.line {
            [
                r.next_lines[0].saturating_sub(w.line),
                r.next_lines[1] - w.line,
            ]
        } else {
            [u32::MAX, u32::MAX]
        };
        judge(&w.earlier, &w.before, &w.truth, next, &edits)
    });
    let inline = r.inline.as_ref().map(|i| {
        let rest = |line: &str| line.strip_prefix(i.typed.as_str()).map(str::to_string);
        let expected = rest(&i.expected).unwrap_or_default();
        // What the suggestion adds after what was typed; one that rewrites the typed
        // part helps nothing (the user's keystrokes are never the assistant's help).
        let predicted = match (i.outcome, &i.predicted) {
            (Outcome::Suggestion, Some(p)) => rest(p).unwrap_or_default(),
            _ => String::new(),
        };
        super::next_edit::InlineRow {
            outcome: i.outcome,
            help: super::distance::c_help(&expected, &predicted),
            exact: i.outcome == Outcome::Suggestion && i.predicted.as_deref() == Some(&i.expected),
        }
    });
    NextEditRow {
        inline,
        assistant: r.assistant.clone(),
        repo: r.repo.clone(),
        case: r.case.clone(),
        outcome: r.outcome,
        silence: r.silence,
        jump: r.jump,
        judged,
    }
}

/// The next-edit summary of the first pass's records (`score::next_edit::summarize` on
/// their rows).
pub fn summarize_records(
    records: &[EditRecord],
    resamples: usize,
    seed: u64,
) -> super::next_edit::NextEditSummary {
    let rows: Vec<_> = records.iter().filter(|r| r.pass == 1).map(row).collect();
    super::next_edit::summarize(&rows, resamples, seed)
}

/// The window of `before` around every change to the `others`, and each text cut to it
/// (in `others`' order): the lines outside it are the same in all of them.
pub fn window<'a>(before: &'a str, others: &[&'a str]) -> (u32, String, Vec<String>) {
    let lines = |t: &'a str| t.split_inclusive('\n').collect::<Vec<_>>();
    let b = lines(before);
    let os: Vec<Vec<&str>> = others.iter().map(|t| lines(t)).collect();
    let mut pre = b.len();
    let mut suf = b.len();
    for o in &os {
        let p = b.iter().zip(o).take_while(|(x, y)| x == y).count();
        let max_s = b.len().min(o.len()) - p;
        let s = b
            .iter()
            .rev()
            .zip(o.iter().rev())
            .take(max_s)
            .take_while(|(x, y)| x == y)
            .count();
        pre = pre.min(p);
        suf = suf.min(s);
    }
    if pre == b.len() && os.iter().all(|o| o.len() == b.len()) {
        // Nothing differs: a window of the context at the end.
        pre = b.len();
        suf = 0;
    }
    // Three lines of context, more while they hold fewer than 5 characters that are not
    // blanks (delta-chrF collapses blank runs and reads n-grams of up to 6 characters:
    // every n-gram crossing a change then lies inside the window).
    let solid = |l: &[&str]| l.concat().chars().filter(|c| !c.is_whitespace()).count();
    let mut start = pre.saturating_sub(WINDOW_CONTEXT);
    while start > 0 && solid(&b[start..pre]) < 5 {
        start -= 1;
    }
    let mut keep_after = suf.saturating_sub(WINDOW_CONTEXT);
    while keep_after > 0 && solid(&b[b.len() - suf..b.len() - keep_after]) < 5 {
        keep_after -= 1;
    }
    let cut = |l: &[&str]| l[start.min(l.len())..l.len() - keep_after.min(l.len())].concat();
    (start as u32, cut(&b), os.iter().map(|o| cut(o)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_every_change_and_three_lines_around() {
        let before: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let truth = before.replace("l10\n", "l10 changed\n");
        let pred = before.replace("l12\n", "");
        let (line, b, o) = window(&before, &[&truth, &pred]);
        assert_eq!(line, 7);
        assert_eq!(b, (7..16).map(|i| format!("l{i}\n")).collect::<String>());
        assert_eq!(o[0], b.replace("l10\n", "l10 changed\n"));
        assert_eq!(o[1], b.replace("l12\n", ""));
        // Nothing differs: an empty window at the end.
        let (line, b, o) = window(&before, &[&before]);
        assert_eq!(
            (line, b.as_str(), o[0].as_str()),
            (17, "l17\nl18\nl19\n", "l17\nl18\nl19\n")
        );
    }

    #[test]
    fn delta_chrf_on_the_window_is_the_whole_files() {
        // Blank lines above the change: the context grows until it holds 5 characters
        // that are not blanks, so no n-gram crossing the change is cut.
        let cases = [
            (
                "abcdefgh\n\n\n\nX = 1\n",
                "abcdefgh\n\n\n\nY = 1\n",
                "abcdefgh\n\n\n\nX = 2\n",
            ),
            (
                "int a;\n}\n\n\n}\nint b;\n",
                "int a;\n}\n\n\n}\nint c;\n",
                "int a;\n}\n\n\n}\nint bb;\n",
            ),
        ];
        for (before, truth, pred) in cases {
            let (_, b, o) = window(before, &[truth, pred]);
            let whole = crate::score::next_edit::delta_chrf(before, truth, pred);
            let cut = crate::score::next_edit::delta_chrf(&b, &o[0], &o[1]);
            assert!(
                (whole - cut).abs() < 1e-9,
                "{before:?}: {whole} on the file, {cut} on {b:?}"
            );
        }
    }

    #[test]
    fn a_window_at_the_file_ends() {
        let before = "a\nb\n";
        let truth = "x\na\nb\ny";
        let (line, b, o) = window(before, &[truth]);
        assert_eq!(
            (line, b.as_str(), o[0].as_str()),
            (0, "a\nb\n", "x\na\nb\ny")
        );
    }
}
