//! Reading records files (JSON Lines, one object per case × assistant × pass) into a
//! compact table, fast: files are read in chunks cut at line ends, chunks are parsed on
//! every core with borrowed strings, distances are computed where the line is parsed,
//! and only small fixed-size rows plus interned names are kept. Malformed lines are
//! reported with file and line number; `strict` makes the first one fatal.

mod names;
mod parse;
mod read;

pub(crate) use parse::parse_line_only;
pub use read::{read_records, read_records_and_pairs};

/// What a case yielded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Outcome {
    Suggestion = 0,
    Empty = 1,
    Error = 2,
    Timeout = 3,
}

impl Outcome {
    pub fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "suggestion" => Outcome::Suggestion,
            "empty" => Outcome::Empty,
            "error" => Outcome::Error,
            "timeout" => Outcome::Timeout,
            _ => return None,
        })
    }
    /// Suggestion or empty: the assistant answered.
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Suggestion | Outcome::Empty)
    }
}

/// One record reduced to what scoring needs. Names are indices into [`Table`]'s lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub case: u32,
    pub repo: u32,
    pub language: u32,
    pub assistant: u32,
    pub pass: u32,
    pub outcome: Outcome,
    /// Length of the expected line in characters.
    pub len: u32,
    /// `ld2(expected, predicted)`; for an empty suggestion, `len` (nothing typed).
    pub ld2: u32,
    pub ld1: u32,
    /// NaN when absent.
    pub latency_ms: f64,
    /// A completion-list record.
    pub completion: bool,
    /// Completion records: typed prefix length, `u32::MAX` when absent.
    pub prefix_len: u32,
    /// Completion records: 1-based rank of the expected item, 0 when absent.
    pub rank: u32,
    /// Completion records: the token's kind, an index into [`TOKEN_KINDS`] (0: none).
    pub token_kind: u8,
    /// Characters of the expected line the user typed before asking (k): the case's
    /// weight is `len − typed`, and a line no longer than k is not a case.
    pub typed: u32,
    /// The file the case is in, within its repository (the record's `file`, else the case
    /// id up to its last ':'): with `repo`, the bootstrap's unit when there are too few
    /// repositories.
    pub file: u32,
    /// The error message of an `error` record, an index into [`Table::errors`];
    /// `u32::MAX` when none.
    pub error: u32,
    /// The first 64 bits of `request_hash` and `response_hash`; 0 when absent.
    pub request: u64,
    pub response: u64,
}

impl Row {
    /// The characters the assistant could type for the user: `len − typed`.
    pub fn weight(&self) -> u32 {
        self.len.saturating_sub(self.typed)
    }
    /// A line-level record whose line is longer than what the user typed (records of
    /// lines no longer than the typed prefix are not cases).
    pub fn is_case(&self) -> bool {
        self.completion || self.len > self.typed
    }
}

/// The token kinds a completion record may name (`token_kind`), by [`Row::token_kind`]:
/// 0 when absent, the last for a kind this version does not know.
pub const TOKEN_KINDS: [&str; 7] = ["", "member", "call", "name", "import", "type", "other"];

/// The [`Row::token_kind`] of a record's `token_kind`.
pub fn token_kind_code(kind: Option<&str>) -> u8 {
    match kind {
        None => 0,
        Some(k) => TOKEN_KINDS[1..]
            .iter()
            .position(|n| *n == k)
            .map_or(TOKEN_KINDS.len() - 1, |i| i + 1) as u8,
    }
}

/// Every record read, with interned names.
#[derive(Debug, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub cases: Vec<String>,
    pub repos: Vec<String>,
    pub languages: Vec<String>,
    pub assistants: Vec<String>,
    /// Files (see [`Row::file`]).
    pub files: Vec<String>,
    /// Distinct error messages.
    pub errors: Vec<String>,
    /// Lines skipped as malformed (non-strict mode).
    pub skipped: u64,
    /// The first few problems, `file:line: message`.
    pub problems: Vec<String>,
}

/// Keep at most this many problem messages.
pub const MAX_PROBLEMS: usize = 20;
