//! Finding a file's tokens: the file parsed by tree-sitter, its query's captures
//! resolved (a definition or a node inside a string, attribute or parse error never a
//! token; inside an import every token an import; else the strongest kind), columns in
//! characters, the trigger character before a token.
//!
//! Tests in `find/tests.rs`.

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator};

use super::grammar::{self, Role};
use crate::dataset::{SourceFile, TokenKind};

/// An identifier the user would complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// 1-based line.
    pub line: u32,
    /// 0-based column of the first character, in characters (Unicode scalar values).
    pub column: u32,
    pub text: String,
    pub kind: TokenKind,
    /// The character right before the token when it may trigger completion: `.`, `:`
    /// of `::`, `>` of `->`.
    pub trigger: Option<char>,
}

/// Whether tree-sitter reads this file: `false` for languages without a grammar here.
pub fn has_grammar(file: &SourceFile) -> bool {
    grammar::which(file.language, &file.rel).is_some()
}

/// The tokens of a file in text order; `None` when its language has no grammar here.
pub fn find_tokens(file: &SourceFile) -> Option<Vec<Token>> {
    let reader = grammar::which(file.language, &file.rel)?.reader();
    Some(read(reader, file))
}

fn read(reader: &grammar::Reader, file: &SourceFile) -> Vec<Token> {
    let mut parser = Parser::new();
    parser
        .set_language(&reader.grammar)
        .expect("the grammars' ABI is the one tree-sitter reads");
    let Some(tree) = parser.parse(&file.text, None) else {
        return Vec::new();
    };
    let src = file.text.as_bytes();
    // What the query says of each node it captures, by node id.
    let mut roles: HashMap<usize, (Node, Vec<Role>)> = HashMap::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&reader.query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        for c in m.captures {
            let role = reader.roles[c.index as usize];
            roles
                .entry(c.node.id())
                .or_insert((c.node, Vec::new()))
                .1
                .push(role);
        }
    }
    let within = |r: Role| -> HashSet<usize> {
        roles
            .iter()
            .filter(|(_, (_, rs))| rs.contains(&r))
            .map(|(id, _)| *id)
            .collect()
    };
    let skip_within = within(Role::SkipWithin);
    let import_within = within(Role::ImportWithin);
    let lines: Vec<&str> = file.text.split('\n').collect();
    let mut out: Vec<Token> = roles
        .values()
        .filter_map(|(node, rs)| {
            let kind = kind_of(*node, rs, &skip_within, &import_within)?;
            token_at(*node, kind, src, &lines)
        })
        .collect();
    out.sort_by_key(|t| (t.line, t.column));
    out
}

/// The kind of a captured node, or `None` when it is not a case. A definition or a
/// node inside a skipped one is never a case; inside an import, every token is an
/// import; otherwise the strongest kind captured wins (a called member is a call).
fn kind_of(
    node: Node,
    roles: &[Role],
    skip_within: &HashSet<usize>,
    import_within: &HashSet<usize>,
) -> Option<TokenKind> {
    if roles.contains(&Role::Skip) || node.is_missing() {
        return None;
    }
    let kind = roles
        .iter()
        .filter_map(|r| match r {
            Role::Kind(k) => Some(*k),
            _ => None,
        })
        .max_by_key(|k| strength(*k))?;
    let mut import = false;
    let mut up = node.parent();
    while let Some(p) = up {
        if skip_within.contains(&p.id()) {
            return None;
        }
        import |= import_within.contains(&p.id());
        up = p.parent();
    }
    Some(if import { TokenKind::Import } else { kind })
}

fn strength(k: TokenKind) -> u8 {
    match k {
        TokenKind::Name => 0,
        TokenKind::Member => 1,
        TokenKind::Type => 2,
        TokenKind::Call => 3,
        TokenKind::Import => 4,
    }
}

/// The token of a node, with its place in characters and the trigger before it.
fn token_at(node: Node, kind: TokenKind, src: &[u8], lines: &[&str]) -> Option<Token> {
    let (start, end) = (node.start_position(), node.end_position());
    if start.row != end.row {
        return None;
    }
    let text = node.utf8_text(src).ok()?;
    if text.is_empty() || text == "_" {
        return None;
    }
    let line = lines.get(start.row)?;
    let before = line.get(..start.column)?;
    Some(Token {
        line: start.row as u32 + 1,
        column: before.chars().count() as u32,
        text: text.to_string(),
        kind,
        trigger: trigger_before(before),
    })
}

/// The character right before a token if it may trigger completion: `.` (but not the
/// last of `..` or `...`: a range, a spread, a variadic type), `:` of `::` and `>` of
/// `->`.
pub fn trigger_before(before: &str) -> Option<char> {
    let mut back = before.chars().rev();
    match (back.next(), back.next()) {
        (Some('.'), Some('.')) => None,
        (Some('.'), _) => Some('.'),
        (Some(':'), Some(':')) => Some(':'),
        (Some('>'), Some('-')) => Some('>'),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
