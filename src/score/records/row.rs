//! The table's values: the 56-byte `Row` (built from `RowParts`), its interned `Place`,
//! the token kinds, and the `Table` they make. Plain values the parser, the reader and
//! the name tables share; this file uses none of them.

use super::Outcome;

/// One record reduced to what scoring needs, in 56 bytes (a 10-million-record table
/// fits in about 560 MB): names are indices into [`Table`]'s lists, the repository,
/// file and language share one [`Place`] index, and two slots hold what the record's
/// kind has (distances for a line suggestion, rank and typed prefix for a completion
/// list, the error message for an error). Built from [`RowParts`]; read through its
/// methods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// NaN when absent.
    pub latency_ms: f64,
    /// The first 64 bits of `request_hash` and `response_hash`; 0 when absent.
    pub request: u64,
    pub response: u64,
    pub case: u32,
    /// An index into [`Table::places`].
    pub place: u32,
    pub pass: u32,
    /// Length of the expected line in characters.
    pub len: u32,
    /// Characters of the expected line the user typed before asking (k): the case's
    /// weight is `len − typed`, and a line no longer than k is not a case.
    pub typed: u32,
    /// Line suggestion: ld2. Completion list: rank (0 when absent).
    x: u32,
    /// Line suggestion: ld1. Error: the message. Other completion records: the typed
    /// prefix length (`u32::MAX` when absent).
    y: u32,
    /// An index into [`Table::assistants`] (see [`Row::assistant`]).
    who: u16,
    pub outcome: Outcome,
    /// [`COMPLETION`], the token kind (an index into [`TOKEN_KINDS`], 3 bits) and the
    /// list-length bin (4 bits, [`list_bin`]).
    flags: u8,
}

const COMPLETION: u8 = 0x80;
const KIND: u8 = 0x07;
const BIN_SHIFT: u8 = 3;

/// The bin of a completion list's length (`items`, the list shown): 0 when unknown, 1
/// for an empty list, `2 + ⌊log₂ n⌋` for n ≥ 1 items, at most 15 (8,192 items and
/// more): 1, 2–3, 4–7, … items.
pub fn list_bin(items: Option<u64>) -> u8 {
    match items {
        None => 0,
        Some(0) => 1,
        Some(n) => (2 + n.ilog2()).min(15) as u8,
    }
}

/// The lengths bin `b` of [`list_bin`] holds, as a label ("0", "1", "2–3", "8192+").
pub fn list_bin_label(b: u8) -> String {
    match b {
        0 => "unknown".to_string(),
        1 => "0".to_string(),
        15 => format!("{}+", 1u64 << 13),
        2 => "1".to_string(),
        b => format!("{}–{}", 1u64 << (b - 2), (1u64 << (b - 1)) - 1),
    }
}

/// A row's fields before packing: what [`Row`]'s methods give back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowParts {
    pub case: u32,
    pub place: u32,
    /// At most `u16::MAX` assistants (the reader refuses more).
    pub assistant: u16,
    pub pass: u32,
    pub outcome: Outcome,
    pub len: u32,
    /// `ld2(expected, predicted)`; ignored unless a line-level suggestion.
    pub ld2: u32,
    pub ld1: u32,
    /// NaN when absent.
    pub latency_ms: f64,
    pub completion: bool,
    /// Completion records: typed prefix length, `u32::MAX` when absent.
    pub prefix_len: u32,
    /// Completion records: 1-based rank of the expected item, 0 when absent.
    pub rank: u32,
    /// Completion records: the token's kind, an index into [`TOKEN_KINDS`] (0: none).
    pub token_kind: u8,
    /// Completion records: the bin of the list's length ([`list_bin`], 0: unknown).
    pub list_bin: u8,
    pub typed: u32,
    /// The error message of an `error` record, an index into [`Table::errors`].
    pub error: u32,
    pub request: u64,
    pub response: u64,
}

impl Default for RowParts {
    fn default() -> Self {
        RowParts {
            case: 0,
            place: 0,
            assistant: 0,
            pass: 1,
            outcome: Outcome::Empty,
            len: 0,
            ld2: 0,
            ld1: 0,
            latency_ms: f64::NAN,
            completion: false,
            prefix_len: u32::MAX,
            rank: 0,
            token_kind: 0,
            list_bin: 0,
            typed: 0,
            error: u32::MAX,
            request: 0,
            response: 0,
        }
    }
}

