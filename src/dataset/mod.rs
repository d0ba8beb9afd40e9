//! The `dataset` layer: walking repositories (respecting ignore files), language
//! detection, code-line classification, seeded sampling, and the plan of cases.
//! Knows nothing of LSP, servers or scoring.
//!
//! Sampling follows the study (methodology §1): every code line is a case with
//! probability `rate`. The draw for a line is a hash of (seed, repo, file, line), so a
//! line's fate does not depend on the order files are walked or on other files.

pub mod classify;
pub mod edits;
pub mod fetch;
mod plan;
mod repo;
mod sample;
pub mod token;
pub mod tokens;
mod walk;

pub use plan::{PlanSource, changed_files, plan_hash, read_plan, write_plan};
pub use repo::{BuildFile, Dataset, Language, Repo, Skipped, SourceFile};
pub use sample::{
    BLOCK_MAX_LINES, Case, SampleOptions, draw, draw_token, expected_block, sample, sample_blocks,
};
pub use token::{Action, TokenCase, TokenContext, TokenKind};
pub use walk::{BUILD_FILES, WalkOptions, walk};
