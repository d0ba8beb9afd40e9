//! Text-level pieces of typing a change: identifiers and definitions, pairing old and
//! new lines, a changed line's edits, the chunks typed text is cut into, and the lines a
//! change touches.

use std::collections::BTreeSet;

use similar::{Algorithm, DiffTag, TextDiff, capture_diff_slices};

use crate::dataset::Language;

pub(super) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Identifiers as the silence rule counts them: `[A-Za-z_][A-Za-z0-9_]*`, 3 characters
/// or more.
pub(super) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3 && !w.starts_with(|c: char| c.is_ascii_digit()))
}

/// Keywords and the most common built-in names, per language: not evidence that the
/// person's next code was foreseeable. Words separated by spaces.
pub(super) fn keywords(lang: Language) -> &'static str {
    match lang {
        Language::Python => {
            "def class return elif else for while not and import from with try except finally \
            raise pass break continue lambda yield self async await global nonlocal del \
            assert None True False print len str int list dict"
        }
        Language::Rust => {
            "let mut pub impl struct enum trait use mod crate self Self super match else for \
            while loop return where ref move const static type dyn async await unsafe extern \
            true false Some None Err String Vec Option Result usize"
        }
        Language::JavaScript | Language::TypeScript => {
            "function const let var return else for while switch case break continue new this \
            class extends import export from default async await try catch finally throw \
            typeof instanceof null undefined true false interface type enum implements \
            public private protected readonly string number boolean console log"
        }
        Language::Go => {
            "func package import var const type struct interface map chan return else for \
            range switch case default defer select break continue nil true false err string \
            int error len"
        }
        Language::Java | Language::Kotlin | Language::CSharp => {
            "class public private protected static final void int return else for while new \
            this super import package extends implements interface try catch finally throw \
            throws null true false boolean String var val fun object override using \
            namespace string bool"
        }
        Language::C | Language::Cpp => {
            "int char void return else for while struct typedef static const unsigned long \
            short double float sizeof switch case break continue include define NULL nullptr \
            class public private template typename namespace using auto bool true false std"
        }
    }
}

/// Words after which the next identifier is the name defined.
pub(super) const DEFINERS: &str =
    "def fn function class struct enum trait interface type func fun const let var val static";

/// The names a line defines: the identifier after `def`, `fn`, `function`, `class`, …
/// (`mut` skipped), or `NAME` of `NAME = …` at the start of the line.
pub(super) fn defined_names(line: &str, out: &mut BTreeSet<String>) {
    let words: Vec<&str> = line
        .split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        if DEFINERS.split(' ').any(|d| d == *w)
            && let Some(name) = words[i + 1..].iter().find(|n| **n != "mut")
        {
            out.insert(name.to_string());
        }
    }
    if line.starts_with(|c: char| is_ident_char(c) && !c.is_ascii_digit()) {
        let end = line.find(|c: char| !is_ident_char(c)).unwrap_or(line.len());
        let rest = line[end..].trim_start();
        if rest.starts_with('=') && !rest.starts_with("==") {
            out.insert(line[..end].to_string());
        }
    }
}

pub(super) fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// How a block's old lines map to its new lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineOp {
    /// Old line `.0` edited into new line `.1`.
    Pair(usize, usize),
    Del(usize),
    Ins(usize),
}

/// Pairs a block's old and new lines that are alike (their trimmed texts at least half
/// the same characters), in order, most alike overall (a longest-common-subsequence over
/// likeness); the rest deleted or inserted, deletions first between two pairs.
pub(super) fn align(old: &[&str], new: &[&str]) -> Vec<LineOp> {
    let (k, m) = (old.len(), new.len());
    let likeness = |i: usize, j: usize| -> u32 {
        let (a, b) = (old[i].trim(), new[j].trim());
        if a.is_empty() && b.is_empty() {
            return 1000;
        }
        let r = (TextDiff::from_chars(a, b).ratio() * 1000.0) as u32;
        if r >= 500 { r } else { 0 }
    };
    let mut raw = Vec::new();
    if k * m <= 10_000 && k > 0 && m > 0 {
        let like: Vec<Vec<u32>> = (0..k)
            .map(|i| (0..m).map(|j| likeness(i, j)).collect())
            .collect();
        let mut dp = vec![vec![0u32; m + 1]; k + 1];
        for i in 1..=k {
            for j in 1..=m {
                let mut best = dp[i - 1][j].max(dp[i][j - 1]);
                if like[i - 1][j - 1] > 0 {
                    best = best.max(dp[i - 1][j - 1] + like[i - 1][j - 1]);
                }
                dp[i][j] = best;
            }
        }
        let (mut i, mut j) = (k, m);
        while i > 0 || j > 0 {
            if i > 0
                && j > 0
                && like[i - 1][j - 1] > 0
                && dp[i][j] == dp[i - 1][j - 1] + like[i - 1][j - 1]
            {
                raw.push(LineOp::Pair(i - 1, j - 1));
                i -= 1;
                j -= 1;
            } else if i > 0 && (j == 0 || dp[i][j] == dp[i - 1][j]) {
                raw.push(LineOp::Del(i - 1));
                i -= 1;
            } else {
                raw.push(LineOp::Ins(j - 1));
                j -= 1;
            }
        }
        raw.reverse();
    } else {
        raw.extend((0..k).map(LineOp::Del));
        raw.extend((0..m).map(LineOp::Ins));
    }
    // Between two pairs: the deletions, then the insertions.
    let mut out = Vec::with_capacity(raw.len());
    let mut dels = Vec::new();
    let mut ins = Vec::new();
    for op in raw {
        match op {
            LineOp::Del(_) => dels.push(op),
            LineOp::Ins(_) => ins.push(op),
            LineOp::Pair(..) => {
                out.append(&mut dels);
                out.append(&mut ins);
                out.push(op);
            }
        }
    }
    out.append(&mut dels);
    out.append(&mut ins);
    out
}

