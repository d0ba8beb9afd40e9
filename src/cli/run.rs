//! `typist run`: settings from `config.toml` under the flags, the plan (read or
//! sampled), the replay with Ctrl-C handling, then the score and the report beside the
//! records.
//!
//! Managed services are started before the replay and dropped right after it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};

use super::args::RunArgs;
use super::{EXIT_INTERRUPTED, EXIT_NO_ANSWERS, replay_runtime, silent_assistants};
use typist::config::{ConfigFile, Layer, RunSection};
use typist::dataset::{Case, Dataset};
use typist::editor::{Profile, profile};
use typist::replay::{RunConditions, RunOptions, RunReport, RunStatus};

pub fn run(mut a: RunArgs) -> Result<ExitCode> {
    // A resume is the run its manifest describes; else the flags over config.toml.
    let (mut settings, read) = match super::resume::from_manifest(&mut a)? {
        Some(resumed) => resumed,
        None => settings(&a)?,
    };
    pin_editor_config(&mut settings.conditions.app)?;
    let s = &settings.run;
    let profiles = profiles(s, &a)?;
    let planned = plan(s, read)?;
    let shard = a
        .shard
        .as_deref()
        .map(typist::replay::Shard::parse)
        .transpose()?;
    let out = s.out.clone().unwrap_or_else(|| PathBuf::from("out"));
    if a.retry_errors && !a.resume {
        bail!(
            "--retry-errors goes with --resume (it asks again the failed cases of a run in --out)"
        );
    }
    s.check_counts()?;
    if a.check_tests {
        // Before the replay, not after it: the sandbox, and the tests dataset.toml gives.
        typist::sandbox::bwrap()?;
        let dataset = s
            .dataset
            .as_deref()
            .context("--check-tests needs the run's dataset")?;
        if typist::dataset::fetch::packages(dataset)?.is_empty() {
            bail!(
                "--check-tests runs the tests `typist dataset add` recorded, and {} has no dataset.toml (typist dataset add {} pypi:NAME==VERSION)",
                dataset.display(),
                dataset.display()
            );
        }
    }
    let jobs = jobs(s);
    check_attached(&profiles, jobs)?;
    // Model services the profiles declare: started once, shared by every worker, stopped
    // when `services` is dropped (at the end, after Ctrl-C, on an error or a panic).
    let (services, profiles) = typist::service::Services::start(
        &profiles,
        jobs,
        typist::service::threads_for(settings.conditions.app.kind),
    )?;
    let opts = RunOptions {
        shard,
        ..run_options(&a, s, &out, planned.source, services.describe())
    };
    if !a.quiet {
        eprintln!(
            "typist run: {}, {}, {}, {} -> {}",
            typist::score::count(planned.cases.len() as u64, "case"),
            typist::score::count(profiles.len() as u64, "assistant"),
            typist::score::count(opts.jobs as u64, "job"),
            typist::score::count(opts.passes.into(), "pass"),
            out.display()
        );
    }
    if a.assistant_sandbox {
        assistant_sandbox(&a, s, &planned.ds.root, &out)?;
    }
    let conditions = a.with_golf(settings.conditions);
    let report = replay(planned.ds, &planned.cases, profiles, conditions, &opts);
    typist::jail::leave();
    // The replay is over: the model services stop now, not after the scoring.
    drop(services);
    let report = report?;
    if a.check && report.status == RunStatus::Complete {
        check_records(&a, s, &out)?;
    }
    if a.check_tests && report.status == RunStatus::Complete {
        test_records(&a, s, &out)?;
    }
    finish(&out, report, a.quiet)
}

/// `--assistant-sandbox`: the assistants' programs start where the plan, the dataset,
/// the output folder (made now, so it is there to hide) and every
/// `--assistant-sandbox-hide` path are not; the profiles' folder is shown again when it
/// lies in one of them.
fn assistant_sandbox(a: &RunArgs, s: &RunSection, dataset: &Path, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot make {}", out.display()))?;
    let mut hide = vec![out.to_path_buf(), dataset.to_path_buf()];
    hide.extend(s.plan.iter().cloned());
    hide.extend(a.assistant_sandbox_hide.iter().cloned());
    let show: Vec<PathBuf> = s.editors.iter().cloned().collect();
    typist::jail::enter(&hide, &show)
}

