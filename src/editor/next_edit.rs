//! Next-edit suggestions in one normal form, whatever the editor: the edits proposed
//! against the document as it was asked, as byte ranges of its text, and how the
//! answer was off (an edit for another document, an answer for an older version).

use serde_json::Value;

use super::document::{Document, Position, PositionEncoding};

/// One proposed edit: `text[start..end]` of the asked document replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedEdit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// What a next-edit request got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NextEdits {
    /// The edits for the asked document (an edit whose range lies outside its text is
    /// kept with `start > end` or beyond the text: it does not apply, and that is scored).
    pub edits: Vec<ProposedEdit>,
    /// Edits the answer gave for other documents (not scored as this one's).
    pub elsewhere: usize,
    /// The answer named a document version other than the one asked about: it is stale.
    pub stale: bool,
}

/// Reads Copilot's `textDocument/copilotInlineEdit` answer `{edits: [{text,
/// textDocument: {uri, version}, range}]}` for the document at `uri` asked at `version`,
/// whose text was `text`.
pub fn read_inline_edits(
    answer: &Value,
    uri: &str,
    version: i64,
    text: &str,
    enc: PositionEncoding,
) -> NextEdits {
    let mut out = NextEdits::default();
    let Some(edits) = answer.get("edits").and_then(Value::as_array) else {
        return out;
    };
    for e in edits {
        let e_uri = e.pointer("/textDocument/uri").and_then(Value::as_str);
        if e_uri.is_some_and(|u| u != uri) {
            out.elsewhere += 1;
            continue;
        }
        if let Some(v) = e.pointer("/textDocument/version").and_then(Value::as_i64)
            && v != version
        {
            out.stale = true;
        }
        let (Some(start), Some(end)) = (
            e.pointer("/range/start").and_then(Position::from_json),
            e.pointer("/range/end").and_then(Position::from_json),
        ) else {
            // An edit with no range it can be placed by: proposed, and it does not apply.
            out.edits.push(ProposedEdit {
                start: usize::MAX,
                end: usize::MAX,
                text: String::new(),
            });
            continue;
        };
        let new = e.get("text").and_then(Value::as_str).unwrap_or_default();
        out.edits.push(ProposedEdit {
            start: offset_or_beyond(text, start, enc),
            end: offset_or_beyond(text, end, enc),
            text: new.to_string(),
        });
    }
    out
}

/// The byte offset of `pos` in `text`, or `usize::MAX` when it lies beyond the text
/// (a line past the last one): such an edit does not apply.
fn offset_or_beyond(text: &str, pos: Position, enc: PositionEncoding) -> usize {
    if pos.line as usize > text.matches('\n').count() {
        return usize::MAX;
    }
    Document::offset_of(text, pos, enc)
}
