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
    about = "Replay typing into language servers and AI coding assistants, capture their suggestions, and score them",
    after_help = "Example (in the source tree):\n  typist run --dataset fixtures/dataset --assistant typist-ngram --assistant typist-previous-line --rate 0.2 --out out/try\n  typist report out/try --out out/try/report.html\n\n`typist COMMAND --help` shows each command's flags, their defaults and an example."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a dataset or a plan against assistants and write records, a manifest and
    /// the score (the main job; with no flags, the default run of config.toml).
    #[command(
        after_help = "Example:\n  typist run --dataset fixtures/dataset --assistant typist-ngram --assistant typist-previous-line --rate 0.2 --out out/try"
    )]
    Run(Box<RunArgs>),
    /// Write a self-contained HTML report (and optionally a markdown summary and the
    /// pairs as CSV) from records files.
    #[command(
        after_help = "Example:\n  typist report out/try --out out/try/report.html --markdown out/try/summary.md"
    )]
    Report(ReportArgs),
    /// Sample a dataset into a plan of cases (one JSON line each).
    #[command(
        after_help = "Example:\n  typist sample --dataset fixtures/dataset --rate 0.2 --seed 1 --out plan.jsonl\n  typist sample --dataset fixtures/dataset --cases tokens --kinds member,call --out tokens.jsonl\n  typist sample --cases edits --git . --commits HEAD~20..HEAD --out edits.jsonl\n  typist sample --cases edits --releases zlib-1.2.13 zlib-1.3 --out edits.jsonl"
    )]
    Sample(SampleArgs),
    /// Join the output folders of shards into the records one run would have written.
    #[command(
        after_help = "Example:\n  typist run --plan plan.jsonl --assistant typist-ngram --shard 0/2 --out out/shard-0\n  typist run --plan plan.jsonl --assistant typist-ngram --shard 1/2 --out out/shard-1\n  typist merge out/shard-0 out/shard-1 --out out/all"
    )]
    Merge(MergeArgs),
    /// The assistant plugin host: an LSP server on stdio answering inline completion
    /// from a built-in model (used by the typist-* profiles).
    #[command(
        after_help = "Example:\n  typist host --backend previous-line --listen tcp://127.0.0.1:0"
    )]
    Host(cli::host_args::HostFlags),
    /// Serve a model over HTTP on 127.0.0.1 (OpenAI-compatible and Tabby
    /// /v1/completions, /v1/health, Ollama /api/generate, llama.cpp /infill, TGI
    /// /generate), so that real agents can run offline against a local model: the n-gram
    /// baseline, or with --upstream a llama.cpp server fronted with Tabby's and Ollama's
    /// APIs.
    #[command(after_help = "Example:\n  typist serve-model --port 8080")]
    ServeModel(ServeModelArgs),
    /// Sign an assistant in once, in the editor a run uses, and keep what it needs in
    /// typist's vault (every session starts from a copy): `typist login copilot`,
    /// `typist login --editor neovim|vscode --assistant NAME`, `typist login --list`.
    #[command(after_help = "Example:\n  typist login copilot\n  typist login --list")]
    Login(LoginArgs),
    /// Record an edit session from a person: their own Neovim (not headless), or a VS
    /// Code they open in their browser, with a recorder that logs every change, cursor
    /// move, save and pause of the workspace's files; written as an edits plan `typist
    /// run --plan` replays.
    #[command(
        after_help = "Example:\n  typist record --out session.jsonl src/app.py\n  typist record --editor vscode --port 8123 --out session.jsonl src/app.py\n  typist run --plan session.jsonl --assistant typist-ngram --editor neovim --out out-session"
    )]
    Record(cli::record::RecordArgs),
    /// Remove an assistant's sign-in from the vault.
    #[command(after_help = "Example:\n  typist logout copilot")]
    Logout(LogoutArgs),
    /// Check each server profile: installed? starts? answers a probe suggestion?
    #[command(
        after_help = "Example:\n  typist doctor --profile typist-ngram --profile typist-previous-line"
    )]
    Doctor(DoctorArgs),
    /// Score records files: help metrics, bootstrap intervals, paired p-values.
    #[command(after_help = "Example:\n  typist score out/try --json")]
    Score(ScoreArgs),
    /// Score two runs as labelled arms (A/assistant, B/assistant): paired p-values on
    /// their shared cases; differing plans and conditions are said, no shared case is
    /// refused.
    Compare(CompareArgs),
    /// What accepted suggestions do to the file (methodology §11): each suggestion put in
    /// its file and parsed; the results in a sidecar beside the records
    /// (NAME.checks.jsonl), which score and report read on their own.
    #[command(after_help = "Example:\n  typist check out/try --dataset fixtures/dataset")]
    Check(CheckArgs),
    /// Benchmarks (print a table; never run as tests).
    #[command(subcommand)]
    #[command(after_help = "Example:\n  typist bench coverage --replicates 100")]
    Bench(BenchCommand),
    /// Reliability drills: a plan against typist's host with every kind of fault
    /// injected, then SIGKILLs and resumes; prints a table ending `lost: N` and exits 1
    /// unless every promise of docs/reliability.md held.
    #[command(after_help = "Example:\n  typist drill --quick")]
    Drill(DrillArgs),
    /// Datasets by name: fetch real source releases from the package registries.
    #[command(subcommand)]
    #[command(after_help = "Example:\n  typist dataset add data/real pypi:six==1.16.0")]
    Dataset(DatasetCommand),
    /// List the server profiles.
    #[command(after_help = "Example:\n  typist profiles\n  typist profiles --show typist-ngram")]
    Profiles(ProfilesArgs),
    /// The benchmark service: a JSON API on 127.0.0.1 where teams submit an assistant to
    /// a named benchmark, a queue of jobs measured by `typist run`, and a board per
    /// benchmark with paired p-values (docs/service.md).
    #[command(
        after_help = "Example:\n  typist serve token add team-a --data serve-data\n  typist serve --data serve-data --listen 127.0.0.1:8765\n  typist serve --data /shared/serve-data --executor slurm --slurm-shards 8 --sbatch-arg=--partition=cpu"
    )]
    Serve(cli::serve::ServeArgs),
    /// Submit an assistant to a benchmark service, wait for its result (with progress)
    /// and print it with its board position.
    #[command(
        after_help = "Example:\n  typist submit --server http://127.0.0.1:8765 --token $TOKEN --benchmark default --assistant typist-ngram"
    )]
    Submit(cli::serve::SubmitArgs),
}