/// The run's parallel workers: `--jobs`, at least one.
pub(super) fn jobs(s: &RunSection) -> usize {
    s.jobs.unwrap_or(1).max(1)
}

/// The replay's options from the flags and settings, over the whole plan (no shard).
pub(super) fn run_options(
    a: &RunArgs,
    s: &RunSection,
    out: &Path,
    plan_source: String,
    services: Vec<serde_json::Value>,
) -> RunOptions {
    RunOptions {
        out: out.to_path_buf(),
        jobs: jobs(s),
        passes: s.passes.unwrap_or(1).max(1),
        resume: a.resume,
        shard: None,
        quiet: a.quiet,
        max_restarts: a.max_restarts,
        plan_source,
        transcripts: a.transcripts.clone(),
        retry_errors: a.retry_errors,
        services,
        panic_at: a.drill_panic_at,
        settings: Some(super::resume::settings_of(a, s)),
    }
}

/// `--check`: `typist check` on the run's records, the results beside them.
fn check_records(a: &RunArgs, s: &RunSection, out: &Path) -> Result<()> {
    let dataset = s
        .dataset
        .clone()
        .context("--check needs the run's dataset")?;
    let opts = typist::check::CheckOptions {
        records: vec![out.join("records.jsonl")],
        dataset,
        single_repo: s.single_repo.unwrap_or(false),
        checker: a
            .check_with
            .as_deref()
            .map(|n| profile::find_profile(n, s.editors.as_deref()))
            .transpose()?,
    };
    for r in super::runtime()?.block_on(typist::check::check(&opts))? {
        if !a.quiet {
            eprintln!(
                "typist run: {} suggestions checked, {} keep the syntax valid -> {}",
                r.checked,
                r.valid,
                r.sidecar.display()
            );
        }
    }
    Ok(())
}

/// `--check-tests`: `typist check --tests` on the run's records, the results beside them.
fn test_records(a: &RunArgs, s: &RunSection, out: &Path) -> Result<()> {
    let dataset = s
        .dataset
        .clone()
        .context("--check-tests needs the run's dataset")?;
    let opts = typist::check::tests_run::TestsOptions::new(
        vec![out.join("records.jsonl")],
        dataset,
        a.test_timeout,
        jobs(s),
    );
    typist::sandbox::bwrap()?;
    for r in typist::check::tests_run::check_tests(&opts)? {
        if !a.quiet {
            eprintln!("typist run: {}", r.line());
        }
    }
    Ok(())
}

/// The editor's Lua configuration as an absolute path with the sha256 of its bytes
/// (both recorded in the manifest's conditions, so `--resume` refuses another file).
pub(super) fn pin_editor_config(app: &mut typist::editor::EditorApp) -> Result<()> {
    let Some(path) = app.config.clone() else {
        return Ok(());
    };
    if app.kind == typist::editor::EditorKind::Typist {
        bail!(
            "--editor-config {path}: typist's own client loads no configuration; add --editor neovim"
        );
    }
    let p = std::path::Path::new(&path);
    let bytes = std::fs::read(p).with_context(|| format!("cannot read --editor-config {path}"))?;
    let abs = p
        .canonicalize()
        .with_context(|| format!("cannot resolve {path}"))?;
    app.config = Some(abs.display().to_string());
    app.config_sha256 = Some(typist::digest::sha256_hex(&bytes));
    Ok(())
}

