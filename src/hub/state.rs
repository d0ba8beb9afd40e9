//! The service's state, shared by the API and the workers: its folder, database,
//! benchmarks, the program jobs run, whether it is stopping, and the boards computed
//! since a job last ended.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};

use super::benchmarks::Benchmark;
use super::board;
use super::db::{Db, Submission};

/// Runs a job elsewhere than as the local executor's child process (`--executor slurm`):
/// its figures, as the local executor's run gives them, or why it did not end.
pub type RunJob = Arc<
    dyn Fn(Arc<Hub>, Submission) -> Pin<Box<dyn Future<Output = Result<serde_json::Value>> + Send>>
        + Send
        + Sync,
>;

/// The service's state, shared by the API and the workers.
pub struct Hub {
    pub data: PathBuf,
    pub db: Db,
    pub benchmarks: Vec<Benchmark>,
    /// The `typist` program jobs run.
    pub typist: PathBuf,
    pub jobs: usize,
    /// Jobs run in the sandbox (`src/sandbox.rs`); off only with `--no-sandbox`, for a
    /// service that measures nothing but its own profiles.
    pub sandbox: bool,
    /// The key that signs web sessions and form tokens (`secret.key`).
    pub key: Vec<u8>,
    /// How a job is run when not as a local child process (`jobs::worker`'s default).
    pub run_job: Option<RunJob>,
    /// The longest an attempt at a job may run before it is killed and the job failed.
    pub job_time: std::time::Duration,
    /// Set once the service is stopping: workers take no job, and leave theirs running
    /// in the database (it resumes at the next start).
    pub stopping: AtomicBool,
    /// Wakes a worker when a submission is queued.
    pub queued: tokio::sync::Notify,
    /// Boards computed since a job last ended.
    boards: Mutex<BTreeMap<String, Arc<board::Board>>>,
    /// Counts the jobs ended: a board computed while one ended is not kept.
    ended: AtomicU64,
}

impl Hub {
    pub fn new(
        data: PathBuf,
        db: Db,
        benchmarks: Vec<Benchmark>,
        typist: PathBuf,
        jobs: usize,
        sandbox: bool,
        key: Vec<u8>,
    ) -> Hub {
        Hub {
            data,
            db,
            benchmarks,
            typist,
            jobs,
            sandbox,
            key,
            run_job: None,
            job_time: std::time::Duration::from_secs(12 * 3600),
            stopping: AtomicBool::new(false),
            queued: tokio::sync::Notify::new(),
            boards: Mutex::new(BTreeMap::new()),
            ended: AtomicU64::new(0),
        }
    }

    pub fn benchmark(&self, name: &str) -> Option<&Benchmark> {
        self.benchmarks.iter().find(|b| b.name == name)
    }

    /// A job ended: the boards are computed again when next asked.
    pub fn boards_changed(&self) {
        if let Ok(mut b) = self.boards.lock() {
            self.ended.fetch_add(1, Ordering::SeqCst);
            b.clear();
        }
    }

    /// The board of benchmark `name` (computed on a blocking thread, then kept until a
    /// job ends).
    pub async fn board(self: &Arc<Self>, name: &str) -> Result<Arc<board::Board>> {
        if let Some(b) = self.boards.lock().ok().and_then(|b| b.get(name).cloned()) {
            return Ok(b);
        }
        let generation = self.ended.load(Ordering::SeqCst);
        let hub = Arc::clone(self);
        let n = name.to_string();
        let b = tokio::task::spawn_blocking(move || -> Result<board::Board> {
            let subs = hub.db.submissions()?;
            board::board(&hub.data, &n, &subs)
        })
        .await
        .context("computing the board")??;
        let b = Arc::new(b);
        if let Ok(mut cache) = self.boards.lock()
            && self.ended.load(Ordering::SeqCst) == generation
        {
            cache.insert(name.to_string(), Arc::clone(&b));
        }
        Ok(b)
    }
}
