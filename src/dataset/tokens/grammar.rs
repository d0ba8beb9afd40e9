//! Which tree-sitter grammar and query read a file, each query compiled once.
//!
//! A query names what it finds by its captures: `@member`, `@call`, `@name`,
//! `@import`, `@type` mark a token of that kind; `@skip` marks a token that is never a
//! case (a definition, a label); `@skip.within` a node no token inside of is a case (a
//! string, an attribute, a parse error); `@import.within` a node every token inside of
//! is an import.
//!
//! TSX is told from TypeScript by its extension; C# and Kotlin have no grammar, so no
//! token cases. The queries are `queries/*.scm`, one per language; JSX's patterns are
//! added to JavaScript's and TSX's, and C's to C++'s.

use std::sync::OnceLock;

use tree_sitter::{Language as Grammar, Query};

use crate::dataset::{Language, TokenKind};

/// What a capture says of the node it captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Kind(TokenKind),
    Skip,
    SkipWithin,
    ImportWithin,
}

impl Role {
    fn from_capture(name: &str) -> Option<Role> {
        Some(match name {
            "member" => Role::Kind(TokenKind::Member),
            "call" => Role::Kind(TokenKind::Call),
            "name" => Role::Kind(TokenKind::Name),
            "import" => Role::Kind(TokenKind::Import),
            "type" => Role::Kind(TokenKind::Type),
            "skip" => Role::Skip,
            "skip.within" => Role::SkipWithin,
            "import.within" => Role::ImportWithin,
            _ => return None,
        })
    }
}

/// A grammar with its compiled query and the role of each capture.
pub(super) struct Reader {
    pub grammar: Grammar,
    pub query: Query,
    /// `roles[i]`: the role of capture `i`.
    pub roles: Vec<Role>,
}

/// The grammars typist reads, by name (one query file each, beside this code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    Go,
    Rust,
    C,
    Cpp,
}

pub(super) const ALL: [Which; 9] = [
    Which::Python,
    Which::JavaScript,
    Which::TypeScript,
    Which::Tsx,
    Which::Java,
    Which::Go,
    Which::Rust,
    Which::C,
    Which::Cpp,
];

/// The grammar of a dataset file: by its language, TSX by its extension. `None`: no
/// grammar (C#, Kotlin), so no token cases.
pub(super) fn which(language: Language, rel: &str) -> Option<Which> {
    Some(match language {
        Language::Python => Which::Python,
        Language::JavaScript => Which::JavaScript,
        Language::TypeScript if rel.ends_with(".tsx") => Which::Tsx,
        Language::TypeScript => Which::TypeScript,
        Language::Java => Which::Java,
        Language::Go => Which::Go,
        Language::Rust => Which::Rust,
        Language::C => Which::C,
        Language::Cpp => Which::Cpp,
        Language::CSharp | Language::Kotlin => return None,
    })
}

const JSX: &str = include_str!("queries/jsx.scm");

impl Which {
    pub(super) fn grammar(self) -> Grammar {
        match self {
            Which::Python => tree_sitter_python::LANGUAGE.into(),
            Which::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Which::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Which::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Which::Java => tree_sitter_java::LANGUAGE.into(),
            Which::Go => tree_sitter_go::LANGUAGE.into(),
            Which::Rust => tree_sitter_rust::LANGUAGE.into(),
            Which::C => tree_sitter_c::LANGUAGE.into(),
            Which::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    /// The query's source: one file per language; JSX's patterns are added to
    /// JavaScript's and TSX's, C's (the shared part) to C++'s.
    fn query_source(self) -> String {
        let ts = include_str!("queries/typescript.scm");
        let c = include_str!("queries/c.scm");
        match self {
            Which::Python => include_str!("queries/python.scm").to_string(),
            Which::JavaScript => [include_str!("queries/javascript.scm"), JSX].concat(),
            Which::TypeScript => ts.to_string(),
            Which::Tsx => [ts, JSX].concat(),
            Which::Java => include_str!("queries/java.scm").to_string(),
            Which::Go => include_str!("queries/go.scm").to_string(),
            Which::Rust => include_str!("queries/rust.scm").to_string(),
            Which::C => c.to_string(),
            Which::Cpp => [c, include_str!("queries/cpp.scm")].concat(),
        }
    }

    fn build(self) -> Reader {
        self.build_from(&self.query_source())
    }

    /// The reader with the query `source` (tests try queries from files with it).
    pub(super) fn build_from(self, source: &str) -> Reader {
        let grammar = self.grammar();
        let query = Query::new(&grammar, source)
            .unwrap_or_else(|e| panic!("the {self:?} token query does not compile: {e}"));
        let roles = query
            .capture_names()
            .iter()
            .map(|n| {
                Role::from_capture(n)
                    .unwrap_or_else(|| panic!("the {self:?} token query captures @{n}"))
            })
            .collect();
        Reader {
            grammar,
            query,
            roles,
        }
    }

    /// The compiled reader (compiled on first use, then shared by every thread).
    pub(super) fn reader(self) -> &'static Reader {
        static READERS: [OnceLock<Reader>; 9] = [const { OnceLock::new() }; 9];
        let i = ALL
            .iter()
            .position(|w| *w == self)
            .expect("every grammar is in ALL");
        READERS[i].get_or_init(|| self.build())
    }
}
