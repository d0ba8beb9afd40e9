//! `typist merge`: the output folders of shards joined into exactly the records and the
//! manifest one run would have written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::RunStatus;
use super::manifest::{Manifest, MergedPart, ServerEntry};
use super::records::{self, Record};

/// Joins the output folders of shards into `out`: the same plan and conditions are
/// required, records are unioned and written sorted, exactly as one run would have.
pub fn merge(shards: &[PathBuf], out: &Path) -> Result<usize> {
    let mut all: Vec<Record> = Vec::new();
    let mut first: Option<Manifest> = None;
    let mut parts = Vec::new();
    let mut servers: BTreeMap<String, ServerEntry> = BTreeMap::new();
    let mut complete = true;
    for dir in shards {
        let m = Manifest::read(&dir.join("manifest.json"))?;
        if let Some(f) = &first {
            if f.plan.hash != m.plan.hash {
                bail!(
                    "{} was made from another plan than {}",
                    dir.display(),
                    shards[0].display()
                );
            }
            if f.conditions != m.conditions {
                bail!(
                    "{} ran under other editor conditions than {}",
                    dir.display(),
                    shards[0].display()
                );
            }
        }
        complete &= m.status == RunStatus::Complete;
        for a in &m.assistants {
            if let Some(s) = &a.server {
                servers.entry(a.name.clone()).or_insert_with(|| s.clone());
            }
        }
        parts.push(MergedPart {
            path: dir.display().to_string(),
            status: m.status,
            shard: m.shard,
            records: m.records,
        });
        all.extend(records::read_all(&dir.join("records.jsonl"))?);
        first.get_or_insert(m);
    }
    let mut manifest = first.context("no shards given")?;
    all.sort_by_key(|a| a.key());
    let mut seen = BTreeSet::new();
    all.retain(|r| seen.insert(r.done_key()));
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    records::write_sorted(&out.join("records.jsonl"), &all)?;
    manifest.set_servers(&servers);
    manifest.shard = None;
    // Each part's starts are in its own folder's manifest.
    manifest.history = Vec::new();
    manifest.merged_from = Some(parts);
    manifest.records = Some(all.len());
    manifest.status = if complete {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted
    };
    manifest.write(&out.join("manifest.json"))?;
    Ok(all.len())
}
