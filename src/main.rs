//! The `typist` command line: a thin layer over the library. Parses flags, calls the
//! library, prints tables or JSON, and maps failures to exit codes.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use typist::doctor::{self, Status};
use typist::editor::profile;

#[derive(Parser)]
#[command(
    name = "typist",
    version,
    about = "Replay typing into language servers and AI coding assistants, capture their suggestions, and score them"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a dataset or a plan against assistants and write records, a manifest and
    /// the score (the main job; with no flags, the default run of config.toml).
    Run(Box<RunArgs>),
    /// Write a self-contained HTML report (and optionally a markdown summary and the
    /// pairs as CSV) from records files.
    Report {
        #[arg(required = true, value_name = "RECORDS")]
        records: Vec<PathBuf>,
        /// The HTML report.
        #[arg(long, default_value = "report.html", value_name = "FILE")]
        out: PathBuf,
        /// A compact markdown summary (for a pull-request comment).
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
        /// The pairs with c_help as CSV (for pandas or polars).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        #[arg(long, default_value_t = 1000, value_name = "B")]
        bootstrap: usize,
        #[arg(long, default_value_t = 0, value_name = "S")]
        seed: u64,
        #[arg(long, default_value_t = 1, value_name = "N")]
        pass: u32,
    },
    /// Sample a dataset into a plan of cases (one JSON line each).
    Sample {
        #[arg(long, value_name = "DIR")]
        dataset: PathBuf,
        #[command(flatten)]
        sampling: SamplingArgs,
        /// Where to write the plan.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Join the output folders of shards into the records one run would have written.
    Merge {
        /// Output folders of the shards.
        #[arg(required = true, value_name = "DIR")]
        shards: Vec<PathBuf>,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// The assistant plugin host: an LSP server on stdio answering inline completion
    /// from a built-in model (used by the typist-* profiles).
    Host(typist::host::HostArgs),
    /// Serve a model over HTTP on 127.0.0.1 (OpenAI-compatible and Tabby
    /// /v1/completions, /v1/health, Ollama /api/generate, llama.cpp /infill, TGI
    /// /generate), so that real agents can run offline against a local model: the n-gram
    /// baseline, or with --upstream a llama.cpp server fronted with Tabby's and Ollama's
    /// APIs.
    ServeModel {
        /// Port on 127.0.0.1 (0: any free one; the address is printed first).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Write every request (path and body) as a JSON line here.
        #[arg(long, value_name = "FILE")]
        log_requests: Option<PathBuf>,
        #[command(flatten)]
        upstream: typist::host::serve_model::UpstreamArgs,
    },
    /// Sign in to an assistant that needs an account, through its own server's flow,
    /// and keep the credentials in typist's config folder (sessions get a copy).
    Login {
        #[arg(value_enum)]
        assistant: LoginTarget,
        /// The profile whose server runs the flow.
        #[arg(long, default_value = "copilot", value_name = "NAME")]
        profile: String,
        #[arg(long, value_name = "DIR")]
        editors: Option<PathBuf>,
        /// How long the sign-in request may take before the network is taken as
        /// unreachable.
        #[arg(long, default_value_t = 30, value_name = "SECS")]
        timeout: u64,
    },
    /// Check each server profile: installed? starts? answers a probe suggestion?
    Doctor {
        /// Only these profiles (repeatable); all in editors/ by default.
        #[arg(long = "profile", value_name = "NAME")]
        profiles: Vec<String>,
        /// Folder of profiles (default: ./editors, then the source tree's).
        #[arg(long, value_name = "DIR")]
        editors: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Write each server's JSONL transcript (secrets redacted) into DIR.
        #[arg(long, value_name = "DIR")]
        transcripts: Option<PathBuf>,
    },
    /// Score records files: help metrics, bootstrap intervals, paired p-values.
    Score {
        /// Records files (JSON Lines); several are read as one.
        #[arg(required = true, value_name = "RECORDS")]
        records: Vec<PathBuf>,
        /// Print the full summary as JSON.
        #[arg(long)]
        json: bool,
        /// Bootstrap resamples (repository level).
        #[arg(long, default_value_t = 1000, value_name = "B")]
        bootstrap: usize,
        /// Seed of the bootstrap's RNG (same seed, same figures on every machine).
        #[arg(long, default_value_t = 0, value_name = "S")]
        seed: u64,
        /// Which pass to score.
        #[arg(long, default_value_t = 1, value_name = "N")]
        pass: u32,
        /// A malformed or truncated line is fatal instead of skipped.
        #[arg(long)]
        strict: bool,
        /// Parsing threads (0: every core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Also bootstrap 95% bands of the H(S|t) curves.
        #[arg(long)]
        bands: bool,
    },
    /// Benchmarks (print a table; never run as tests).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Reliability drills: a plan against typist's host with every kind of fault
    /// injected, then SIGKILLs and resumes; prints a table ending `lost: N` and exits 1
    /// unless every promise of docs/reliability.md held.
    Drill(DrillArgs),
    /// List the server profiles.
    Profiles {
        #[arg(long, value_name = "DIR")]
        editors: Option<PathBuf>,
    },
}

#[derive(clap::Args, Debug, Clone)]
struct DrillArgs {
    /// About a minute: over 1,000 faults and 3 kills (what CI runs). Without it: every
    /// code line, a heavier fault mix and 20 kills.
    #[arg(long)]
    quick: bool,
    #[arg(long, value_name = "DIR", default_value = "fixtures/dataset")]
    dataset: PathBuf,
    /// SIGKILLs of the kill drill (default 3 with --quick, 20 without).
    #[arg(long, value_name = "N")]
    kills: Option<u32>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the drill's plan, records and fault log in this folder.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// The figures as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum LoginTarget {
    /// GitHub Copilot (`@github/copilot-language-server`'s device flow).
    Copilot,
}

#[derive(clap::Args, Debug, Clone, Default)]
struct SamplingArgs {
    /// Probability that a code line is a case (the study used 0.01).
    #[arg(long, value_name = "P")]
    rate: Option<f64>,
    /// Seed of the sampling draw.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// `all` replays every code line.
    #[arg(long, value_name = "all")]
    lines: Option<String>,
    #[arg(long, value_name = "N")]
    max_per_file: Option<usize>,
    #[arg(long, value_name = "N")]
    max_per_repo: Option<usize>,
    /// The dataset folder is one repository.
    #[arg(long)]
    single_repo: bool,
}

#[derive(clap::Args, Debug, Clone, Default)]
struct RunArgs {
    /// The run's defaults (default: ./config.toml when present).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Dataset folder: each top-level folder is a repository.
    #[arg(long, value_name = "DIR")]
    dataset: Option<PathBuf>,
    /// A recorded plan (needs the dataset it was made from).
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Assistant profiles (repeatable).
    #[arg(long = "assistant", value_name = "NAME")]
    assistants: Vec<String>,
    #[arg(long, value_name = "DIR")]
    editors: Option<PathBuf>,
    /// Parallel workers, each with its own server process.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Replay the plan this many times (2 for repeat-skip analysis).
    #[arg(long, value_name = "K")]
    passes: Option<u32>,
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Continue the run in --out, skipping recorded cases.
    #[arg(long)]
    resume: bool,
    /// With --resume: ask again the cases recorded as error or timeout (the new record
    /// replaces the old one).
    #[arg(long)]
    retry_errors: bool,
    /// Run part of the plan: i/n (0-based); auto (a Slurm array says both); auto/n (the
    /// index from JOB_COMPLETION_INDEX of a Kubernetes Indexed Job or from Slurm, n given).
    #[arg(long, value_name = "i/n|auto|auto/n")]
    shard: Option<String>,
    #[command(flatten)]
    sampling: SamplingArgs,
    #[arg(long, value_enum)]
    context: Option<typist::replay::typing::ContextMode>,
    #[arg(long, value_name = "N")]
    suffix_lines: Option<u32>,
    #[arg(long, value_enum)]
    typing: Option<typist::replay::typing::TypingMode>,
    #[arg(long, value_enum)]
    granularity: Option<typist::replay::typing::Granularity>,
    /// Characters of the expected line typed before asking.
    #[arg(long, value_name = "K")]
    typed_prefix: Option<u32>,
    #[arg(long, value_enum)]
    trigger: Option<typist::editor::TriggerKind>,
    #[arg(long, value_name = "MS")]
    settle_ms: Option<u64>,
    /// Neighbouring files of the same repository opened before the case's file.
    #[arg(long, value_name = "N")]
    open_tabs: Option<u32>,
    /// Record no latencies (records then are byte-identical across runs).
    #[arg(long)]
    no_latency: bool,
    /// Server restarts a worker may make in a row before the run stops.
    #[arg(long, default_value_t = 3)]
    max_restarts: u32,
    /// No progress bar and no score table.
    #[arg(long)]
    quiet: bool,
    /// Write every session's LSP transcript (JSONL, secrets redacted) into DIR.
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Replay throughput: the driver against an instant server, and the n-gram
    /// baseline, each with 1 and 2 jobs.
    Run {
        #[arg(long, default_value = "fixtures/dataset", value_name = "DIR")]
        dataset: PathBuf,
        #[arg(long, default_value = "target/bench/run", value_name = "DIR")]
        dir: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Time `typist score --json` on a generated records file, optionally beside the
    /// polars + rapidfuzz + numpy reference script.
    Score(typist::bench::BenchOptions),
}

/// Prints a line to stdout; when the reader has gone (`typist score --json | head`),
/// ends quietly with the shell's SIGPIPE status. (SIGPIPE itself stays ignored: typist
/// writes to servers' pipes, and a crashed server must be an error, not typist's death.)
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let mut o = std::io::stdout().lock();
        if let Err(e) = writeln!(o, "{}", typist::secrets::scrub(&text)).and_then(|_| o.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(141);
            }
            eprintln!("typist: cannot write to stdout: {e}");
        }
    }};
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(typist::secrets::ScrubbedStderr)
        .init();
    typist::secrets::register_env();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "typist: error: {}",
                typist::secrets::scrub(&format!("{e:#}"))
            );
            ExitCode::from(2)
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Doctor {
            profiles,
            editors,
            json,
            transcripts,
        } => {
            let list = if profiles.is_empty() {
                profile::all_profiles(editors.as_deref())?
            } else {
                profiles
                    .iter()
                    .map(|n| profile::find_profile(n, editors.as_deref()))
                    .collect::<Result<Vec<_>>>()?
            };
            let rt = runtime()?;
            // The model services the profiles declare, started once for all of them and
            // stopped when `_services` is dropped.
            let (_services, filled) = typist::service::Services::start_each(&list, 1)?;
            let mut reports = Vec::new();
            for (p, filled) in list.iter().zip(filled) {
                if !json {
                    eprintln!("checking {} …", p.name);
                }
                reports.push(match filled {
                    Ok(f) => rt.block_on(doctor::examine(&f, transcripts.as_deref())),
                    Err(e) => doctor::Report::failed(p, format!("{e:#}")),
                });
            }
            if json {
                out!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({"profiles": reports}))?
                );
            } else {
                out!("{}", doctor_table(&reports));
            }
            let all_ok = reports.iter().all(|r| r.status == Status::Ok);
            Ok(if all_ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Login {
            assistant: LoginTarget::Copilot,
            profile: name,
            editors,
            timeout,
        } => {
            let p = profile::find_profile(&name, editors.as_deref())?;
            let rt = runtime()?;
            let done = rt.block_on(typist::copilot::login(
                &p,
                std::time::Duration::from_secs(timeout),
            ))?;
            out!("{done}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Score {
            records,
            json,
            bootstrap,
            seed,
            pass,
            strict,
            threads,
            bands,
        } => {
            let t0 = std::time::Instant::now();
            let table = typist::score::read_records(&records, strict, threads)?;
            tracing::debug!(
                rows = table.rows.len(),
                secs = t0.elapsed().as_secs_f64(),
                "records read"
            );
            if table.skipped > 0 {
                eprintln!("typist: skipped {} malformed line(s):", table.skipped);
                for p in &table.problems {
                    eprintln!("  {p}");
                }
            }
            let summary = typist::score::summarize(
                &table,
                &typist::score::Options {
                    bootstrap,
                    seed,
                    pass,
                    curve_bands: bands,
                },
            );
            tracing::debug!(secs = t0.elapsed().as_secs_f64(), "summarized");
            if json {
                out!("{}", serde_json::to_string(&summary)?);
            } else {
                out!("{}", typist::score::score_table(&summary));
            }
            let silent = silent_assistants(&summary);
            if !silent.is_empty() {
                eprintln!("typist score: no answered case from {}", silent.join(", "));
                return Ok(ExitCode::from(EXIT_NO_ANSWERS));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Run { dataset, dir, runs }) => {
            out!("{}", typist::bench::run(&dataset, &dir, runs)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Score(opts)) => {
            let table = typist::bench::score(&opts)?;
            out!("{table}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => cmd_run(*args),
        Command::Sample {
            dataset,
            sampling,
            out,
        } => {
            let opts = sample_options(&sampling, &Default::default());
            let ds = typist::dataset::walk(
                &dataset,
                &typist::dataset::WalkOptions {
                    single_repo: sampling.single_repo,
                    ..Default::default()
                },
            )?;
            let plan = typist::dataset::sample(&ds, &opts);
            let source = typist::dataset::PlanSource::new(&dataset, sampling.single_repo, &out);
            typist::dataset::write_plan(&out, &plan, Some(&source))?;
            let files: usize = ds.repos.iter().map(|r| r.files.len()).sum();
            out!(
                "{} cases from {} files in {} repositories ({} skipped) -> {} ({})",
                plan.len(),
                files,
                ds.repos.len(),
                ds.skipped.len(),
                out.display(),
                typist::dataset::plan_hash(&plan)
            );
            for s in &ds.skipped {
                eprintln!("  skipped {}: {}", s.path, s.reason);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Report {
            records,
            out,
            markdown,
            csv,
            bootstrap,
            seed,
            pass,
        } => {
            let r = typist::report::build(
                &records,
                &typist::report::ReportOptions {
                    bootstrap,
                    seed,
                    pass,
                },
            )?;
            std::fs::write(&out, typist::secrets::scrub(&r.html).as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
            if let Some(md) = &markdown {
                std::fs::write(md, typist::secrets::scrub(&r.markdown).as_bytes())
                    .with_context(|| format!("cannot write {}", md.display()))?;
            }
            if let Some(c) = &csv {
                typist::report::pairs::write_csv(c, &r.pairs)?;
            }
            out!("report: {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { shards, out } => {
            let n = typist::replay::merge(&shards, &out)?;
            out!("{n} records -> {}", out.join("records.jsonl").display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Host(args) => {
            let rt = runtime()?;
            rt.block_on(typist::host::serve_stdio(args));
            Ok(ExitCode::SUCCESS)
        }
        Command::ServeModel {
            port,
            log_requests,
            upstream,
        } => {
            typist::host::serve_model::serve(port, log_requests.as_deref(), &upstream)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Drill(a) => {
            use typist::drill::DrillOptions;
            let mut opts = if a.quick {
                DrillOptions::quick(a.dataset)
            } else {
                DrillOptions::long(a.dataset)
            };
            opts.seed = a.seed;
            opts.keep = a.keep;
            if let Some(k) = a.kills {
                opts.kills = k;
            }
            let report = typist::drill::run(&opts)?;
            if a.json {
                out!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                out!("{}", typist::drill::table(&report).trim_end());
            }
            Ok(if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Profiles { editors } => {
            for p in profile::all_profiles(editors.as_deref())? {
                let found = p
                    .resolve_command()
                    .map(|c| c.display().to_string())
                    .unwrap_or_else(|| "not installed".into());
                out!(
                    "{:<28} {:<12} {}",
                    p.name,
                    format!("{:?}", p.dialect).to_lowercase(),
                    found
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn doctor_table(reports: &[doctor::Report]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "profile",
        "status",
        "server",
        "version",
        "inline",
        "completion",
        "probe items",
        "latency ms",
        "top",
        "message",
    ]);
    for r in reports {
        let yn = |b: bool| if b { "yes" } else { "no" }.to_string();
        let (inline, completion) = r
            .capabilities
            .as_ref()
            .map(|c| (yn(c.inline), yn(c.completion)))
            .unwrap_or_default();
        let (items, latency, top) = r
            .probe
            .as_ref()
            .map(|p| {
                (
                    p.items.to_string(),
                    format!("{:.1}", p.latency_ms),
                    p.top.join(", "),
                )
            })
            .unwrap_or_default();
        let status = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut message = r.message.replace('\n', " ");
        if message.chars().count() > 80 {
            message = message.chars().take(77).collect::<String>() + "...";
        }
        t.add_row([
            r.name.clone(),
            status,
            r.server.name.clone().unwrap_or_default(),
            r.server.version.clone().unwrap_or_default(),
            inline,
            completion,
            items,
            latency,
            top,
            message,
        ]);
    }
    t.to_string()
}

/// Exit code when some assistant answered no case (every record an error or a
/// timeout): the figures say nothing about it.
const EXIT_NO_ANSWERS: u8 = 3;
/// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

fn silent_assistants(s: &typist::score::Summary) -> Vec<&str> {
    s.assistants
        .iter()
        .filter(|(_, a)| a.cases == 0 && a.records > 0 && a.ranking.is_empty())
        .map(|(n, _)| n.as_str())
        .collect()
}

fn sample_options(
    a: &SamplingArgs,
    c: &typist::config::RunSection,
) -> typist::dataset::SampleOptions {
    let d = typist::dataset::SampleOptions::default();
    typist::dataset::SampleOptions {
        rate: a.rate.or(c.rate).unwrap_or(d.rate),
        seed: a.seed.or(c.seed).unwrap_or(d.seed),
        all_lines: a.lines.as_deref().or(c.lines.as_deref()) == Some("all"),
        max_per_file: a.max_per_file.or(c.max_per_file),
        max_per_repo: a.max_per_repo.or(c.max_per_repo),
    }
}

fn cmd_run(a: RunArgs) -> Result<ExitCode> {
    use typist::config::ConfigFile;
    let config_path = a.config.clone().or_else(|| {
        let p = PathBuf::from("config.toml");
        p.is_file().then_some(p)
    });
    let cfg = match &config_path {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    let c = &cfg.run;
    let editors = a.editors.clone().or(c.editors.clone());
    let names = if a.assistants.is_empty() {
        c.assistants.clone()
    } else {
        a.assistants.clone()
    };
    if names.is_empty() {
        anyhow::bail!(
            "no assistant: pass --assistant NAME (see `typist profiles`) or list them in config.toml"
        );
    }
    let profiles = names
        .iter()
        .map(|n| profile::find_profile(n, editors.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    // The plan first: it may say which dataset it was sampled from.
    let plan_path = a.plan.clone().or(c.plan.clone());
    let read = plan_path
        .as_deref()
        .map(typist::dataset::read_plan)
        .transpose()?;
    let plan_source = read.as_ref().and_then(|(_, s)| s.clone());
    // --dataset, else the plan's own dataset, else config.toml's.
    let dataset = a
        .dataset
        .clone()
        .or_else(|| {
            plan_source
                .as_ref()
                .zip(plan_path.as_deref())
                .map(|(s, p)| s.resolve(p))
        })
        .or(c.dataset.clone())
        .context("no dataset: pass --dataset DIR or set run.dataset in config.toml (a plan made by `typist sample` remembers its own)")?;
    let single_repo = a.sampling.single_repo
        || plan_source.as_ref().is_some_and(|s| s.single_repo)
        || c.single_repo.unwrap_or(false);
    let ds = typist::dataset::walk(
        &dataset,
        &typist::dataset::WalkOptions {
            single_repo,
            ..Default::default()
        },
    )?;
    let (plan, plan_source) = match (read, &plan_path) {
        (Some((cases, source)), Some(p)) => {
            let changed = typist::dataset::changed_files(&ds, &cases);
            if !changed.is_empty() {
                let made_from = source
                    .as_ref()
                    .map(|s| format!("it was sampled from {}", s.dataset.display()))
                    .unwrap_or_else(|| "it does not say which dataset it was sampled from".into());
                anyhow::bail!(
                    "the plan {} does not match the dataset {} ({made_from}): {} file(s) changed or missing:\n  {}",
                    p.display(),
                    dataset.display(),
                    changed.len(),
                    changed.join("\n  ")
                );
            }
            (cases, p.display().to_string())
        }
        _ => {
            let o = sample_options(&a.sampling, c);
            let how = if o.all_lines {
                "all lines".to_string()
            } else {
                format!("rate {} seed {}", o.rate, o.seed)
            };
            (
                typist::dataset::sample(&ds, &o),
                format!("sampled from {} ({how})", dataset.display()),
            )
        }
    };
    let mut cond = cfg.conditions.clone();
    if let Some(v) = a.context {
        cond.context = v;
    }
    if let Some(v) = a.suffix_lines {
        cond.suffix_lines = v;
    }
    if let Some(v) = a.typing {
        cond.typing = v;
    }
    if let Some(v) = a.granularity {
        cond.granularity = v;
    }
    if let Some(v) = a.typed_prefix {
        cond.typed_prefix = v;
    }
    if let Some(v) = a.trigger {
        cond.editor.trigger = v;
    }
    if let Some(v) = a.settle_ms {
        cond.settle_ms = v;
    }
    if let Some(v) = a.open_tabs {
        cond.open_tabs = v;
    }
    if a.no_latency {
        cond.latency = false;
    }
    let shard = a
        .shard
        .as_deref()
        .map(typist::replay::Shard::parse)
        .transpose()?;
    let out = a
        .out
        .clone()
        .or(c.out.clone())
        .unwrap_or_else(|| PathBuf::from("out"));
    if a.retry_errors && !a.resume {
        anyhow::bail!(
            "--retry-errors goes with --resume (it asks again the failed cases of a run in --out)"
        );
    }
    let jobs = a.jobs.or(c.jobs).unwrap_or(1).max(1);
    // Model services the profiles declare: started once, shared by every worker, stopped
    // when `services` is dropped (at the end, after Ctrl-C, on an error or a panic).
    let (services, profiles) = typist::service::Services::start(&profiles, jobs)?;
    let opts = typist::replay::RunOptions {
        out: out.clone(),
        jobs,
        passes: a.passes.or(c.passes).unwrap_or(1).max(1),
        resume: a.resume,
        shard,
        quiet: a.quiet,
        max_restarts: a.max_restarts,
        plan_source,
        transcripts: a.transcripts.clone(),
        retry_errors: a.retry_errors,
        services: services.describe(),
    };
    if !a.quiet {
        eprintln!(
            "typist run: {} cases, {} assistant(s), {} job(s), {} pass(es) -> {}",
            plan.len(),
            profiles.len(),
            opts.jobs,
            opts.passes,
            out.display()
        );
    }
    let rt = runtime()?;
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let report = rt.block_on(async {
        let flag = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ntypist: stopping after the cases in flight (finished records are kept; --resume continues; Ctrl-C again stops at once)");
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            // A second Ctrl-C does not wait for slow servers: every finished record is
            // already on disk (each is written and flushed whole), and the servers die
            // with typist (PR_SET_PDEATHSIG).
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("typist: stopped at once; finished records are kept (--resume continues)");
                typist::service::stop_all_now();
                std::process::exit(EXIT_INTERRUPTED.into());
            }
        });
        typist::replay::run(std::sync::Arc::new(ds), &plan, profiles, cond, &opts, cancel.clone()).await
    });
    // The replay is over: the model services stop now, not after the scoring.
    drop(services);
    let report = report?;
    // The score of what is recorded, printed and kept beside the records.
    let records = out.join("records.jsonl");
    // The score and the report of what is recorded, kept beside the records.
    let built = typist::report::build(
        std::slice::from_ref(&records),
        &typist::report::ReportOptions::default(),
    )?;
    let summary = built.summary;
    std::fs::write(
        out.join("score.json"),
        serde_json::to_string(&summary)? + "\n",
    )?;
    std::fs::write(
        out.join("report.html"),
        typist::secrets::scrub(&built.html).as_bytes(),
    )?;
    if !a.quiet {
        out!("{}", typist::score::score_table(&summary));
    }
    use typist::replay::RunStatus;
    match report.status {
        RunStatus::Complete => {
            if !a.quiet {
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
        RunStatus::Interrupted => {
            eprintln!(
                "typist run: interrupted; {} records kept in {} (continue with --resume)",
                report.records,
                out.display()
            );
            Ok(ExitCode::from(EXIT_INTERRUPTED))
        }
        _ => {
            eprintln!(
                "typist run: failed: {}; {} records kept in {}",
                report.message.unwrap_or_default(),
                report.records,
                out.display()
            );
            Ok(ExitCode::from(1))
        }
    }
}
