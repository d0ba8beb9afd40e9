//! From what a server did to the record of a case: `suggestion` (the first line of the
//! first item, when it changes the cursor's line), `empty`, `error` or `timeout`, with
//! the hashes that tell repeated questions and answers apart.

use super::RunConditions;
use super::records::Record;
use super::typing;
use crate::dataset::Case;
use crate::editor::{SessionError, Suggestions};

/// What came of asking a server once.
pub(super) enum Ask {
    Got(crate::editor::session::Timed<Suggestions>),
    Failed(SessionError),
}

/// The record of `case` for `assistant` in `pass`, from what the editor held (`text`,
/// the cursor at byte `cursor`) and what the server did.
pub(super) fn record(
    case: &Case,
    assistant: &str,
    pass: u32,
    cond: &RunConditions,
    text: &str,
    cursor: usize,
    outcome: Ask,
) -> Record {
    let mut r = Record {
        case: case.case.clone(),
        repo: case.repo.clone(),
        file: case.file.clone(),
        line: case.line,
        language: case.language.clone(),
        assistant: assistant.to_string(),
        pass,
        outcome: String::new(),
        typed: typing::typed_prefix(&case.expected, cond.typed_prefix as usize)
            .chars()
            .count() as u32,
        expected: case.expected.clone(),
        predicted: None,
        latency_ms: None,
        predicted_text: None,
        error: None,
        items: None,
        request_hash: None,
        response_hash: None,
        extra: Default::default(),
    };
    // The cursor's line as it stands before accepting anything.
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
    let current = &text[line_start..line_end];
    match outcome {
        Ask::Got(t) => {
            if cond.latency {
                r.latency_ms = Some((t.latency_ms * 1000.0).round() / 1000.0);
            }
            r.items = Some(t.value.len());
            r.response_hash = Some(crate::editor::session::sha256_hex(
                serde_json::to_string(&t.value)
                    .unwrap_or_default()
                    .as_bytes(),
            ));
            match &t.value {
                Suggestions::Inline(items) => match items.first() {
                    Some(first) if first.text != current => {
                        r.outcome = "suggestion".into();
                        r.predicted = Some(first.line.clone());
                        if first.text.contains('\n') {
                            r.predicted_text = Some(first.text.clone());
                        }
                    }
                    _ => r.outcome = "empty".into(),
                },
                Suggestions::Completion(_) => {
                    r.outcome = "error".into();
                    r.error =
                        Some("completion list where an inline suggestion was expected".into());
                }
            }
        }
        Ask::Failed(e) if e.is_timeout() => {
            r.outcome = "timeout".into();
            r.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
        }
        Ask::Failed(e) => {
            r.outcome = "error".into();
            r.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
        }
    }
    r
}
