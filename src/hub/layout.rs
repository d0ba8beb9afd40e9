//! Where the service keeps a job's files in its data folder.

use std::path::{Path, PathBuf};

/// A job's folder: its run's `out/`, its `run.log`, a model's profile.
pub fn job_dir(data: &Path, id: i64) -> PathBuf {
    data.join("jobs").join(id.to_string())
}

/// The run's output folder of job `id`.
pub fn out_dir(data: &Path, id: i64) -> PathBuf {
    job_dir(data, id).join("out")
}
