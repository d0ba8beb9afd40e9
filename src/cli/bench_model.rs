//! `typist bench model`: for each assistant with a model service, the plan is replayed
//! as `typist run` replays it, with a recording relay (`bench::model::Relay`) in front
//! of every service that loads a model (the profile, and any front service such as
//! `serve-model --upstream`, are given the relay's port); then the captured requests go
//! straight to a fresh start of the same model services, with the run's jobs in flight.
//! Prints the table (or JSON); the captured requests and both answers are kept in
//! `OUT/ASSISTANT/requests.jsonl`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::args::BenchModelFlags;
use typist::bench::model::{self, Captured, Relay, Row};
use typist::editor::Profile;
use typist::editor::profile::OneOrMany;
use typist::replay::{RunOptions, RunStatus};
use typist::service::Services;

pub fn run(flags: BenchModelFlags) -> Result<ExitCode> {
    let a = &flags.run;
    if a.resume || a.shard.is_some() {
        bail!("typist bench model replays the whole plan afresh: no --resume, no --shard");
    }
    let (settings, read) = super::run::settings(a)?;
    let s = &settings.run;
    // The same threads for both passes: what the run through the editor would get.
    let threads = typist::service::threads_for(settings.conditions.app.kind);
    let profiles = super::run::profiles(s, a)?;
    let planned = super::run::plan(s, read)?;
    let jobs = s.jobs.unwrap_or(1).max(1);
    let base = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/bench/model"));
    let mut rows = Vec::new();
    for p in &profiles {
        let Some(models) = model_services(p) else {
            eprintln!(
                "typist bench model: {} has no model service (a [service] with a model): skipped",
                p.name
            );
            continue;
        };
        if models.service.as_ref().is_some_and(|s| s.list().len() > 1) {
            bail!(
                "{}: more than one model service; typist bench model relays one",
                p.name
            );
        }
        let out = base.join(&p.name);
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out)?;
        if !a.quiet {
            eprintln!(
                "typist bench model: {}: {} cases, {jobs} job(s), through typist ...",
                p.name,
                planned.cases.len()
            );
        }
        // 1. Through typist, every request to a model service recorded.
        let mut relays = Vec::new();
        let (services, filled) =
            Services::start_relayed(std::slice::from_ref(p), jobs, threads, &mut |spec, port| {
                if spec.model.is_none() {
                    return Ok(port);
                }
                let relay = Relay::start(&format!("http://127.0.0.1:{port}"))?;
                let relayed = relay.port();
                relays.push(relay);
                Ok(relayed)
            })?;
        let opts = RunOptions {
            out: out.clone(),
            jobs,
            passes: s.passes.unwrap_or(1).max(1),
            resume: false,
            shard: None,
            quiet: a.quiet,
            max_restarts: a.max_restarts,
            plan_source: planned.source.clone(),
            transcripts: a.transcripts.clone(),
            retry_errors: false,
            services: services.describe(),
            panic_at: None,
        };
        let t0 = Instant::now();
        let report = super::run::replay(
            planned.ds.clone(),
            &planned.cases,
            filled,
            settings.conditions.clone(),
            &opts,
        )?;
        let typist_seconds = t0.elapsed().as_secs_f64();
        drop(services);
        let captured: Vec<Captured> = relays.into_iter().flat_map(Relay::finish).collect();
        if report.status != RunStatus::Complete {
            bail!(
                "{}: the run did not complete ({:?}: {})",
                p.name,
                report.status,
                report.message.unwrap_or_default()
            );
        }
        let suggestions = suggestions(&out.join("records.jsonl"))?;
        // 2. The same requests straight to a fresh start of the same model services.
        if !a.quiet {
            eprintln!(
                "typist bench model: {}: {} requests captured in {typist_seconds:.1} s; sending them directly ...",
                p.name,
                captured.len()
            );
        }
        let (direct_services, _) = Services::start(&[models], jobs, threads)?;
        let port = direct_services
            .ports()
            .into_values()
            .next()
            .context("no model service started")?;
        let direct = model::send_direct(&format!("http://127.0.0.1:{port}"), &captured, jobs);
        drop(direct_services);
        write_requests(&out.join("requests.jsonl"), &captured, &direct)?;
        rows.push(
            Row::new(
                &p.name,
                jobs,
                planned.cases.len(),
                suggestions,
                typist_seconds,
                &captured,
                &direct,
            )
            .with_server_starts(report.server_start_seconds),
        );
    }
    if rows.is_empty() {
        bail!("no assistant with a model service (see `typist profiles`; smollm2 has one)");
    }
    if flags.json {
        out!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        out!(
            "plan: {} ({} cases); load average at the end: {}\n\n{}",
            planned.source,
            planned.cases.len(),
            typist::bench::child::load_average(),
            model::table(&rows)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The profile with only its model services (those that load a model), or `None`
/// when it has none.
fn model_services(p: &Profile) -> Option<Profile> {
    let list: Vec<_> = p
        .service
        .as_ref()?
        .list()
        .into_iter()
        .filter(|s| s.model.is_some())
        .cloned()
        .collect();
    if list.is_empty() {
        return None;
    }
    let mut m = p.clone();
    m.service = Some(OneOrMany::Many(list));
    Some(m)
}

/// Records with outcome `suggestion`.
fn suggestions(records: &Path) -> Result<usize> {
    let f = std::fs::File::open(records)
        .with_context(|| format!("cannot open {}", records.display()))?;
    let mut n = 0;
    for line in std::io::BufReader::new(f).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?).unwrap_or_default();
        n += usize::from(v["outcome"] == "suggestion");
    }
    Ok(n)
}

/// Each captured request with its answer through typist and its direct answer.
fn write_requests(path: &Path, captured: &[Captured], direct: &model::Direct) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (c, (status, answer)) in captured.iter().zip(&direct.answers) {
        let mut v = serde_json::to_value(c)?;
        v["direct_status"] = (*status).into();
        v["direct_answer"] = answer.clone().into();
        writeln!(f, "{v}")?;
    }
    f.flush()?;
    Ok(())
}