impl From<RowParts> for Row {
    fn from(p: RowParts) -> Row {
        let (x, y) = match (p.completion, p.outcome) {
            (_, Outcome::Error) => (if p.completion { p.rank } else { 0 }, p.error),
            (true, _) => (p.rank, p.prefix_len),
            (false, Outcome::Suggestion) => (p.ld2, p.ld1),
            (false, _) => (0, 0),
        };
        Row {
            latency_ms: p.latency_ms,
            request: p.request,
            response: p.response,
            case: p.case,
            place: p.place,
            pass: p.pass,
            len: p.len,
            typed: p.typed,
            x,
            y,
            who: p.assistant,
            outcome: p.outcome,
            flags: if p.completion {
                COMPLETION | (p.list_bin.min(15) << BIN_SHIFT)
            } else {
                0
            } | (p.token_kind & KIND),
        }
    }
}

impl Row {
    /// The characters the assistant could type for the user: `len − typed`.
    pub fn weight(&self) -> u32 {
        self.len.saturating_sub(self.typed)
    }
    /// A line-level record whose line is longer than what the user typed (records of
    /// lines no longer than the typed prefix are not cases).
    pub fn is_case(&self) -> bool {
        self.completion() || self.len > self.typed
    }
    /// An index into [`Table::assistants`].
    pub fn assistant(&self) -> u32 {
        u32::from(self.who)
    }
    /// A completion-list record.
    pub fn completion(&self) -> bool {
        self.flags & COMPLETION != 0
    }
    fn line_suggestion(&self) -> bool {
        !self.completion() && self.outcome == Outcome::Suggestion
    }
    /// `ld2(expected, predicted)`; for any record but a line suggestion, `len`.
    pub fn ld2(&self) -> u32 {
        if self.line_suggestion() {
            self.x
        } else {
            self.len
        }
    }
    /// Plain Levenshtein; for any record but a line suggestion, `len`.
    pub fn ld1(&self) -> u32 {
        if self.line_suggestion() {
            self.y
        } else {
            self.len
        }
    }
    /// Completion records: 1-based rank of the expected item, 0 when absent.
    pub fn rank(&self) -> u32 {
        if self.completion() { self.x } else { 0 }
    }
    /// Completion records (but errors): typed prefix length, `u32::MAX` when absent.
    pub fn prefix_len(&self) -> u32 {
        if self.completion() && self.outcome != Outcome::Error {
            self.y
        } else {
            u32::MAX
        }
    }
    /// The token kind, an index into [`TOKEN_KINDS`] (0: none).
    pub fn token_kind(&self) -> u8 {
        self.flags & KIND
    }
    /// Completion records: the bin of the list's length ([`list_bin`]; 0: unknown).
    pub fn list_bin(&self) -> u8 {
        (self.flags & !COMPLETION) >> BIN_SHIFT
    }
    /// The error message of an `error` record, an index into [`Table::errors`];
    /// `u32::MAX` when none.
    pub fn error(&self) -> u32 {
        if self.outcome == Outcome::Error {
            self.y
        } else {
            u32::MAX
        }
    }
    /// The row with a block's own ids replaced by the table's.
    pub(crate) fn renamed(
        mut self,
        cases: &[u32],
        places: &[u32],
        assistants: &[u16],
        errors: &[u32],
    ) -> Row {
        self.case = cases[self.case as usize];
        self.place = places[self.place as usize];
        self.who = assistants[self.who as usize];
        if self.outcome == Outcome::Error {
            self.y = errors[self.y as usize];
        }
        self
    }
}

