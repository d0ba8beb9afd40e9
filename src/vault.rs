//! The sign-in vault: what `typist login` saved of an assistant's sign-in, one entry per
//! assistant and editor, copied into every session that runs the assistant and, for
//! the files the assistant rewrites (a rotating token, a SQLite WAL), written back after
//! the session.
//!
//! Where: `<typist's config folder>/vault/<assistant>/<editor>/` (the config folder is
//! `$TYPIST_CONFIG_DIR`, else `$XDG_CONFIG_HOME/typist`, else `~/.config/typist`). The
//! vault and every folder in it are mode 0700, every file 0600, whatever the umask.
//!
//! An entry holds *parts*, each a folder of files kept relative to a root the editor
//! names when it seeds a session: `home` (the session's `HOME`: XDG folders, plugin
//! files), `user-data` (VS Code's user-data folder: the key half of its secret
//! storage), `browser` (VS Code's browser storage of the page's origin). `entry.json`
//! says when it was saved, which paths of each part it keeps, and when each file was
//! last written back.
//!
//! Saving an entry is atomic (a staged folder renamed over the old one); writing back
//! is done under the entry's lock (`flock` on `<assistant>/.<editor>.lock`), file by
//! file with a rename, and only for the files the session changed: a file the session
//! did not touch is never written, and of two sessions that changed one file, the
//! change made last (by the file's modification time) is kept, whichever session ends
//! last. Nothing of an entry is ever written to records, manifests, logs or reports:
//! every value seeded is registered with [`crate::secrets`], and the manifest names the
//! entry and when it was saved, never its content or a hash of it.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The part of an entry that holds files of the session's `HOME`.
pub const HOME: &str = "home";
/// VS Code: files of code-server's user-data folder.
pub const USER_DATA: &str = "user-data";
/// VS Code: the browser's storage of the page's origin (`local-storage.json`).
pub const BROWSER: &str = "browser";

const META: &str = "entry.json";
/// Files larger than this are not kept: a sign-in is a token, not a download.
pub const MAX_FILE: u64 = 4 << 20;

/// Typist's own config folder: `$TYPIST_CONFIG_DIR`, else `$XDG_CONFIG_HOME/typist`,
/// else `~/.config/typist`.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TYPIST_CONFIG_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from)
        && x.is_absolute()
    {
        return Some(x.join("typist"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".config").join("typist"))
}

/// The vault.
#[derive(Debug, Clone)]
pub struct Vault {
    root: PathBuf,
}

/// What `entry.json` says of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub assistant: String,
    pub editor: String,
    /// When `typist login` saved it (RFC 3339, seconds).
    pub saved_at: String,
    /// When a session last wrote a file back (a rotated token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_back_at: Option<String>,
    /// How it was signed in (the commands run; never the answers typed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub how: Vec<String>,
    /// Each part's kept paths (files or folders), relative to the part's root.
    pub parts: BTreeMap<String, Vec<String>>,
    /// `part/path` → modification time (nanoseconds since the epoch) of the session's
    /// file that was last written back: a later write-back of an older change is
    /// dropped.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub modified: BTreeMap<String, u128>,
}

impl Meta {
    /// `assistant/editor`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.assistant, self.editor)
    }

    /// `NAME: saved WHEN[, written back WHEN]`, as `doctor` shows an entry.
    pub fn state(&self) -> String {
        match &self.written_back_at {
            Some(w) => format!("{}: saved {}, written back {w}", self.name(), self.saved_at),
            None => format!("{}: saved {}", self.name(), self.saved_at),
        }
    }
}

/// A part to save: the files and folders `paths` under `root`.
pub struct Part<'a> {
    pub name: &'a str,
    pub root: &'a Path,
    pub paths: Vec<String>,
}

/// One entry of the vault.
#[derive(Debug, Clone)]
pub struct Entry {
    pub assistant: String,
    pub editor: String,
    dir: PathBuf,
    lock: PathBuf,
}

