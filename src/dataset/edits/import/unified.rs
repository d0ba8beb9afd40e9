//! Unified diffs: parsed (git's, quilt's and Debian's patches), applied and reversed.

use anyhow::{Context, Result, bail};

/// One line of a hunk, without its line end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    Context(String),
    Delete(String),
    Insert(String),
}

/// One `@@ -old_start,old_len +new_start,new_len @@` hunk. The starts are the patch's
/// own, 1-based (0 for an empty side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<HunkLine>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_newline: bool,
    /// The same for the new side.
    pub new_no_newline: bool,
}

/// One file's part of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The paths as written (`a/src/x.c`), a timestamp after a tab removed; `None` for
    /// `/dev/null` (the file is created, or deleted).
    pub old_raw: Option<String>,
    pub new_raw: Option<String>,
    /// The paths with their first component removed (`patch -p1`: `a/`, `b/`,
    /// `pkg-1.0.orig/`), as git and quilt write them.
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
    /// Why this file cannot be applied (`binary`), when it cannot.
    pub skipped: Option<String>,
}

impl FileDiff {
    /// The file's path (the new side's, or the old side's for a deletion) with `strip`
    /// leading components removed (`patch -pN`).
    pub fn path(&self, strip: usize) -> Option<String> {
        let raw = self.new_raw.as_ref().or(self.old_raw.as_ref())?;
        strip_components(raw, strip)
    }

    /// Added plus removed lines.
    pub fn changed_lines(&self) -> usize {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| !matches!(l, HunkLine::Context(_)))
            .count()
    }
}

fn strip_components(raw: &str, strip: usize) -> Option<String> {
    let mut rest = raw.trim_start_matches("./");
    for _ in 0..strip {
        rest = &rest[rest.find('/')? + 1..];
        rest = rest.trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_string())
}

