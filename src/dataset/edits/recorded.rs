//! A session recorded from a person (`typist record`): the recorder's log (JSON lines,
//! one per thing the editor did) turned into a [`Session`]. The log's lines:
//!
//! - `{"t", "ev": "open", "file", "text"}`: the file's text when first read (`null`: a
//!   new file);
//! - `{"t", "ev": "change", "file", "at", "del", "text"}`: bytes `at..at + del` of the
//!   file's text replaced by `text`;
//! - `{"t", "ev": "cursor", "file", "row", "col"}`: the cursor, the column in bytes;
//! - `{"t", "ev": "save", "file"}`;
//! - `{"t", "ev": "final", "file", "text"}`: the file's text when the editor left,
//!   which replaying the session must give;
//! - `{"t", "ev": "end"}`: the recording ended (VS Code's recorder writes it last).
//!
//! `t` is milliseconds since the recording began. A change is a deletion then an
//! insertion (either may be absent); an insertion of more than one character is a paste
//! unless it is line breaks and indentation (Enter or `o` with autoindent; Enter between
//! brackets the editor closed) or a bracket or quote pair (an editor closing what the
//! person opened). A file opened again with another text (a VS Code window that took
//! over the recording) is replaced whole. Moments are the
//! pauses of at least `pause_ms` followed by an edit before the next pause; the truth at
//! a moment is the person's edits up to the next moment (methodology §13).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::{Buffers, Event, EventKind, Moment, Origin, Pos, Session, position};

/// What an editor inserts when a person types an opening bracket or quote (VS Code's
/// auto-closing, Neovim's autopairs plugins): typed, not pasted.
const AUTO_CLOSED: [&str; 7] = ["()", "[]", "{}", "\"\"", "''", "``", "<>"];

#[derive(Debug, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
enum Logged {
    Open {
        t: u64,
        file: String,
        text: Option<String>,
    },
    Change {
        t: u64,
        file: String,
        at: usize,
        del: usize,
        text: String,
    },
    Cursor {
        t: u64,
        file: String,
        row: u32,
        col: usize,
    },
    Save {
        t: u64,
        file: String,
    },
    Final {
        file: String,
        text: String,
    },
    /// The recording ended (VS Code's recorder; Neovim's ends with its `final`s).
    End {},
}

/// What recording gave: the session and whether the log had each file's final text
/// (an editor that crashed wrote none; the session is kept, unchecked).
pub struct Recorded {
    pub session: Session,
    pub checked: bool,
}

