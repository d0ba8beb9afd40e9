//! A change (the start and end texts of some files) typed as a person would: files in
//! the order their names depend on, each top to bottom, changed lines edited rather than
//! retyped, insertions typed in chunks with pauses, and the moments where they paused.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use anyhow::{Result, bail};
use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::options::ImportOptions;
use super::text::{
    LineOp, Piece, align, chunks, defined_names, identifiers, is_ident_char, keywords, line_edits,
    lines_of, touched_lines,
};
use crate::dataset::Language;
use crate::dataset::edits::{
    Buffers, Event, EventKind, Moment, Origin, Pos, Session, offset, position,
};

/// Blocks of changed lines at most this many unchanged lines apart are one hunk (typed
/// without a long pause between them).
const HUNK_GAP: usize = 3;
/// Milliseconds per character typed.
const CHAR_MS: (u64, u64) = (60, 120);
/// The pause between two chunks of one line.
const SHORT_MS: (u64, u64) = (300, 800);
/// After a jump (a file opened, the cursor moved), before the first edit.
const SETTLE_MS: (u64, u64) = (150, 400);
/// A selection deleted.
const DELETE_MS: (u64, u64) = (250, 700);
/// The shortest pause before a chunk, when a long chunk leaves less room under the
/// pause threshold (rather than cutting it in two).
const MIN_LEAD_MS: u64 = 100;
/// A long pause: at least `max(pause_ms, LONG_MIN_MS)`, plus up to `LONG_EXTRA_MS`.
const LONG_MIN_MS: u64 = 1200;
const LONG_EXTRA_MS: u64 = 1800;

/// splitmix64: a small deterministic stream from the seed and the session id.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, id: &str) -> Rng {
        // FNV-1a of the id, mixed with the seed.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in id.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(seed ^ h)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, (lo, hi): (u64, u64)) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// A run of changed lines: `old` lines of the start text become `new` lines of the end.
#[derive(Debug, Clone)]
struct Block {
    old: Range<usize>,
    new: Range<usize>,
}

#[derive(Debug)]
struct HunkPlan {
    blocks: Vec<Block>,
    /// Every block inserts whole lines and deletes none.
    pure_insert: bool,
    /// The inserted lines' identifiers (silence rule), keywords left out.
    idents: BTreeSet<String>,
}

struct FilePlan<'a> {
    path: String,
    old_lines: Vec<&'a str>,
    new_lines: Vec<&'a str>,
    hunks: Vec<HunkPlan>,
    defines: BTreeSet<String>,
    uses: BTreeSet<String>,
}

fn plan_file<'a>(path: &str, lang: Language, old: &'a str, new: &'a str) -> FilePlan<'a> {
    let old_lines = lines_of(old);
    let new_lines = lines_of(new);
    let mut blocks: Vec<Block> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        match blocks.last_mut() {
            Some(b) if b.old.end == o.start && b.new.end == n.start => {
                b.old.end = o.end;
                b.new.end = n.end;
            }
            _ => blocks.push(Block { old: o, new: n }),
        }
    }
    let kw = keywords(lang);
    let mut hunks: Vec<HunkPlan> = Vec::new();
    let mut defines = BTreeSet::new();
    let mut uses = BTreeSet::new();
    for b in blocks {
        let joins = hunks
            .last()
            .and_then(|h| h.blocks.last())
            .is_some_and(|last| b.old.start - last.old.end <= HUNK_GAP);
        if !joins {
            hunks.push(HunkPlan {
                blocks: Vec::new(),
                pure_insert: true,
                idents: BTreeSet::new(),
            });
        }
        let h = hunks.last_mut().expect("a hunk");
        h.pure_insert &= b.old.is_empty();
        for line in &new_lines[b.new.clone()] {
            defined_names(line, &mut defines);
            for w in line
                .split(|c: char| !is_ident_char(c))
                .filter(|w| !w.is_empty())
            {
                uses.insert(w.to_string());
            }
            for w in identifiers(line).filter(|w| !kw.split(' ').any(|k| k == *w)) {
                h.idents.insert(w.to_string());
            }
        }
        h.blocks.push(b);
    }
    FilePlan {
        path: path.to_string(),
        old_lines,
        new_lines,
        hunks,
        defines,
        uses,
    }
}

