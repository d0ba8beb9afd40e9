//! `typist run --plan EDITS_PLAN`: an edits plan (`typist sample --cases edits`)
//! replayed against every assistant (`replay::edits`), then its next-edit figures
//! scored beside the records (`score.json`, the table on standard output).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};

use super::args::RunArgs;
use super::{EXIT_NO_ANSWERS, replay_runtime};
use typist::config::ConfigFile;
use typist::replay::edits::{EditsOptions, run_edits};
use typist::replay::{RunReport, RunStatus};

/// The reversal's reference: the buffer this many events before a moment.
pub const REVERSAL_EVENTS: usize = 10;

/// The edits plan a run is given: `--plan` when it is one, else the plan a resumed
/// edits run's manifest names.
pub fn edits_plan(a: &RunArgs) -> Result<Option<PathBuf>> {
    if let Some(p) = &a.plan {
        return Ok(typist::dataset::edits::is_edits_plan(p).then(|| p.clone()));
    }
    if a.resume {
        let out = a.out.clone().unwrap_or_else(|| PathBuf::from("out"));
        let m = out.join("manifest.json");
        if let Ok(text) = std::fs::read_to_string(&m) {
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: malformed manifest", m.display()))?;
            if v.get("kind").and_then(|k| k.as_str()) == Some("edits") {
                let plan = v.get("plan").and_then(|p| p.as_str()).with_context(|| {
                    format!("{}: an edits run's manifest names no plan", m.display())
                })?;
                return Ok(Some(PathBuf::from(plan)));
            }
        }
    }
    Ok(None)
}

pub fn run(a: RunArgs, plan: &Path) -> Result<ExitCode> {
    if a.retry_errors && !a.resume {
        bail!("--retry-errors goes with --resume");
    }
    let shard = a
        .shard
        .as_deref()
        .map(typist::replay::Shard::parse)
        .transpose()?;
    let file = ConfigFile::load_or_default(a.config.as_deref())?;
    let mut settings = file.apply(a.layer());
    let (_, mut sessions) = typist::dataset::edits::read_edits_plan(plan)?;
    if sessions.is_empty() {
        bail!("{}: the plan has no session", plan.display());
    }
    // A shard runs the sessions whose (repository, session) hash falls in it.
    if let Some(sh) = shard {
        sessions.retain(|s| sh.contains(&s.repo, &s.session));
    }
    let bytes = std::fs::read(plan).with_context(|| format!("cannot read {}", plan.display()))?;
    let plan_hash = format!("sha256:{}", typist::digest::sha256_hex(&bytes));
    let out = settings
        .run
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out"));
    if let Some(pace) = a.pace {
        settings.conditions.pace = pace;
    }
    if a.resume
        && let Some(conditions) = resumed(&out, &plan_hash, shard, &a, &mut settings.run)?
    {
        // The run goes on at its own pace: another given is refused.
        if a.pace.is_some_and(|p| p != conditions.pace) {
            bail!(
                "{}: --pace differs from the run's ({}); resume without it, or use another --out",
                out.join("manifest.json").display(),
                serde_json::to_string(&conditions.pace).unwrap_or_default()
            );
        }
        settings.conditions = conditions;
    }
    let s = &settings.run;
    let profiles = super::run::profiles(s, &a)?;
    let jobs = super::run::jobs(s);
    let (services, profiles) = typist::service::Services::start(
        &profiles,
        jobs,
        typist::service::threads_for(settings.conditions.app.kind),
    )?;
    let opts = EditsOptions {
        out: out.clone(),
        jobs,
        passes: s.passes.unwrap_or(1).max(1),
        resume: a.resume,
        retry_errors: a.retry_errors,
        shard,
        quiet: a.quiet,
        reversal_events: REVERSAL_EVENTS,
        plan: std::path::absolute(plan).unwrap_or_else(|_| plan.to_path_buf()),
        plan_hash,
    };
    let moments: usize = sessions.iter().map(|s| s.moments.len()).sum();
    if !a.quiet {
        eprintln!(
            "typist run: {}, {}, {}, {}, {} -> {}",
            typist::score::count(sessions.len() as u64, "edit session"),
            typist::score::count(moments as u64, "moment"),
            typist::score::count(profiles.len() as u64, "assistant"),
            typist::score::count(opts.jobs as u64, "job"),
            typist::score::count(opts.passes.into(), "pass"),
            out.display()
        );
    }
    let rt = replay_runtime(opts.jobs)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let report = rt.block_on(async {
        let flag = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "\ntypist: stopping after the moments in flight (finished records are kept; --resume continues)"
                );
                flag.store(true, Ordering::SeqCst);
            }
        });
        run_edits(sessions, profiles, settings.conditions.clone(), &opts, cancel.clone()).await
    });
    drop(services);
    ended(&out, report?, a.quiet)
}

