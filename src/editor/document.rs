//! An open document as the editor holds it: text, version, and the conversions between
//! character offsets and LSP positions (UTF-16 code units by default).
//!
//! The encoding is UTF-16, UTF-8 or UTF-32, as negotiated. A change is sent as the
//! minimal incremental edit: the differing middle between the common prefix and suffix.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{self as lsp, TextDocumentContentChangeEvent, Uri};

/// Column unit negotiated with the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl PositionEncoding {
    pub fn as_lsp(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }
    pub fn from_lsp(s: &str) -> Option<Self> {
        Some(match s {
            "utf-8" => PositionEncoding::Utf8,
            "utf-16" => PositionEncoding::Utf16,
            "utf-32" => PositionEncoding::Utf32,
            _ => return None,
        })
    }
    fn units(self, c: char) -> u32 {
        match self {
            PositionEncoding::Utf8 => c.len_utf8() as u32,
            PositionEncoding::Utf16 => c.len_utf16() as u32,
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// A position in a document: zero-based line and column in the session's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl From<Position> for lsp::Position {
    fn from(p: Position) -> Self {
        lsp::Position::new(p.line, p.character)
    }
}

impl From<lsp::Position> for Position {
    fn from(p: lsp::Position) -> Self {
        Position {
            line: p.line,
            character: p.character,
        }
    }
}

/// An insertion of `text` at `at`: the change typing sends.
pub fn insertion(at: Position, text: &str) -> TextDocumentContentChangeEvent {
    TextDocumentContentChangeEvent {
        range: Some(lsp::Range::new(at.into(), at.into())),
        range_length: None,
        text: text.to_string(),
    }
}

/// A replacement of `start..end` by `text`: the change an edit sends.
pub fn replacement(start: Position, end: Position, text: &str) -> TextDocumentContentChangeEvent {
    TextDocumentContentChangeEvent {
        range: Some(lsp::Range::new(start.into(), end.into())),
        range_length: None,
        text: text.to_string(),
    }
}

/// A change that replaces the whole text (full sync).
pub fn whole(text: &str) -> TextDocumentContentChangeEvent {
    TextDocumentContentChangeEvent {
        range: None,
        range_length: None,
        text: text.to_string(),
    }
}

impl Position {
    pub fn to_json(self) -> Value {
        json!({"line": self.line, "character": self.character})
    }
    pub fn from_json(v: &Value) -> Option<Position> {
        Some(Position {
            line: v.get("line")?.as_u64()? as u32,
            character: v.get("character")?.as_u64()? as u32,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Document {
    pub uri: Uri,
    pub language_id: String,
    pub version: i32,
    pub text: String,
}

impl Document {
    /// The position of byte offset `at` in `text` (which must be a char boundary).
    pub fn position_of(text: &str, at: usize, enc: PositionEncoding) -> Position {
        let before = &text.as_bytes()[..at];
        let line = memchr::memchr_iter(b'\n', before).count() as u32;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        let tail = &text[line_start..at];
        let character = if tail.is_ascii() || enc == PositionEncoding::Utf8 {
            tail.len() as u32
        } else {
            tail.chars().map(|c| enc.units(c)).sum()
        };
        Position { line, character }
    }

    /// Byte offset of `pos` in `text`, clamped to the line's end (as editors do).
    pub fn offset_of(text: &str, pos: Position, enc: PositionEncoding) -> usize {
        let mut start = 0usize;
        let mut newlines = memchr::memchr_iter(b'\n', text.as_bytes());
        for _ in 0..pos.line {
            match newlines.next() {
                Some(i) => start = i + 1,
                None => return text.len(),
            }
        }
        let line_end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
        let mut units = 0u32;
        for (i, c) in text[start..line_end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += enc.units(c);
        }
        line_end
    }

    /// The end of the document.
    pub fn end(&self, enc: PositionEncoding) -> Position {
        Document::position_of(&self.text, self.text.len(), enc)
    }

    /// The text of line `line` (without its newline).
    pub fn line_text(&self, line: u32) -> &str {
        let bytes = self.text.as_bytes();
        let start = match line {
            0 => 0,
            n => match memchr::memchr_iter(b'\n', bytes).nth(n as usize - 1) {
                Some(i) => i + 1,
                None => return "",
            },
        };
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let l = &self.text[start..end];
        l.strip_suffix('\r').unwrap_or(l)
    }
}

/// One incremental change that turns `old` into `new`: the differing middle between the
/// common prefix and the common suffix, with its range in `old`.
pub fn incremental_change(
    old: &str,
    new: &str,
    enc: PositionEncoding,
) -> TextDocumentContentChangeEvent {
    let prefix = common_prefix(old, new);
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = common_suffix(&old[prefix..], &new[prefix..], max_suffix);
    let start = Document::position_of(old, prefix, enc);
    let end = Document::position_of(old, old.len() - suffix, enc);
    TextDocumentContentChangeEvent {
        range: Some(lsp::Range::new(start.into(), end.into())),
        range_length: None,
        text: new[prefix..new.len() - suffix].to_string(),
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    let n = a
        .as_bytes()
        .iter()
        .zip(b.as_bytes())
        .take_while(|(x, y)| x == y)
        .count();
    floor_boundary(a, n)
}

fn common_suffix(a: &str, b: &str, max: usize) -> usize {
    let n = a
        .as_bytes()
        .iter()
        .rev()
        .zip(b.as_bytes().iter().rev())
        .take(max)
        .take_while(|(x, y)| x == y)
        .count();
    // Move forward to a char boundary in both strings.
    let mut n = n;
    while n > 0 && (!a.is_char_boundary(a.len() - n) || !b.is_char_boundary(b.len() - n)) {
        n -= 1;
    }
    n
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Applies an LSP content change (as produced by [`incremental_change`]) to `text`.
pub fn apply_change(
    text: &str,
    change: &TextDocumentContentChangeEvent,
    enc: PositionEncoding,
) -> String {
    let mut t = text.to_string();
    apply_change_in_place(&mut t, change, enc);
    t
}

/// Applies a content change in place: only the text after the edit moves, so typing at
/// the end of a long document costs nothing per keystroke but finding the position.
pub fn apply_change_in_place(
    text: &mut String,
    change: &TextDocumentContentChangeEvent,
    enc: PositionEncoding,
) {
    let Some(range) = change.range else {
        *text = change.text.clone();
        return;
    };
    let a = Document::offset_of(text, range.start.into(), enc);
    let b = Document::offset_of(text, range.end.into(), enc).max(a);
    text.replace_range(a..b, &change.text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn an_appended_text_is_an_insertion_at_the_old_end() {
        for (old, add) in [("", "a"), ("x\n", "y"), ("é😀", "\n\tz"), ("a\r\n", "b")] {
            let new = format!("{old}{add}");
            let doc = Document {
                uri: Uri::from_str("file:///t").unwrap(),
                language_id: String::new(),
                version: 1,
                text: old.to_string(),
            };
            for enc in [
                PositionEncoding::Utf8,
                PositionEncoding::Utf16,
                PositionEncoding::Utf32,
            ] {
                let insert = insertion(doc.end(enc), add);
                assert_eq!(
                    incremental_change(old, &new, enc),
                    insert,
                    "{old:?} + {add:?}"
                );
            }
        }
    }

    #[test]
    fn line_text_is_the_line_between_newlines_without_its_cr() {
        let texts = ["", "a", "a\n", "\n\nb", "x\r\ny\r\n", "é😀\nz\r"];
        for t in texts {
            let doc = Document {
                uri: Uri::from_str("file:///t").unwrap(),
                language_id: String::new(),
                version: 1,
                text: t.to_string(),
            };
            for n in 0..5u32 {
                let want = t
                    .split('\n')
                    .nth(n as usize)
                    .map(|l| l.strip_suffix('\r').unwrap_or(l))
                    .unwrap_or("");
                assert_eq!(doc.line_text(n), want, "{t:?} line {n}");
            }
        }
    }

    #[test]
    fn positions_count_utf16_units() {
        let t = "a😀b\nxé";
        let enc = PositionEncoding::Utf16;
        assert_eq!(
            Document::position_of(t, t.find('b').unwrap(), enc),
            Position {
                line: 0,
                character: 3
            }
        );
        assert_eq!(
            Document::position_of(t, t.len(), enc),
            Position {
                line: 1,
                character: 2
            }
        );
        assert_eq!(
            Document::position_of(t, t.len(), PositionEncoding::Utf8),
            Position {
                line: 1,
                character: 3
            }
        );
        assert_eq!(
            Document::offset_of(
                t,
                Position {
                    line: 0,
                    character: 3
                },
                enc
            ),
            t.find('b').unwrap()
        );
        assert_eq!(
            Document::offset_of(
                t,
                Position {
                    line: 0,
                    character: 99
                },
                enc
            ),
            6
        );
    }

    #[test]
    fn incremental_changes_round_trip_through_apply() {
        let cases = [
            ("", "hello"),
            ("hello", ""),
            ("abc\ndef\n", "abc\ndXf\n"),
            ("x😀y", "x😁y"),
            ("line1\nline2", "line1\nline2\nline3"),
            ("same", "same"),
            ("aaaa", "aa"),
            ("é", "e\u{301}"),
        ];
        for enc in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            for (old, new) in cases {
                let ch = incremental_change(old, new, enc);
                assert_eq!(
                    apply_change(old, &ch, enc),
                    new,
                    "{old:?} -> {new:?} {enc:?}"
                );
            }
        }
    }

    #[test]
    fn an_appended_line_is_a_small_change() {
        let ch = incremental_change("a\nb\n", "a\nb\nc\n", PositionEncoding::Utf16);
        assert_eq!(
            serde_json::to_value(ch).unwrap(),
            json!({"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}, "text": "c\n"})
        );
    }
}
