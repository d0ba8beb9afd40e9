//! The `score` layer: per-pair distances and `c_help`, the aggregate metrics of the
//! source study (H(S|t), integral help, exact-match share, empty rates), ranking
//! metrics for completion lists, the repository-level bootstrap and paired p-values,
//! and the text table of a summary. Reads records files; knows nothing of LSP or replay.

mod accumulate;
pub mod block_terms;
pub mod blocks;
pub mod bootstrap;
pub mod checks;
pub mod checks_file;
pub mod curve;
pub mod curve_pairs;
pub mod design;
pub mod distance;
pub mod edit_records;
pub mod golf;
pub mod next_edit;
mod options;
pub mod pairs;
pub mod pairwise;
mod rank_boot;
pub mod ranking;
pub mod records;
pub mod repeat;
mod side_boot;
pub mod side_figures;
pub mod summary;
pub mod sums;
pub mod table;
pub mod tests_file;
pub mod tests_score;

pub use bootstrap::Estimate;
pub use options::Options;
pub use pairs::Pair;
pub use records::{
    Outcome, RecordKind, Table, read_records, read_records_and_pairs, read_records_labelled,
    read_records_labelled_and_pairs,
};
pub use summary::{Summary, summarize};
pub use table::{count, score_table};
