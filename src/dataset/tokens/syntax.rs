//! Syntax problems of a whole file (methodology §11): the ERROR and MISSING nodes
//! tree-sitter leaves when it parses the file with the grammar of its language.

use tree_sitter::Parser;

use super::grammar::which;
use crate::dataset::Language;

/// ERROR and MISSING nodes of `text` parsed as `language` (file `rel`: TSX by its
/// extension); `None` for a language without a grammar (C#, Kotlin) or a parse given up.
pub fn syntax_problems(language: Language, rel: &str, text: &str) -> Option<u64> {
    let grammar = which(language, rel)?.grammar();
    let mut parser = Parser::new();
    parser.set_language(&grammar).ok()?;
    let tree = parser.parse(text, None)?;
    let mut cursor = tree.walk();
    let mut n = 0u64;
    // Depth-first over every node, MISSING ones included (they are leaves).
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            n += 1;
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Some(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_errors_and_missing_nodes() {
        let ok = "def f(x):\n    return [x, 1]\n";
        assert_eq!(syntax_problems(Language::Python, "a.py", ok), Some(0));
        assert!(
            syntax_problems(Language::Python, "a.py", "def f(x):\n    return [x, 1\n").unwrap() > 0
        );
        assert_eq!(
            syntax_problems(Language::Rust, "a.rs", "fn f() {}\n"),
            Some(0)
        );
        assert!(syntax_problems(Language::Rust, "a.rs", "fn f() {\n").unwrap() > 0);
        assert_eq!(
            syntax_problems(Language::CSharp, "a.cs", "class A {}"),
            None
        );
    }
}
