//! Edit sessions from version control: commits of a git repository, unified-diff patches
//! (`debian/patches`) and two releases of a package, each change typed in a plausible
//! human order ([`session_from_change`]). Git is run as a program (`git log`,
//! `git diff-tree`, `git cat-file --batch`).

mod options;
mod session;
mod text;
mod unified;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, bail};

pub use options::ImportOptions;
pub use session::session_from_change;
pub use unified::{FileDiff, Hunk, HunkLine, apply_hunks, parse_unified, patch_subject};

use super::{Origin, Session};

/// Files larger than this (on either side of a change) are left out.
pub const MAX_FILE_BYTES: usize = 200 * 1024;

/// A file's bytes as a session's text: `None` when over [`MAX_FILE_BYTES`] or not UTF-8;
/// a BOM removed, CRLF made LF.
fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.len() > MAX_FILE_BYTES {
        return None;
    }
    let s = String::from_utf8(bytes).ok()?;
    let s = s.strip_prefix('\u{feff}').unwrap_or(&s);
    Some(if s.contains('\r') {
        s.replace("\r\n", "\n")
    } else {
        s.to_string()
    })
}

fn dir_name(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repo".into())
}

/// Runs `git -C dir ARGS`; its standard output, or an error naming the directory.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                anyhow::anyhow!(
                    "cannot read commits of {}: git is not installed",
                    dir.display()
                )
            }
            _ => anyhow::anyhow!("cannot run git in {}: {e}", dir.display()),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "git {} in {} failed: {}",
            args.first().copied().unwrap_or(""),
            dir.display(),
            err.trim()
        );
    }
    Ok(out.stdout)
}

/// `git cat-file --batch`: blobs by id, one process for a whole import.
struct Blobs {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Blobs {
    fn start(dir: &Path) -> Result<Blobs> {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run git cat-file in {}", dir.display()))?;
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().context("git cat-file: no output")?);
        Ok(Blobs { child, stdin, out })
    }

    /// The blob's text ([`text_of`]): `None` when too big, not UTF-8 or missing.
    fn text(&mut self, id: &str) -> Result<Option<String>> {
        let stdin = self.stdin.as_mut().context("git cat-file: closed")?;
        writeln!(stdin, "{id}")?;
        stdin.flush()?;
        let mut header = String::new();
        self.out.read_line(&mut header)?;
        let parts: Vec<&str> = header.split_whitespace().collect();
        let [_, _, size] = parts[..] else {
            return Ok(None); // "<id> missing"
        };
        let size: u64 = size.parse().context("git cat-file: a bad size")?;
        let mut bytes = Vec::new();
        (&mut self.out).take(size).read_to_end(&mut bytes)?;
        let mut nl = [0u8; 1];
        self.out.read_exact(&mut nl)?;
        Ok(text_of(bytes))
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// One commit's changed files from `git diff-tree -r --raw -z`: (path, old blob, new
/// blob), a side of zeros for a created or deleted file; links and submodules left out.
fn changed_files(raw: &[u8]) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut it = raw.split(|&b| b == 0);
    while let (Some(meta), Some(path)) = (it.next(), it.next()) {
        let meta = String::from_utf8_lossy(meta);
        let f: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, _status] = f[..] else {
            continue;
        };
        let regular = |m: &str| m == "000000" || m.starts_with("100");
        if !regular(old_mode) || !regular(new_mode) {
            continue;
        }
        let side = |id: &str| (!id.bytes().all(|b| b == b'0')).then(|| id.to_string());
        out.push((
            String::from_utf8_lossy(path).into_owned(),
            side(old_id),
            side(new_id),
        ));
    }
    out
}