/// What a session was given of one part: each file's bytes as copied, to tell what
/// the session changed.
#[derive(Debug, Clone, Default)]
pub struct Seeded {
    pub part: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// What the manifest says of an entry a run started from: the assistant that started
/// from it, its name and when it was saved.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Used {
    pub assistant: String,
    pub entry: String,
    pub saved_at: String,
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

fn mkdir_private(p: &Path) -> std::io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(p)?;
    fs::set_permissions(p, fs::Permissions::from_mode(0o700))
}

/// Writes `bytes` to `path` with mode 0600 through a file beside it renamed over it.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let tmp = parent.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)
}

/// A name of an assistant or an editor: letters, digits, `.`, `_`, `-`.
fn check_name(what: &str, n: &str) -> Result<()> {
    if n.is_empty()
        || n.starts_with('.')
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        bail!("{what} {n:?} cannot name a vault entry (letters, digits, '.', '_', '-')");
    }
    Ok(())
}

/// A path kept in a part: relative, with no `..`.
fn check_rel(p: &str) -> Result<()> {
    let path = Path::new(p);
    if p.is_empty()
        || !path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        bail!("{p:?}: a vault path is relative to its part's folder, with no '..'");
    }
    Ok(())
}

/// The files under `root/rel` (a file, or a folder's files, recursively), as paths
/// relative to `root`, sorted; links and files over [`MAX_FILE`] left out.
fn files_under(root: &Path, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(rel)];
    while let Some(r) = stack.pop() {
        let p = root.join(&r);
        let Ok(md) = fs::symlink_metadata(&p) else {
            continue;
        };
        if md.is_dir() {
            if let Ok(rd) = fs::read_dir(&p) {
                for e in rd.flatten() {
                    stack.push(r.join(e.file_name()));
                }
            }
        } else if md.is_file() && md.len() <= MAX_FILE {
            out.push(r.to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

fn mtime_nanos(p: &Path) -> u128 {
    fs::metadata(p)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// Registers what a kept file holds with the secrets scrubber: a JSON file's values, a
/// short text's trimmed text.
fn register(bytes: &[u8]) {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
        register_strings(&v);
        return;
    }
    if bytes.len() <= 4096
        && let Ok(t) = std::str::from_utf8(bytes)
    {
        for line in t.lines() {
            crate::secrets::register(line.trim());
        }
    }
}

/// Every string of a kept JSON file is a secret, whatever its key.
fn register_strings(v: &serde_json::Value) {
    match v {
        serde_json::Value::String(s) => crate::secrets::register(s),
        serde_json::Value::Array(a) => a.iter().for_each(register_strings),
        serde_json::Value::Object(o) => o.values().for_each(register_strings),
        _ => {}
    }
}

impl Vault {
    /// The vault in typist's config folder (not created until an entry is saved).
    pub fn open() -> Result<Vault> {
        let dir = config_dir().context(
            "no HOME and no $TYPIST_CONFIG_DIR: typist has no config folder for its vault",
        )?;
        Ok(Vault::at(dir.join("vault")))
    }

    pub fn at(root: PathBuf) -> Vault {
        Vault { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The entry of `assistant` in `editor` (`typist`, `neovim`, `vscode`; `github` for
    /// the GitHub sign-in `typist login copilot` keeps).
    pub fn entry(&self, assistant: &str, editor: &str) -> Result<Entry> {
        check_name("assistant", assistant)?;
        check_name("editor", editor)?;
        Ok(Entry {
            assistant: assistant.to_string(),
            editor: editor.to_string(),
            dir: self.root.join(assistant).join(editor),
            lock: self.root.join(assistant).join(format!(".{editor}.lock")),
        })
    }

    /// Every entry, sorted by name; an entry whose `entry.json` cannot be read is named
    /// with the error.
    pub fn list(&self) -> Vec<Result<Meta, String>> {
        let mut out = Vec::new();
        let Ok(assistants) = fs::read_dir(&self.root) else {
            return out;
        };
        let mut names: Vec<(String, String)> = Vec::new();
        for a in assistants.flatten() {
            let an = a.file_name().to_string_lossy().into_owned();
            if an.starts_with('.') || !a.path().is_dir() {
                continue;
            }
            if let Ok(eds) = fs::read_dir(a.path()) {
                for e in eds.flatten() {
                    let en = e.file_name().to_string_lossy().into_owned();
                    if !en.starts_with('.') && e.path().is_dir() {
                        names.push((an.clone(), en));
                    }
                }
            }
        }
        names.sort();
        for (a, e) in names {
            match self.entry(&a, &e).map_err(|e| e.to_string()) {
                Ok(entry) => out.push(entry.meta().map_err(|e| format!("{}: {e:#}", entry.name()))),
                Err(e) => out.push(Err(e)),
            }
        }
        out
    }
}

impl Entry {
    /// `assistant/editor`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.assistant, self.editor)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn exists(&self) -> bool {
        self.dir.join(META).is_file()
    }

    /// What `entry.json` says.
    pub fn meta(&self) -> Result<Meta> {
        let p = self.dir.join(META);
        let text = fs::read_to_string(&p).with_context(|| format!("{}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{}: not a vault entry", p.display()))
    }

    /// What the manifest says of this entry, started from by `assistant`: its name and
    /// when it was saved.
    pub fn used(&self, assistant: &str) -> Result<Used> {
        let m = self.meta()?;
        Ok(Used {
            assistant: assistant.to_string(),
            entry: self.name(),
            saved_at: m.saved_at,
        })
    }

    /// Holds the entry's lock until the guard is dropped.
    fn lock(&self) -> Result<File> {
        let parent = self.lock.parent().unwrap_or(&self.dir);
        mkdir_private(&self.root_of())
            .and_then(|()| mkdir_private(parent))
            .with_context(|| format!("cannot make the vault folder {}", parent.display()))?;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&self.lock)
            .with_context(|| format!("cannot open the vault's lock {}", self.lock.display()))?;
        f.lock()
            .with_context(|| format!("cannot lock {}", self.lock.display()))?;
        Ok(f)
    }

    /// The vault's own folder (two above the entry).
    fn root_of(&self) -> PathBuf {
        self.dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// Saves `parts` as this entry, replacing what it held. `how`: the commands that
    /// signed it in (for `typist login --list`; never an answer).
    pub fn save(&self, parts: &[Part<'_>], how: Vec<String>) -> Result<Meta> {
        let _lock = self.lock()?;
        let parent = self.dir.parent().unwrap_or(&self.dir).to_path_buf();
        let staged = parent.join(format!(".{}.new-{}", self.editor, std::process::id()));
        let _ = fs::remove_dir_all(&staged);
        mkdir_private(&staged).with_context(|| format!("{}", staged.display()))?;
        let mut meta = Meta {
            assistant: self.assistant.clone(),
            editor: self.editor.clone(),
            saved_at: now_rfc3339(),
            written_back_at: None,
            how,
            parts: BTreeMap::new(),
            modified: BTreeMap::new(),
        };
        for part in parts {
            check_name("part", part.name)?;
            let mut kept = Vec::new();
            for rel in &part.paths {
                check_rel(rel)?;
                for f in files_under(part.root, rel) {
                    let from = part.root.join(&f);
                    let bytes = fs::read(&from)
                        .with_context(|| format!("cannot read {}", from.display()))?;
                    let to = staged.join(part.name).join(&f);
                    mkdir_private(to.parent().unwrap_or(&staged))?;
                    write_private(&to, &bytes).with_context(|| format!("{}", to.display()))?;
                }
                kept.push(rel.clone());
            }
            meta.parts.insert(part.name.to_string(), kept);
        }
        let text = serde_json::to_vec_pretty(&meta)?;
        write_private(&staged.join(META), &text)?;
        let old = parent.join(format!(".{}.old-{}", self.editor, std::process::id()));
        if self.dir.exists() {
            fs::rename(&self.dir, &old).with_context(|| format!("{}", self.dir.display()))?;
        }
        fs::rename(&staged, &self.dir).with_context(|| format!("{}", self.dir.display()))?;
        let _ = fs::remove_dir_all(&old);
        Ok(meta)
    }

    /// Removes the entry; `false` when there was none.
    pub fn remove(&self) -> Result<bool> {
        if !self.dir.exists() {
            return Ok(false);
        }
        let _lock = self.lock()?;
        fs::remove_dir_all(&self.dir).with_context(|| format!("{}", self.dir.display()))?;
        Ok(true)
    }

    /// The files the entry keeps in `part`, relative to its folder.
    pub fn files(&self, part: &str) -> Vec<String> {
        files_under(&self.dir.join(part), ".")
            .into_iter()
            .map(|f| f.trim_start_matches("./").to_string())
            .collect()
    }

    /// Reads one kept file (`None` when the entry has no such file).
    pub fn read(&self, part: &str, rel: &str) -> Option<Vec<u8>> {
        fs::read(self.dir.join(part).join(rel)).ok()
    }

    /// Copies `part` into `dest` (files 0600), registering what they hold as secrets;
    /// returns what was copied, for [`Entry::write_back`].
    pub fn seed(&self, part: &str, dest: &Path) -> Result<Seeded> {
        let _lock = self.lock()?;
        let mut seeded = Seeded {
            part: part.to_string(),
            files: BTreeMap::new(),
        };
        for rel in self.files(part) {
            let from = self.dir.join(part).join(&rel);
            let bytes = fs::read(&from).with_context(|| format!("{}", from.display()))?;
            register(&bytes);
            let to = dest.join(&rel);
            if let Some(p) = to.parent() {
                fs::create_dir_all(p).with_context(|| format!("{}", p.display()))?;
            }
            write_private(&to, &bytes).with_context(|| format!("{}", to.display()))?;
            seeded.files.insert(rel, bytes);
        }
        Ok(seeded)
    }

    /// Writes back what a session changed of `seeded`'s part, from `src` (the session's
    /// copy): each file it changed or made under the part's kept paths, unless the
    /// vault's copy was written back from a later change; each file it removed, unless
    /// the vault's copy changed meanwhile or the session kept no file at all. Returns
    /// the files written or removed.
    pub fn write_back(&self, seeded: &Seeded, src: &Path) -> Result<usize> {
        let _lock = self.lock()?;
        let mut meta = self.meta()?;
        let kept = meta.parts.get(&seeded.part).cloned().unwrap_or_default();
        let mut now: BTreeMap<String, PathBuf> = BTreeMap::new();
        for rel in &kept {
            for f in files_under(src, rel) {
                let f = f.trim_start_matches("./").to_string();
                now.insert(f.clone(), src.join(&f));
            }
        }
        let base = self.dir.join(&seeded.part);
        let mut n = 0;
        for (rel, path) in &now {
            let Ok(bytes) = fs::read(path) else { continue };
            if seeded.files.get(rel) == Some(&bytes) {
                continue;
            }
            let key = format!("{}/{rel}", seeded.part);
            let t = mtime_nanos(path);
            if meta.modified.get(&key).is_some_and(|&last| last > t) {
                tracing::info!(entry = %self.name(), file = %rel, "vault: a later change of this file was written back already; this session's is dropped");
                continue;
            }
            register(&bytes);
            let to = base.join(rel);
            mkdir_private(to.parent().unwrap_or(&base))?;
            write_private(&to, &bytes).with_context(|| format!("{}", to.display()))?;
            meta.modified.insert(key, t);
            n += 1;
        }
        // A removal goes back only beside files the session still keeps (SQLite
        // removing its WAL after a checkpoint): a session that kept nothing (a server
        // that moved the token into memory and deleted the file it migrated) never
        // empties the entry.
        for (rel, was) in &seeded.files {
            if now.is_empty() || now.contains_key(rel) {
                continue;
            }
            let at = base.join(rel);
            if fs::read(&at).ok().as_ref() == Some(was) && fs::remove_file(&at).is_ok() {
                n += 1;
            }
        }
        if n > 0 {
            meta.written_back_at = Some(now_rfc3339());
            write_private(&self.dir.join(META), &serde_json::to_vec_pretty(&meta)?)?;
            tracing::info!(entry = %self.name(), files = n, "vault: written back what the session changed");
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_entry_is_saved_private_seeded_and_written_back_only_where_changed() {
        let t = tempfile::tempdir().unwrap();
        let vault = Vault::at(t.path().join("vault"));
        let home = t.path().join("home");
        fs::create_dir_all(home.join(".cache/p")).unwrap();
        fs::write(
            home.join(".cache/p/config.json"),
            r#"{"api_key":"k-0001-aaaa"}"#,
        )
        .unwrap();
        fs::write(home.join(".cache/p/other"), "x").unwrap();
        fs::write(home.join("unrelated"), "y").unwrap();
        let e = vault.entry("plug", "neovim").unwrap();
        let meta = e
            .save(
                &[Part {
                    name: HOME,
                    root: &home,
                    paths: vec![".cache/p".into()],
                }],
                vec!["KeyAuth".into()],
            )
            .unwrap();
        assert_eq!(meta.name(), "plug/neovim");
        assert_eq!(
            e.files(HOME),
            vec![".cache/p/config.json", ".cache/p/other"]
        );
        for d in [vault.root(), e.dir(), &e.dir().join("home/.cache/p")] {
            assert_eq!(mode(d), 0o700, "{}", d.display());
        }
        assert_eq!(mode(&e.dir().join("home/.cache/p/config.json")), 0o600);
        assert_eq!(mode(&e.dir().join(META)), 0o600);

        let s1 = t.path().join("s1");
        let s2 = t.path().join("s2");
        let a = e.seed(HOME, &s1).unwrap();
        let b = e.seed(HOME, &s2).unwrap();
        assert_eq!(
            fs::read_to_string(s1.join(".cache/p/config.json")).unwrap(),
            r#"{"api_key":"k-0001-aaaa"}"#
        );
        // Session 2 rotates later than session 1, but ends first.
        fs::write(
            s1.join(".cache/p/config.json"),
            r#"{"api_key":"k-0002-bbbb"}"#,
        )
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(
            s2.join(".cache/p/config.json"),
            r#"{"api_key":"k-0003-cccc"}"#,
        )
        .unwrap();
        assert_eq!(e.write_back(&b, &s2).unwrap(), 1);
        assert_eq!(
            e.write_back(&a, &s1).unwrap(),
            0,
            "the older change is dropped"
        );
        assert_eq!(
            e.read(HOME, ".cache/p/config.json").unwrap(),
            br#"{"api_key":"k-0003-cccc"}"#
        );
        // Untouched files are not written; the secret was registered.
        assert!(e.meta().unwrap().modified.len() == 1);
        assert_eq!(
            crate::secrets::scrub("k-0003-cccc"),
            crate::secrets::REDACTED
        );
        assert!(e.meta().unwrap().written_back_at.is_some());
        // A session that removed every file (a server that moved the token into
        // memory) does not empty the entry; one that removed one beside others does.
        let c = e.seed(HOME, &t.path().join("s3")).unwrap();
        fs::remove_dir_all(t.path().join("s3/.cache")).unwrap();
        assert_eq!(e.write_back(&c, &t.path().join("s3")).unwrap(), 0);
        assert_eq!(e.files(HOME).len(), 2);
        let d = e.seed(HOME, &t.path().join("s4")).unwrap();
        fs::remove_file(t.path().join("s4/.cache/p/other")).unwrap();
        assert_eq!(e.write_back(&d, &t.path().join("s4")).unwrap(), 1);
        assert_eq!(e.files(HOME), vec![".cache/p/config.json"]);
        assert!(e.remove().unwrap());
        assert!(!e.exists());
        assert!(!e.remove().unwrap());
    }

    #[test]
    fn names_and_paths_that_could_leave_the_vault_are_refused() {
        let vault = Vault::at(PathBuf::from("/nonexistent/vault"));
        assert!(vault.entry("../x", "neovim").is_err());
        assert!(vault.entry("x", "").is_err());
        assert!(check_rel("../etc/passwd").is_err());
        assert!(check_rel("/etc/passwd").is_err());
        assert!(check_rel(".cache/x").is_ok());
    }
}