/// The session of a recorder's log. `id` and `repo` name it; `editor` is the origin's
/// (`neovim 0.12.0`). A line that does not parse is an error naming it, except a last
/// line cut short (the editor killed mid-write), which is left out.
pub fn session_from_log(
    log: &str,
    id: &str,
    repo: &str,
    editor: &str,
    pause_ms: u64,
) -> Result<Recorded> {
    let mut entries = Vec::new();
    let lines: Vec<&str> = log.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Logged>(line) {
            Ok(e) => entries.push(e),
            Err(_) if i + 1 == lines.len() && !log.ends_with('\n') => {
                tracing::warn!("the recorder's last line was cut short; left out");
            }
            Err(e) => bail!("the recorder's log, line {}: {e}", i + 1),
        }
    }
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut known: BTreeSet<String> = BTreeSet::new();
    let mut bufs = Buffers::default();
    let mut events: Vec<Event> = Vec::new();
    let mut finals: BTreeMap<String, String> = BTreeMap::new();
    let ev = |t: u64, what: EventKind| Event { t, what };
    for e in entries {
        match e {
            Logged::Open { t, file, text } => {
                let now = bufs.files.get(&file);
                if let (Some(now), Some(text)) = (now, &text)
                    && known.contains(&file)
                    && now != text
                {
                    // Opened again with another text: replaced whole.
                    let del = now.len();
                    replace(&mut bufs, &mut events, t, file, 0, del, text.clone(), true)?;
                } else if known.insert(file.clone()) {
                    if let Some(text) = &text {
                        files.insert(file.clone(), text.clone());
                        bufs.files.insert(file.clone(), text.clone());
                    }
                    let at = [0, 0];
                    bufs.apply(&EventKind::Open {
                        file: file.clone(),
                        at,
                    })?;
                    events.push(ev(t, EventKind::Open { file, at }));
                }
            }
            Logged::Change {
                t,
                file,
                at,
                del,
                text,
            } => {
                let buf = bufs
                    .files
                    .get(&file)
                    .with_context(|| format!("a change of {file}, never opened"))?
                    .clone();
                let end = at + del;
                if end > buf.len() || !buf.is_char_boundary(at) || !buf.is_char_boundary(end) {
                    bail!(
                        "a change of {file} at bytes {at}..{end} lies outside its text ({} bytes): the recording and the file disagree",
                        buf.len()
                    );
                }
                // Enter, or `o`, with the indentation the editor adds (Enter between
                // brackets the editor closed: two line breaks, the closing one's line
                // indented less); a bracket or quote with the closing one the editor
                // adds.
                let enter = (1..=2).contains(&text.matches('\n').count())
                    && text.chars().all(|c| matches!(c, '\n' | '\r' | ' ' | '\t'));
                let pair = AUTO_CLOSED.contains(&text.as_str());
                let paste = text.chars().count() > 1 && !enter && !pair;
                replace(&mut bufs, &mut events, t, file, at, del, text, paste)?;
            }
            Logged::Cursor { t, file, row, col } => {
                let Some(buf) = bufs.files.get(&file) else {
                    continue;
                };
                let line_start = buf
                    .split_inclusive('\n')
                    .take(row as usize)
                    .map(str::len)
                    .sum::<usize>();
                if line_start > buf.len() {
                    continue;
                }
                let line_len = buf[line_start..]
                    .find('\n')
                    .unwrap_or(buf.len() - line_start);
                let mut at = line_start + col.min(line_len);
                while !buf.is_char_boundary(at) {
                    at -= 1;
                }
                let what = EventKind::Cursor {
                    file,
                    at: position(buf, at),
                };
                events.push(ev(t, what));
            }
            Logged::Save { t, file } => {
                if known.contains(&file) {
                    events.push(ev(t, EventKind::Save { file }));
                }
            }
            Logged::Final { file, text } => {
                finals.insert(file, text);
            }
            Logged::End {} => {}
        }
    }
    // The recorder's clock is one per process, but the moments need time order.
    for i in 1..events.len() {
        if events[i].t < events[i - 1].t {
            events[i].t = events[i - 1].t;
        }
    }
    let moments = moments_of(&files, &events, pause_ms)?;
    let session = Session {
        session: id.to_string(),
        repo: repo.to_string(),
        origin: Origin::Recorded {
            editor: editor.to_string(),
        },
        files,
        events,
        moments,
    };
    session.validate()?;
    let end = session.buffers_after(session.events.len())?;
    for (file, text) in &finals {
        if end.files.get(file) != Some(text) {
            bail!(
                "replaying the recording does not give {file} as the editor left it (a recorder bug: the session is not written)"
            );
        }
    }
    Ok(Recorded {
        session,
        checked: !finals.is_empty(),
    })
}

/// Bytes `at..at + del` of `file`'s buffer (within it, on character boundaries)
/// replaced by `text`: a deletion then an insertion (`paste` or typed), either absent,
/// each applied to `bufs` and pushed at `t`.
#[allow(clippy::too_many_arguments)]
fn replace(
    bufs: &mut Buffers,
    events: &mut Vec<Event>,
    t: u64,
    file: String,
    at: usize,
    del: usize,
    text: String,
    paste: bool,
) -> Result<()> {
    let buf = &bufs.files[&file];
    let (from, to) = (position(buf, at), position(buf, at + del));
    if del > 0 {
        let what = EventKind::Delete {
            file: file.clone(),
            from,
            to,
        };
        bufs.apply(&what)?;
        events.push(Event { t, what });
    }
    if !text.is_empty() {
        let what = EventKind::Insert {
            file,
            at: from,
            paste,
            text,
        };
        bufs.apply(&what)?;
        events.push(Event { t, what });
    }
    Ok(())
}

/// Whether `e` changes text.
fn is_edit(e: &EventKind) -> bool {
    matches!(e, EventKind::Insert { .. } | EventKind::Delete { .. })
}

/// Identifiers of three characters or more in `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3 && w.chars().next().is_some_and(|c| !c.is_numeric()))
}

