//! The `replay` layer: runs a plan of cases against assistants. Workers (one server
//! process and workspace copy each) take files from a shared queue; each file is
//! replayed under the run's editor conditions; every case yields exactly one record
//! (`suggestion`, `empty`, `error` or `timeout`), appended and flushed at once. The
//! records file is rewritten sorted at the end, so it does not depend on the number of
//! workers, the shard split or an interruption. Knows nothing of metric formulas.
//!
//! Files: this one is the run's API; [`checks`] what a run refuses before it starts,
//! [`units`] the queue, `worker` the sessions and their restart policy, `progress` the
//! sink task, [`manifest`] the typed `manifest.json`, [`records`] the records file,
//! [`shard`] and [`merge`] the split and the join, [`typing`] what the editor holds,
//! [`golf`] the user's move in a golf case (methodology §10; its loops are
//! `worker/golf.rs` for lines and `worker/golf_list.rs` for completion lists).

pub mod checks;
pub mod edits;
pub mod golf;
pub mod manifest;
pub mod merge;
mod options;
mod outcome;
mod progress;
pub mod records;
pub mod shard;
pub mod typing;
mod units;
mod worker;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use tokio::sync::mpsc;

use crate::dataset::{Case, Dataset};
use crate::editor::{Editors, Profile, refusals};
pub use checks::{check_assistants, check_blocks, check_plan, skip_reason};
pub use manifest::Manifest;
pub use merge::merge;
pub use options::{
    Pace, RunConditions, RunOptions, RunReport, RunSettings, RunStatus, Sampling, ServerSpec,
};
use records::Record;
pub use shard::Shard;
use typing::{ContextMode, TypingMode};

/// Runs `plan` against every assistant under `cond`, writing `OUT/records.jsonl` and
/// `OUT/manifest.json`. Returns when every case is recorded, the run is cancelled, or a
/// server keeps failing (everything finished is kept in every case).
pub async fn run(
    ds: Arc<Dataset>,
    plan: &[Case],
    profiles: Vec<Profile>,
    cond: RunConditions,
    opts: &RunOptions,
    cancel: Arc<AtomicBool>,
) -> Result<RunReport> {
    refuse(&ds, plan, &profiles, &cond).await?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let records_path = opts.out.join("records.jsonl");
    let manifest_path = opts.out.join("manifest.json");
    let plan_hash = crate::dataset::plan_hash(plan);
    let (previous, done) = resumed(&records_path, &manifest_path, &plan_hash, &cond, opts)?;
    let units = units::plan_units(plan, opts.shard, &profiles, opts.passes, &cond, &done);
    units.warn_skipped();
    let mut manifest = Manifest::start(manifest::RunIdentity {
        plan: manifest::PlanInfo {
            hash: plan_hash,
            cases: plan.len(),
            source: opts.plan_source.clone(),
        },
        ds: &ds,
        shard: opts.shard,
        passes: opts.passes,
        jobs: opts.jobs,
        conditions: &cond,
        profiles: &profiles,
        services: opts.services.clone(),
        skipped_cases: units.skipped,
        settings: opts.settings.clone(),
    });
    if let Some(p) = &previous {
        manifest.continues(p);
    }
    manifest.write(&manifest_path)?;

    let editors = Editors::new();
    let shared = Arc::new(worker::Shared::new(
        &editors,
        ds,
        profiles,
        cond,
        units.queue,
        cancel.clone(),
        opts,
    ));
    let (tx, rx) = mpsc::channel::<Record>(256);
    let progress = progress::progress_bar(units.todo, opts.quiet);
    let writer = progress::spawn_writer(records::Sink::open(&records_path)?, rx, progress.clone());
    let failure = worker::run_workers(shared.clone(), opts.jobs, tx).await;
    // What the run's sessions shared (VS Code, started by the first session if any)
    // ends with the replay.
    let closed = editors.close().await;
    let new_records = writer
        .await
        .map_err(|e| anyhow::anyhow!("record writer panicked: {e}"))??;
    progress.finish_and_clear();
    let total = records::finalize(&records_path)?;

    let status = match (&failure, cancel.load(Ordering::SeqCst)) {
        (Some(_), _) => RunStatus::Failed,
        (None, true) => RunStatus::Interrupted,
        (None, false) => RunStatus::Complete,
    };
    manifest.set_servers(&shared.servers());
    manifest.vault = closed.vault.clone();
    manifest.set_editor(
        &manifest.conditions.app.clone(),
        shared.editor_version(),
        closed,
    );
    manifest.finish(
        status,
        total,
        Some(new_records),
        Some(shared.sessions()),
        failure.clone(),
    );
    manifest.write(&manifest_path)?;
    Ok(RunReport {
        status,
        records: total,
        new_records,
        message: failure,
        server_start_seconds: shared.server_start_seconds(),
    })
}

