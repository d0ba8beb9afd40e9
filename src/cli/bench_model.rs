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

use super::args::{BenchModelFlags, RunArgs};
use super::run::Planned;
use typist::bench::model::{self, Captured, Direct, Relay, Row};
use typist::config::ConfigFile;
use typist::editor::Profile;
use typist::editor::profile::OneOrMany;
use typist::replay::{RunOptions, RunReport, RunStatus};
use typist::score::Outcome;
use typist::service::Services;

pub fn run(flags: BenchModelFlags) -> Result<ExitCode> {
    let a = &flags.run;
    if a.resume || a.shard.is_some() {
        bail!("typist bench model replays the whole plan afresh: no --resume, no --shard");
    }
    let bench = Bench::new(a)?;
    let mut rows = Vec::new();
    for p in &bench.profiles {
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
        rows.push(bench.measure(p, models)?);
    }
    if rows.is_empty() {
        bail!("no assistant with a model service (see `typist profiles`; smollm2 has one)");
    }
    if flags.json {
        out!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        out!(
            "plan: {} ({} cases); load average at the end: {}\n\n{}",
            bench.planned.source,
            bench.planned.cases.len(),
            typist::bench::child::load_average(),
            model::table(&rows)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What every assistant's measure shares: `typist run`'s flags and settings, the plan,
/// the jobs, the threads and the output folder.
struct Bench<'a> {
    a: &'a RunArgs,
    settings: ConfigFile,
    profiles: Vec<Profile>,
    planned: Planned,
    jobs: usize,
    /// The same threads for both passes: what the run through the editor would get.
    threads: usize,
    base: PathBuf,
}

/// The pass through typist: the requests captured, its wall time, and the replay's
/// report.
struct Through {
    captured: Vec<Captured>,
    seconds: f64,
    report: RunReport,
}

impl<'a> Bench<'a> {
    fn new(a: &'a RunArgs) -> Result<Bench<'a>> {
        let (settings, read) = super::run::settings(a)?;
        let s = &settings.run;
        let profiles = super::run::profiles(s, a)?;
        let planned = super::run::plan(s, read)?;
        Ok(Bench {
            a,
            threads: typist::service::threads_for(settings.conditions.app.kind),
            jobs: super::run::jobs(s),
            base: a
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("target/bench/model")),
            profiles,
            planned,
            settings,
        })
    }

    /// Both passes for one assistant (`models`: its model services); its row of the
    /// table. The captured requests and both answers are kept in `OUT/ASSISTANT/`.
    fn measure(&self, p: &Profile, models: Profile) -> Result<Row> {
        let out = self.base.join(&p.name);
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out)?;
        let jobs = self.jobs;
        let cases = self.planned.cases.len();
        self.say(format_args!(
            "{}: {cases} cases, {jobs} job(s), through typist ...",
            p.name
        ));
        let through = self.through_typist(p, &out)?;
        let suggestions = suggestions(&out.join("records.jsonl"))?;
        self.say(format_args!(
            "{}: {} requests captured in {:.1} s; sending them directly ...",
            p.name,
            through.captured.len(),
            through.seconds
        ));
        let direct = self.direct(models, &through.captured)?;
        write_requests(&out.join("requests.jsonl"), &through.captured, &direct)?;
        let row = Row::new(
            &p.name,
            jobs,
            cases,
            suggestions,
            through.seconds,
            &through.captured,
            &direct,
        );
        Ok(row.with_server_starts(through.report.server_start_seconds))
    }

    /// A line on stderr, unless quiet.
    fn say(&self, what: std::fmt::Arguments) {
        if !self.a.quiet {
            eprintln!("typist bench model: {what}");
        }
    }

    /// 1. Through typist, every request to a model service recorded; an error unless
    ///    the run completed.
    fn through_typist(&self, p: &Profile, out: &Path) -> Result<Through> {
        let mut relays = Vec::new();
        let (services, filled) = Services::start_relayed(
            std::slice::from_ref(p),
            self.jobs,
            self.threads,
            &mut |spec, port| {
                if spec.model.is_none() {
                    return Ok(port);
                }
                let relay = Relay::start(&format!("http://127.0.0.1:{port}"))?;
                let relayed = relay.port();
                relays.push(relay);
                Ok(relayed)
            },
        )?;
        let (a, s) = (self.a, &self.settings.run);
        let source = self.planned.source.clone();
        let opts = RunOptions {
            resume: false,
            retry_errors: false,
            panic_at: None,
            ..super::run::run_options(a, s, out, source, services.describe())
        };
        let t0 = Instant::now();
        let report = super::run::replay(
            self.planned.ds.clone(),
            &self.planned.cases,
            filled,
            self.settings.conditions.clone(),
            &opts,
        )?;
        let seconds = t0.elapsed().as_secs_f64();
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
        Ok(Through {
            captured,
            seconds,
            report,
        })
    }

    /// 2. The same requests straight to a fresh start of the same model services.
    fn direct(&self, models: Profile, captured: &[Captured]) -> Result<Direct> {
        let (direct_services, _) = Services::start(&[models], self.jobs, self.threads)?;
        let port = direct_services
            .ports()
            .into_values()
            .next()
            .context("no model service started")?;
        let direct = model::send_direct(&format!("http://127.0.0.1:{port}"), captured, self.jobs);
        drop(direct_services);
        Ok(direct)
    }
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
        n += usize::from(v["outcome"] == Outcome::Suggestion.as_str());
    }
    Ok(n)
}

/// Each captured request with its answer through typist and its direct answer.
fn write_requests(path: &Path, captured: &[Captured], direct: &Direct) -> Result<()> {
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
