//! The command line's second step: each command maps its flags onto the library's
//! options, calls the library, prints a table or JSON, and says the exit code.
//!
//! Here too: the `out!` and `mirror_into!` macros, the exit codes, and the runtimes (the
//! replay's has one worker thread per job, up to the number of cores).

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

/// `impl From<FLAGS> for OPTIONS` moving each listed field across, for the flag structs
/// that mirror a library type field for field (the library's types derive no CLI
/// trait). The struct literal names every field, so one left out does not compile.
macro_rules! mirror_into {
    ($flags:ty => $options:ty { $($field:ident),* $(,)? }) => {
        impl From<$flags> for $options {
            fn from(f: $flags) -> Self {
                Self { $($field: f.$field),* }
            }
        }
    };
}

pub mod args;
pub mod bench_model;
pub mod choice;
pub mod commands;
pub mod compare;
pub mod host_args;
pub mod log;
pub mod login;
pub mod record;
pub mod resume;
pub mod run;
pub mod run_edits;
pub mod sample_edits;
pub mod serve;
pub mod server_args;

use anyhow::{Context, Result};

/// Exit code when some assistant answered no case (every record an error or a
/// timeout): the figures say nothing about it.
pub const EXIT_NO_ANSWERS: u8 = 3;
/// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Records files as given: a run's output folder stands for its `records.jsonl`.
pub fn records_files(given: Vec<std::path::PathBuf>) -> Result<Vec<std::path::PathBuf>> {
    given
        .into_iter()
        .map(|p| {
            if !p.is_dir() {
                return Ok(p);
            }
            let r = p.join("records.jsonl");
            anyhow::ensure!(
                r.is_file(),
                "{} is a folder with no records.jsonl: give a run's output folder or a records file",
                p.display()
            );
            Ok(r)
        })
        .collect()
}

/// Refuses a read that found no record: the wrong file (a plan), an empty one.
/// `first`: the first line that was not a record, where known.
pub fn some_records(
    records: usize,
    files: &[std::path::PathBuf],
    skipped: u64,
    first: Option<&str>,
) -> Result<()> {
    if records > 0 {
        return Ok(());
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let first = first.map(|p| format!(" (first: {p})")).unwrap_or_default();
    anyhow::bail!(
        "no record in {}: {skipped} line(s) were not records{first}; give the records.jsonl a run wrote (or its folder), not a plan",
        names.join(", "),
    )
}

/// A records read as `score` and `compare` take it: refused when it found no record,
/// and each line that was not a record said.
pub fn records_read(table: &typist::score::Table, files: &[std::path::PathBuf]) -> Result<()> {
    some_records(
        table.rows.len(),
        files,
        table.skipped,
        table.problems.first().map(String::as_str),
    )?;
    if table.skipped > 0 {
        eprintln!("typist: skipped {} malformed line(s):", table.skipped);
        for p in &table.problems {
            eprintln!("  {p}");
        }
    }
    Ok(())
}

/// Says, in one line, that records repeating an (assistant, pass, case) were left out:
/// two runs of the same assistants read as one (`typist compare` keeps them apart).
pub fn warn_duplicates(command: &str, duplicates: u64, files: &[std::path::PathBuf]) {
    if duplicates == 0 {
        return;
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let hint = if files.len() > 1 {
        format!(
            "; to compare runs, `typist compare {}`",
            names.iter().take(2).cloned().collect::<Vec<_>>().join(" ")
        )
    } else {
        String::new()
    };
    eprintln!(
        "typist {command}: warning: {} repeating an (assistant, pass, case) in {} left out (one of each kept){hint}",
        typist::score::count(duplicates, "duplicate record"),
        names.join(", ")
    );
}

/// Why sampling `ds` gave no case, and what to do: nothing is written.
pub fn no_cases(ds: &typist::dataset::Dataset) -> String {
    use typist::score::count;
    let d = ds.root.display();
    let files: usize = ds.repos.iter().map(|r| r.files.len()).sum();
    if files == 0 && ds.one_repo.is_none() {
        let folders = ds.repos.len();
        format!(
            "0 cases: {d} holds {} and no code file of a known language at its top level; a dataset is a project's folder or a folder of projects (DIR/REPO/…): point --dataset at the folder with the code, or add --single-repo; nothing written",
            match folders {
                0 => "no folder".to_string(),
                n => format!("{} without code files", count(n as u64, "folder")),
            }
        )
    } else if files == 0 {
        format!(
            "0 cases: {d} holds no code file typist reads ({}skipped); nothing written",
            match ds.skipped.len() {
                0 => String::new(),
                n => format!("{} ", count(n as u64, "file")),
            }
        )
    } else {
        format!(
            "0 cases from {} in {} of {d}: raise --rate (or pass --lines all); nothing written",
            count(files as u64, "file"),
            count(ds.repos.len() as u64, "repository"),
        )
    }
}

/// How a dataset was read, for the line a sampling prints: "1 repository (DIR is one:
/// it holds pyproject.toml)", "13 repositories".
pub fn layout(ds: &typist::dataset::Dataset) -> String {
    let n = typist::score::count(ds.repos.len() as u64, "repository");
    match &ds.one_repo {
        Some(why) => format!("{n} ({} is one: {why})", ds.root.display()),
        None => n,
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The replay's runtime: one worker thread per job, up to the cores (unless
/// `TOKIO_WORKER_THREADS` says otherwise). With one job, a second worker thread only
/// hands the session's tasks back and forth: measured against the instant host
/// (`typist-fixed`, every line of the bundled dataset), typist's CPU per answered case
/// fell from about 226 to 165 µs with one worker.
pub fn replay_runtime(jobs: usize) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        b.worker_threads(jobs.clamp(1, cores));
    }
    b.enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Assistants with records but no answered case.
pub fn silent_assistants(s: &typist::score::Summary) -> Vec<&str> {
    s.assistants
        .iter()
        .filter(|(_, a)| a.cases == 0 && a.records > 0 && a.ranking.is_empty())
        .map(|(n, _)| n.as_str())
        .collect()
}

/// Writes `text` to `path` with every known secret scrubbed.
pub fn write_scrubbed(path: &std::path::Path, text: &str) -> Result<()> {
    std::fs::write(path, typist::secrets::scrub(text).as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
