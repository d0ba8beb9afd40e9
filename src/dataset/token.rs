//! Token cases (methodology §6, the IntelliJ completion benchmark): an identifier the
//! user would complete, with the typed prefix and the actions every server is replayed
//! with. A plan's line cases have no `token`; a token case's `expected` is the token.
//!
//! The types: `TokenCase` (column, kind, typed prefix, context, actions), `TokenKind`,
//! `TokenContext`, `Action`.

use serde::{Deserialize, Serialize};

/// What a token case completes. Keywords, literals and the defining occurrence of a
/// name are never cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenKind {
    /// A member after `.`, `::` or `->` that is not called.
    Member,
    /// The name of a called function or method.
    Call,
    /// A name in an expression.
    Name,
    /// A name in an import.
    Import,
    /// A type's name where a type is expected.
    Type,
}

impl TokenKind {
    /// Every kind, in the order above.
    pub const ALL: [TokenKind; 5] = [
        TokenKind::Member,
        TokenKind::Call,
        TokenKind::Name,
        TokenKind::Import,
        TokenKind::Type,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Member => "member",
            TokenKind::Call => "call",
            TokenKind::Name => "name",
            TokenKind::Import => "import",
            TokenKind::Type => "type",
        }
    }
}

/// What the server's document holds around the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenContext {
    /// The code above plus the line up to the token (nothing after the cursor).
    #[default]
    Prefix,
    /// The whole file with only the token removed (the study's choice).
    Full,
}

/// One step of a completion session, replayed the same way against every server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Open the document as the context puts it, the cursor where the token starts.
    Open,
    /// Ask for completion at the cursor. `trigger_character` is the character before
    /// the cursor when it may be a trigger character: sent as `TriggerCharacter` if the
    /// server declares it, otherwise the request is `Invoked`.
    Complete { trigger_character: Option<String> },
    /// Type text at the cursor; when the last list was incomplete, ask again
    /// (`TriggerForIncompleteCompletions`), as editors do.
    Type { text: String },
}

/// The token part of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCase {
    /// 0-based column of the token's first character, in characters (Unicode scalar
    /// values) of the line; the replay converts to the server's position encoding.
    pub column: u32,
    pub kind: TokenKind,
    /// Characters of the token typed before the list is ranked (0 to 3).
    pub prefix_len: u32,
    pub context: TokenContext,
    pub actions: Vec<Action>,
}