/// Tokens for an edited line: identifier runs, runs of spaces, and single other
/// characters (a line end among them).
pub(super) fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<u8> = None; // 0 ident, 1 space, 2 other
    for (i, c) in s.char_indices() {
        let class = if is_ident_char(c) {
            0
        } else if c == ' ' || c == '\t' {
            1
        } else {
            2
        };
        if i > 0 && (class == 2 || Some(class) != prev) {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(class);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// A line's edit, left to right: unchanged bytes, or old bytes replaced by new text.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece {
    Keep(usize),
    Change(String, String),
}

/// A changed line as edits: a token diff, changes one short token apart merged (so
/// `(a, b)` → `(x, y)` is two edits, but `a.b` → `x.y` one), each change's common
/// characters at its ends kept (`value` → `values` types one `s`).
pub(super) fn line_edits(old: &str, new: &str) -> Vec<Piece> {
    let ot = tokens(old);
    let nt = tokens(new);
    let mut raw: Vec<Piece> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &ot, &nt) {
        let (tag, o, n) = op.as_tag_tuple();
        let os: String = ot[o].concat();
        let ns: String = nt[n].concat();
        if tag == DiffTag::Equal {
            raw.push(Piece::Keep(os.len()));
            continue;
        }
        match raw.last_mut() {
            Some(Piece::Change(a, b)) => {
                a.push_str(&os);
                b.push_str(&ns);
            }
            _ => raw.push(Piece::Change(os, ns)),
        }
    }
    // Merge a change, one kept non-identifier character, a change.
    let mut merged: Vec<Piece> = Vec::new();
    let mut i = 0;
    let keep_text = |from: usize, len: usize| old[from..from + len].to_string();
    let mut at = 0usize; // byte offset in `old`
    while i < raw.len() {
        match &raw[i] {
            Piece::Keep(len)
                if *len == 1
                    && !old[at..at + 1].chars().all(is_ident_char)
                    && matches!(merged.last(), Some(Piece::Change(..)))
                    && matches!(raw.get(i + 1), Some(Piece::Change(..))) =>
            {
                let k = keep_text(at, 1);
                let Some(Piece::Change(na, nb)) = raw.get(i + 1) else {
                    unreachable!()
                };
                if let Some(Piece::Change(a, b)) = merged.last_mut() {
                    a.push_str(&k);
                    a.push_str(na);
                    b.push_str(&k);
                    b.push_str(nb);
                    at += 1 + na.len();
                }
                i += 2;
            }
            Piece::Keep(len) => {
                at += len;
                merged.push(Piece::Keep(*len));
                i += 1;
            }
            Piece::Change(a, b) => {
                at += a.len();
                merged.push(Piece::Change(a.clone(), b.clone()));
                i += 1;
            }
        }
    }
    // Keep the common ends of each change.
    let mut out: Vec<Piece> = Vec::new();
    let keep = |out: &mut Vec<Piece>, n: usize| match out.last_mut() {
        Some(Piece::Keep(k)) => *k += n,
        _ => out.push(Piece::Keep(n)),
    };
    for p in merged {
        match p {
            Piece::Keep(n) => keep(&mut out, n),
            Piece::Change(a, b) => {
                let pre: usize = a
                    .chars()
                    .zip(b.chars())
                    .take_while(|(x, y)| x == y)
                    .map(|(x, _)| x.len_utf8())
                    .sum();
                let suf: usize = a[pre..]
                    .chars()
                    .rev()
                    .zip(b[pre..].chars().rev())
                    .take_while(|(x, y)| x == y)
                    .map(|(x, _)| x.len_utf8())
                    .sum();
                if pre > 0 {
                    keep(&mut out, pre);
                }
                out.push(Piece::Change(
                    a[pre..a.len() - suf].to_string(),
                    b[pre..b.len() - suf].to_string(),
                ));
                if suf > 0 {
                    keep(&mut out, suf);
                }
            }
        }
    }
    out
}

