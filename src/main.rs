//! The `typist` command line: argument structs and dispatch. Flags are parsed in two
//! steps (ripgrep's way): clap fills the structs of `cli/args.rs`, then each command in
//! `cli/` maps them onto the library, prints a table or JSON, and says the exit code.

mod cli;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use cli::args::*;

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
    Report(ReportArgs),
    /// Sample a dataset into a plan of cases (one JSON line each).
    Sample(SampleArgs),
    /// Join the output folders of shards into the records one run would have written.
    Merge(MergeArgs),
    /// The assistant plugin host: an LSP server on stdio answering inline completion
    /// from a built-in model (used by the typist-* profiles).
    Host(cli::host_args::HostFlags),
    /// Serve a model over HTTP on 127.0.0.1 (OpenAI-compatible and Tabby
    /// /v1/completions, /v1/health, Ollama /api/generate, llama.cpp /infill, TGI
    /// /generate), so that real agents can run offline against a local model: the n-gram
    /// baseline, or with --upstream a llama.cpp server fronted with Tabby's and Ollama's
    /// APIs.
    ServeModel(ServeModelArgs),
    /// Sign in to an assistant that needs an account, through its own server's flow,
    /// and keep the credentials in typist's config folder (sessions get a copy).
    Login(LoginArgs),
    /// Check each server profile: installed? starts? answers a probe suggestion?
    Doctor(DoctorArgs),
    /// Score records files: help metrics, bootstrap intervals, paired p-values.
    Score(ScoreArgs),
    /// Benchmarks (print a table; never run as tests).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Reliability drills: a plan against typist's host with every kind of fault
    /// injected, then SIGKILLs and resumes; prints a table ending `lost: N` and exits 1
    /// unless every promise of docs/reliability.md held.
    Drill(DrillArgs),
    /// List the server profiles.
    Profiles(ProfilesArgs),
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
    match dispatch(cli.command) {
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

fn dispatch(command: Command) -> Result<ExitCode> {
    use cli::commands;
    match command {
        Command::Run(a) => cli::run::run(*a),
        Command::Report(a) => commands::report(a),
        Command::Sample(a) => commands::sample(a),
        Command::Merge(a) => commands::merge(a),
        Command::Host(a) => commands::host(a),
        Command::ServeModel(a) => commands::serve_model(a),
        Command::Login(a) => commands::login(a),
        Command::Doctor(a) => commands::doctor(a),
        Command::Score(a) => commands::score(a),
        Command::Bench(c) => commands::bench(c),
        Command::Drill(a) => commands::drill(a),
        Command::Profiles(a) => commands::profiles(a),
    }
}

fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * x)
    }
}

pub(crate) fn score_table(s: &typist::score::Summary) -> String {
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
        "{} records, {} repositories, pass {}, {} resamples of {} {}s (seed {}){}\n\n{t}",
        s.records,
        s.repositories,
        s.pass,
        s.bootstrap,
        s.units,
        s.unit,
        s.seed,
        if s.unit == "file" {
            " — fewer than 10 repositories: files are resampled"
        } else {
            ""
        }
    );
    // Per assistant: what failed, and identical requests answered differently.
    for (name, a) in &s.assistants {
        if a.errors + a.timeouts > 0 {
            out.push_str(&format!(
                "\n{name}: {} error(s), {} timeout(s){}",
                a.errors,
                a.timeouts,
                a.top_error
                    .as_deref()
                    .map(|e| format!("; most common: {e}"))
                    .unwrap_or_default()
            ));
        }
        if a.cases == 0 {
            out.push_str(&format!("\n{name}: answered no case"));
        }
        if let Some(share) = a.nondeterminism.share
            && a.nondeterminism.differing > 0
        {
            out.push_str(&format!(
                "\n{name}: {} of {} repeated requests answered differently ({})",
                a.nondeterminism.differing,
                a.nondeterminism.repeated,
                pct(share)
            ));
        }
        for (reason, n) in &a.skipped {
            out.push_str(&format!("\n{name}: {n} record(s) not scored: {reason}"));
        }
    }
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
                match r.p_value {
                    Some(p) => format!("{p:.4}{}", if r.few_units { "*" } else { "" }),
                    None => "n/a".to_string(),
                },
            ]);
        }
        out.push_str(&format!("\n\n{p}"));
        if s.pairwise.iter().any(|r| r.few_units) {
            out.push_str(&format!(
                "\n* {} {}s resampled (fewer than 10): read with care",
                s.units, s.unit
            ));
        }
        if s.pairwise.iter().any(|r| r.p_value.is_none()) {
            out.push_str("\nn/a: no spread in the resamples, so no p-value");
        }
    }
    out
}