/// Files in a plausible order: a file whose added lines define a name another file's
/// added lines use goes before it; otherwise (and to break a circle) the given order.
fn order_files(files: &[FilePlan]) -> Vec<usize> {
    let n = files.len();
    let deps: Vec<Vec<usize>> = (0..n)
        .map(|b| {
            (0..n)
                .filter(|&a| a != b && files[a].defines.iter().any(|d| files[b].uses.contains(d)))
                .collect()
        })
        .collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n)
            .find(|&i| !placed[i] && deps[i].iter().all(|&d| placed[d]))
            .or_else(|| (0..n).find(|&i| !placed[i]))
            .expect("a file left");
        placed[next] = true;
        order.push(next);
    }
    order
}

/// A moment found while typing, its lines filled in when its hunk ends.
struct PendingMoment {
    moment: Moment,
    hunk: usize,
    /// The next file's text at the moment.
    text: String,
}

/// Emits the events and finds the moments.
struct Typist<'o> {
    opts: &'o ImportOptions,
    rng: Rng,
    bufs: Buffers,
    events: Vec<Event>,
    t: u64,
    cursor: Option<(String, Pos)>,
    /// A file to open, or the cursor to move, before the next edit.
    jump: Option<bool>,
    hunk: usize,
    hunk_started: bool,
    hunk_pure: bool,
    hunk_idents: BTreeSet<String>,
    /// Every text inserted or deleted so far (contiguous typing joined).
    edited: String,
    moments: Vec<PendingMoment>,
    /// The file's text after each hunk.
    hunk_end: Vec<String>,
}