/// The path of a `---`/`+++` line: `None` for `/dev/null`; a tab and what follows (a
/// timestamp) removed; git's quoted names unquoted.
fn header_path(s: &str) -> Option<String> {
    let s = s.split('\t').next().unwrap_or("").trim_end();
    let s = unquote(s);
    if s == "/dev/null" || s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// Git's C-style quoting of a path with unusual characters (`"a/t\303\251.c"`).
fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut out: Vec<u8> = Vec::new();
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let c = b[i + 1];
            if c.is_ascii_digit() && i + 3 < b.len() {
                let oct = &inner[i + 1..i + 4];
                if let Ok(v) = u8::from_str_radix(oct, 8) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
            out.push(match c {
                b'n' => b'\n',
                b't' => b'\t',
                other => other,
            });
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `-12,3` or `+12` (a length of 1).
fn range(s: &str) -> Option<(u32, u32)> {
    let (start, len) = match s.split_once(',') {
        Some((a, b)) => (a, b.parse().ok()?),
        None => (s, 1),
    };
    Some((start.parse().ok()?, len))
}

/// `@@ -a,b +c,d @@ anything`.
fn hunk_header(line: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = line.strip_prefix("@@ ")?;
    let mut parts = rest.split(' ');
    let old = range(parts.next()?.strip_prefix('-')?)?;
    let new = range(parts.next()?.strip_prefix('+')?)?;
    Some((old.0, old.1, new.0, new.1))
}

/// The paths of `diff --git a/X b/Y` (unambiguous when both are the same, or quoted).
fn git_diff_paths(rest: &str) -> (Option<String>, Option<String>) {
    if let Some(quoted) = rest.strip_prefix('"')
        && let Some(end) = quoted.find('"')
    {
        let a = &rest[..end + 2];
        let b = rest[end + 2..].trim_start();
        return (Some(unquote(a)), Some(unquote(b)));
    }
    // "a/X b/X": split in the middle when both halves name the same file.
    let n = rest.len();
    if n % 2 == 1 {
        let (a, b) = (&rest[..n / 2], &rest[n / 2 + 1..]);
        if a.split_once('/').map(|x| x.1) == b.split_once('/').map(|x| x.1) {
            return (Some(a.to_string()), Some(b.to_string()));
        }
    }
    match rest.find(" b/") {
        Some(i) => (Some(rest[..i].to_string()), Some(rest[i + 1..].to_string())),
        None => (None, None),
    }
}

/// The first line of a patch's description: DEP-3's `Description:` (or `Subject:`, as
/// `git format-patch` writes it, `[PATCH …]` removed), from the text before the diff.
pub fn patch_subject(patch: &str) -> Option<String> {
    for line in patch.lines() {
        if line.starts_with("--- ") || line.starts_with("diff ") || line.starts_with("Index: ") {
            break;
        }
        for key in ["Description:", "Subject:"] {
            if let Some(v) = line.strip_prefix(key) {
                let mut v = v.trim();
                if v.starts_with("[PATCH")
                    && let Some(i) = v.find(']')
                {
                    v = v[i + 1..].trim();
                }
                if !v.is_empty() {
                    return Some(v.to_string());
                }
            }
        }
    }
    None
}

/// Parses a unified diff: git's (`diff --git`, extended headers, renames, binary files),
/// quilt's (`Index:` lines, `-p1` paths with timestamps) and Debian's (a DEP-3 header
/// before the first file, [`patch_subject`]). Text between files is ignored. A binary
/// file is kept with `skipped: Some("binary")`; a hunk whose lines do not add up to its
/// header is an error naming the file.
pub fn parse_unified(diff: &str) -> Result<Vec<FileDiff>> {
    let lines: Vec<&str> = diff
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut files: Vec<FileDiff> = Vec::new();
    // A `diff --git` header seen, its file not yet closed by `---`/`+++` or hunks.
    let mut git: Option<FileDiff> = None;
    let mut i = 0;
    let new_file = |old: Option<String>, new: Option<String>| FileDiff {
        old_path: old.as_deref().and_then(|p| strip_components(p, 1)),
        new_path: new.as_deref().and_then(|p| strip_components(p, 1)),
        old_raw: old,
        new_raw: new,
        hunks: Vec::new(),
        skipped: None,
    };
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.extend(git.take());
            let (a, b) = git_diff_paths(rest);
            git = Some(new_file(a, b));
            i += 1;
            continue;
        }
        if let Some(g) = git.as_mut() {
            if line.starts_with("Binary files ") || line == "GIT binary patch" {
                g.skipped = Some("binary".into());
            } else if let Some(p) = line.strip_prefix("rename from ") {
                *g = FileDiff {
                    hunks: std::mem::take(&mut g.hunks),
                    ..new_file(Some(format!("a/{}", unquote(p))), g.new_raw.clone())
                };
            } else if let Some(p) = line.strip_prefix("rename to ") {
                *g = FileDiff {
                    hunks: std::mem::take(&mut g.hunks),
                    ..new_file(g.old_raw.clone(), Some(format!("b/{}", unquote(p))))
                };
            } else if line.starts_with("new file mode") {
                g.old_raw = None;
                g.old_path = None;
            } else if line.starts_with("deleted file mode") {
                g.new_raw = None;
                g.new_path = None;
            }
        }
        let is_file_start = line.starts_with("--- ")
            && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
            && lines
                .get(i + 2)
                .is_none_or(|n| n.starts_with("@@ ") || n.is_empty());
        if !is_file_start {
            i += 1;
            continue;
        }
        let old = header_path(&line[4..]);
        let new = header_path(&lines[i + 1][4..]);
        let mut f = match git.take() {
            // git's headers are authoritative for creation and deletion.
            Some(g) => FileDiff {
                skipped: g.skipped,
                ..new_file(
                    if g.old_raw.is_none() { None } else { old },
                    if g.new_raw.is_none() { None } else { new },
                )
            },
            None => new_file(old, new),
        };
        let name = f.path(1).unwrap_or_default();
        i += 2;
        while let Some((os, ol, ns, nl)) = lines.get(i).and_then(|l| hunk_header(l)) {
            i += 1;
            let mut h = Hunk {
                old_start: os,
                old_len: ol,
                new_start: ns,
                new_len: nl,
                lines: Vec::new(),
                old_no_newline: false,
                new_no_newline: false,
            };
            let (mut o, mut n) = (0u32, 0u32);
            while o < ol || n < nl {
                let Some(&l) = lines.get(i) else {
                    bail!(
                        "{name}: the diff ends inside a hunk ({line})",
                        line = lines[i - 1]
                    );
                };
                let (tag, text) = match l.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => (c, &l[1..]),
                    // An empty context line whose space was eaten by a mailer or editor.
                    None => (' ', ""),
                    Some('\\') => {
                        i += 1;
                        continue;
                    }
                    _ => bail!(
                        "{name}: hunk @@ -{os},{ol} +{ns},{nl} @@ has {o} old and {n} new lines, \
                         fewer than its header says"
                    ),
                };
                match tag {
                    ' ' => {
                        o += 1;
                        n += 1;
                        h.lines.push(HunkLine::Context(text.to_string()));
                    }
                    '-' => {
                        o += 1;
                        h.lines.push(HunkLine::Delete(text.to_string()));
                    }
                    _ => {
                        n += 1;
                        h.lines.push(HunkLine::Insert(text.to_string()));
                    }
                }
                i += 1;
                if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
                    match tag {
                        ' ' => {
                            h.old_no_newline = true;
                            h.new_no_newline = true;
                        }
                        '-' => h.old_no_newline = true,
                        _ => h.new_no_newline = true,
                    }
                    i += 1;
                }
                if o > ol || n > nl {
                    bail!(
                        "{name}: hunk @@ -{os},{ol} +{ns},{nl} @@ has more lines than its header says"
                    );
                }
            }
            f.hunks.push(h);
        }
        files.push(f);
    }
    files.extend(git.take());
    Ok(files)
}