/// What a run refuses before it starts (nothing is written before these pass).
async fn refuse(
    ds: &Dataset,
    plan: &[Case],
    profiles: &[Profile],
    cond: &RunConditions,
) -> Result<()> {
    let swept = crate::editor::workspace::sweep_stale_workspaces();
    if swept > 0 {
        tracing::info!(
            "removed {swept} temporary workspace(s) left by typist processes that are gone"
        );
    }
    check_assistants(profiles, plan)?;
    check_blocks(plan, cond)?;
    checks::check_golf(plan, cond)?;
    if cond.typing == TypingMode::Type && cond.context == ContextMode::Full {
        bail!(
            "typing = \"type\" feeds the file from the top, so it cannot have context = \"full\""
        );
    }
    check_plan(ds, plan)?;
    let asks = crate::editor::run_asks::RunAsks {
        profiles,
        tokens: plan.iter().any(|c| c.token.is_some()),
        golf: cond.golf.is_some(),
        list_rule: cond.list_rule,
    };
    refusals::refuse(&cond.app, &asks)?;
    refusals::check_capabilities(profiles, &cond.editor).await
}

/// Resume: the manifest in `--out`, read once, when it is of the same plan and
/// conditions (its history goes on in the new manifest), and the cases already recorded
/// ([`recorded_cases`], which refuses a run of another plan or conditions).
fn resumed(
    records_path: &Path,
    manifest_path: &Path,
    plan_hash: &str,
    cond: &RunConditions,
    opts: &RunOptions,
) -> Result<(Option<Manifest>, BTreeSet<records::DoneKey>)> {
    let previous = if opts.resume && manifest_path.exists() {
        Some(Manifest::read(manifest_path)?)
    } else {
        None
    };
    let done = recorded_cases(
        records_path,
        manifest_path,
        previous.as_ref(),
        plan_hash,
        cond,
        opts,
    )?;
    let previous = previous.filter(|m| m.plan.hash == plan_hash && m.conditions == *cond);
    Ok((previous, done))
}

/// A second Ctrl-C: nothing is appended to the records from now on (until the process
/// exits, which the caller does next), and a manifest still `running` says
/// `interrupted`, with the complete records in the file (left unsorted: `--resume`
/// sorts them). Returns how many records there are.
pub fn stop_now(out: &Path) -> Result<usize> {
    records::freeze_appends();
    let kept: BTreeSet<_> = records::read_all(&out.join("records.jsonl"))
        .unwrap_or_default()
        .iter()
        .map(Record::done_key)
        .collect();
    let path = out.join("manifest.json");
    let mut m = Manifest::read(&path)?;
    if m.status == RunStatus::Running {
        m.finish(RunStatus::Interrupted, kept.len(), None, None, None);
        m.write(&path)?;
    }
    Ok(kept.len())
}

/// Resume: the cases (assistant, pass, case) already recorded in `records_path`, after
/// checking that the run there (its `manifest`) is the same (plan and conditions). Empty for a new run;
/// records in `--out` without `--resume` are refused.
fn recorded_cases(
    records_path: &Path,
    manifest_path: &Path,
    manifest: Option<&Manifest>,
    plan_hash: &str,
    cond: &RunConditions,
    opts: &RunOptions,
) -> Result<BTreeSet<records::DoneKey>> {
    if !records_path.exists() || std::fs::metadata(records_path)?.len() == 0 {
        return Ok(BTreeSet::new());
    }
    if !opts.resume {
        bail!(
            "{} already holds records; pass --resume to continue that run, or choose another --out",
            records_path.display()
        );
    }
    if let Some(m) = manifest {
        if m.plan.hash != plan_hash {
            bail!(
                "cannot resume: {} was made from another plan (\"{}\")",
                manifest_path.display(),
                m.plan.hash
            );
        }
        if m.conditions != *cond {
            bail!(
                "cannot resume: {} was run under other editor conditions",
                manifest_path.display()
            );
        }
    }
    let (existing, dropped) = records::read_for_resume(records_path)?;
    if dropped > 0 {
        tracing::warn!(
            "dropped a cut last record ({dropped} bytes) from {}",
            records_path.display()
        );
    }
    // With --retry-errors, failed cases are asked again; the new record replaces the
    // old one when the file is finalized (the latest record of a case wins).
    Ok(existing
        .iter()
        .filter(|r| !(opts.retry_errors && r.outcome.failed()))
        .map(Record::done_key)
        .collect())
}