/// The moments of a recording: at each pause of at least `pause_ms` (before any event:
/// the person may move before editing) once something was edited, when an edit follows
/// before the next pause.
/// The truth is the edits up to the next moment; a moment is silence when those edits
/// insert only whole new lines none of whose identifiers the person had typed, deleted
/// or had in the file before, or when the cursor's file is not changed again.
fn moments_of(
    files: &BTreeMap<String, String>,
    events: &[Event],
    pause_ms: u64,
) -> Result<Vec<Moment>> {
    // A pause before any event (the person may move before editing) once something
    // was edited, kept when an edit follows before the next pause.
    let paused: Vec<usize> = (1..events.len())
        .filter(|&i| {
            events[i].t - events[i - 1].t >= pause_ms
                && events[..i].iter().any(|e| is_edit(&e.what))
        })
        .collect();
    let starts: Vec<usize> = paused
        .iter()
        .enumerate()
        .filter(|&(k, &i)| {
            let end = paused.get(k + 1).copied().unwrap_or(events.len());
            events[i..end].iter().any(|e| is_edit(&e.what))
        })
        .map(|(_, &i)| i)
        .collect();
    let mut b = Buffers::new(files);
    let mut cursor: Option<(String, Pos)> = None;
    let mut done = 0;
    let mut out = Vec::new();
    for (k, &after) in starts.iter().enumerate() {
        for e in &events[done..after] {
            if let Some(c) = b.apply(&e.what)? {
                cursor = Some((e.what.file().to_string(), c));
            }
        }
        done = after;
        let until = starts.get(k + 1).copied().unwrap_or(events.len());
        let Some((file, at)) = cursor.clone() else {
            continue;
        };
        let mut truth = b.clone();
        for e in &events[after..until] {
            truth.apply(&e.what)?;
        }
        let Some(first_edit) = events[after..until].iter().find(|e| is_edit(&e.what)) else {
            continue;
        };
        let next_file = first_edit.what.file().to_string();
        let before = b.files.get(&next_file).cloned().unwrap_or_default();
        let after_text = truth.files.get(&next_file).cloned().unwrap_or_default();
        let Some(next_lines) = crate::lines::changed_lines(&before, &after_text) else {
            continue;
        };
        let rest_changes_file = events[after..]
            .iter()
            .any(|e| is_edit(&e.what) && e.what.file() == file);
        let silence = !rest_changes_file || new_code(&before, &after_text, b.files.values());
        out.push(Moment {
            after,
            file,
            cursor: at,
            pause_ms: events[after].t - events[after - 1].t,
            until,
            next_file,
            next_lines,
            silence,
        });
    }
    Ok(out)
}

