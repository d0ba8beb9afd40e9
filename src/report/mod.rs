//! `typist report`: one self-contained HTML file (inline SVG and CSS, readable without
//! JavaScript; a few lines of script sort the tables), a markdown summary for a pull
//! request, and the pairs as CSV. Reads records once (and the run's manifest beside
//! them); every figure comes from the scoring core, so the report says what `typist
//! score` says. Knows nothing of LSP or replay.
//!
//! The scoring table and the pairs come from one parse
//! ([`crate::score::read_records_and_pairs`]). Re-exports `esc`, `pct`, `p_text` and
//! `markdown`.

pub mod charts;
mod curve_pairs;
mod design;
pub mod escape;
mod examples;
mod extras;
mod format;
mod html;
mod markdown;
pub mod next_edits;
pub mod pairs;
mod ranking;
mod run_section;
pub mod verdict;

use std::path::PathBuf;

use anyhow::Result;

use crate::score::pairs::Pair;
use crate::score::{Options, Summary, read_records_and_pairs, summarize};
pub use escape::esc;
pub use format::{p_text, pct};
pub use markdown::markdown;

#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub bootstrap: usize,
    pub seed: u64,
    pub pass: u32,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            bootstrap: 1000,
            seed: 0,
            pass: 1,
        }
    }
}

pub struct Report {
    pub html: String,
    pub markdown: String,
    pub pairs: Vec<Pair>,
    pub summary: Summary,
}

/// Reads the records (once: the scoring table and the pairs come from one parse) and
/// the manifest beside them, and builds every output.
pub fn build(records: &[PathBuf], opts: &ReportOptions) -> Result<Report> {
    let (table, pairs) = read_records_and_pairs(records, false, 0)?;
    let summary = summarize(
        &table,
        &Options {
            bootstrap: opts.bootstrap,
            seed: opts.seed,
            pass: opts.pass,
            curve_bands: true,
        },
    );
    drop(table);
    let manifest = run_section::read_manifest(records);
    let html = html::html(&summary, &pairs, manifest.as_ref(), records)?;
    let markdown = markdown(&summary);
    Ok(Report {
        html,
        markdown,
        pairs,
        summary,
    })
}
