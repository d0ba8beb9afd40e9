//! Next-edit suggestions in the host (`textDocument/copilotInlineEdit`, the dialect of
//! GitHub Copilot's language server): params `{textDocument: {uri, version}, position}`,
//! answer `{edits: [{text, textDocument: {uri, version}, range, command}]}`.
//!
//! Two backends answer them:
//! - `rename`, typist's deterministic baseline: the edit a person most often makes next
//!   after renaming an identifier is the same rename at its next occurrence. The host
//!   follows each document's *edit run* (consecutive changes inside one word: `x`
//!   deleted, then `val`, `ue` typed is one run from `x` to `value`); when the run has
//!   turned one identifier into another and the old one still stands elsewhere in the
//!   document as a whole word, it proposes replacing the first such occurrence after
//!   the cursor (else the first before it).
//! - `oracle` (tests only): the session's true next edit, read from the edits plan
//!   given with `--truth` (a path outside the workspace no other assistant is given):
//!   the document's text is looked up among the plan's moments (by file and text), and
//!   the answer is the change from it to the moment's truth, as one edit. At a silence
//!   moment (`silence: true`), it answers nothing.
//!
//! Every other backend answers `{edits: []}`: it proposes no next edits.

use std::collections::HashMap;

use anyhow::Result;

use crate::dataset::edits::{Session, is_edits_plan, read_edits_plan};

/// Whether `c` can be part of an identifier.
fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `s` is an identifier (a letter or `_` first, then letters, digits, `_`).
fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_') && cs.all(ident)
}

/// The byte range of the word around `[a, b)` in `text` (extended over identifier
/// characters on both sides).
fn word_around(text: &str, a: usize, b: usize) -> (usize, usize) {
    let start = text[..a]
        .char_indices()
        .rev()
        .take_while(|(_, c)| ident(*c))
        .last()
        .map_or(a, |(i, _)| i);
    let end = b + text[b..]
        .char_indices()
        .take_while(|(_, c)| ident(*c))
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    (start, end)
}

/// One document's current edit run: the word it started from and where the word now is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditRun {
    original: String,
    /// Byte range of the run's word in the document now.
    at: (usize, usize),
}

impl EditRun {
    /// Follows a change replacing `old[a..b]` with `inserted`, `new` the text after it.
    pub fn follow(
        run: Option<EditRun>,
        old: &str,
        a: usize,
        b: usize,
        inserted: &str,
        new: &str,
    ) -> Option<EditRun> {
        let (wa, wb) = word_around(old, a, b);
        let (na, nb) = word_around(new, a, a + inserted.len());
        let original = match run {
            // Inside the run's word (or touching it): the same run goes on.
            Some(r) if r.at == (wa, wb) => r.original,
            _ => old[wa..wb].to_string(),
        };
        Some(EditRun {
            original,
            at: (na, nb),
        })
    }

    /// The rename this run proposes in `text` with the cursor at byte `cursor`: the
    /// byte range of the old name's next whole-word occurrence and the new name.
    pub fn proposal(&self, text: &str, cursor: usize) -> Option<(usize, usize, String)> {
        let current = text.get(self.at.0..self.at.1)?;
        if current == self.original || !is_identifier(current) || !is_identifier(&self.original) {
            return None;
        }
        let whole = |i: usize| {
            let j = i + self.original.len();
            !text[..i].chars().next_back().is_some_and(ident)
                && !text[j..].chars().next().is_some_and(ident)
        };
        let hits: Vec<usize> = text
            .match_indices(self.original.as_str())
            .map(|(i, _)| i)
            .filter(|&i| whole(i) && (i + self.original.len() <= self.at.0 || i >= self.at.1))
            .collect();
        let i = hits
            .iter()
            .copied()
            .find(|&i| i >= cursor)
            .or_else(|| hits.first().copied())?;
        Some((i, i + self.original.len(), current.to_string()))
    }
}

