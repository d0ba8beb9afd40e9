//! Edit sessions (methodology §13): a starting state of some files and the timed edits a
//! person made to them, with the *moments* where the person paused and an assistant is
//! asked for the next edit. An edits plan (`typist sample --cases edits`) is JSON Lines:
//! a header, then one session per line (`docs/records.md#edits-plans`).
//!
//! Positions are `[line, column]`, both 0-based, the column in characters (Unicode
//! scalar values) of that line. Texts use `\n` line ends.
//!
//! Knows nothing of editors, servers or scoring: a session is applied to plain strings
//! ([`Buffers`]), and the replay turns each event into what its editor does.

pub mod import;
pub mod recorded;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// A position: `[line, column]`, 0-based, the column in characters.
pub type Pos = [u32; 2];

/// Where a session came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A commit of a git repository: its parent is the starting state.
    Git {
        commit: String,
        parent: String,
        /// The commit message's first line.
        subject: String,
    },
    /// A patch (`debian/patches/NAME.patch`, or any unified diff) against a source tree.
    Patch { patch: String, subject: String },
    /// Recorded from a person (`typist record`).
    Recorded { editor: String },
}

/// One timed event. `t` is milliseconds since the session's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub t: u64,
    #[serde(flatten)]
    pub what: EventKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The file is opened (shown) in the editor; the cursor at `at`.
    Open { file: String, at: Pos },
    /// `text` inserted at `at` (typed, or pasted when `paste`); the cursor after it.
    Insert {
        file: String,
        at: Pos,
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        paste: bool,
    },
    /// The text from `from` to `to` deleted; the cursor at `from`.
    Delete { file: String, from: Pos, to: Pos },
    /// The cursor moved.
    Cursor { file: String, at: Pos },
    /// The file saved.
    Save { file: String },
}

impl EventKind {
    pub fn file(&self) -> &str {
        match self {
            EventKind::Open { file, .. }
            | EventKind::Insert { file, .. }
            | EventKind::Delete { file, .. }
            | EventKind::Cursor { file, .. }
            | EventKind::Save { file } => file,
        }
    }
}

/// A point where the person paused, and what they did next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moment {
    /// Events applied before the moment: `events[..after]`.
    pub after: usize,
    /// The file with the cursor, and the cursor.
    pub file: String,
    pub cursor: Pos,
    /// Milliseconds until the next event (the pause).
    pub pause_ms: u64,
    /// The true next edit: the buffers after `events[..until]` (for a commit, the rest of
    /// it: `until` is the number of events).
    pub until: usize,
    /// The file the person changed next, and the lines of the moment's buffer it
    /// touched: `[first, last]`, 0-based, inclusive (an insertion between lines touches
    /// the line it is inserted before).
    pub next_file: String,
    pub next_lines: [u32; 2],
    /// The person's next action cannot be known from the session (new code begun
    /// where nothing of it had been typed): any suggestion here is a false alarm.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub silence: bool,
}

/// One edit session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// `repo@id`: the same on every machine (a commit's short hash, a patch's name).
    pub session: String,
    pub repo: String,
    pub origin: Origin,
    /// The starting text of every file the session touches, by path in the repository.
    /// A file that does not exist at the start is absent (its first event creates it).
    pub files: BTreeMap<String, String>,
    pub events: Vec<Event>,
    pub moments: Vec<Moment>,
}

/// The plan's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditsHeader {
    /// Always `"edits"`.
    pub edits_plan: String,
    /// A pause at least this long is a moment.
    pub pause_ms: u64,
    pub seed: u64,
}

/// The text of every file of a session, as events change it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buffers {
    pub files: BTreeMap<String, String>,
}

