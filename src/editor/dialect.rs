//! Suggestion dialects: how each kind of server is asked for a suggestion and how its
//! answer is read back into one normal form. Each dialect is a small local type; the
//! parsers are lenient on purpose (Copilot adds fields, Tabby adds `isIncomplete`, some
//! servers send snippet objects), so answers are read from `serde_json::Value`. The
//! standard requests go by their `ls-types` method names; their params are written as
//! JSON too, because profiles add fields of their own (`request_params`) and Copilot adds
//! the document version and `formattingOptions`.
//!
//! The normal form: inline suggestions as the lines would stand after accepting,
//! completion lists filtered and sorted as an editor shows them.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::request::{
    Completion as CompletionRequest, InlineCompletionRequest, Request,
};

use super::document::{Document, Position, PositionEncoding};
use super::suggestions::{CompletionEntry, InlineSuggestion, Suggestions, strip_snippet};

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => {
            let value = o.get("value")?.as_str()?;
            if o.get("kind").and_then(Value::as_str) == Some("snippet") {
                Some(strip_snippet(value))
            } else {
                Some(value.to_string())
            }
        }
        _ => None,
    }
}

fn range_of(v: &Value) -> Option<(Position, Position)> {
    let r = v.get("range")?;
    Some((
        Position::from_json(r.get("start")?)?,
        Position::from_json(r.get("end")?)?,
    ))
}

/// Reads an inline-completion answer (`null`, an array of items, or `{items}`) into
/// the lines as they would stand after accepting each item at `cursor` in `doc`.
pub fn read_inline(
    answer: &Value,
    doc: &Document,
    cursor: Position,
    enc: PositionEncoding,
) -> Vec<InlineSuggestion> {
    let items = match answer {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) => o
            .get("items")
            .and_then(Value::as_array)
            .map_or(&[][..], |a| a.as_slice()),
        _ => &[],
    };
    items
        .iter()
        .filter_map(|item| {
            let insert = item.get("insertText").and_then(text_of)?;
            let (start, end) = match range_of(item) {
                Some((s, e)) if s.line == cursor.line && e.line == cursor.line => (s, e),
                _ => (cursor, cursor),
            };
            Some(accept(
                doc,
                cursor.line,
                start.character,
                end.character,
                &insert,
                enc,
            ))
        })
        .collect()
}

/// The cursor's line after replacing columns `start..end` of line `line` with `insert`.
pub fn accept(
    doc: &Document,
    line: u32,
    start: u32,
    end: u32,
    insert: &str,
    enc: PositionEncoding,
) -> InlineSuggestion {
    let line_text = doc.line_text(line);
    let a = Document::offset_of(
        line_text,
        Position {
            line: 0,
            character: start,
        },
        enc,
    );
    let b = Document::offset_of(
        line_text,
        Position {
            line: 0,
            character: end,
        },
        enc,
    )
    .max(a);
    let insert = insert.replace("\r\n", "\n");
    let text = format!("{}{}{}", &line_text[..a], insert, &line_text[b..]);
    let line = text.split('\n').next().unwrap_or("").to_string();
    InlineSuggestion { line, text }
}

/// The identifier characters right before the cursor: what an editor filters by.
pub fn typed_word(line_before_cursor: &str) -> &str {
    let start = line_before_cursor
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '$')
        .last()
        .map_or(line_before_cursor.len(), |(i, _)| i);
    &line_before_cursor[start..]
}

fn clean_label(s: &str) -> String {
    // clangd prefixes labels with a space or a bullet (•) for items needing an include.
    s.trim_start_matches([' ', '•', '\u{2022}'])
        .trim_end()
        .to_string()
}