/// The oracle's truths: by (file, its text when the session began, its text at a
/// moment), the text after the moment's true next edit and whether the moment is a
/// silence case (no next edit is answered there; the inline answer is).
/// The starting text tells apart moments of two sessions where the file reads the same
/// (a commit's last moment, the next commit's first): the replay opens each file with
/// its starting text.
#[derive(Debug, Default)]
pub struct EditOracle {
    /// (the text after the true next edit, whether the moment is a silence case).
    truths: HashMap<(String, String, String), (String, bool)>,
}

impl EditOracle {
    /// Reads the edits plan, or `None` when `plan` is not one.
    pub fn read(plan: &std::path::Path) -> Result<Option<EditOracle>> {
        if !is_edits_plan(plan) {
            return Ok(None);
        }
        let (_, sessions) = read_edits_plan(plan)?;
        let mut o = EditOracle::default();
        for s in &sessions {
            o.add(s)?;
        }
        Ok(Some(o))
    }

    fn add(&mut self, s: &Session) -> Result<()> {
        let snaps = s.buffers_at(s.moments.iter().flat_map(|m| [m.after, m.until]))?;
        let text = |n: usize, f: &str| snaps[&n].files.get(f).cloned().unwrap_or_default();
        for m in &s.moments {
            let (now, truth) = (text(m.after, &m.file), text(m.until, &m.file));
            let start = s.files.get(&m.file).cloned().unwrap_or_default();
            self.truths
                .entry((m.file.clone(), start, now))
                .or_insert((truth, m.silence));
        }
        Ok(())
    }

    /// The inline answer at byte `at` of `rel` (opened as `opened`, now `text`): the rest
    /// of the cursor's line as the true next edit leaves it, when the lines above stay
    /// and the line goes on from what is typed.
    pub fn inline(&self, rel: &str, opened: &str, text: &str, at: usize) -> Option<String> {
        let rel = rel.replace('\\', "/");
        let truth = self
            .truths
            .iter()
            .find(|((f, o, t), _)| {
                t == text && o == opened && (rel == *f || rel.ends_with(&format!("/{f}")))
            })
            .map(|(_, (truth, _))| truth)?;
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        if truth.get(..start) != Some(&text[..start]) {
            return None;
        }
        let end = truth[start..].find('\n').map_or(truth.len(), |i| start + i);
        let rest = truth[start..end].strip_prefix(&text[start..at])?;
        (!rest.is_empty()).then(|| rest.to_string())
    }

    /// The true next edit of `rel` (its path in the workspace), opened as `opened`, now
    /// holding `text`: the byte range of `text` replaced and its replacement.
    pub fn answer(&self, rel: &str, opened: &str, text: &str) -> Option<(usize, usize, String)> {
        let rel = rel.replace('\\', "/");
        let truth = self
            .truths
            .iter()
            .find(|((f, o, t), _)| {
                t == text && o == opened && (rel == *f || rel.ends_with(&format!("/{f}")))
            })
            .and_then(|(_, (truth, silence))| (!silence && truth != text).then_some(truth))?;
        Some(one_edit(text, truth))
    }
}

/// The change from `a` to `b` as one replacement: the bytes of `a` between their common
/// prefix and suffix (cut between characters), and what `b` has there.
pub fn one_edit(a: &str, b: &str) -> (usize, usize, String) {
    let mut pre = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(pre) || !b.is_char_boundary(pre) {
        pre -= 1;
    }
    let max_suf = a.len().min(b.len()) - pre;
    let mut suf = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    while !a.is_char_boundary(a.len() - suf) || !b.is_char_boundary(b.len() - suf) {
        suf -= 1;
    }
    (pre, a.len() - suf, b[pre..b.len() - suf].to_string())
}

/// The HTTP models' next-edit prompt, in the manner of Zed's Zeta: the person's edits
/// since the document was opened (a unified diff), then an excerpt of the document with
/// an *editable region* around the cursor (the cursor marked), and the response begun
/// with the region's opening marker. The model answers the region rewritten, up to
/// [`REGION_END`] (the stop sequence). The prompt is shown in `docs/cli.md`'s host section.
pub const CURSOR: &str = "<|user_cursor_is_here|>";
pub const REGION_START: &str = "<|editable_region_start|>";
pub const REGION_END: &str = "<|editable_region_end|>";
/// Lines of the editable region above and below the cursor's line.
pub const REGION_LINES: usize = 3;
/// Lines of context above and below the region.
pub const CONTEXT_LINES: usize = 5;
/// The edit history is cut to its last this many characters (whole lines).
pub const HISTORY_CHARS: usize = 1500;

