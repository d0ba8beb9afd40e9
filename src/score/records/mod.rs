//! Reading records files (JSON Lines, one object per case × assistant × pass) into a
//! compact table, fast: files are read in chunks cut at line ends, chunks are parsed on
//! every core with borrowed strings, distances are computed where the line is parsed,
//! and only small fixed-size rows plus interned names are kept. Malformed lines are
//! reported with file and line number; `strict` makes the first one fatal.
//!
//! Files: `read.rs` the pipeline (chunked reads cut at newlines, buffers recycled, blocks
//! merged, malformed lines named by file and line); `parse.rs` a chunk (parallel,
//! borrowed strings, UTF-8 checked once per chunk, distances computed at parse time, the
//! pairs from the same parse when asked); `names.rs` the arena `NameTable`s, the
//! `PlaceTable` and the `CaseTable`; `row.rs` the values (`Row`, `RowParts`,
//! `Place`, `Table`); `outcome.rs` what a record says it is (`Outcome`, `RecordKind`), the
//! vocabulary the replay writes with.
//!
//! A `Row` is 56 bytes, built from `RowParts`: repository, file and language share one
//! interned `Place`, and two slots hold what the record's kind has (distances, rank and
//! typed prefix, or the error). Case ids are counted, not kept. Cases are named per
//! block, then globally: a case name is keyed by the stem before its trailing number plus
//! that number (`repo/file.py:` and 12), or whole when it has no canonical trailing
//! number, so the key is a function of the name alone and the main thread merges cases
//! with integer lookups. A stem's numbers below 65,536 sit in bounded dense slots (at
//! most 16 per case), the rest in a map; a key lives in exactly one of the two.

mod names;
mod outcome;
mod parse;
mod read;
mod row;

pub use outcome::{Outcome, RecordKind};
pub(crate) use parse::parse_line_only;
pub use read::{
    read_records, read_records_and_pairs, read_records_labelled, read_records_labelled_and_pairs,
};
pub use row::{
    GolfTerms, MAX_PROBLEMS, Place, Row, RowParts, TOKEN_KINDS, Table, list_bin, list_bin_label,
    token_kind_code,
};
