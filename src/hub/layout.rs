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

/// A job's folder is written by the job's sandbox, which may have put links there: the
/// service opens nothing in it through a link.
///
/// `path` opened for reading when it is a regular file, not a link (its last part read
/// with `O_NOFOLLOW`), in a folder that is not a link either.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        real_dir(parent)?;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(f)
}

/// `dir` when it is a folder and not a link.
pub fn real_dir(dir: &Path) -> std::io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder of its own",
            dir.display()
        )));
    }
    Ok(())
}

/// Makes `dir` a folder of its own (a link there removed first).
pub fn fresh_dir(dir: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    real_dir(dir)
}

/// Writes `bytes` to a new file at `path`, whatever was there (a link is replaced, never
/// followed).
pub fn write_fresh(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(bytes)
}