/// A next-edit prompt and the byte range of the document its region covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    pub region: (usize, usize),
}

/// Byte offsets of the starts of `text`'s lines, and its length last.
fn line_starts(text: &str) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect();
    v.push(text.len());
    v
}

/// The prompt for `text` (opened as `opened`) with the cursor at byte `cursor`.
pub fn zeta_prompt(path: &str, opened: &str, text: &str, cursor: usize) -> Prompt {
    let starts = line_starts(text);
    let lines = starts.len() - 1;
    let cl = starts
        .partition_point(|&s| s <= cursor)
        .saturating_sub(1)
        .min(lines.saturating_sub(1));
    let (r0, r1) = (
        cl.saturating_sub(REGION_LINES),
        (cl + REGION_LINES + 1).min(lines),
    );
    let (c0, c1) = (
        r0.saturating_sub(CONTEXT_LINES),
        (r1 + CONTEXT_LINES).min(lines),
    );
    let at = |l: usize| starts[l.min(lines)];
    let (rs, re) = (at(r0), at(r1));
    let diff = similar::TextDiff::from_lines(opened, text);
    let mut history = diff
        .unified_diff()
        .context_radius(2)
        .header(path, path)
        .to_string();
    if history.len() > HISTORY_CHARS {
        let mut cut = history.len() - HISTORY_CHARS;
        while !history.is_char_boundary(cut) {
            cut += 1;
        }
        let from = history[cut..].find('\n').map_or(cut, |i| cut + i + 1);
        history = history[from..].to_string();
    }
    let mut region = String::new();
    region.push_str(&text[rs..cursor.clamp(rs, re)]);
    region.push_str(CURSOR);
    region.push_str(&text[cursor.clamp(rs, re)..re]);
    if !region.ends_with('\n') {
        region.push('\n');
    }
    let prompt = format!(
        "### Instruction:\nYou are a code completion assistant and your task is to analyze user edits and then rewrite an excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking into account the cursor location.\n\n### User Edits:\n\nUser edited \"{path}\":\n```diff\n{history}```\n\n### User Excerpt:\n\n```{path}\n{before}{REGION_START}\n{region}{REGION_END}\n{after}```\n\n### Response:\n\n```{path}\n{REGION_START}\n",
        before = &text[at(c0)..rs],
        after = &text[re..at(c1)],
    );
    Prompt {
        text: prompt,
        region: (rs, re),
    }
}

