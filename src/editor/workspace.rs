//! The session's temporary workspace: a `typist-PID-…` folder holding the copies of
//! the files the server sees, and the sandboxed `HOME` some profiles ask for; and the
//! sweep that removes the folders of typist processes that are gone.

use std::path::{Path, PathBuf};

use super::error::SessionError;
use super::options::SessionOptions;
use super::profile::{DialectKind, Profile};
use super::signin::SessionSignIn;

/// Temporary workspaces are named `typist-PID-…` after the process that made them, so
/// that one left by a killed typist can be told from one in use.
const WORKSPACE_PREFIX: &str = "typist-";

/// A temporary folder named `typist-PID-{purpose}…`: removed when dropped, and by
/// [`sweep_stale_workspaces`] if this typist is killed before it can remove it.
pub fn scratch_dir(purpose: &str) -> std::io::Result<tempfile::TempDir> {
    scratch_dir_in(&std::env::temp_dir(), purpose)
}

/// [`scratch_dir`] where sessions' workspaces are made ([`workspace_base`]: `/dev/shm`
/// when it has room and `TMPDIR` is not set), for other copies of a repository made and
/// removed as often (`typist check --tests`' working copies).
pub fn workspace_scratch_dir(purpose: &str) -> std::io::Result<tempfile::TempDir> {
    scratch_dir_in(&workspace_base(), purpose)
}

fn scratch_dir_in(base: &Path, purpose: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!(
            "{WORKSPACE_PREFIX}{}-{}{purpose}",
            std::process::id(),
            pid_namespace().map_or(String::new(), |n| format!("n{n}-"))
        ))
        .tempdir_in(base)
}

/// This process's PID namespace (the inode of `/proc/self/ns/pid`): a folder named by a
/// typist of another namespace (another container sharing `/dev/shm` or `/tmp`) says
/// nothing by its PID about whether that typist lives, and is never swept.
fn pid_namespace() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino())
}

/// A memory file system for sessions' workspaces when `TMPDIR` is not set.
const SHM: &str = "/dev/shm";
/// The room `/dev/shm` must have to be used.
const SHM_ROOM: u64 = 512 << 20;

/// Where sessions' workspaces are made: `$TMPDIR` when it is set; else `/dev/shm` (a
/// memory file system) when it is a folder with [`SHM_ROOM`] free; else the system's
/// temporary folder. A workspace holds a copy of the whole repository and is removed
/// after its session, so a replay makes and removes that many files for every file it
/// replays: on ext4 each new file's inode is looked for past every one removed in the
/// last minutes, which made a session's start grow from 15 ms to 100–500 ms on a
/// 200,000-line repository (`typist bench run --large-repo`).
fn workspace_base() -> PathBuf {
    if std::env::var_os("TMPDIR").is_some_and(|v| !v.is_empty()) {
        return std::env::temp_dir();
    }
    if room(Path::new(SHM)).is_some_and(|free| free >= SHM_ROOM) {
        return PathBuf::from(SHM);
    }
    std::env::temp_dir()
}

/// The bytes free to this user in the file system of `dir` (`statvfs`), if it is a
/// writable folder whose programs may run.
fn room(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid C string for the call's duration.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return None;
    }
    // SAFETY: an all-zero statvfs is a valid value for statvfs to fill in; `c` is a
    // valid C string and the pointer is to our own local.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // A `noexec` mount (Docker's `/dev/shm`) would stop servers that run what they
    // download into the sandboxed HOME made beside the workspace.
    if st.f_flag & libc::ST_NOEXEC != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Removes the temporary workspaces of typist processes that no longer exist (a typist
/// killed with SIGKILL cannot remove its own), in the temporary folder and in
/// `/dev/shm` (whichever the sessions use now); returns how many were removed. Folders
/// of live processes, of other users and of other PID namespaces are left alone.
pub fn sweep_stale_workspaces() -> usize {
    let mut bases = vec![std::env::temp_dir()];
    if Path::new(SHM).is_dir() && Path::new(SHM) != bases[0] {
        bases.push(PathBuf::from(SHM));
    }
    let ns = pid_namespace();
    bases.iter().map(|b| sweep_in(b, ns)).sum()
}

fn sweep_in(base: &Path, ns: Option<u64>) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, rest)) = name
            .to_str()
            .and_then(|n| n.strip_prefix(WORKSPACE_PREFIX))
            .and_then(|r| r.split_once('-'))
            .and_then(|(pid, rest)| Some((pid.parse::<u32>().ok()?, rest)))
        else {
            continue;
        };
        // `n{namespace}-` after the PID (folders made before it was named have none).
        let theirs = rest
            .strip_prefix('n')
            .and_then(|r| r.split_once('-'))
            .and_then(|(n, _)| n.parse::<u64>().ok());
        if theirs.is_some_and(|t| Some(t) != ns) {
            continue;
        }
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) && std::fs::remove_dir_all(e.path()).is_ok() {
            tracing::debug!(folder = %e.path().display(), "removed the workspace of a typist that is gone");
            removed += 1;
        }
    }
    removed
}