/// The text as lines without their ends, and whether the last one ends with `\n` (an
/// empty text: no lines, and `true`).
fn split_lines(text: &str) -> (Vec<&str>, bool) {
    let ends = text.is_empty() || text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = if text.is_empty() {
        Vec::new()
    } else {
        body.split('\n').collect()
    };
    (lines, ends)
}

/// Applies a file's hunks to `text` (or, with `reverse`, undoes them: the new side is
/// looked for and replaced by the old), as `patch` does without fuzz: each hunk's lines
/// must match exactly, at the line its header says or the nearest line after the
/// previous hunk (an offset). A hunk that matches nowhere is an error naming it.
pub fn apply_hunks(text: &str, hunks: &[Hunk], reverse: bool) -> Result<String> {
    let (lines, mut ends_nl) = split_lines(text);
    let mut out: Vec<String> = Vec::new();
    let mut pos = 0usize; // next line of `lines` not yet copied
    let mut offset: i64 = 0;
    for h in hunks {
        let (from, to): (Vec<&str>, Vec<&str>) = {
            let mut old = Vec::new();
            let mut new = Vec::new();
            for l in &h.lines {
                match l {
                    HunkLine::Context(s) => {
                        old.push(s.as_str());
                        new.push(s.as_str());
                    }
                    HunkLine::Delete(s) => old.push(s.as_str()),
                    HunkLine::Insert(s) => new.push(s.as_str()),
                }
            }
            if reverse { (new, old) } else { (old, new) }
        };
        let (start, len) = if reverse {
            (h.new_start, h.new_len)
        } else {
            (h.old_start, h.old_len)
        };
        let (from_no_nl, to_no_nl) = if reverse {
            (h.new_no_newline, h.old_no_newline)
        } else {
            (h.old_no_newline, h.new_no_newline)
        };
        // A side of length 0 names the line after which it goes.
        let expected = if len == 0 {
            start as i64
        } else {
            start as i64 - 1
        } + offset;
        let fits = |p: usize| p + from.len() <= lines.len() && lines[p..p + from.len()] == from[..];
        let last = lines.len().saturating_sub(from.len());
        let found = if from.is_empty() {
            let p = expected.clamp(pos as i64, lines.len() as i64) as usize;
            Some(p)
        } else {
            let e = expected.clamp(pos as i64, last.max(pos) as i64) as usize;
            (0..=lines.len())
                .flat_map(|d| [e.checked_add(d), e.checked_sub(d).filter(|_| d > 0)])
                .flatten()
                .filter(|&p| p >= pos && p <= last)
                .take_while(|_| true)
                .find(|&p| fits(p))
                .or_else(|| (pos..=last).find(|&p| fits(p)))
        };
        let Some(p) = found else {
            bail!(
                "hunk @@ -{},{} +{},{} @@ does not match the file",
                h.old_start,
                h.old_len,
                h.new_start,
                h.new_len
            );
        };
        offset = p as i64 - (expected - offset);
        out.extend(lines[pos..p].iter().map(|s| s.to_string()));
        out.extend(to.iter().map(|s| s.to_string()));
        pos = p + from.len();
        if pos == lines.len() && (from_no_nl || to_no_nl || !from.is_empty() || !to.is_empty()) {
            // The hunk reaches the end of the file: its new side says how the file ends.
            if from_no_nl || to_no_nl || !ends_nl {
                ends_nl = !to_no_nl;
            }
        }
    }
    out.extend(lines[pos..].iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    if !out.is_empty() && ends_nl {
        s.push('\n');
    }
    Ok(s)
}

/// The old and new texts of a file from the text on disk and the diff: with `applied`,
/// `text` is the new side and the old is made by undoing the hunks; otherwise the
/// reverse. `None` on a side the diff creates or deletes.
pub fn both_sides(
    f: &FileDiff,
    text: Option<&str>,
    applied: bool,
) -> Result<(Option<String>, Option<String>)> {
    let creates = f.old_raw.is_none();
    let deletes = f.new_raw.is_none();
    if applied {
        let new = if deletes {
            None
        } else {
            Some(text.context("the file is not in the tree")?.to_string())
        };
        let old = apply_hunks(new.as_deref().unwrap_or(""), &f.hunks, true)?;
        Ok(((!creates).then_some(old), new))
    } else {
        let old = if creates {
            None
        } else {
            Some(text.context("the file is not in the tree")?.to_string())
        };
        let new = apply_hunks(old.as_deref().unwrap_or(""), &f.hunks, false)?;
        Ok((old, (!deletes).then_some(new)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "\
commit 0123
Author: t <t@t>

    Fix things

diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,3 @@
 def f(x):
-    return x
+    return x + 1
 
diff --git a/new.py b/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+a = 1
+b = 2
\\ No newline at end of file
diff --git a/img.png b/img.png
index 4444444..5555555 100644
Binary files a/img.png and b/img.png differ
diff --git a/old.py b/old.py
deleted file mode 100644
index 6666666..0000000
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-gone
";

    #[test]
    fn git_diffs_parse_with_their_extended_headers() {
        let files = parse_unified(GIT).unwrap();
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].new_path.as_deref(), Some("src/a.py"));
        assert_eq!(files[0].old_path.as_deref(), Some("src/a.py"));
        assert_eq!(files[0].hunks[0].lines.len(), 4);
        assert_eq!(files[0].hunks[0].lines[3], HunkLine::Context(String::new()));
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("new.py"));
        assert!(files[1].hunks[0].new_no_newline);
        assert_eq!(files[2].skipped.as_deref(), Some("binary"));
        assert_eq!(files[2].path(1).as_deref(), Some("img.png"));
        assert_eq!(files[3].new_path, None);
        assert_eq!(files[3].path(1).as_deref(), Some("old.py"));
        assert_eq!(files[0].changed_lines(), 2);

        let (old, new) = both_sides(&files[1], None, false).unwrap();
        assert_eq!((old, new.as_deref()), (None, Some("a = 1\nb = 2")));
        let (old, new) = both_sides(&files[3], Some("gone\n"), false).unwrap();
        assert_eq!((old.as_deref(), new), (Some("gone\n"), None));
        let (old, new) = both_sides(&files[3], None, true).unwrap();
        assert_eq!((old.as_deref(), new), (Some("gone\n"), None));
    }

    #[test]
    fn hunks_apply_and_reverse_with_an_offset() {
        let patch = "\
--- x.orig/f.c\t2020-01-01 00:00:00
+++ x/f.c\t2020-01-01 00:00:00
@@ -2,3 +2,4 @@
 b
-c
+C
+c2
 d
";
        let f = &parse_unified(patch).unwrap()[0];
        assert_eq!(f.new_path.as_deref(), Some("f.c"));
        // Two lines more above: the hunk is found 2 lines lower.
        let old = "z\ny\na\nb\nc\nd\ne\n";
        let new = apply_hunks(old, &f.hunks, false).unwrap();
        assert_eq!(new, "z\ny\na\nb\nC\nc2\nd\ne\n");
        assert_eq!(apply_hunks(&new, &f.hunks, true).unwrap(), old);
        let err = apply_hunks("a\nb\nx\nd\n", &f.hunks, false).unwrap_err();
        assert!(err.to_string().contains("does not match"), "{err}");
    }

    #[test]
    fn no_newline_at_end_of_file_is_kept_on_each_side() {
        let patch = "\
--- a/f
+++ b/f
@@ -1,2 +1,2 @@
 a
-b
\\ No newline at end of file
+b
";
        let f = &parse_unified(patch).unwrap()[0];
        assert!(f.hunks[0].old_no_newline && !f.hunks[0].new_no_newline);
        assert_eq!(apply_hunks("a\nb", &f.hunks, false).unwrap(), "a\nb\n");
        assert_eq!(apply_hunks("a\nb\n", &f.hunks, true).unwrap(), "a\nb");
    }

    #[test]
    fn dep3_and_mail_subjects() {
        let p =
            "Description: Fix the frobnicator\n Longer text.\nAuthor: x\n---\n--- a/f\n+++ b/f\n";
        assert_eq!(patch_subject(p).as_deref(), Some("Fix the frobnicator"));
        let m = "From 123\nSubject: [PATCH 2/3] Use the thing\n\n--- a/f\n";
        assert_eq!(patch_subject(m).as_deref(), Some("Use the thing"));
        assert_eq!(patch_subject("--- a/f\n+++ b/f\n"), None);
    }

    #[test]
    fn a_short_hunk_is_an_error_naming_the_file() {
        let p = "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n a\n-b\n";
        let err = parse_unified(p).unwrap_err().to_string();
        assert!(err.contains("f.py"), "{err}");
    }
}