/// Reads a completion answer (`null`, an array, or `{items}`) and ranks it as an editor
/// shows it: keep items whose `filterText` (or label) starts with the typed word
/// (case-insensitively), order by `sortText` (or label), stable for ties.
pub fn read_completion(answer: &Value, typed: &str) -> Vec<CompletionEntry> {
    let items = match answer {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) => o
            .get("items")
            .and_then(Value::as_array)
            .map_or(&[][..], |a| a.as_slice()),
        _ => &[],
    };
    let typed_lc = typed.to_lowercase();
    let mut ranked: Vec<(String, CompletionEntry)> = items
        .iter()
        .filter_map(|item| {
            let label = clean_label(item.get("label")?.as_str()?);
            let filter = item
                .get("filterText")
                .and_then(Value::as_str)
                .map(clean_label)
                .unwrap_or_else(|| label.clone());
            if !filter.to_lowercase().starts_with(&typed_lc) {
                return None;
            }
            let sort = item
                .get("sortText")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| label.clone());
            let insert = item
                .get("textEdit")
                .and_then(|e| e.get("newText"))
                .and_then(Value::as_str)
                .or_else(|| item.get("insertText").and_then(Value::as_str))
                .map(|s| {
                    if item.get("insertTextFormat").and_then(Value::as_u64) == Some(2) {
                        strip_snippet(s)
                    } else {
                        s.to_string()
                    }
                })
                .unwrap_or_else(|| label.clone());
            let kind = item.get("kind").and_then(Value::as_u64).map(|k| k as u32);
            Some((
                sort,
                CompletionEntry {
                    label,
                    insert: clean_label(&insert),
                    kind,
                },
            ))
        })
        .collect();
    ranked.sort_by(|a, b| a.0.cmp(&b.0));
    ranked.into_iter().map(|(_, e)| e).collect()
}

/// The request a dialect sends for a suggestion at `cursor`.
pub fn request_for(
    dialect: super::profile::DialectKind,
    doc: &Document,
    cursor: Position,
    trigger: super::conditions::TriggerKind,
    formatting: Value,
    extra: &Value,
) -> (&'static str, Value) {
    use super::profile::DialectKind::*;
    let td = json!({"uri": doc.uri});
    let (method, mut params) = match dialect {
        Inline => (
            InlineCompletionRequest::METHOD,
            json!({"textDocument": td, "position": cursor.to_json(), "context": {"triggerKind": trigger.inline_code()}}),
        ),
        Copilot => (
            InlineCompletionRequest::METHOD,
            json!({
                "textDocument": {"uri": doc.uri, "version": doc.version},
                "position": cursor.to_json(),
                "context": {"triggerKind": trigger.inline_code()},
                "formattingOptions": formatting,
            }),
        ),
        Completion | LspAi => (
            CompletionRequest::METHOD,
            json!({"textDocument": td, "position": cursor.to_json(), "context": {"triggerKind": trigger.completion_code()}}),
        ),
        LlmLs => (
            "llm-ls/getCompletions",
            json!({"textDocument": td, "position": cursor.to_json()}),
        ),
        LspAiGeneration => (
            "textDocument/generation",
            json!({"textDocument": td, "position": cursor.to_json()}),
        ),
    };
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            p.insert(k.clone(), v.clone());
        }
    }
    (method, params)
}