/// Sessions from the commits of a git repository: `git log --no-merges RANGE` (by
/// default the last 200 first-parent commits of `HEAD`), oldest first, each commit with
/// exactly one parent; its parent is the starting state. Code files only (over
/// [`MAX_FILE_BYTES`] or not UTF-8: left out); a commit over the options' limits, or with
/// no code change, gives no session. The id is `REPO@HASH12` (REPO: the directory's
/// name). A missing `git`, a directory that is not a repository, or a bad range is one
/// error naming the directory.
pub fn from_git(
    repo_dir: &Path,
    range: Option<&str>,
    opts: &ImportOptions,
) -> Result<Vec<Session>> {
    git(repo_dir, &["rev-parse", "--git-dir"])
        .with_context(|| format!("{} is not a git repository", repo_dir.display()))?;
    let repo = dir_name(repo_dir);
    let format = "--format=%H%x1f%P%x1f%s%x1e";
    let mut args = vec!["log", "--no-merges", format];
    match range {
        Some(r) => args.push(r),
        None => args.extend(["--first-parent", "-n", "200", "HEAD"]),
    }
    args.push("--");
    let log = git(repo_dir, &args)
        .with_context(|| format!("cannot list the commits of {}", repo_dir.display()))?;
    let log = String::from_utf8_lossy(&log);
    let mut commits: Vec<(&str, &str, &str)> = log
        .split('\x1e')
        .filter_map(|rec| {
            let mut f = rec.trim_start_matches('\n').split('\x1f');
            Some((f.next()?, f.next()?, f.next().unwrap_or("")))
        })
        .filter(|(h, p, _)| !h.is_empty() && p.split(' ').filter(|x| !x.is_empty()).count() == 1)
        .collect();
    commits.reverse();
    let mut blobs = Blobs::start(repo_dir)?;
    let mut out = Vec::new();
    for (commit, parent, subject) in commits {
        if opts.max_sessions.is_some_and(|n| out.len() >= n) {
            break;
        }
        let raw = git(
            repo_dir,
            &[
                "diff-tree",
                "-r",
                "--no-renames",
                "--raw",
                "-z",
                parent,
                commit,
            ],
        )?;
        let files: Vec<_> = changed_files(&raw)
            .into_iter()
            .filter(|(p, ..)| session::keeps(p, opts).is_some())
            .collect();
        if files.is_empty() || files.len() > opts.max_files {
            continue;
        }
        let (mut old, mut new) = (BTreeMap::new(), BTreeMap::new());
        for (path, a, b) in files {
            let a = match a {
                Some(id) => blobs.text(&id)?.map(Some),
                None => Some(None),
            };
            let b = match b {
                Some(id) => blobs.text(&id)?.map(Some),
                None => Some(None),
            };
            let (Some(a), Some(b)) = (a, b) else {
                tracing::debug!("{commit}: {path} left out (too big, or not UTF-8)");
                continue;
            };
            if let Some(a) = a {
                old.insert(path.clone(), a);
            }
            if let Some(b) = b {
                new.insert(path, b);
            }
        }
        let id = format!("{repo}@{}", &commit[..commit.len().min(12)]);
        let origin = Origin::Git {
            commit: commit.to_string(),
            parent: parent.to_string(),
            subject: subject.to_string(),
        };
        if let Some(s) = session_from_change(&repo, &id, origin, &old, &new, opts)? {
            out.push(s);
        }
    }
    Ok(out)
}

/// `debian/patches/series`: each patch's place and `-pN` (1 unless it says).
fn read_series(path: &Path) -> HashMap<String, (usize, usize)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            let mut f = l.split_whitespace();
            let name = f.next().unwrap_or("").to_string();
            let strip = f
                .find_map(|o| o.strip_prefix("-p").and_then(|n| n.parse().ok()))
                .unwrap_or(1);
            (name, (i, strip))
        })
        .collect()
}

/// The old and new texts of one patch's code files, from `state` (the tree as the
/// earlier patches left it, then the disk).
#[allow(clippy::type_complexity)]
fn patch_sides(
    tree: &Path,
    files: &[FileDiff],
    strip: usize,
    applied: bool,
    state: &BTreeMap<String, Option<String>>,
    opts: &ImportOptions,
) -> Result<(BTreeMap<String, String>, BTreeMap<String, String>)> {
    let (mut old, mut new) = (BTreeMap::new(), BTreeMap::new());
    for f in files {
        let Some(path) = f.path(strip) else { continue };
        if let Some(why) = &f.skipped {
            tracing::debug!("{path}: left out ({why})");
            continue;
        }
        if session::keeps(&path, opts).is_none() {
            continue;
        }
        let disk = match state.get(&path) {
            Some(t) => t.clone(),
            None => std::fs::read(tree.join(&path)).ok().and_then(text_of),
        };
        let (a, b) =
            unified::both_sides(f, disk.as_deref(), applied).with_context(|| path.clone())?;
        if let Some(a) = a {
            old.insert(path.clone(), a);
        }
        if let Some(b) = b {
            new.insert(path, b);
        }
    }
    Ok((old, new))
}