/// The byte offset of `pos` in `text`, or an error naming it when it is beyond the text.
pub fn offset(text: &str, pos: Pos) -> Result<usize> {
    let mut line_start = 0;
    for _ in 0..pos[0] {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => bail!(
                "line {} is beyond the text ({} lines)",
                pos[0],
                text.lines().count()
            ),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    match line.char_indices().nth(pos[1] as usize) {
        Some((i, _)) => Ok(line_start + i),
        None if line.chars().count() == pos[1] as usize => Ok(line_end),
        None => bail!(
            "column {} is beyond line {} ({} characters)",
            pos[1],
            pos[0],
            line.chars().count()
        ),
    }
}

/// The position of byte offset `off` in `text`.
pub fn position(text: &str, off: usize) -> Pos {
    let before = &text[..off];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    [line, before[start..].chars().count() as u32]
}

impl Buffers {
    pub fn new(files: &BTreeMap<String, String>) -> Buffers {
        Buffers {
            files: files.clone(),
        }
    }

    /// Applies one event; returns the cursor after it (`None` for a save).
    pub fn apply(&mut self, e: &EventKind) -> Result<Option<Pos>> {
        match e {
            EventKind::Open { file, at } => {
                self.files.entry(file.clone()).or_default();
                Ok(Some(*at))
            }
            EventKind::Insert { file, at, text, .. } => {
                let buf = self.files.entry(file.clone()).or_default();
                let o = offset(buf, *at).with_context(|| format!("insert into {file}"))?;
                buf.insert_str(o, text);
                Ok(Some(position(buf, o + text.len())))
            }
            EventKind::Delete { file, from, to } => {
                let buf = self
                    .files
                    .get_mut(file)
                    .with_context(|| format!("delete in {file}: no such file"))?;
                let a = offset(buf, *from).with_context(|| format!("delete in {file}"))?;
                let b = offset(buf, *to).with_context(|| format!("delete in {file}"))?;
                if b < a {
                    bail!("delete in {file}: its end is before its start");
                }
                buf.replace_range(a..b, "");
                Ok(Some(*from))
            }
            EventKind::Cursor { at, .. } => Ok(Some(*at)),
            EventKind::Save { .. } => Ok(None),
        }
    }
}

impl Session {
    /// The buffers after `events[..n]`.
    pub fn buffers_after(&self, n: usize) -> Result<Buffers> {
        let mut b = Buffers::new(&self.files);
        for (i, e) in self.events[..n.min(self.events.len())].iter().enumerate() {
            b.apply(&e.what)
                .with_context(|| format!("session {}: event {i}", self.session))?;
        }
        Ok(b)
    }

    /// The buffers after `events[..n]` for each `n` in `points`, in one walk of the
    /// events (a moment's buffers and its truth, without replaying the session from its
    /// start for each).
    pub fn buffers_at(
        &self,
        points: impl IntoIterator<Item = usize>,
    ) -> Result<BTreeMap<usize, Buffers>> {
        let points: std::collections::BTreeSet<usize> = points
            .into_iter()
            .map(|n| n.min(self.events.len()))
            .collect();
        let mut out = BTreeMap::new();
        let mut b = Buffers::new(&self.files);
        let mut done = 0;
        for n in points {
            for (i, e) in self.events[done..n].iter().enumerate() {
                b.apply(&e.what)
                    .with_context(|| format!("session {}: event {}", self.session, done + i))?;
            }
            done = n;
            out.insert(n, b.clone());
        }
        Ok(out)
    }

    /// Checks that every path is relative and stays inside the workspace, every event
    /// applies, and every moment points inside the session (its events, and for the
    /// cursor its file's text at the moment).
    pub fn validate(&self) -> Result<()> {
        let paths = (self.files.keys().map(String::as_str))
            .chain(self.events.iter().map(|e| e.what.file()))
            .chain(
                self.moments
                    .iter()
                    .flat_map(|m| [m.file.as_str(), m.next_file.as_str()]),
            );
        for p in paths {
            let path = Path::new(p);
            if p.is_empty()
                || path
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                bail!(
                    "session {}: file {p:?} is not a plain path inside the repository",
                    self.session
                );
            }
        }
        for (i, m) in self.moments.iter().enumerate() {
            if m.after > self.events.len() || m.until > self.events.len() || m.until < m.after {
                bail!(
                    "session {}: moment {i} points outside its events",
                    self.session
                );
            }
        }
        // The events once, in order, each moment's cursor checked on the way.
        let mut order: Vec<usize> = (0..self.moments.len()).collect();
        order.sort_by_key(|&i| self.moments[i].after);
        let mut b = Buffers::new(&self.files);
        let mut done = 0;
        for i in order {
            let m = &self.moments[i];
            for (k, e) in self.events[done..m.after].iter().enumerate() {
                b.apply(&e.what)
                    .with_context(|| format!("session {}: event {}", self.session, done + k))?;
            }
            done = m.after;
            let text = b.files.get(&m.file).map_or("", String::as_str);
            offset(text, m.cursor).with_context(|| {
                format!(
                    "session {}: moment {i}'s cursor is outside {}",
                    self.session, m.file
                )
            })?;
        }
        for (k, e) in self.events[done..].iter().enumerate() {
            b.apply(&e.what)
                .with_context(|| format!("session {}: event {}", self.session, done + k))?;
        }
        Ok(())
    }
}