/// A resumed edits run is the run its manifest describes: the same plan (its sha256),
/// its assistants and passes unless the flags name them (then they must be the same),
/// and its conditions (returned).
fn resumed(
    out: &Path,
    plan_hash: &str,
    shard: Option<typist::replay::Shard>,
    a: &RunArgs,
    s: &mut typist::config::RunSection,
) -> Result<Option<typist::replay::RunConditions>> {
    let path = out.join("manifest.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let m: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: malformed manifest", path.display()))?;
    if m.get("kind").and_then(|k| k.as_str()) != Some("edits") {
        bail!(
            "{} holds a run of a line plan, not of this edits plan: choose another --out",
            out.display()
        );
    }
    if m.get("plan_hash").and_then(|h| h.as_str()) != Some(plan_hash) {
        bail!(
            "the plan differs from the one {} was run on (its sha256 changed): resume with that plan, or choose another --out",
            out.display()
        );
    }
    let was: Option<typist::replay::Shard> = m
        .get("shard")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .with_context(|| format!("{}: malformed shard", path.display()))?;
    if was != shard {
        let name = |s: Option<typist::replay::Shard>| {
            s.map_or("the whole plan".to_string(), |s| {
                format!("--shard {}/{}", s.index, s.count)
            })
        };
        bail!(
            "{} was run on {}: resume with the same",
            out.display(),
            name(was)
        );
    }
    let names: Vec<String> = m
        .get("assistants")
        .and_then(|v| v.as_array())
        .map(|v| {
            v.iter()
                .filter_map(|x| x.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if a.assistants.is_empty() && !a.server.builds() && a.server.connect.is_none() {
        s.assistants = names;
    } else if a.assistants != names && !a.assistants.is_empty() {
        bail!(
            "{} was run with --assistant {}: resume with the same assistants",
            out.display(),
            names.join(" --assistant ")
        );
    }
    let passes = m.get("passes").and_then(|p| p.as_u64()).map(|p| p as u32);
    match (s.passes, passes) {
        (None, p) => s.passes = p,
        (Some(a), Some(b)) if a != b => {
            bail!(
                "{} was run with --passes {b}: resume with the same",
                out.display()
            )
        }
        _ => {}
    }
    let conditions = m
        .get("conditions")
        .map(|c| serde_json::from_value(c.clone()))
        .transpose()
        .with_context(|| format!("{}: malformed conditions", path.display()))?;
    Ok(conditions)
}

/// The next-edit score (`score.json`) of the records in `out`, written beside them (by
/// a run, and by `typist merge`); the records and their summary.
pub(super) fn write_score(
    out: &Path,
) -> Result<(
    Vec<typist::score::edit_records::EditRecord>,
    typist::score::next_edit::NextEditSummary,
)> {
    let records = typist::score::edit_records::read_edit_records(&out.join("records.jsonl"))?;
    let summary = typist::score::edit_records::summarize_records(&records, 1000, 0);
    std::fs::write(
        out.join("score.json"),
        serde_json::to_string(&summary)? + "\n",
    )?;
    Ok((records, summary))
}

/// The score beside the records, and how the run ended.
fn ended(out: &Path, report: RunReport, quiet: bool) -> Result<ExitCode> {
    let (records, summary) = write_score(out)?;
    if !quiet && !records.is_empty() {
        out!("{}", typist::score::next_edit::table(&summary));
    }
    match report.status {
        RunStatus::Complete => {
            if !quiet {
                eprintln!(
                    "typist run: complete, {} records ({} new) in {} (score: {})",
                    report.records,
                    report.new_records,
                    out.display(),
                    out.join("score.json").display()
                );
            }
            // An inline suggestion shown is an answer too (extensions measured alone in VS Code are asked no next edit).
            let answered = |r: &typist::score::edit_records::EditRecord| {
                r.outcome == typist::score::Outcome::Suggestion
                    || r.inline
                        .as_ref()
                        .is_some_and(|i| i.outcome == typist::score::Outcome::Suggestion)
            };
            if report.records > 0 && !records.iter().any(answered) {
                let failed = records.iter().all(|r| {
                    matches!(
                        r.outcome,
                        typist::score::Outcome::Error | typist::score::Outcome::Timeout
                    )
                });
                eprintln!(
                    "typist run: {} (see records.jsonl)",
                    if failed {
                        "every moment failed"
                    } else {
                        "no assistant proposed a next edit or showed an inline suggestion"
                    }
                );
                return Ok(ExitCode::from(EXIT_NO_ANSWERS));
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(super::run::stopped(out, &report)),
    }
}