/// The change `before → after` only inserts whole lines, and none of their identifiers
/// appears in any of `seen` (what the person had in their files at the moment).
fn new_code<'a>(before: &str, after: &str, seen: impl Iterator<Item = &'a String>) -> bool {
    let p = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(x, y)| x == y)
        .count();
    let p = before[..p].rfind('\n').map_or(0, |i| i + 1);
    let grown = after.len().saturating_sub(before.len());
    if grown == 0
        || !after.is_char_boundary(p + grown)
        || format!("{}{}", &after[..p], &after[p + grown..]) != before
        || !after[p..p + grown].ends_with('\n')
    {
        return false;
    }
    let seen: Vec<&String> = seen.collect();
    let inserted = &after[p..p + grown];
    let mut ids = identifiers(inserted).peekable();
    ids.peek().is_some() && ids.all(|id| seen.iter().all(|t| !t.contains(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each insertion is a paste, in order.
    fn pastes(s: &Session) -> Vec<bool> {
        s.events
            .iter()
            .filter_map(|e| match &e.what {
                EventKind::Insert { paste, .. } => Some(*paste),
                _ => None,
            })
            .collect()
    }

    fn log(lines: &[serde_json::Value]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn a_recording_replays_to_the_editors_text_with_moments_at_pauses() {
        use serde_json::json;
        let start = "def f(x):\n    return x\n";
        let end = "def f(value):\n    return value\n    é = 1\n";
        let l = log(&[
            json!({"t": 0, "ev": "open", "file": "a.py", "text": start}),
            json!({"t": 10, "ev": "cursor", "file": "a.py", "row": 0, "col": 6}),
            json!({"t": 20, "ev": "change", "file": "a.py", "at": 6, "del": 1, "text": ""}),
            json!({"t": 120, "ev": "change", "file": "a.py", "at": 6, "del": 0, "text": "v"}),
            json!({"t": 220, "ev": "change", "file": "a.py", "at": 7, "del": 0, "text": "alue"}),
            // A pause, then the use fixed (a replacement: deletion and insertion).
            json!({"t": 2300, "ev": "change", "file": "a.py", "at": 25, "del": 1, "text": "value"}),
            // A pause, then Enter with indentation and a line with a multibyte character.
            json!({"t": 4400, "ev": "change", "file": "a.py", "at": 30, "del": 0, "text": "\n    "}),
            json!({"t": 4500, "ev": "change", "file": "a.py", "at": 35, "del": 0, "text": "é"}),
            json!({"t": 4600, "ev": "change", "file": "a.py", "at": 37, "del": 0, "text": " = 1"}),
            json!({"t": 4700, "ev": "save", "file": "a.py"}),
            json!({"t": 4800, "ev": "final", "file": "a.py", "text": end}),
        ]);
        let r = session_from_log(&l, "r@rec", "r", "neovim 0.12", 1000).unwrap();
        assert!(r.checked);
        let s = r.session;
        assert_eq!(s.buffers_after(s.events.len()).unwrap().files["a.py"], end);
        assert_eq!(s.moments.len(), 2, "{:#?}", s.moments);
        assert_eq!(s.moments[0].cursor, [0, 11]);
        assert_eq!(s.moments[0].next_lines, [1, 1]);
        assert!(!s.moments[0].silence);
        // The last moment: the truth is the rest; the new line's name `é` is short, so
        // it has no identifier and is not silence.
        assert_eq!(s.moments[1].until, s.events.len());
        let inserts: Vec<bool> = pastes(&s);
        // "alue", "value" and " = 1" arrive as one change each: pastes by the rule;
        // Enter with its indentation is not.
        assert_eq!(inserts, [false, true, true, false, false, true]);
    }

    /// VS Code's recorder: a bracket the editor closed is typed, the closing one typed
    /// over is a replacement, and the log's `end` line is read.
    #[test]
    fn a_bracket_the_editor_closed_is_typed_not_pasted() {
        use serde_json::json;
        let l = log(&[
            json!({"t": 0, "ev": "open", "file": "a.py", "text": "f\n"}),
            json!({"t": 10, "ev": "change", "file": "a.py", "at": 1, "del": 0, "text": "()"}),
            json!({"t": 20, "ev": "change", "file": "a.py", "at": 2, "del": 0, "text": "z"}),
            json!({"t": 30, "ev": "change", "file": "a.py", "at": 3, "del": 1, "text": ")"}),
            json!({"t": 40, "ev": "final", "file": "a.py", "text": "f(z)\n"}),
            json!({"ev": "end", "t": 41}),
        ]);
        let r = session_from_log(&l, "r@rec", "r", "vscode 1.139.1", 1000).unwrap();
        assert!(r.checked);
        let pastes: Vec<bool> = pastes(&r.session);
        assert_eq!(pastes, [false, false, false]);
    }

    /// Enter between brackets the editor closed is typed; a file opened again with
    /// another text (a window that took over the recording) is replaced whole.
    #[test]
    fn enter_between_brackets_is_typed_and_a_file_opened_again_is_replaced() {
        use serde_json::json;
        let l = log(&[
            json!({"t": 0, "ev": "open", "file": "a.js", "text": "f({})\n"}),
            json!({"t": 10, "ev": "change", "file": "a.js", "at": 3, "del": 0, "text": "\r\n  \r\n"}),
            json!({"t": 20, "ev": "open", "file": "a.js", "text": "g()\n"}),
            json!({"t": 30, "ev": "change", "file": "a.js", "at": 2, "del": 0, "text": "x"}),
            json!({"t": 40, "ev": "final", "file": "a.js", "text": "g(x)\n"}),
        ]);
        let r = session_from_log(&l, "r@rec", "r", "vscode 1.139.1", 1000).unwrap();
        assert!(r.checked);
        let pastes: Vec<bool> = pastes(&r.session);
        assert_eq!(pastes, [false, true, false]);
    }

    #[test]
    fn a_recording_that_disagrees_with_the_editor_is_refused() {
        use serde_json::json;
        let l = log(&[
            json!({"t": 0, "ev": "open", "file": "a.py", "text": "x\n"}),
            json!({"t": 5, "ev": "change", "file": "a.py", "at": 0, "del": 0, "text": "y"}),
            json!({"t": 9, "ev": "final", "file": "a.py", "text": "x\n"}),
        ]);
        let e = session_from_log(&l, "r@rec", "r", "neovim", 1000)
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("recorder bug"), "{e:#}");
        // Cut mid-line: the last line is left out, the rest kept.
        let cut = log(&[json!({"t": 0, "ev": "open", "file": "a.py", "text": "x\n"})])
            + "{\"t\": 5, \"ev\": \"cha";
        let r = session_from_log(&cut, "r@rec", "r", "neovim", 1000).unwrap();
        assert!(!r.checked);
        assert_eq!(r.session.events.len(), 1);
    }
}
