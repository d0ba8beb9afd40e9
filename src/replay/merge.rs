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
    if let Some(first) = shards.first()
        && edits_manifest(&first.join("manifest.json"))?.is_some()
    {
        return merge_edits(shards, out);
    }
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

/// An edits run's manifest (`"kind": "edits"`), or `None` for a line run's.
fn edits_manifest(path: &Path) -> Result<Option<serde_json::Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: malformed manifest", path.display()))?;
    Ok((v.get("kind").and_then(|k| k.as_str()) == Some("edits")).then_some(v))
}

/// Joins the shards of an edits run: the same plan, assistants, passes and conditions,
/// their records sorted as one run sorts them, and a manifest whose status is complete
/// when every shard's is.
fn merge_edits(shards: &[PathBuf], out: &Path) -> Result<usize> {
    let same = [
        "plan_hash",
        "assistants",
        "passes",
        "conditions",
        "reversal_events",
    ];
    let mut first: Option<serde_json::Value> = None;
    let mut parts = Vec::new();
    let mut all = Vec::new();
    let mut complete = true;
    for dir in shards {
        let path = dir.join("manifest.json");
        let m = edits_manifest(&path)?.with_context(|| {
            format!(
                "{} is a line run, {} an edits run: merge runs of one kind",
                dir.display(),
                shards[0].display()
            )
        })?;
        if let Some(f) = &first {
            for k in same {
                if f.get(k) != m.get(k) {
                    bail!(
                        "{} differs from {} in its {k}: merge the shards of one run",
                        dir.display(),
                        shards[0].display()
                    );
                }
            }
        }
        complete &= m.get("status").and_then(|s| s.as_str()) == Some("complete");
        parts.push(serde_json::json!({
            "path": dir.display().to_string(),
            "status": m.get("status"),
            "shard": m.get("shard"),
            "records": m.get("records"),
        }));
        all.extend(crate::score::edit_records::read_edit_records(
            &dir.join("records.jsonl"),
        )?);
        first.get_or_insert(m);
    }
    let mut manifest = first.context("no shards given")?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let n = super::edits::write_sorted(&out.join("records.jsonl"), all)?;
    if let Some(m) = manifest.as_object_mut() {
        m.remove("shard");
        m.insert("records".into(), n.into());
        m.insert(
            "status".into(),
            if complete { "complete" } else { "interrupted" }.into(),
        );
        m.insert("merged_from".into(), parts.into());
    }
    super::edits::write_json(&out.join("manifest.json"), &manifest)?;
    Ok(n)
}