impl Typist<'_> {
    fn budget(&self) -> u64 {
        self.opts.pause_ms.saturating_sub(1).max(1)
    }
    fn short(&mut self, r: (u64, u64)) -> u64 {
        self.rng.range(r).min(self.budget())
    }
    fn long(&mut self) -> u64 {
        self.opts.pause_ms.max(LONG_MIN_MS) + self.rng.range((0, LONG_EXTRA_MS))
    }
    fn text(&self, file: &str) -> &str {
        self.bufs.files.get(file).map_or("", |s| s.as_str())
    }

    fn push(&mut self, gap: u64, what: EventKind) -> Result<()> {
        let gap = gap.max(1);
        let file = what.file().to_string();
        if gap >= self.opts.pause_ms {
            let (mfile, cursor) = match (&self.cursor, &what) {
                (Some((f, c)), _) => (f.clone(), *c),
                // Before anything is opened the cursor is nowhere yet: the file's start,
                // not where the person is about to go (that is the answer).
                (None, _) => (file.clone(), [0, 0]),
            };
            let known: BTreeSet<&str> = identifiers(&self.edited).collect();
            let silence = !self.hunk_started
                && self.hunk_pure
                && self.hunk_idents.iter().all(|w| !known.contains(w.as_str()));
            self.moments.push(PendingMoment {
                moment: Moment {
                    after: self.events.len(),
                    file: mfile,
                    cursor,
                    pause_ms: gap,
                    until: 0,
                    next_file: file.clone(),
                    next_lines: [0, 0],
                    silence,
                },
                hunk: self.hunk,
                text: self.text(&file).to_string(),
            });
        }
        let joined = matches!(&what, EventKind::Insert { file: f, at, .. }
            if self.cursor.as_ref() == Some(&(f.clone(), *at)));
        match &what {
            EventKind::Insert { text, .. } => {
                if !joined {
                    self.edited.push('\n');
                }
                self.edited.push_str(text);
            }
            EventKind::Delete { from, to, .. } => {
                let t = self.text(&file);
                let (a, b) = (offset(t, *from)?, offset(t, *to)?);
                let deleted = t[a..b].to_string();
                self.edited.push('\n');
                self.edited.push_str(&deleted);
            }
            _ => {}
        }
        if matches!(what, EventKind::Insert { .. } | EventKind::Delete { .. }) {
            self.hunk_started = true;
        }
        self.t += gap;
        if let Some(c) = self.bufs.apply(&what)? {
            self.cursor = Some((file, c));
        }
        self.events.push(Event { t: self.t, what });
        Ok(())
    }

    /// Before an edit at `pos`: the pending jump (a long pause, the file opened or the
    /// cursor moved there). Returns the gap the edit gets instead of its own, if any.
    fn before_edit(&mut self, file: &str, pos: Pos) -> Result<Option<u64>> {
        let Some(open) = self.jump.take() else {
            return Ok(None);
        };
        let here = self.cursor.as_ref() == Some(&(file.to_string(), pos));
        if !open && here {
            return Ok(Some(self.long()));
        }
        let gap = self.long();
        let what = if open {
            EventKind::Open {
                file: file.into(),
                at: pos,
            }
        } else {
            EventKind::Cursor {
                file: file.into(),
                at: pos,
            }
        };
        self.push(gap, what)?;
        Ok(Some(self.short(SETTLE_MS)))
    }

    fn delete(&mut self, file: &str, from: usize, to: usize) -> Result<()> {
        let text = self.text(file);
        let (a, b) = (position(text, from), position(text, to));
        let gap = match self.before_edit(file, a)? {
            Some(g) => g,
            None => self.short(DELETE_MS),
        };
        self.push(
            gap,
            EventKind::Delete {
                file: file.into(),
                from: a,
                to: b,
            },
        )
    }

    /// Types `text` at byte offset `at`. Whole lines inserted before a line are typed as
    /// a person does: a line end at the end of the line above, then the new text (at the
    /// start of the file: a line end first, the cursor back up, then the text).
    fn type_text(&mut self, file: &str, at: usize, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let buf = self.text(file);
        if let Some(body) = text.strip_suffix('\n') {
            if at > 0 && buf.as_bytes()[at - 1] == b'\n' {
                return self.type_chunks(file, at - 1, &format!("\n{body}"));
            }
            if at == 0 && !buf.is_empty() {
                self.type_chunks(file, 0, "\n")?;
                let gap = self.short(SETTLE_MS);
                self.push(
                    gap,
                    EventKind::Cursor {
                        file: file.into(),
                        at: [0, 0],
                    },
                )?;
                return self.type_chunks(file, 0, body);
            }
        }
        self.type_chunks(file, at, text)
    }

    fn type_chunks(&mut self, file: &str, mut at: usize, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let parts = chunks(text);
        // One line in three with two chunks or more gets a long pause at one of its
        // mid-line pause points.
        let mut long_after: BTreeSet<usize> = BTreeSet::new();
        let mut line_start = 0;
        for k in 0..=parts.len() {
            let ends_line = k == parts.len() || parts[k].0.starts_with('\n');
            if ends_line {
                let points: Vec<usize> = (line_start..k.saturating_sub(1))
                    .filter(|&i| parts[i].1)
                    .collect();
                if k - line_start >= 2 && !points.is_empty() && self.rng.range((0, 2)) == 0 {
                    let pick = points[(self.rng.next() % points.len() as u64) as usize];
                    long_after.insert(pick);
                }
                line_start = k + 1;
            }
        }
        let budget = self.budget();
        for (k, (chunk, _)) in parts.iter().enumerate() {
            let rate = self.rng.range(CHAR_MS);
            // Keystrokes: characters, but a line end with its indentation is one (the
            // editor indents).
            let units: Vec<&str> = if chunk.starts_with('\n') {
                vec![chunk]
            } else {
                chunk
                    .char_indices()
                    .map(|(i, c)| &chunk[i..i + c.len_utf8()])
                    .collect()
            };
            let mut i = 0;
            while i < units.len() {
                let pos = position(self.text(file), at);
                let jumped = if i == 0 && k == 0 {
                    self.before_edit(file, pos)?
                } else {
                    None
                };
                let mut lead = if i > 0 {
                    0
                } else if let Some(g) = jumped {
                    g
                } else if k > 0 && long_after.contains(&(k - 1)) {
                    self.long()
                } else {
                    self.short(SHORT_MS).min(budget / 2)
                };
                let typing = (units.len() - i) as u64 * rate;
                if lead < budget && lead + typing > budget && typing + MIN_LEAD_MS <= budget {
                    // A shorter pause before it rather than a word cut in two.
                    lead = budget - typing;
                }
                // As many keystrokes as keep a short gap under the pause threshold.
                let room = if lead >= budget {
                    budget
                } else {
                    budget - lead
                };
                let n = ((room / rate) as usize).clamp(1, units.len() - i);
                let piece: String = units[i..i + n].concat();
                let gap = lead + n as u64 * rate;
                let gap = if lead < budget { gap.min(budget) } else { gap };
                self.push(
                    gap,
                    EventKind::Insert {
                        file: file.into(),
                        at: pos,
                        text: piece.clone(),
                        paste: false,
                    },
                )?;
                at += piece.len();
                i += n;
            }
        }
        Ok(())
    }

    fn file(&mut self, plan: &FilePlan) -> Result<()> {
        let file = plan.path.as_str();
        self.jump = Some(true);
        for (hi, h) in plan.hunks.iter().enumerate() {
            if hi > 0 {
                self.jump = Some(false);
            }
            self.hunk_started = false;
            self.hunk_pure = h.pure_insert;
            self.hunk_idents = h.idents.clone();
            for b in &h.blocks {
                let mut p: usize = plan.new_lines[..b.new.start].iter().map(|l| l.len()).sum();
                let old = &plan.old_lines[b.old.clone()];
                let new = &plan.new_lines[b.new.clone()];
                let ops = align(old, new);
                let mut k = 0;
                while k < ops.len() {
                    match ops[k] {
                        LineOp::Del(_) => {
                            let mut len = 0;
                            while let Some(LineOp::Del(i)) = ops.get(k) {
                                len += old[*i].len();
                                k += 1;
                            }
                            self.delete(file, p, p + len)?;
                        }
                        LineOp::Ins(_) => {
                            let mut s = String::new();
                            while let Some(LineOp::Ins(j)) = ops.get(k) {
                                s.push_str(new[*j]);
                                k += 1;
                            }
                            self.type_text(file, p, &s)?;
                            p += s.len();
                        }
                        LineOp::Pair(i, j) => {
                            for piece in line_edits(old[i], new[j]) {
                                match piece {
                                    Piece::Keep(n) => p += n,
                                    Piece::Change(a, b) => {
                                        if !a.is_empty() {
                                            self.delete(file, p, p + a.len())?;
                                        }
                                        self.type_text(file, p, &b)?;
                                        p += b.len();
                                    }
                                }
                            }
                            k += 1;
                        }
                    }
                }
            }
            self.hunk_end.push(self.text(file).to_string());
            self.hunk += 1;
        }
        Ok(())
    }
}

