//! The assistants' own sandbox inside a run (`typist run --assistant-sandbox`; the
//! benchmark service's jobs always run so). Every program typist starts for an assistant
//! (its language server, Neovim, VS Code's code-server and its browser: all go through
//! `lsp::process`) runs in a nested bubblewrap sandbox that does not show the run's
//! truth: the plan and the dataset are hidden (a folder behind an empty one, a file
//! behind an empty file), and so is the output folder, whose records hold the true
//! lines of the cases already replayed. Nothing else changes: the same network (the
//! editor and its browser talk over the loopback), the same `/tmp` (typist's workspace
//! copies, which hold only what was typed), the same user.
//!
//! The nested sandbox is a user namespace of its own (bubblewrap unprivileged), with no
//! capability in it and no way to make another (`--disable-userns`), so what is
//! mounted over the hidden paths cannot be taken away; and a process in it cannot
//! reach into typist's own (its memory, its open files, its root) through `/proc`,
//! which needs privileges over typist's namespace. It needs the kernel to let users
//! make user namespaces; [`enter`] tries one and says so when it cannot.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

/// What the assistants' programs are kept from, between [`enter`] and [`leave`].
#[derive(Debug, Clone)]
struct Jail {
    bwrap: PathBuf,
    /// bubblewrap's arguments before `--`.
    args: Vec<String>,
}

static JAIL: Mutex<Option<Jail>> = Mutex::new(None);

/// From now on (until [`leave`]), every assistant's program starts in a sandbox where `hide` (folders
/// and files) are not there and `show` (inside a hidden folder) is, read-only. Paths
/// that do not exist are left out. Tried once here: an error says why it cannot be.
pub fn enter(hide: &[PathBuf], show: &[PathBuf]) -> Result<()> {
    let bwrap = find_bwrap()?;
    let cwd = std::env::current_dir()?;
    let mut hidden: Vec<(PathBuf, bool)> = Vec::new();
    for p in hide {
        let Ok(real) = p.canonicalize() else {
            continue;
        };
        let dir = real.is_dir();
        if dir && cwd.starts_with(&real) {
            bail!(
                "--assistant-sandbox would hide {} (the plan, the dataset or the output folder), which holds the current folder {}: run typist from elsewhere",
                real.display(),
                cwd.display()
            );
        }
        hidden.push((real, dir));
    }
    // Outer first, and nothing inside a folder already hidden.
    hidden.sort();
    hidden.dedup();
    let mut args: Vec<String> = [
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--dev-bind",
        "/",
        "/",
    ]
    .map(String::from)
    .to_vec();
    let mut folders: Vec<PathBuf> = Vec::new();
    for (p, dir) in &hidden {
        if folders.iter().any(|f| p.starts_with(f)) {
            continue;
        }
        let p = p.display().to_string();
        if *dir {
            args.extend(["--tmpfs".to_string(), p.clone()]);
            folders.push(PathBuf::from(p));
        } else {
            args.extend(["--ro-bind".to_string(), "/dev/null".to_string(), p]);
        }
    }
    for s in show {
        if let Ok(real) = s.canonicalize()
            && folders.iter().any(|f| real.starts_with(f))
        {
            let r = real.display().to_string();
            args.extend(["--ro-bind".to_string(), r.clone(), r]);
        }
    }
    let jail = Jail { bwrap, args };
    try_it(&jail)?;
    tracing::debug!(args = ?jail.args, "the assistants' sandbox");
    *JAIL.lock().unwrap_or_else(|e| e.into_inner()) = Some(jail);
    Ok(())
}

/// Programs start as they are again (after the replay: the checks' own servers).
pub fn leave() {
    *JAIL.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// `program args` as the assistants' sandbox starts them, when there is one.
pub fn wrap(program: &Path, args: &[String]) -> Option<(PathBuf, Vec<String>)> {
    let guard = JAIL.lock().unwrap_or_else(|e| e.into_inner());
    let jail = guard.as_ref()?;
    let mut all = jail.args.clone();
    all.push("--".to_string());
    all.push(program.display().to_string());
    all.extend(args.iter().cloned());
    Some((jail.bwrap.clone(), all))
}

/// The `bwrap` on PATH, if any (the sandbox of untrusted code looks it up the same way).
pub fn bwrap_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

fn find_bwrap() -> Result<PathBuf> {
    bwrap_on_path().context(
        "--assistant-sandbox needs bubblewrap (bwrap): apt-get install bubblewrap (scripts/install-servers.sh installs it)",
    )
}

/// Starts `true` in the sandbox once: a kernel that does not let users make user
/// namespaces (or a bwrap without `--disable-userns`) fails here, in words.
fn try_it(jail: &Jail) -> Result<()> {
    let o = std::process::Command::new(&jail.bwrap)
        .args(&jail.args)
        .args(["--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot start {}", jail.bwrap.display()))?;
    if !o.status.success() {
        bail!(
            "--assistant-sandbox: bubblewrap cannot make the assistants' sandbox here ({}); it needs user namespaces for users (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1) and bubblewrap 0.8 or newer",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("no message")
        );
    }
    Ok(())
}