/// The assistants' profiles: those named (on the command line, else in config.toml),
/// and the one `--server` flags build; `--connect` attaches one of them.
pub(super) fn profiles(s: &RunSection, a: &RunArgs) -> Result<Vec<Profile>> {
    let flags = &a.server;
    if flags.builds() || flags.connect.is_some() {
        // Named on the command line only: config.toml's assistants are its default run.
        let list = flags.profiles(&a.assistants, s.editors.as_deref())?;
        for p in &list {
            super::server_args::require_program(p)?;
        }
        return Ok(list);
    }
    if s.assistants.is_empty() {
        bail!(
            "no assistant: pass --assistant NAME (see `typist profiles`), --server COMMAND, or list them in config.toml"
        );
    }
    s.assistants
        .iter()
        .map(|n| profile::find_profile(n, s.editors.as_deref()))
        .collect()
}

/// Attached servers and parallel workers: each session opens its own connection, so
/// `--jobs N` needs a server that accepts several connections at once. A listener does
/// (TCP or Unix socket, as `typist host --listen`); say so, and go on.
fn check_attached(profiles: &[Profile], jobs: usize) -> Result<()> {
    for p in profiles.iter().filter(|p| p.connect.is_some()) {
        let address = p.connect.as_deref().unwrap_or_default();
        typist::lsp::Address::parse(address).map_err(|e| anyhow::anyhow!("--connect: {e}"))?;
        if jobs > 1 {
            tracing::info!(
                "{}: {jobs} workers each open their own connections to {address}",
                p.name
            );
        }
    }
    Ok(())
}

pub(super) use super::resume::ReadPlan;

/// The run's settings in one step, in layers: `config.toml`, under the dataset a plan
/// says it was sampled from, under the flags. Also the plan, when there is one.
pub(super) fn settings(a: &RunArgs) -> Result<(ConfigFile, Option<ReadPlan>)> {
    let file = ConfigFile::load_or_default(a.config.as_deref())?;
    let flags = a.layer();
    let Some(path) = flags.run.plan.clone().or(file.run.plan.clone()) else {
        return Ok((file.apply(flags), None));
    };
    let (cases, source) = typist::dataset::read_plan(&path)?;
    let from_plan = Layer {
        run: RunSection {
            dataset: source.as_ref().map(|src| src.resolve(&path)),
            single_repo: source
                .as_ref()
                .is_some_and(|src| src.single_repo)
                .then_some(true),
            ..Default::default()
        },
        ..Default::default()
    };
    Ok((file.apply(from_plan).apply(flags), Some((cases, source))))
}

/// The run's cases, their dataset, and where the plan came from (for the manifest).
pub(super) struct Planned {
    pub ds: Dataset,
    pub cases: Vec<Case>,
    pub source: String,
}

/// The plan (checked against its dataset) or a sample of the dataset.
pub(super) fn plan(s: &RunSection, read: Option<ReadPlan>) -> Result<Planned> {
    let dataset = s.dataset.clone().context("no dataset: pass --dataset DIR or set run.dataset in config.toml (a plan made by `typist sample` remembers its own)")?;
    let single_repo = s.single_repo.unwrap_or(false);
    let ds = typist::dataset::walk(
        &dataset,
        &typist::dataset::WalkOptions {
            single_repo,
            ..Default::default()
        },
    )?;
    let Some(((cases, source), path)) = read.zip(s.plan.as_deref()) else {
        let o = s.sample_options()?;
        let how = if o.all_lines {
            "all lines".to_string()
        } else {
            format!("rate {} seed {}", o.rate, o.seed)
        };
        let cases = typist::dataset::sample(&ds, &o);
        if cases.is_empty() {
            bail!("{}", super::no_cases(&ds));
        }
        return Ok(Planned {
            cases,
            source: format!("sampled from {} ({how})", dataset.display()),
            ds,
        });
    };
    let changed = typist::dataset::changed_files(&ds, &cases);
    if !changed.is_empty() {
        let made_from = source
            .as_ref()
            .map(|s| format!("it was sampled from {}", s.dataset.display()))
            .unwrap_or_else(|| "it does not say which dataset it was sampled from".into());
        bail!(
            "the plan {} does not match the dataset {} ({made_from}): {} file(s) changed or missing:\n  {}",
            path.display(),
            dataset.display(),
            changed.len(),
            changed.join("\n  ")
        );
    }
    Ok(Planned {
        ds,
        cases,
        source: path.display().to_string(),
    })
}

