//! `typist serve`: the benchmark service. A web API on 127.0.0.1 (axum) where a team
//! submits an assistant to a named benchmark (a fixed plan), a queue of jobs in the
//! service's database (SQLite, `hub.sqlite` in the data folder, or PostgreSQL given
//! `--db URL`), workers that measure each
//! submission with `typist run` as a process of its own (resumed after any interruption),
//! or as a Slurm job array of shards merged when it ends (`--executor slurm`, `slurm`),
//! and a board per benchmark ranking every submission done on it, with paired p-values
//! between every two (docs/service.md).
//!
//! Its web pages (`web.rs`) do the same for a person in a browser. Jobs run in the
//! sandbox (`src/sandbox.rs`), uploaded code (`upload.rs`) included.
//!
//! The data folder holds everything (the database too, unless it is PostgreSQL's):
//! `hub.sqlite`, `secret.key` (signs web sessions), `benchmarks.toml` and each
//! benchmark's pinned plan (`benchmarks/NAME/`), uploads (`uploads/KEY/`), and each
//! job's folder (`jobs/ID/`: its run's `out/`, its `run.log`, the profile written for
//! it).

pub mod api;
pub mod benchmarks;
pub mod board;
pub mod db;
pub mod db_postgres;
pub mod db_sqlite;
pub mod forward;
pub mod jobs;
pub mod layout;
pub mod slurm;
pub mod spec;
pub mod sql;
pub mod state;
pub mod token;
pub mod upload;
pub mod web;
mod web_results;
mod web_session;

pub use token::new_token;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};

use db::Db;
use state::Hub;

/// How `typist serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub data: PathBuf,
    /// A PostgreSQL URL; `None`: SQLite, `hub.sqlite` in `data`.
    pub db: Option<String>,
    pub listen: SocketAddr,
    /// Jobs measured at once.
    pub workers: usize,
    /// Each job's `typist run --jobs`.
    pub jobs: usize,
    /// The benchmark written when the data folder has no `benchmarks.toml`.
    pub default_benchmark: Option<benchmarks::DefaultBenchmark>,
    /// Jobs run in the sandbox (the default); without it, uploads are refused.
    pub sandbox: bool,
    /// The longest an attempt at a job may run (the local executor).
    pub job_time: std::time::Duration,
    /// How jobs are run.
    pub executor: Executor,
}

/// How the service runs a job.
#[derive(Debug, Clone)]
pub enum Executor {
    /// `typist run` as a child process of the service (`jobs`).
    Local,
    /// A Slurm job array, one task per shard, merged when it ends (`slurm`).
    Slurm(slurm::SlurmOptions),
}

/// Waits for every task of `tasks`.
async fn futures_join(tasks: Vec<tokio::task::JoinHandle<()>>) {
    for t in tasks {
        let _ = t.await;
    }
}

/// The service's database: PostgreSQL's at `url` when given, else SQLite's in `data`.
pub fn open_db(data: &Path, url: Option<&str>) -> Result<Db> {
    std::fs::create_dir_all(data)
        .with_context(|| format!("cannot make the data folder {}", data.display()))?;
    match url {
        Some(url) => Db::connect(url),
        None => Db::open(&data.join("hub.sqlite")),
    }
}

/// Runs the service until Ctrl-C (or SIGTERM): prints `typist serve: listening on
/// http://ADDR` on stdout once it listens.
pub async fn serve(opts: ServeOptions) -> Result<()> {
    let db = open_db(&opts.data, opts.db.as_deref())?;
    // One service per data folder: a second would queue the first one's running jobs
    // again and write into their folders.
    let lock_path = opts.data.join("hub.lock");
    let lock = std::fs::File::create(&lock_path)
        .with_context(|| format!("cannot write {}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        anyhow::bail!(
            "another typist serve uses {} (its lock {} is held): stop it first, or give another --data",
            opts.data.display(),
            lock_path.display()
        );
    }
    if let Executor::Slurm(o) = &opts.executor {
        slurm::check(o)?;
    }
    let typist = std::env::current_exe().context("cannot find typist's own program")?;
    let data = std::fs::canonicalize(&opts.data)?;
    let benchmarks = benchmarks::load(&data, &typist, opts.default_benchmark.as_ref())?;
    let again = db.requeue_running()?;
    if again > 0 {
        tracing::info!("hub: {again} job(s) left running by the last service queued again");
    }
    if opts.sandbox {
        crate::sandbox::bwrap()?;
        if matches!(opts.executor, Executor::Local) && crate::os::effective_uid() != 0 {
            anyhow::bail!(
                "typist serve limits each job's sandbox by a cgroup of its own, which needs root: run it as root, or with --no-sandbox (its jobs then run as plain processes, and uploads are refused)"
            );
        }
    }
    let data_key = data.clone();
    let mut hub = Hub::new(
        data,
        db,
        benchmarks,
        typist,
        opts.jobs.max(1),
        opts.sandbox,
        web_session::load_key(&data_key)?,
    );
    hub.job_time = opts.job_time;
    let executor = match &opts.executor {
        Executor::Local => "local".to_string(),
        Executor::Slurm(o) => {
            hub.run_job = Some(slurm::executor(o.clone()));
            // A Slurm task runs `typist run` itself, outside bubblewrap: uploaded code
            // is refused.
            hub.sandbox = false;
            format!("slurm, {} shards", o.shards)
        }
    };
    let hub = Arc::new(hub);
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .with_context(|| format!("cannot listen on {}", opts.listen))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "typist serve: listening on http://{addr} (data {}, {} benchmark(s), {} worker(s), executor {executor})",
            hub.data.display(),
            hub.benchmarks.len(),
            opts.workers.max(1)
        )?;
        out.flush()?;
    }
    let workers: Vec<_> = (0..opts.workers.max(1))
        .map(|_| tokio::spawn(jobs::worker(Arc::clone(&hub))))
        .collect();
    let stop = {
        let hub = Arc::clone(&hub);
        async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
            }
            eprintln!("typist serve: stopping; running jobs resume at the next start");
            hub.stopping.store(true, Ordering::SeqCst);
            hub.queued.notify_waiters();
        }
    };
    axum::serve(
        listener,
        api::router(Arc::clone(&hub)).merge(web::router(Arc::clone(&hub))),
    )
    .with_graceful_shutdown(stop)
    .await
    .context("serving")?;
    // The workers' runs were told too (the terminal's Ctrl-C reaches them; on SIGTERM
    // they go with the service): wait a little for their records to be written.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(15), futures_join(workers)).await;
    drop(lock);
    Ok(())
}
