//! Reading records files (JSON Lines, one object per case × assistant × pass) into a
//! compact table, fast: files are read in chunks cut at line ends, chunks are parsed on
//! every core with borrowed strings, distances are computed where the line is parsed,
//! and only small fixed-size rows plus interned names are kept. Malformed lines are
//! reported with file and line number; `strict` makes the first one fatal.

mod names;
mod parse;
mod read;
mod row;

pub(crate) use parse::parse_line_only;
pub use read::{read_records, read_records_and_pairs};
pub use row::{MAX_PROBLEMS, Outcome, Place, Row, RowParts, TOKEN_KINDS, Table, token_kind_code};