/// Whether a path is a code file the options keep.
pub(super) fn keeps(path: &str, opts: &ImportOptions) -> Option<Language> {
    let lang = Language::of_path(Path::new(path))?;
    match &opts.languages {
        Some(only) if !only.contains(&lang) => None,
        _ => Some(lang),
    }
}

/// A session from the start and end texts of the files a change touches (a commit, a
/// patch): the change typed as a person would.
///
/// - Only code files the options keep ([`Language::of_path`], `languages`) count;
///   a file absent from `new` (deleted) is left out, one absent from `old` is created.
///   `Ok(None)` when no code file changed, or more than `max_files` did, or more than
///   `max_changed_lines` lines (added plus removed) changed.
/// - Files: one whose added lines define a name (`def NAME`, `fn NAME`, `class NAME`,
///   `NAME =` at the start of a line, …) that another file's added lines use goes
///   first; otherwise path order. Each is opened (an `open` event) before its first
///   edit.
/// - In a file: its hunks (blocks of changed lines at most 3 unchanged lines apart) top
///   to bottom, the cursor moved (`cursor`) to each. In a hunk, old and new lines are
///   paired when alike and a pair edited through a token diff (a renamed parameter is
///   deleted and retyped, the rest of the line kept); other lines deleted, or typed in
///   chunks cut at natural pause points (after an identifier, `(`, `,`, `=`, `:`, spaces,
///   at line ends).
/// - Times, deterministic from `seed` and the session id: 60–120 ms a keystroke (a line
///   end with its indentation is one; a chunk's `insert` stamped when it is typed),
///   300–800 ms between chunks, a long pause (at least `max(pause_ms, 1.2 s)`, up to
///   1.8 s more) before each file and hunk and at one mid-line pause point of one line
///   in three with two chunks or more. Other gaps stay under `pause_ms`: the pause
///   before a long chunk is shortened (to 100 ms at least), and a chunk too long even so
///   is split into several `insert` events.
/// - Moments: before every event with a gap of at least `pause_ms`; `next_file` and
///   `next_lines` are the lines of the moment's buffer that the rest of the next edit's
///   hunk changes; `until` is the end (the rest of the change is the true next edit).
/// - Silence: a moment just before a hunk that only inserts whole lines, none of whose
///   identifiers (`[A-Za-z_][A-Za-z0-9_]*`, 3 characters or more, not a keyword or common
///   built-in of the file's language) appears in the text inserted or deleted before the
///   moment: new code the session gives no hint of. Also a moment after which the
///   cursor's file is not changed again (the rest of the change is in other files).
///
/// Replaying the events on the session's files gives exactly `new`'s texts; anything
/// else is an error (a bug here).
pub fn session_from_change(
    repo: &str,
    id: &str,
    origin: Origin,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    opts: &ImportOptions,
) -> Result<Option<Session>> {
    let mut plans = Vec::new();
    for (path, text) in new {
        let Some(lang) = keeps(path, opts) else {
            continue;
        };
        let before = old.get(path).map_or("", |s| s.as_str());
        if old.get(path) == Some(text) {
            continue;
        }
        plans.push(plan_file(path, lang, before, text));
    }
    let changed: usize = plans
        .iter()
        .flat_map(|p| &p.hunks)
        .flat_map(|h| &h.blocks)
        .map(|b| b.old.len() + b.new.len())
        .sum();
    if plans.is_empty() || changed == 0 {
        tracing::debug!("{id}: no code file changed");
        return Ok(None);
    }
    if plans.len() > opts.max_files || changed > opts.max_changed_lines {
        tracing::debug!(
            "{id}: {} files and {changed} lines changed, over the limits",
            plans.len()
        );
        return Ok(None);
    }
    let files: BTreeMap<String, String> = plans
        .iter()
        .filter_map(|p| old.get(&p.path).map(|t| (p.path.clone(), t.clone())))
        .collect();
    let mut ty = Typist {
        opts,
        rng: Rng::new(opts.seed, id),
        bufs: Buffers::new(&files),
        events: Vec::new(),
        t: 0,
        cursor: None,
        jump: None,
        hunk: 0,
        hunk_started: false,
        hunk_pure: false,
        hunk_idents: BTreeSet::new(),
        edited: String::new(),
        moments: Vec::new(),
        hunk_end: Vec::new(),
    };
    for i in order_files(&plans) {
        ty.file(&plans[i])?;
    }
    for p in &plans {
        if ty.text(&p.path) != new[&p.path] {
            bail!(
                "{id}: typing the change does not give the new text of {}",
                p.path
            );
        }
    }
    let until = ty.events.len();
    let moments = ty
        .moments
        .into_iter()
        .map(|pm| {
            let mut m = pm.moment;
            m.until = until;
            let after = &ty.hunk_end[pm.hunk];
            m.next_lines = touched_lines(&pm.text, after).unwrap_or_else(|| {
                let line = match &ty.events[m.after].what {
                    EventKind::Insert { at, .. } | EventKind::Cursor { at, .. } => at[0],
                    EventKind::Open { at, .. } => at[0],
                    EventKind::Delete { from, .. } => from[0],
                    EventKind::Save { .. } => 0,
                };
                [line, line]
            });
            m
        })
        .collect();
    let mut session = Session {
        session: id.to_string(),
        repo: repo.to_string(),
        origin,
        files,
        events: ty.events,
        moments,
    };
    session.validate()?;
    // A moment after which the cursor's file is not changed again: the person's next
    // edits are all in other files, and an assistant asked in this one can only be
    // wrong (silence for this file).
    let mut buffers = super::super::Buffers::new(&session.files);
    let mut done = 0;
    for m in &mut session.moments {
        for e in &session.events[done..m.after] {
            buffers.apply(&e.what)?;
        }
        done = m.after;
        if buffers.files.get(&m.file) == new.get(&m.file) {
            m.silence = true;
        }
    }
    let end = session.buffers_after(session.events.len())?;
    for p in &plans {
        if end.files.get(&p.path) != new.get(&p.path) {
            bail!(
                "{id}: replaying the session does not give the new text of {}",
                p.path
            );
        }
    }
    Ok(Some(session))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(path: &str, text: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(path.to_string(), text.to_string())])
    }

    fn origin() -> Origin {
        Origin::Patch {
            patch: "p".into(),
            subject: "s".into(),
        }
    }

    #[test]
    fn typing_a_change_gives_the_new_text_at_the_edges() {
        let opts = ImportOptions::default();
        let cases = [
            ("", "a = 1\n"),
            ("a = 1\n", "b = 2\na = 1\n"),
            ("a = 1", "a = 1\nb = 2\n"),
            ("a = 1\nb = 2\n", "b = 2\n"),
            ("é = 1\nx = 'ü'\n", "é = 2\nx = 'üü'\ny = 'ß'\n"),
            ("a\n\n\nb\n", "a\n\nc = 1\n\nb\n"),
        ];
        for (old, new) in cases {
            let s = session_from_change(
                "r",
                "r@x",
                origin(),
                &one("f.py", old),
                &one("f.py", new),
                &opts,
            )
            .unwrap()
            .unwrap();
            let end = s.buffers_after(s.events.len()).unwrap();
            assert_eq!(end.files["f.py"], new);
            assert!(s.events.windows(2).all(|w| w[0].t < w[1].t));
        }
        let old = one("f.py", "a = 1\n");
        assert!(
            session_from_change("r", "r@x", origin(), &old, &old, &opts)
                .unwrap()
                .is_none()
        );
        let big = "x = 1\n".repeat(100);
        assert!(
            session_from_change(
                "r",
                "r@x",
                origin(),
                &one("f.py", ""),
                &one("f.py", &big),
                &opts
            )
            .unwrap()
            .is_none()
        );
        assert!(
            session_from_change(
                "r",
                "r@x",
                origin(),
                &one("f.txt", ""),
                &one("f.txt", "x"),
                &opts
            )
            .unwrap()
            .is_none()
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any change typed and replayed gives the new text; times increase; every
        /// moment's lines are inside its buffer.
        #[test]
        fn any_change_replays_to_its_new_text(
            old in proptest::collection::vec(0usize..12, 0..12),
            new in proptest::collection::vec(0usize..12, 0..12),
            old_nl in proptest::bool::ANY,
            new_nl in proptest::bool::ANY,
            seed in 0u64..1000,
        ) {
            const LINES: [&str; 12] = [
                "def f(x, y):", "    return x + y", "", "    value = compute(x)",
                "    valeur = compute(é, ü)", "class Thing:", "    pass", "\t# note ✓",
                "x = 1", "x = 10", "    return y", "        if x: return f(x - 1, y)",
            ];
            let text = |v: &[usize], nl: bool| {
                let mut s = v.iter().map(|&i| LINES[i]).collect::<Vec<_>>().join("\n");
                if nl && !s.is_empty() {
                    s.push('\n');
                }
                s
            };
            let (a, b) = (text(&old, old_nl), text(&new, new_nl));
            let opts = ImportOptions { seed, max_changed_lines: 100, ..ImportOptions::default() };
            let s = session_from_change("r", "r@p", origin(), &one("f.py", &a), &one("f.py", &b), &opts)
                .unwrap();
            let Some(s) = s else {
                proptest::prop_assert_eq!(&a, &b);
                return Ok(());
            };
            let end = s.buffers_after(s.events.len()).unwrap();
            proptest::prop_assert_eq!(&end.files["f.py"], &b);
            proptest::prop_assert!(s.events.windows(2).all(|w| w[0].t < w[1].t));
            for m in &s.moments {
                let buf = s.buffers_after(m.after).unwrap();
                let lines = buf.files.get(&m.next_file).map_or(0, |t| t.matches('\n').count());
                proptest::prop_assert!(m.next_lines[0] <= m.next_lines[1]);
                proptest::prop_assert!(m.next_lines[1] as usize <= lines);
            }
        }
    }
}
