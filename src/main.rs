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
    },
    /// Benchmarks (print a table; never run as tests).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// List the server profiles.
    Profiles {
        #[arg(long, value_name = "DIR")]
        editors: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Time `typist score --json` on a generated records file, optionally beside the
    /// polars + rapidfuzz + numpy reference script.
    Score {
        #[arg(long, default_value_t = 1_000_000)]
        records: usize,
        #[arg(long, default_value_t = 2000)]
        repos: usize,
        #[arg(long, default_value_t = 4)]
        assistants: usize,
        #[arg(long, default_value_t = 1000)]
        resamples: usize,
        /// Where the generated records file is kept (reused when present).
        #[arg(long, default_value = "target/bench")]
        dir: PathBuf,
        /// Python with polars, rapidfuzz and numpy: also time benches/score_reference.py.
        #[arg(long, value_name = "PYTHON")]
        reference: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("typist: error: {e:#}");
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
            let mut reports = Vec::new();
            for p in &list {
                if !json {
                    eprintln!("checking {} …", p.name);
                }
                reports.push(rt.block_on(doctor::examine(p, transcripts.as_deref())));
            }
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({"profiles": reports}))?
                );
            } else {
                println!("{}", doctor_table(&reports));
            }
            let all_ok = reports.iter().all(|r| r.status == Status::Ok);
            Ok(if all_ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Score {
            records,
            json,
            bootstrap,
            seed,
            pass,
            strict,
            threads,
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
                },
            );
            tracing::debug!(secs = t0.elapsed().as_secs_f64(), "summarized");
            if json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                println!("{}", score_table(&summary));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Score {
            records,
            repos,
            assistants,
            resamples,
            dir,
            reference,
            runs,
        }) => {
            let table = typist::bench::score(&typist::bench::BenchOptions {
                records,
                repos,
                assistants,
                resamples,
                dir,
                reference,
                runs,
            })?;
            println!("{table}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Profiles { editors } => {
            for p in profile::all_profiles(editors.as_deref())? {
                let found = p
                    .resolve_command()
                    .map(|c| c.display().to_string())
                    .unwrap_or_else(|| "not installed".into());
                println!(
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

fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * x)
    }
}

fn score_table(s: &typist::score::Summary) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "assistant",
        "cases",
        "empty %",
        "error %",
        "timeout %",
        "integral help % (±2sd)",
        "exact share % (±2sd)",
        "help@0 %",
        "integral non-empty %",
        "p50 ms",
        "p95 ms",
    ]);
    for (name, a) in &s.assistants {
        let pm = |e: &typist::score::Estimate| format!("{} ± {}", pct(e.value), pct(2.0 * e.sd));
        let (p50, p95) = a
            .latency_ms
            .as_ref()
            .map(|l| (format!("{:.1}", l.p50), format!("{:.1}", l.p95)))
            .unwrap_or_default();
        t.add_row([
            name.clone(),
            a.cases.to_string(),
            pct(a.empty_rate),
            pct(a.error_rate),
            pct(a.timeout_rate),
            pm(&a.integral_help),
            pm(&a.exact_share),
            pct(a.help_at_0.value),
            pct(a.integral_help_nonempty.value),
            p50,
            p95,
        ]);
    }
    let mut out = format!(
        "{} records, {} repositories, pass {}, {} resamples (seed {})\n\n{t}",
        s.records, s.repositories, s.pass, s.bootstrap, s.seed
    );
    if !s.pairwise.is_empty() {
        let mut p = comfy_table::Table::new();
        p.load_style(comfy_table::presets::ASCII_MARKDOWN);
        p.set_header([
            "a",
            "b",
            "metric",
            "shared cases",
            "diff % (a-b)",
            "sd %",
            "p-value",
        ]);
        for r in &s.pairwise {
            p.add_row([
                r.a.clone(),
                r.b.clone(),
                r.metric.clone(),
                r.cases.to_string(),
                pct(r.diff),
                pct(r.sd),
                format!("{:.4}", r.p_value),
            ]);
        }
        out.push_str(&format!("\n\n{p}"));
    }
    out
}
