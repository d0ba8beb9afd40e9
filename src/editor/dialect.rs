//! Suggestion dialects: how each kind of server is asked for a suggestion and how its
//! answer is read back into one normal form. Each dialect is a small local type; the
//! parsers are lenient on purpose (Copilot adds fields, Tabby adds `isIncomplete`, some
//! servers send snippet objects), so answers are read from `serde_json::Value`.

use serde::Serialize;
use serde_json::{Value, json};

use super::document::{Document, Position, PositionEncoding};

/// An inline suggestion as the line would stand after accepting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InlineSuggestion {
    /// The cursor's line after accepting: its first line only.
    pub line: String,
    /// The whole text from the start of the cursor's line after accepting (may span
    /// several lines).
    pub text: String,
}

/// One completion item as an editor shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompletionEntry {
    pub label: String,
    /// What accepting it inserts.
    pub insert: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "items", rename_all = "kebab-case")]
pub enum Suggestions {
    Inline(Vec<InlineSuggestion>),
    Completion(Vec<CompletionEntry>),
}

impl Suggestions {
    pub fn len(&self) -> usize {
        match self {
            Suggestions::Inline(v) => v.len(),
            Suggestions::Completion(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether `word` is among the first `n` items: a completion whose insert text or
    /// label is the word (labels may carry a signature: `printf(const char *, ...)`),
    /// or an inline line that contains it.
    pub fn has_in_top(&self, word: &str, n: usize) -> bool {
        match self {
            Suggestions::Inline(v) => v.iter().take(n).any(|s| s.line.contains(word)),
            Suggestions::Completion(v) => v.iter().take(n).any(|c| {
                c.insert == word
                    || c.label == word
                    || c.label
                        .strip_prefix(word)
                        .is_some_and(|rest| rest.starts_with('('))
            }),
        }
    }

    /// Short texts of the first `n` items, for people.
    pub fn top(&self, n: usize) -> Vec<String> {
        match self {
            Suggestions::Inline(v) => v.iter().take(n).map(|s| s.line.clone()).collect(),
            Suggestions::Completion(v) => v.iter().take(n).map(|c| c.label.clone()).collect(),
        }
    }
}

/// Turns snippet syntax into the plain text it inserts: `${1:foo}` → `foo`, `$0` → ``.
pub fn strip_snippet(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    strip_into(&chars, &mut i, &mut out, false);
    out
}

fn strip_into(c: &[char], i: &mut usize, out: &mut String, nested: bool) {
    while *i < c.len() {
        match c[*i] {
            '\\' if *i + 1 < c.len() && matches!(c[*i + 1], '$' | '}' | '\\') => {
                out.push(c[*i + 1]);
                *i += 2;
            }
            '}' if nested => {
                *i += 1;
                return;
            }
            '$' if *i + 1 < c.len() && c[*i + 1].is_ascii_digit() => {
                *i += 1;
                while *i < c.len() && c[*i].is_ascii_digit() {
                    *i += 1;
                }
            }
            '$' if *i + 1 < c.len() && c[*i + 1] == '{' => {
                *i += 2;
                while *i < c.len() && (c[*i].is_ascii_alphanumeric() || c[*i] == '_') {
                    *i += 1;
                }
                match c.get(*i) {
                    Some(':') => {
                        *i += 1;
                        strip_into(c, i, out, true);
                    }
                    Some('|') => {
                        *i += 1;
                        let mut first = true;
                        while *i < c.len() && c[*i] != '|' {
                            if c[*i] == ',' {
                                first = false;
                            } else if first {
                                out.push(c[*i]);
                            }
                            *i += 1;
                        }
                        *i += 1; // '|'
                        if c.get(*i) == Some(&'}') {
                            *i += 1;
                        }
                    }
                    Some('}') => *i += 1,
                    _ => {}
                }
            }
            ch => {
                out.push(ch);
                *i += 1;
            }
        }
    }
}

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
            "textDocument/inlineCompletion",
            json!({"textDocument": td, "position": cursor.to_json(), "context": {"triggerKind": trigger.inline_code()}}),
        ),
        Copilot => (
            "textDocument/inlineCompletion",
            json!({
                "textDocument": {"uri": doc.uri, "version": doc.version},
                "position": cursor.to_json(),
                "context": {"triggerKind": trigger.inline_code()},
                "formattingOptions": formatting,
            }),
        ),
        Completion | LspAi => (
            "textDocument/completion",
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
            uri: "file:///w/a.py".into(),
            language_id: "python".into(),
            version: 1,
            text: text.into(),
        }
    }

    #[test]
    fn snippets_become_plain_text() {
        assert_eq!(strip_snippet("foo(${1:a}, ${2:b})$0"), "foo(a, b)");
        assert_eq!(strip_snippet("${1|one,two|} \\$x ${3}"), "one $x ");
        assert_eq!(strip_snippet("f(${1:g(${2:x})})"), "f(g(x))");
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