/// Reads a dialect's answer into the normal form.
pub fn read_answer(
    dialect: super::profile::DialectKind,
    answer: &Value,
    doc: &Document,
    cursor: Position,
    enc: PositionEncoding,
) -> Suggestions {
    use super::profile::DialectKind::*;
    match dialect {
        Inline | Copilot => Suggestions::Inline(read_inline(answer, doc, cursor, enc)),
        Completion => {
            let line = doc.line_text(cursor.line);
            let before = &line[..Document::offset_of(
                line,
                Position {
                    line: 0,
                    character: cursor.character,
                },
                enc,
            )];
            Suggestions::Completion(read_completion(answer, typed_word(before)))
        }
        LspAi => {
            // One item whose textEdit carries the generated text, inserted at the cursor.
            let items = match answer {
                Value::Array(a) => a.clone(),
                Value::Object(o) => o
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                _ => vec![],
            };
            Suggestions::Inline(
                items
                    .iter()
                    .filter_map(|it| {
                        let t = it
                            .get("textEdit")
                            .and_then(|e| e.get("newText"))
                            .or_else(|| it.get("insertText"))
                            .and_then(Value::as_str)?;
                        Some(accept(
                            doc,
                            cursor.line,
                            cursor.character,
                            cursor.character,
                            t,
                            enc,
                        ))
                    })
                    .collect(),
            )
        }
        LspAiGeneration => Suggestions::Inline(
            answer
                .get("generatedText")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(|t| accept(doc, cursor.line, cursor.character, cursor.character, t, enc))
                .into_iter()
                .collect(),
        ),
        LlmLs => {
            let items = answer
                .get("completions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Suggestions::Inline(
                items
                    .iter()
                    .filter_map(|c| c.get("generated_text").and_then(Value::as_str))
                    .filter(|t| !t.is_empty())
                    .map(|t| accept(doc, cursor.line, cursor.character, cursor.character, t, enc))
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document {
            uri: std::str::FromStr::from_str("file:///w/a.py").unwrap(),
            language_id: "python".into(),
            version: 1,
            text: text.into(),
        }
    }

    #[test]
    fn copilot_ranges_from_column_zero_repeat_the_typed_prefix_once() {
        let d = doc("import os\n    retu");
        let cursor = Position {
            line: 1,
            character: 8,
        };
        let answer = json!({"items": [
            {"insertText": "    return os.path", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 8}}, "command": {"title": "x"}},
            {"insertText": {"kind": "snippet", "value": "rn ${1:x}\n    y"}},
        ]});
        let got = read_inline(&answer, &d, cursor, PositionEncoding::Utf16);
        assert_eq!(got[0].line, "    return os.path");
        assert_eq!(got[1].line, "    return x");
        assert_eq!(got[1].text, "    return x\n    y");
    }

    #[test]
    fn generation_and_completion_item_answers_are_inline_suggestions() {
        use crate::editor::profile::DialectKind;
        let d = doc("for i in ");
        let cursor = Position {
            line: 0,
            character: 9,
        };
        let got = read_answer(
            DialectKind::LspAiGeneration,
            &json!({"generatedText": "range(3):"}),
            &d,
            cursor,
            PositionEncoding::Utf16,
        );
        assert_eq!(got.top(1), ["for i in range(3):"]);
        let got = read_answer(
            DialectKind::LspAi,
            &json!({"isIncomplete": false, "items": [{"label": "ai - range(3):", "textEdit": {"newText": "range(3):"}}]}),
            &d,
            cursor,
            PositionEncoding::Utf16,
        );
        assert_eq!(got.top(1), ["for i in range(3):"]);
        let got = read_answer(
            DialectKind::LlmLs,
            &json!({"request_id": "x", "completions": [{"generated_text": "range(3):"}]}),
            &d,
            cursor,
            PositionEncoding::Utf16,
        );
        assert_eq!(got.top(1), ["for i in range(3):"]);
    }

    #[test]
    fn completion_lists_are_filtered_and_sorted_like_an_editor() {
        let answer = json!({"isIncomplete": false, "items": [
            {"label": "pathsep", "sortText": "09"},
            {"label": "path", "sortText": "05", "textEdit": {"newText": "path", "range": {}}},
            {"label": " pardir", "sortText": "07"},
            {"label": "getcwd", "sortText": "01"},
            {"label": "PAbc", "filterText": "pabc"},
        ]});
        let got: Vec<_> = read_completion(&answer, "pa")
            .into_iter()
            .map(|e| e.label)
            .collect();
        assert_eq!(got, ["path", "pardir", "pathsep", "PAbc"]);
        assert_eq!(typed_word("    os.pa"), "pa");
        assert_eq!(typed_word("x = "), "");
    }
}
