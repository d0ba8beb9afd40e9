//! Which lines of a source file are code lines (candidate cases): never blank lines,
//! comment-only lines, lines inside block comments, or Python docstrings. A small
//! lexer per language family tracks comments and strings across lines; string contents
//! are code (typing them is work), comments are not.

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

fn c_like(text: &str, lang: Language) -> Vec<bool> {
    let nests = lang == Language::Rust;
    let templates = matches!(
        lang,
        Language::JavaScript | Language::TypeScript | Language::Go
    );
    let text_blocks = matches!(lang, Language::Java | Language::Kotlin | Language::CSharp);
    let mut state = CState::Normal;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let b: Vec<char> = line.chars().collect();
        let mut code = false;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let next = b.get(i + 1).copied();
            match state {
                CState::Block(depth) => {
                    if c == '*' && next == Some('/') {
                        state = if depth > 1 {
                            CState::Block(depth - 1)
                        } else {
                            CState::Normal
                        };
                        i += 2;
                    } else if nests && c == '/' && next == Some('*') {
                        state = CState::Block(depth + 1);
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                CState::Template => {
                    if !c.is_whitespace() {
                        code = true;
                    }
                    if c == '\\' {
                        i += 2;
                    } else {
                        if c == '`' {
                            state = CState::Normal;
                        }
                        i += 1;
                    }
                }
                CState::RawString(hashes) => {
                    if !c.is_whitespace() {
                        code = true;
                    }
                    if c == '"'
                        && b[i + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes
                    {
                        state = CState::Normal;
                        i += 1 + hashes;
                    } else {
                        i += 1;
                    }
                }
                CState::TextBlock => {
                    if !c.is_whitespace() {
                        code = true;
                    }
                    if c == '"' && next == Some('"') && b.get(i + 2) == Some(&'"') {
                        state = CState::Normal;
                        i += 3;
                    } else {
                        i += 1;
                    }
                }
                CState::Normal => {
                    if c.is_whitespace() {
                        i += 1;
                    } else if c == '/' && next == Some('/') {
                        break;
                    } else if c == '/' && next == Some('*') {
                        state = CState::Block(1);
                        i += 2;
                    } else if text_blocks
                        && c == '"'
                        && next == Some('"')
                        && b.get(i + 2) == Some(&'"')
                    {
                        code = true;
                        state = CState::TextBlock;
                        i += 3;
                    } else if nests
                        && c == 'r'
                        && matches!(next, Some('"') | Some('#'))
                        && !prev_ident(&b, i)
                    {
                        let hashes = b[i + 1..].iter().take_while(|&&h| h == '#').count();
                        if b.get(i + 1 + hashes) == Some(&'"') {
                            code = true;
                            state = CState::RawString(hashes);
                            i += 2 + hashes;
                        } else {
                            code = true;
                            i += 1;
                        }
                    } else if c == '"' || (c == '\'' && lang != Language::Rust) {
                        code = true;
                        i = skip_quoted(&b, i, c);
                    } else if templates && c == '`' {
                        code = true;
                        state = CState::Template;
                        i += 1;
                    } else {
                        code = true;
                        i += 1;
                    }
                }
            }
        }
        // Plain strings do not span lines; an unclosed one ends with its line.
        out.push(code);
    }
    out
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

fn python(text: &str) -> Vec<bool> {
    // Inside a triple-quoted string: its quote and whether it is a docstring.
    let mut triple: Option<(char, bool)> = None;
    let mut depth: i32 = 0;
    let mut continued = false;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let b: Vec<char> = line.chars().collect();
        let mut code = false;
        let mut i = 0;
        // A logical line starts here unless brackets are open or the last line ended in `\`.
        let starts_statement = depth <= 0 && !continued;
        let mut first_token = true;
        while i < b.len() {
            if let Some((q, doc)) = triple {
                let end = find_triple(&b, i, q);
                if !doc
                    && b[i..end.unwrap_or(b.len())]
                        .iter()
                        .any(|c| !c.is_whitespace())
                {
                    code = true;
                }
                match end {
                    Some(e) => {
                        if !doc {
                            code = true;
                        }
                        triple = None;
                        i = e + 3;
                        first_token = false;
                    }
                    None => i = b.len(),
                }
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
            // String prefixes: r, b, u, f and pairs of them.
            let mut j = i;
            while j < b.len()
                && j - i < 2
                && matches!(b[j].to_ascii_lowercase(), 'r' | 'b' | 'u' | 'f')
            {
                j += 1;
            }
            if j < b.len() && (b[j] == '"' || b[j] == '\'') && (j == i || !prev_ident(&b, i)) {
                let q = b[j];
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    let doc = first_token && starts_statement;
                    if !doc {
                        code = true;
                    }
                    triple = Some((q, doc));
                    i = j + 3;
                    first_token = false;
                    continue;
                }
                code = true;
                i = skip_quoted(&b, j, q);
                first_token = false;
                continue;
            }
            code = true;
            first_token = false;
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        continued = triple.is_none() && line.trim_end().ends_with('\\');
        out.push(code);
    }
    out
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