/// The document after the model's answer: the region replaced by the answer (the cursor
/// marker taken out, a final line break kept as the region had it); `None` when the
/// answer is not a rewritten region (it does not end where the region ends: the model ran
/// out of tokens).
pub fn apply_region(text: &str, p: &Prompt, answer: &str, finished: bool) -> Option<String> {
    if !finished {
        return None;
    }
    let mut region = answer.replace(CURSOR, "");
    let had_newline = text[p.region.0..p.region.1].ends_with('\n');
    if had_newline && !region.ends_with('\n') {
        region.push('\n');
    }
    if !had_newline && region.ends_with('\n') {
        region.pop();
    }
    Some(format!(
        "{}{}{}",
        &text[..p.region.0],
        region,
        &text[p.region.1..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a change and follows the run, as the host does on `didChange`.
    fn change(text: &mut String, run: &mut Option<EditRun>, a: usize, b: usize, ins: &str) {
        let old = text.clone();
        text.replace_range(a..b, ins);
        *run = EditRun::follow(run.take(), &old, a, b, ins, text);
    }

    #[test]
    fn a_typed_rename_is_proposed_at_the_next_occurrence() {
        let mut t = "def f(x):\n    y = x + 1\n    return x * y\n".to_string();
        let mut run = None;
        // `x` deleted, then `val` and `ue` typed: one run from `x` to `value`.
        change(&mut t, &mut run, 6, 7, "");
        change(&mut t, &mut run, 6, 6, "val");
        change(&mut t, &mut run, 9, 9, "ue");
        assert_eq!(t, "def f(value):\n    y = x + 1\n    return x * y\n");
        let r = run.clone().unwrap();
        // The cursor after `value` (byte 11): the next `x` is on line 2 (`y = x + 1`).
        let (a, b, new) = r.proposal(&t, 11).unwrap();
        assert_eq!((&t[a..b], new.as_str()), ("x", "value"));
        assert_eq!(a, t.find("= x").unwrap() + 2);
        // Accepted: the next proposal is the one after it.
        change(&mut t, &mut run, a, b, "value");
        // That change is a run of its own (`x` → `value` on line 2).
        let (a2, _, new2) = run.clone().unwrap().proposal(&t, a + 5).unwrap();
        assert_eq!(new2, "value");
        assert_eq!(a2, t.find("return x").unwrap() + 7);
    }

    #[test]
    fn no_proposal_without_a_rename() {
        let mut t = "a = 1\n".to_string();
        let mut run = None;
        // Typing a new line: the run's word was empty, nothing to rename.
        change(&mut t, &mut run, 6, 6, "bee");
        assert_eq!(run.clone().unwrap().proposal(&t, 9), None);
        // A rename whose old name is nowhere else: nothing.
        let mut t = "count = 1\n".to_string();
        let mut run = None;
        change(&mut t, &mut run, 5, 5, "er");
        assert_eq!(t, "counter = 1\n");
        assert_eq!(run.unwrap().proposal(&t, 7), None);
        // `count` inside `counts` is not a whole word.
        let mut t = "count = 1\nprint(counts)\n".to_string();
        let mut run = None;
        change(&mut t, &mut run, 5, 5, "er");
        assert_eq!(run.unwrap().proposal(&t, 7), None);
    }

    #[test]
    fn the_zeta_prompt_marks_the_region_and_the_cursor() {
        let opened = "def f(x):\n    return x\n";
        let text = "def f(value):\n    return x\n";
        let p = zeta_prompt("a.py", opened, text, 11);
        assert_eq!(p.region, (0, text.len()));
        assert!(
            p.text.contains("-def f(x):\n+def f(value):\n"),
            "{}",
            p.text
        );
        assert!(
            p.text.contains(&format!(
                "```a.py\n{REGION_START}\ndef f(value{CURSOR}):\n    return x\n{REGION_END}\n```"
            )),
            "{}",
            p.text
        );
        assert!(p.text.ends_with(&format!("```a.py\n{REGION_START}\n")));
        let answer = "def f(value):\n    return value";
        assert_eq!(
            apply_region(text, &p, answer, true).as_deref(),
            Some("def f(value):\n    return value\n")
        );
        assert_eq!(apply_region(text, &p, answer, false), None);
        // A long file: the region is the cursor's line and three on each side.
        let text: String = (0..30).map(|i| format!("l{i}\n")).collect();
        let cursor = text.find("l15").unwrap();
        let p = zeta_prompt("a.py", &text, &text, cursor);
        assert_eq!(
            &text[p.region.0..p.region.1],
            (12..19).map(|i| format!("l{i}\n")).collect::<String>()
        );
        assert!(p.text.contains("\nl7\nl8\n"), "context above");
        assert!(!p.text.contains("\nl6\n"));
    }

    #[test]
    fn one_edit_cuts_between_characters() {
        assert_eq!(one_edit("abc", "abc"), (3, 3, String::new()));
        assert_eq!(one_edit("f(x)", "f(value)"), (2, 3, "value".into()));
        // `é` (c3 a9) and `è` (c3 a8) share their first byte: the cut is before it.
        assert_eq!(one_edit("aé", "aè"), (1, 3, "è".into()));
        assert_eq!(one_edit("aa", "a"), (1, 2, String::new()));
    }
}
