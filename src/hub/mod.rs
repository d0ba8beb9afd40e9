//! `typist serve`: the benchmark service. A web API on 127.0.0.1 (axum) where a team
//! submits an assistant to a named benchmark (a fixed plan), a queue of jobs in the
//! service's database (SQLite, `hub.sqlite` in the data folder), workers that measure each
//! submission with `typist run` as a process of its own (resumed after any interruption),
//! or as a Slurm job array of shards merged when it ends (`--executor slurm`, `slurm`),
//! and a board per benchmark ranking every submission done on it, with paired p-values
//! between every two (docs/service.md).
//!
//! The data folder holds everything: `hub.sqlite`, `benchmarks.toml` and each benchmark's
//! pinned plan (`benchmarks/NAME/`), and each job's folder (`jobs/ID/`: its run's `out/`,
//! its `run.log`, a model's profile).

pub mod api;
pub mod benchmarks;
pub mod board;
pub mod db;
pub mod jobs;
pub mod layout;
pub mod slurm;
pub mod spec;
pub mod state;

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
    pub listen: SocketAddr,
    /// Jobs measured at once.
    pub workers: usize,
    /// Each job's `typist run --jobs`.
    pub jobs: usize,
    /// The benchmark written when the data folder has no `benchmarks.toml`.
    pub default_benchmark: Option<benchmarks::DefaultBenchmark>,
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

/// The service's database in `data`.
pub fn open_db(data: &Path) -> Result<Db> {
    std::fs::create_dir_all(data)
        .with_context(|| format!("cannot make the data folder {}", data.display()))?;
    Db::open(&data.join("hub.sqlite"))
}

/// A new API token: 32 random bytes in hex, prefixed `typ_`.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .context("cannot read /dev/urandom for a token")?;
    Ok(format!(
        "typ_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

/// Runs the service until Ctrl-C (or SIGTERM): prints `typist serve: listening on
/// http://ADDR` on stdout once it listens.
pub async fn serve(opts: ServeOptions) -> Result<()> {
    let db = open_db(&opts.data)?;
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
    let mut hub = Hub::new(data, db, benchmarks, typist, opts.jobs.max(1));
    let executor = match &opts.executor {
        Executor::Local => "local".to_string(),
        Executor::Slurm(o) => {
            hub.run_job = Some(slurm::executor(o.clone()));
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
    axum::serve(listener, api::router(Arc::clone(&hub)))
        .with_graceful_shutdown(stop)
        .await
        .context("serving")?;
    // The workers' runs were told too (the terminal's Ctrl-C reaches them; on SIGTERM
    // they go with the service): wait a little for their records to be written.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(15), futures_join(workers)).await;
    drop(lock);
    Ok(())
}