/// Writes an edits plan.
pub fn write_edits_plan(path: &Path, header: &EditsHeader, sessions: &[Session]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let f = std::fs::File::create(path)
        .with_context(|| format!("cannot write plan {}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer(&mut w, header)?;
    w.write_all(b"\n")?;
    for s in sessions {
        serde_json::to_writer(&mut w, s)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

/// Whether a plan file is an edits plan (its first line is an edits header).
pub fn is_edits_plan(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    std::io::BufReader::new(f).read_line(&mut first).is_ok() && first.starts_with("{\"edits_plan\"")
}

/// Reads an edits plan, each session checked ([`Session::validate`]); a malformed line
/// is an error naming the file and the line.
pub fn read_edits_plan(path: &Path) -> Result<(EditsHeader, Vec<Session>)> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot open plan {}", path.display()))?;
    let mut header = None;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read plan {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        if header.is_none() {
            let h: EditsHeader = serde_json::from_str(&line).with_context(|| {
                format!("{}:{}: not an edits plan header", path.display(), i + 1)
            })?;
            header = Some(h);
            continue;
        }
        let s: Session = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: malformed session", path.display(), i + 1))?;
        s.validate()
            .with_context(|| format!("{}:{}", path.display(), i + 1))?;
        out.push(s);
    }
    let header = header.with_context(|| format!("{}: empty plan", path.display()))?;
    Ok((header, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_positions_count_characters() {
        let t = "aé\nxyz\n";
        assert_eq!(offset(t, [0, 2]).unwrap(), 3);
        assert_eq!(offset(t, [1, 1]).unwrap(), 5);
        assert_eq!(offset(t, [2, 0]).unwrap(), 8);
        assert!(offset(t, [1, 4]).is_err());
        assert!(offset(t, [3, 0]).is_err());
        assert_eq!(position(t, 3), [0, 2]);
        assert_eq!(position(t, 8), [2, 0]);
    }

    #[test]
    fn events_apply_in_order() {
        let mut files = BTreeMap::new();
        files.insert("a.py".to_string(), "def f(x):\n    return x\n".to_string());
        let mut b = Buffers::new(&files);
        let c = b
            .apply(&EventKind::Delete {
                file: "a.py".into(),
                from: [0, 6],
                to: [0, 7],
            })
            .unwrap();
        assert_eq!(c, Some([0, 6]));
        let c = b
            .apply(&EventKind::Insert {
                file: "a.py".into(),
                at: [0, 6],
                text: "value".into(),
                paste: false,
            })
            .unwrap();
        assert_eq!(c, Some([0, 11]));
        assert_eq!(b.files["a.py"], "def f(value):\n    return x\n");
    }
}
