//! Token cases (methodology §6): the identifiers a user would complete, found by a real
//! parser (tree-sitter, one grammar and one query per language, `queries/*.scm`), then
//! sampled into cases with the actions an editor user produces (`sample.rs`).
//!
//! A token is an identifier node a query captures with a kind. Never a token: a
//! definition (`@skip`), anything inside a string, an attribute or a parse error
//! (`@skip.within`), a node tree-sitter inserted to recover (missing), and `_`.
//! Keywords, literals and comments are other node kinds, so no query captures them.

mod find;
mod grammar;
mod sample;
mod syntax;

pub use find::{Token, find_tokens, has_grammar, trigger_before};
pub use sample::{TokenOptions, TokenSummary, actions, sample_tokens};
pub use syntax::syntax_problems;
