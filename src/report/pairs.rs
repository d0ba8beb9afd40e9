//! The pairs as CSV. The pairs themselves are read with the scoring table
//! ([`crate::score::read_records_and_pairs`]).

use std::path::Path;

use anyhow::{Context, Result};

use crate::score::pairs::Pair;

pub fn write_csv(path: &Path, pairs: &[Pair]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for p in pairs {
        w.serialize(p)?;
    }
    w.flush()?;
    Ok(())
}
