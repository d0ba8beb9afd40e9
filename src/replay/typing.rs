//! The typing model: what the document holds when a case is asked, under the run's editor
//! conditions (methodology §1 and §6), for each context mode and typed prefix. Pure
//! functions, so every mode can be checked without a server.
//!
//! Token cases' documents are [`token_document`]'s.

use serde::{Deserialize, Serialize};

use crate::dataset::token::TokenContext;

/// What of the file is in the editor when a line is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ContextMode {
    /// Only the code above the line (the study's default), plus `suffix_lines` below.
    #[default]
    Prefix,
    /// The whole file with only the target line emptied.
    Full,
}

/// How the text reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TypingMode {
    /// The context is set in one change before each case (as the study's script did).
    #[default]
    Paste,
    /// The file is typed from the top through `didChange`, keeping the document open.
    Type,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Granularity {
    /// One change per line.
    #[default]
    Line,
    /// One change per character.
    Char,
}

/// The first `k` characters of `line`.
pub fn typed_prefix(line: &str, k: usize) -> &str {
    match line.char_indices().nth(k) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

/// The document for the case at 1-based line `n` in paste mode, and the byte offset of
/// the cursor in it (after the typed prefix, on the target line).
pub fn paste_document(
    lines: &[&str],
    n: usize,
    k: usize,
    context: ContextMode,
    suffix_lines: usize,
) -> (String, usize) {
    let idx = n - 1;
    let typed = typed_prefix(lines[idx], k);
    let mut text = String::new();
    for l in &lines[..idx] {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(typed);
    let cursor = text.len();
    let after: &[&str] = match context {
        ContextMode::Full => &lines[idx + 1..],
        ContextMode::Prefix => &lines[idx + 1..(idx + 1 + suffix_lines).min(lines.len())],
    };
    for l in after {
        text.push('\n');
        text.push_str(l);
    }
    (text, cursor)
}

/// The byte offset of character `column` (Unicode scalar values) in `line`, if the
/// line has that many characters.
pub fn byte_of_column(line: &str, column: usize) -> Option<usize> {
    line.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(line.len()))
        .nth(column)
}

/// The document of a token case before any of the token is typed, and the cursor's
/// byte offset in it (where the token starts). `Prefix`: the lines above and the
/// token's line up to the token; `Full`: the whole file with only the token's
/// characters removed. `None` when line `n` (1-based) does not hold `token` at
/// character `column`: the plan does not match the file.
pub fn token_document(
    lines: &[&str],
    n: usize,
    column: usize,
    token: &str,
    context: TokenContext,
) -> Option<(String, usize)> {
    let idx = n.checked_sub(1)?;
    let line = *lines.get(idx)?;
    let at = byte_of_column(line, column)?;
    if !line[at..].starts_with(token) || token.is_empty() {
        return None;
    }
    let mut text = String::new();
    for l in &lines[..idx] {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&line[..at]);
    let cursor = text.len();
    if context == TokenContext::Full {
        text.push_str(&line[at + token.len()..]);
        for l in &lines[idx + 1..] {
            text.push('\n');
            text.push_str(l);
        }
    }
    Some((text, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &[&str] = &[
        "import os",
        "def f():",
        "    return os.getcwd()",
        "print(f())",
    ];

    #[test]
    fn prefix_context_is_the_code_above_and_the_typed_prefix() {
        let (t, c) = paste_document(LINES, 3, 0, ContextMode::Prefix, 0);
        assert_eq!(t, "import os\ndef f():\n");
        assert_eq!(c, t.len());
        let (t, c) = paste_document(LINES, 3, 6, ContextMode::Prefix, 0);
        assert_eq!(t, "import os\ndef f():\n    re");
        assert_eq!(c, t.len());
        let (t, c) = paste_document(LINES, 1, 0, ContextMode::Prefix, 0);
        assert_eq!((t.as_str(), c), ("", 0));
    }

    #[test]
    fn suffix_lines_and_full_context_add_the_code_below() {
        let (t, c) = paste_document(LINES, 2, 0, ContextMode::Prefix, 1);
        assert_eq!(t, "import os\n\n    return os.getcwd()");
        assert_eq!(c, "import os\n".len());
        let (t, c) = paste_document(LINES, 2, 3, ContextMode::Full, 0);
        assert_eq!(t, "import os\ndef\n    return os.getcwd()\nprint(f())");
        assert_eq!(c, "import os\ndef".len());
    }

    #[test]
    fn typed_prefixes_count_characters() {
        assert_eq!(typed_prefix("héllo", 2), "hé");
        assert_eq!(typed_prefix("ab", 5), "ab");
    }
    #[test]
    fn token_documents_hold_no_later_code_and_never_the_token() {
        let lines = ["import os", "x = os.path.join(\"é\", os.sep)", "print(x)"];
        let (t, c) = token_document(&lines, 2, 7, "path", TokenContext::Prefix).unwrap();
        assert_eq!(t, "import os\nx = os.");
        assert_eq!(c, t.len());
        let (t, c) = token_document(&lines, 2, 7, "path", TokenContext::Full).unwrap();
        assert_eq!(t, "import os\nx = os..join(\"é\", os.sep)\nprint(x)");
        assert_eq!(&t[..c], "import os\nx = os.");
        // Columns count characters: `sep` is after a two-byte é.
        let (t, _) = token_document(&lines, 2, 25, "sep", TokenContext::Prefix).unwrap();
        assert_eq!(t, "import os\nx = os.path.join(\"é\", os.");
        assert!(token_document(&lines, 2, 8, "path", TokenContext::Prefix).is_none());
        assert!(token_document(&lines, 4, 0, "x", TokenContext::Prefix).is_none());
        assert!(token_document(&lines, 3, 99, "x", TokenContext::Prefix).is_none());
    }
}