/// Replays `cases` on a runtime of its own; the first Ctrl-C stops after the cases in
/// flight, a second one at once.
pub(super) fn replay(
    ds: Dataset,
    cases: &[Case],
    profiles: Vec<Profile>,
    cond: RunConditions,
    opts: &RunOptions,
) -> Result<RunReport> {
    let rt = replay_runtime(opts.jobs)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let out = opts.out.clone();
    rt.block_on(async {
        let flag = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ntypist: stopping after the cases in flight (finished records are kept; --resume continues; Ctrl-C again stops at once)");
                flag.store(true, Ordering::SeqCst);
            }
            // A second Ctrl-C does not wait for slow servers: every finished record is
            // already on disk (each is written and flushed whole), no other is appended,
            // the manifest says `interrupted`, and the servers die with typist
            // (PR_SET_PDEATHSIG).
            if tokio::signal::ctrl_c().await.is_ok() {
                match typist::replay::stop_now(&out) {
                    Ok(n) => eprintln!(
                        "typist: stopped at once; {n} finished records kept in {} (--resume continues)",
                        out.display()
                    ),
                    Err(e) => eprintln!(
                        "typist: stopped at once; finished records are kept (--resume continues), but the manifest was not updated: {e:#}"
                    ),
                }
                typist::service::stop_all_now();
                std::process::exit(EXIT_INTERRUPTED.into());
            }
        });
        typist::replay::run(Arc::new(ds), cases, profiles, cond, opts, cancel.clone()).await
    })
}

/// How the run ended (see `ended`), then where its report is.
fn finish(out: &Path, report: RunReport, quiet: bool) -> Result<ExitCode> {
    let code = ended(out, &report, quiet)?;
    if !quiet {
        eprintln!(
            "typist run: report: {} (score: {})",
            out.join("report.html").display(),
            out.join("score.json").display()
        );
    }
    Ok(code)
}

/// The score (`score.json`) and the report (`report.html`) of the records in `out`,
/// written beside them (by a run, and by `typist merge`); the summary.
pub(super) fn write_score(out: &Path) -> Result<typist::score::Summary> {
    let records = out.join("records.jsonl");
    let built = typist::report::build(
        std::slice::from_ref(&records),
        &typist::report::ReportOptions::default(),
    )?;
    std::fs::write(
        out.join("score.json"),
        serde_json::to_string(&built.summary)? + "\n",
    )?;
    super::write_scrubbed(&out.join("report.html"), &built.html)?;
    Ok(built.summary)
}

/// The score and the report of what is recorded, kept beside the records; the score
/// table unless quiet; how the run ended, said, and its exit code.
fn ended(out: &Path, report: &RunReport, quiet: bool) -> Result<ExitCode> {
    let summary = write_score(out)?;
    if !quiet {
        out!("{}", typist::score::score_table(&summary));
    }
    match report.status {
        RunStatus::Complete => {
            if !quiet {
                eprintln!(
                    "typist run: complete, {} records ({} new) in {}",
                    report.records,
                    report.new_records,
                    out.display()
                );
            }
            let silent = silent_assistants(&summary);
            if !silent.is_empty() {
                eprintln!(
                    "typist run: no answered case from {} (see the errors above and in records.jsonl)",
                    silent.join(", ")
                );
                return Ok(ExitCode::from(EXIT_NO_ANSWERS));
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(stopped(out, report)),
    }
}

/// What a run that did not complete says, and its exit code.
pub(super) fn stopped(out: &Path, report: &RunReport) -> ExitCode {
    if report.status == RunStatus::Interrupted {
        eprintln!(
            "typist run: interrupted; {} records kept in {} (continue with: typist run --resume --out {})",
            report.records,
            out.display(),
            out.display()
        );
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    eprintln!(
        "typist run: failed: {}; {} records kept in {}",
        report.message.clone().unwrap_or_default(),
        report.records,
        out.display()
    );
    ExitCode::from(1)
}