/// Where a record is: its repository, file and language (indices into [`Table`]'s
/// lists). Records of one file share a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    pub repo: u32,
    pub file: u32,
    pub language: u32,
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
    /// How many distinct case ids there are ([`Row::case`] is below it); the ids
    /// themselves are not kept.
    pub cases: usize,
    /// By case id: the records' `line` (1-based), `u32::MAX` where none was read (the
    /// vector may be shorter than `cases`; see [`Table::line`]).
    pub lines: Vec<u32>,
    /// Each [`Row::place`]'s repository, file and language.
    pub places: Vec<Place>,
    pub repos: Vec<String>,
    pub languages: Vec<String>,
    pub assistants: Vec<String>,
    /// Files within their repository (a record's `file`, else its case id up to the last
    /// ':'): with the repository, the bootstrap's unit when there are too few
    /// repositories.
    pub files: Vec<String>,
    /// Distinct error messages.
    pub errors: Vec<String>,
    /// Block records (methodology §9), by index in `rows`, ascending: the block's
    /// terms. Empty for line and token records, so their figures are untouched.
    pub blocks: Vec<(usize, crate::score::block_terms::BlockTerms)>,
    /// Golf records (methodology §10), by index in `rows`, ascending: the line's tally.
    pub golf: Vec<(usize, GolfTerms)>,
    /// Syntax and diagnostics checks of suggestions (methodology §11), from the
    /// sidecar files `typist check` writes beside records files.
    pub checks: Vec<crate::score::checks::Check>,
    /// Tests after acceptance (methodology §12), from the sidecars `typist check
    /// --tests` writes beside records files.
    pub tests: Vec<crate::score::tests_file::TestResult>,
    /// Lines skipped as malformed (non-strict mode).
    pub skipped: u64,
    /// The first few problems, `file:line: message`.
    pub problems: Vec<String>,
}

impl Table {
    /// Where a row is.
    pub fn place(&self, r: &Row) -> Place {
        self.places[r.place as usize]
    }
    /// A row's line number, when its records gave one.
    pub fn line(&self, r: &Row) -> Option<u32> {
        self.lines
            .get(r.case as usize)
            .copied()
            .filter(|&n| n != u32::MAX)
    }
}

/// Keep at most this many problem messages.
pub const MAX_PROBLEMS: usize = 20;

/// A golf record's tally as scoring reads it (`replay::golf::GolfTally`).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct GolfTerms {
    pub keys: u32,
    pub n: u32,
    #[serde(default)]
    pub requests: u32,
    #[serde(default)]
    pub accepts: u32,
    #[serde(default)]
    pub failures: u32,
    #[serde(default)]
    pub capped: bool,
    /// Completion lists only: characters typed (a token written by one pick of any
    /// rank, nothing typed, is a one-accept token).
    #[serde(default)]
    pub typed: Option<u32>,
}

impl GolfTerms {
    /// The line was written by one accept: one key (an inline suggestion), or one pick
    /// and nothing typed (a completion list).
    pub fn one_accept(&self) -> bool {
        match self.typed {
            Some(t) => self.accepts == 1 && t == 0,
            None => self.keys == 1 && self.accepts == 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bins by hand: 0 items → 1; 1 → 2 + ⌊log₂ 1⌋ = 2; 3 → 2 + 1 = 3; 16 and 31 → 2 + 4
    /// = 6; 8,192 and more → 15; unknown → 0. The bin shares its byte with the kind and
    /// the completion flag, and neither changes the other.
    #[test]
    fn list_length_bins_and_their_labels() {
        let bins: Vec<u8> = [None, Some(0), Some(1), Some(3), Some(16), Some(31)]
            .into_iter()
            .chain([Some(8191), Some(8192), Some(u64::MAX)])
            .map(list_bin)
            .collect();
        assert_eq!(bins, [0, 1, 2, 3, 6, 6, 14, 15, 15]);
        let labels: Vec<String> = [0, 1, 2, 3, 6, 14, 15].map(list_bin_label).to_vec();
        assert_eq!(
            labels,
            ["unknown", "0", "1", "2–3", "16–31", "4096–8191", "8192+"]
        );
        let row = Row::from(RowParts {
            completion: true,
            outcome: Outcome::Suggestion,
            token_kind: 6,
            list_bin: 15,
            rank: 9,
            ..RowParts::default()
        });
        assert_eq!((row.token_kind(), row.list_bin(), row.rank()), (6, 15, 9));
        assert!(row.completion());
        let line = Row::from(RowParts {
            list_bin: 15,
            ..RowParts::default()
        });
        assert_eq!((line.list_bin(), line.completion()), (0, false));
    }
}