/// A workspace made ready for a server: the folder (removed when dropped), the
/// canonical root the server runs in, and the environment it gets.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub env: Vec<(String, String)>,
    /// The sign-in copied into the sandbox `HOME` (written back when dropped: keep it
    /// declared before the folder in whatever holds it).
    pub signin: Option<SessionSignIn>,
}

/// Makes a fresh workspace: the profile's own files first (go.mod, compile_flags.txt),
/// then the copies of `opts.files` from `opts.source_root` (a file of the repository with
/// the same name wins, so the target's hidden copy is never overwritten), then
/// `opts.contents`; and the
/// profile's environment, with a sandboxed `HOME` when it asks for one or the session
/// starts from a vault entry (whose `home` part is copied into it).
pub fn prepare(profile: &Profile, opts: &SessionOptions) -> Result<Workspace, SessionError> {
    let tmp = workspace_base();
    let dir = scratch_dir_in(&tmp, "").map_err(SessionError::file(&tmp))?;
    let root = dir.path().join("workspace");
    std::fs::create_dir_all(&root).map_err(SessionError::file(&root))?;
    let root = root.canonicalize().map_err(SessionError::file(&root))?;
    for (name, text) in &profile.workspace_files {
        let to = root.join(name);
        std::fs::write(&to, text).map_err(SessionError::file(&to))?;
    }
    if let Some(src) = &opts.source_root {
        for f in &opts.files {
            let to = root.join(f);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(SessionError::file(parent))?;
            }
            let from = src.join(f);
            std::fs::copy(&from, &to).map_err(|e| SessionError::File {
                message: format!("cannot copy into the workspace: {e}"),
                path: from.clone(),
            })?;
        }
    }
    for (rel, text) in &opts.contents {
        let to = root.join(rel);
        write_creating(&to, text).map_err(SessionError::file(&to))?;
    }
    let mut env: Vec<(String, String)> = profile
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut signin = None;
    if profile.sandbox_home || opts.signin.is_some() {
        let home = dir.path().join("home");
        sandbox_home(profile, &home, opts.signin.is_none(), &mut env)
            .map_err(SessionError::file(&home))?;
        if let Some(entry) = &opts.signin {
            let mut s = SessionSignIn::new(entry.clone());
            s.seed(crate::vault::HOME, &home)?;
            signin = Some(s);
        }
    }
    Ok(Workspace {
        dir,
        root,
        env,
        signin,
    })
}

/// A `HOME` of the server's own (with the XDG folders under it), seeded with the
/// profile's files and, for Copilot with no vault entry (`own_copilot`), the user's
/// own sign-in.
fn sandbox_home(
    profile: &Profile,
    home: &Path,
    own_copilot: bool,
    env: &mut Vec<(String, String)>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    let h = home.display().to_string();
    env.push(("HOME".into(), h.clone()));
    env.push(("XDG_CONFIG_HOME".into(), format!("{h}/.config")));
    env.push(("XDG_CACHE_HOME".into(), format!("{h}/.cache")));
    env.push(("XDG_DATA_HOME".into(), format!("{h}/.local/share")));
    // Copilot: the user's sign-in (typist's own or theirs), copied in.
    if profile.dialect == DialectKind::Copilot && own_copilot {
        crate::copilot::seed_home(home)?;
    }
    for (rel, text) in &profile.home_files {
        write_creating(&home.join(rel), text)?;
    }
    Ok(())
}

/// Writes `text` to `path`, creating the folders above it.
pub fn write_creating(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_removes_folders_of_gone_typists_of_this_namespace_only() {
        let base = tempfile::tempdir().unwrap();
        let ns = pid_namespace().expect("Linux names its PID namespaces");
        // PID 999999999 is over Linux's largest (4194304): never alive.
        let names = [
            (format!("typist-999999999-n{ns}-abc"), false),
            ("typist-999999999-abc".to_string(), false),
            (format!("typist-999999999-n{}-abc", ns + 1), true),
            (format!("typist-{}-n{ns}-abc", std::process::id()), true),
            ("other-999999999-abc".to_string(), true),
        ];
        for (n, _) in &names {
            std::fs::create_dir(base.path().join(n)).unwrap();
        }
        assert_eq!(sweep_in(base.path(), Some(ns)), 2);
        for (n, kept) in &names {
            assert_eq!(base.path().join(n).exists(), *kept, "{n}");
        }
        let made = scratch_dir_in(base.path(), "x").unwrap();
        let name = made
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            name.starts_with(&format!("typist-{}-n{ns}-x", std::process::id())),
            "{name}"
        );
    }
}