/// Sessions from patches against a source tree, one per patch, id `REPO@NAME` (NAME: the
/// patch's path under `debian/patches`, else its file name), origin [`Origin::Patch`]
/// with its DEP-3 `Description:` (or `Subject:`) line. With `applied` (a tree unpacked
/// by `dpkg-source -x`), the tree holds every patch's new side: the patches are undone
/// from the last; otherwise the tree is the old side and they are applied from the
/// first. Their order is `TREE/debian/patches/series`'s when it exists (with its `-pN`;
/// patches it does not list after, as given), else as given; sessions come in that
/// order. A patch that does not apply (a hunk not matching its file) is left out with a
/// warning naming the patch and the file, and the others go on.
pub fn from_patches(
    tree: &Path,
    repo: &str,
    patches: &[PathBuf],
    applied: bool,
    opts: &ImportOptions,
) -> Result<Vec<Session>> {
    let dir = tree.join("debian/patches");
    let series = read_series(&dir.join("series"));
    let mut list: Vec<(usize, String, usize, &PathBuf)> = patches
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = p
                .strip_prefix(&dir)
                .ok()
                .or_else(|| p.file_name().map(Path::new))
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string());
            let (place, strip) = series.get(&name).copied().unwrap_or((series.len() + i, 1));
            (place, name, strip, p)
        })
        .collect();
    list.sort_by_key(|x| x.0);
    if applied {
        list.reverse();
    }
    let mut state: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut out: Vec<(usize, Session)> = Vec::new();
    for (place, name, strip, path) in list {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read patch {}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
        let subject = patch_subject(&text).unwrap_or_else(|| name.clone());
        let sides = parse_unified(&text)
            .and_then(|files| patch_sides(tree, &files, strip, applied, &state, opts));
        let (old, new) = match sides {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("patch {name} left out: {e:#}");
                continue;
            }
        };
        // The tree for the next patch: before this one (undoing), or after it (applying).
        let next = if applied { &old } else { &new };
        for p in old.keys().chain(new.keys()) {
            state.insert(p.clone(), next.get(p).cloned());
        }
        let id = format!("{repo}@{name}");
        let origin = Origin::Patch {
            patch: name.clone(),
            subject,
        };
        if let Some(s) = session_from_change(repo, &id, origin, &old, &new, opts)? {
            out.push((place, s));
        }
    }
    out.sort_by_key(|x| x.0);
    let mut sessions: Vec<Session> = out.into_iter().map(|x| x.1).collect();
    if let Some(n) = opts.max_sessions {
        sessions.truncate(n);
    }
    Ok(sessions)
}

/// Regular files under `dir` by path relative to it (`/`-separated), version-control
/// and quilt folders left out.
fn tree_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))?;
        for e in entries {
            let e = e?;
            let ty = e.file_type()?;
            let p = e.path();
            if ty.is_dir() {
                let name = e.file_name();
                if ![".git", ".hg", ".svn", ".pc"].contains(&name.to_string_lossy().as_ref()) {
                    stack.push(p);
                }
            } else if ty.is_file() {
                let rel = p.strip_prefix(dir).unwrap_or(&p);
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(rel.join("/"), p);
            }
        }
    }
    Ok(out)
}

/// Sessions from two releases of a package (unpacked trees): one per code file present
/// in both and changed (within the options' limits), id `REPO@OLD..NEW:PATH` (OLD, NEW:
/// the folders' names), origin [`Origin::Patch`] named `OLD..NEW:PATH`.
pub fn from_releases(
    old_dir: &Path,
    new_dir: &Path,
    repo: &str,
    opts: &ImportOptions,
) -> Result<Vec<Session>> {
    let (a, b) = (dir_name(old_dir), dir_name(new_dir));
    let old_files = tree_files(old_dir)?;
    let new_files = tree_files(new_dir)?;
    let mut out = Vec::new();
    for (rel, new_path) in &new_files {
        if opts.max_sessions.is_some_and(|n| out.len() >= n) {
            break;
        }
        let Some(old_path) = old_files.get(rel) else {
            continue;
        };
        if session::keeps(rel, opts).is_none() {
            continue;
        }
        let read = |p: &Path| std::fs::read(p).ok().and_then(text_of);
        let (Some(x), Some(y)) = (read(old_path), read(new_path)) else {
            continue;
        };
        if x == y {
            continue;
        }
        let name = format!("{a}..{b}:{rel}");
        let origin = Origin::Patch {
            patch: name.clone(),
            subject: format!("{rel} from {a} to {b}"),
        };
        let old = BTreeMap::from([(rel.clone(), x)]);
        let new = BTreeMap::from([(rel.clone(), y)]);
        if let Some(s) =
            session_from_change(repo, &format!("{repo}@{name}"), origin, &old, &new, opts)?
        {
            out.push(s);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
