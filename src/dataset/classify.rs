//! Which lines of a source file are code lines (candidate cases): never blank lines,
//! comment-only lines, lines inside block comments, or Python docstrings. A small
//! lexer per language family tracks comments and strings across lines; string contents
//! are code (typing them is work), comments are not.
//!
//! The lexer takes one step per state.

use super::Language;

/// One flag per line of `text` (split on `\n`): is it a code line?
pub fn code_lines(text: &str, lang: Language) -> Vec<bool> {
    match lang {
        Language::Python => python(text),
        _ => c_like(text, lang),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CState {
    Normal,
    /// Block comment with nesting depth (Rust nests, the others do not).
    Block(u32),
    /// A multi-line string closed by the given delimiter kind.
    Template,
    /// Rust raw string with this many `#`.
    RawString(usize),
    /// Java/Kotlin/C# text block `"""`.
    TextBlock,
}

/// What the C-family lexer knows of one language.
#[derive(Clone, Copy)]
struct CRules {
    /// Block comments nest and `r"…"`/`r#"…"#` are raw strings (Rust).
    rust: bool,
    /// Backquoted strings span lines (JavaScript, TypeScript, Go).
    templates: bool,
    /// `"""` text blocks (Java, Kotlin, C#).
    text_blocks: bool,
}

fn c_like(text: &str, lang: Language) -> Vec<bool> {
    let rules = CRules {
        rust: lang == Language::Rust,
        templates: matches!(
            lang,
            Language::JavaScript | Language::TypeScript | Language::Go
        ),
        text_blocks: matches!(lang, Language::Java | Language::Kotlin | Language::CSharp),
    };
    let mut state = CState::Normal;
    text.split('\n')
        .map(|line| c_like_line(&line.chars().collect::<Vec<_>>(), rules, &mut state))
        .collect()
}

/// Whether the line `b` holds code; `state` carries comments and strings that span
/// lines into the next one.
fn c_like_line(b: &[char], rules: CRules, state: &mut CState) -> bool {
    let mut code = false;
    let mut i = 0;
    while i < b.len() {
        i = match *state {
            CState::Block(depth) => in_block(b, i, depth, rules.rust, state),
            CState::Normal => match in_code(b, i, rules, state) {
                Some((next, is_code)) => {
                    code |= is_code;
                    next
                }
                // A line comment.
                None => break,
            },
            string => {
                // String contents are code.
                code |= !b[i].is_whitespace();
                in_string(b, i, string, state)
            }
        };
    }
    // Plain strings do not span lines; an unclosed one ends with its line.
    code
}

/// One step inside a block comment at `depth`; where the lexer goes on.
fn in_block(b: &[char], i: usize, depth: u32, nests: bool, state: &mut CState) -> usize {
    let next = b.get(i + 1).copied();
    if b[i] == '*' && next == Some('/') {
        *state = if depth > 1 {
            CState::Block(depth - 1)
        } else {
            CState::Normal
        };
        i + 2
    } else if nests && b[i] == '/' && next == Some('*') {
        *state = CState::Block(depth + 1);
        i + 2
    } else {
        i + 1
    }
}

/// One step inside a string that spans lines (`string`, the state); where the lexer
/// goes on.
fn in_string(b: &[char], i: usize, string: CState, state: &mut CState) -> usize {
    let c = b[i];
    match string {
        CState::Template if c == '\\' => i + 2,
        CState::Template if c == '`' => {
            *state = CState::Normal;
            i + 1
        }
        CState::RawString(hashes)
            if c == '"'
                && b[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes =>
        {
            *state = CState::Normal;
            i + 1 + hashes
        }
        CState::TextBlock if triple_quote(b, i) => {
            *state = CState::Normal;
            i + 3
        }
        _ => i + 1,
    }
}

/// One step in code: where the lexer goes on and whether it saw code; `None` at a line
/// comment.
fn in_code(b: &[char], i: usize, rules: CRules, state: &mut CState) -> Option<(usize, bool)> {
    let c = b[i];
    let next = b.get(i + 1).copied();
    Some(if c.is_whitespace() {
        (i + 1, false)
    } else if c == '/' && next == Some('/') {
        return None;
    } else if c == '/' && next == Some('*') {
        *state = CState::Block(1);
        (i + 2, false)
    } else if rules.text_blocks && triple_quote(b, i) {
        *state = CState::TextBlock;
        (i + 3, true)
    } else if rules.rust && c == 'r' && matches!(next, Some('"') | Some('#')) && !prev_ident(b, i) {
        let hashes = b[i + 1..].iter().take_while(|&&h| h == '#').count();
        if b.get(i + 1 + hashes) == Some(&'"') {
            *state = CState::RawString(hashes);
            (i + 2 + hashes, true)
        } else {
            (i + 1, true)
        }
    } else if c == '"' || (c == '\'' && !rules.rust) {
        (skip_quoted(b, i, c), true)
    } else if rules.templates && c == '`' {
        *state = CState::Template;
        (i + 1, true)
    } else {
        (i + 1, true)
    })
}

/// Whether `"""` starts at `i`.
fn triple_quote(b: &[char], i: usize) -> bool {
    b[i] == '"' && b.get(i + 1) == Some(&'"') && b.get(i + 2) == Some(&'"')
}

fn prev_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// Index after the closing quote (or the line's end).
fn skip_quoted(b: &[char], start: usize, q: char) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// What Python's lexer carries from line to line.
#[derive(Default)]
struct PyState {
    /// Inside a triple-quoted string: its quote and whether it is a docstring.
    triple: Option<(char, bool)>,
    /// Brackets open.
    depth: i32,
    /// The last line ended in `\`.
    continued: bool,
}

/// What Python's lexer knows within one line.
struct PyLine {
    code: bool,
    /// A logical line starts here unless brackets are open or the last line ended in `\`.
    starts_statement: bool,
    first_token: bool,
}

fn python(text: &str) -> Vec<bool> {
    let mut state = PyState::default();
    text.split('\n')
        .map(|line| python_line(line, &mut state))
        .collect()
}

/// Whether `line` holds code.
fn python_line(line: &str, state: &mut PyState) -> bool {
    let b: Vec<char> = line.chars().collect();
    let mut l = PyLine {
        code: false,
        starts_statement: state.depth <= 0 && !state.continued,
        first_token: true,
    };
    let mut i = 0;
    while i < b.len() {
        if let Some((q, doc)) = state.triple {
            i = l.in_triple(&b, i, q, doc, state);
            continue;
        }
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            break;
        }
        if let Some((j, q)) = string_start(&b, i) {
            i = l.string(&b, j, q, state);
            continue;
        }
        l.code = true;
        l.first_token = false;
        match c {
            '(' | '[' | '{' => state.depth += 1,
            ')' | ']' | '}' => state.depth -= 1,
            _ => {}
        }
        i += 1;
    }
    state.continued = state.triple.is_none() && line.trim_end().ends_with('\\');
    l.code
}

/// Where a string starts at `i` after its prefix (r, b, u, f and pairs of them): the
/// quote's index and the quote.
fn string_start(b: &[char], i: usize) -> Option<(usize, char)> {
    let mut j = i;
    while j < b.len() && j - i < 2 && matches!(b[j].to_ascii_lowercase(), 'r' | 'b' | 'u' | 'f') {
        j += 1;
    }
    (j < b.len() && (b[j] == '"' || b[j] == '\'') && (j == i || !prev_ident(b, i)))
        .then(|| (j, b[j]))
}

impl PyLine {
    /// Inside a triple-quoted string (`q`, `doc`: a docstring) from `i`: where the lexer
    /// goes on (after its end, or the line's end).
    fn in_triple(
        &mut self,
        b: &[char],
        i: usize,
        q: char,
        doc: bool,
        state: &mut PyState,
    ) -> usize {
        let end = find_triple(b, i, q);
        if !doc
            && b[i..end.unwrap_or(b.len())]
                .iter()
                .any(|c| !c.is_whitespace())
        {
            self.code = true;
        }
        match end {
            Some(e) => {
                if !doc {
                    self.code = true;
                }
                state.triple = None;
                self.first_token = false;
                e + 3
            }
            None => b.len(),
        }
    }

    /// A string whose quote `q` is at `j`: where the lexer goes on. A triple-quoted one
    /// is a docstring when it is a statement's first token.
    fn string(&mut self, b: &[char], j: usize, q: char, state: &mut PyState) -> usize {
        let first_token = std::mem::replace(&mut self.first_token, false);
        if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
            let doc = first_token && self.starts_statement;
            if !doc {
                self.code = true;
            }
            state.triple = Some((q, doc));
            return j + 3;
        }
        self.code = true;
        skip_quoted(b, j, q)
    }
}

fn find_triple(b: &[char], from: usize, q: char) -> Option<usize> {
    let mut i = from;
    while i + 2 < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == q && b[i + 1] == q && b[i + 2] == q {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(text: &str, lang: Language) -> String {
        code_lines(text, lang)
            .iter()
            .map(|&c| if c { 'c' } else { '.' })
            .collect()
    }

    #[test]
    fn python_comments_blank_lines_and_docstrings() {
        let src = r#"#!/usr/bin/env python
"""Module docstring
spanning lines.
"""
import os  # a comment

def f(x):
    '''One-line docstring.'''
    s = """not a docstring:
    its lines are code"""
    return (x,
        """continuation string""")
    # only a comment
r'''raw docstring
'''
"#;
        assert_eq!(marks(src, Language::Python), "....c.c.cccc....");
    }

    #[test]
    fn c_like_block_comments_strings_and_templates() {
        let src = "/* licence\n * text */\nint x = 1; /* trailing */\n// comment\n  \nchar *s = \"/* not a comment */\";\n/* a */ int y;\n";
        assert_eq!(marks(src, Language::C), "..c..cc.");
        let js = "const t = `line one\n// still template\n`;\n// real comment";
        assert_eq!(marks(js, Language::JavaScript), "ccc.");
        let rs = "/* outer /* nested */ still */\nlet s = r#\"raw\n// in raw\n\"#;\n'a: loop {}";
        assert_eq!(marks(rs, Language::Rust), ".cccc");
        let java = "String t = \"\"\"\n  // text\n  \"\"\";\n/** doc */";
        assert_eq!(marks(java, Language::Java), "ccc.");
    }
}