fn main() -> ExitCode {
    cli::log::init();
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
        Command::Run(a) => match cli::run_edits::edits_plan(&a) {
            Ok(Some(plan)) => cli::run_edits::run(*a, &plan),
            Ok(None) if a.pace.is_some() => Err(anyhow::anyhow!(
                "--pace is for edit sessions (a plan of `typist sample --cases edits` or \
                 `typist record`)"
            )),
            Ok(None) => cli::run::run(*a),
            Err(e) => Err(e),
        },
        Command::Report(a) => commands::report(a),
        Command::Sample(a) => commands::sample(a),
        Command::Merge(a) => commands::merge(a),
        Command::Host(a) => commands::host(a),
        Command::ServeModel(a) => commands::serve_model(a),
        Command::Login(a) => cli::login::login(a),
        Command::Record(a) => cli::record::record(a),
        Command::Logout(a) => cli::login::logout(a),
        Command::Doctor(a) => commands::doctor(a),
        Command::Score(a) => commands::score(a),
        Command::Compare(a) => cli::compare::compare(a),
        Command::Check(a) => commands::check(a),
        Command::Bench(c) => commands::bench(c),
        Command::Drill(a) => commands::drill(a),
        Command::Profiles(a) => commands::profiles(a),
        Command::Dataset(DatasetCommand::Add(a)) => commands::dataset_add(a),
        Command::Serve(a) => cli::serve::serve(a),
        Command::Submit(a) => cli::serve::submit(a),
    }
}
