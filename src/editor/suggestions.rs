//! Suggestions in the one normal form every dialect's answer is read into: inline lines
//! as they would stand after accepting, or completion entries as an editor lists them;
//! and snippet syntax turned into the plain text it inserts.

use serde::Serialize;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_become_plain_text() {
        assert_eq!(strip_snippet("foo(${1:a}, ${2:b})$0"), "foo(a, b)");
        assert_eq!(strip_snippet("${1|one,two|} \\$x ${3}"), "one $x ");
        assert_eq!(strip_snippet("f(${1:g(${2:x})})"), "f(g(x))");
    }
}