/// Token kinds for chunking typed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Space,
    /// A line end with the next line's indentation.
    Newline,
    Other(char),
}

pub(super) fn typing_tokens(s: &str) -> Vec<(Kind, &str)> {
    let mut out: Vec<(Kind, &str)> = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let kind = if is_ident_char(c) {
            Kind::Ident
        } else if c == '\n' {
            Kind::Newline
        } else if c.is_whitespace() {
            Kind::Space
        } else {
            Kind::Other(c)
        };
        let mut end = i + c.len_utf8();
        let continues = |d: char| match kind {
            Kind::Ident => is_ident_char(d),
            Kind::Space | Kind::Newline => d.is_whitespace() && d != '\n',
            Kind::Other(_) => false,
        };
        while let Some(&(j, d)) = it.peek() {
            if !continues(d) {
                break;
            }
            end = j + d.len_utf8();
            it.next();
        }
        out.push((kind, &s[i..end]));
    }
    out
}

/// Typed text in chunks cut at natural pause points: after an identifier (unless a
/// space, `,`, `;`, `:`, `.` or a closing bracket follows), after `(`, `[`, `{`, `,`,
/// `=`, `:`, `;` followed by an identifier, after a run of spaces, and before and after
/// each line end (which carries the next line's indentation). Each chunk says whether a
/// person could stop to think before the next one (after an opening bracket, `,`, `=`,
/// `:`, or spaces: a mid-line pause point).
pub(super) fn chunks(text: &str) -> Vec<(&str, bool)> {
    let toks = typing_tokens(text);
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for (k, &(kind, s)) in toks.iter().enumerate() {
        at += s.len();
        let Some(&(next, _)) = toks.get(k + 1) else {
            break;
        };
        let cut = match (kind, next) {
            (_, Kind::Newline) | (Kind::Newline, _) | (Kind::Space, _) => true,
            (Kind::Ident, Kind::Space) => false,
            (Kind::Ident, Kind::Other(c)) => !",;:.)]}".contains(c),
            (Kind::Ident, _) => true,
            (Kind::Other(c), Kind::Ident) => "([{,=:;".contains(c),
            _ => false,
        };
        if cut {
            let thinking = match kind {
                Kind::Space => next != Kind::Newline,
                Kind::Other(c) => "([{,=:".contains(c),
                _ => false,
            };
            out.push((&text[start..at], thinking));
            start = at;
        }
    }
    if start < text.len() {
        out.push((&text[start..], false));
    }
    out
}

/// The lines of `before` that the change to `after` touches: `[first, last]`, 0-based;
/// an insertion between lines touches the line it goes before (the last line when at
/// the end).
pub(super) fn touched_lines(before: &str, after: &str) -> Option<[u32; 2]> {
    crate::lines::changed_lines(before, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_at_natural_points() {
        let c: Vec<&str> = chunks("\n    return foo(a, b)")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(c, ["\n    ", "return ", "foo", "(", "a, ", "b)"]);
        let c: Vec<&str> = chunks("x = self.value\n")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(c, ["x ", "= ", "self.value", "\n"]);
    }

    #[test]
    fn a_changed_line_is_edited_not_retyped() {
        let e = line_edits("def f(value):\n", "def f(values, n):\n");
        assert_eq!(
            e,
            [
                Piece::Keep(11),
                Piece::Change(String::new(), "s, n".into()),
                Piece::Keep(3)
            ]
        );
    }

    #[test]
    fn lines_are_paired_when_alike() {
        let ops = align(
            &["    x = 1\n", "    y = 2\n"],
            &["    x = 10\n", "    zzz()\n", "    y = 2 + 1\n"],
        );
        assert_eq!(
            ops,
            [LineOp::Pair(0, 0), LineOp::Ins(1), LineOp::Pair(1, 2)]
        );
    }

    #[test]
    fn touched_lines_of_an_insertion_and_a_change() {
        assert_eq!(touched_lines("a\nb\nc\n", "a\nb\nx\nc\n"), Some([2, 2]));
        assert_eq!(touched_lines("a\nb\nc\n", "a\nB\nC\n"), Some([1, 2]));
        assert_eq!(touched_lines("a\n", "a\nb\n"), Some([1, 1]));
        assert_eq!(touched_lines("a\n", "a\n"), None);
    }
}
