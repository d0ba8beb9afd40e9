//! The n-gram backend's index cache on disk: one file per workspace (named by the hash
//! of its files' relative paths and languages) holding the vocabulary, each indexed
//! file's path and the SHA-256 of the content indexed, and each language's
//! [`Index`]. A session reads it back instead of tokenizing and sorting the repository
//! again; the files whose content on disk differs are left out of its answers and
//! indexed apart (`super::workspace`), so answers are exactly those of an index built
//! from the disk. Written whole to a temporary file and renamed (sessions side by side
//! never read half a file); a file that does not read back whole (its checksum, its
//! lengths) is ignored and written anew. The folder is `$TYPIST_CACHE_DIR/ngram`
//! (`off` for none), else `$XDG_CACHE_HOME/typist/ngram`, else
//! `~/.cache/typist/ngram`; the files least recently used are removed past
//! [`MAX_BYTES`].

use std::hash::Hasher;
use std::path::{Path, PathBuf};

use rustc_hash::FxHasher;

use super::index::Index;
use crate::dataset::Language;

/// The first bytes of a cache file: the format, and what the index depends on (the
/// tokenizer, ORDER, the crawl's rules); change it when any of them changes.
const MAGIC: &[u8] = b"typist ngram index 2 (order 16, crawl 1 MiB, little-endian)\n";

/// The cache's size past which the files least recently used are removed.
pub(super) const MAX_BYTES: u64 = 2 << 30;

/// A file's content hash (SHA-256).
pub(super) type Hash = [u8; 32];

pub(super) fn hash(text: &str) -> Hash {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).into()
}

/// One language's index and the files it holds, in its order.
pub(super) struct LangIndex {
    pub(super) language: Language,
    pub(super) files: Vec<(String, Hash)>,
    pub(super) index: Index,
}

/// What a cache file holds.
pub(super) struct Entry {
    pub(super) words: Vec<String>,
    pub(super) langs: Vec<LangIndex>,
}

/// The cache folder, or `None` when there is none (`TYPIST_CACHE_DIR=off`, no home).
pub(super) fn dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    // The host runs in the session's workspace: a relative folder would be made there
    // and thrown away with it.
    let base = if let Some(d) = env("TYPIST_CACHE_DIR") {
        if d == "off" {
            return None;
        }
        if !Path::new(&d).is_absolute() {
            tracing::warn!(dir = ?d, "TYPIST_CACHE_DIR is not an absolute path: the n-gram index is not cached");
            return None;
        }
        PathBuf::from(d)
    } else if let Some(x) = env("XDG_CACHE_HOME").filter(|x| Path::new(x).is_absolute()) {
        PathBuf::from(x).join("typist")
    } else {
        PathBuf::from(env("HOME")?).join(".cache").join("typist")
    };
    Some(base.join("ngram"))
}

/// The cache file of a workspace whose files are `files` (relative path, language).
pub(super) fn path_for(dir: &Path, files: &[(String, Language)]) -> PathBuf {
    use sha2::Digest;
    let mut sorted: Vec<&(String, Language)> = files.iter().collect();
    sorted.sort();
    let mut h = sha2::Sha256::new();
    for (rel, lang) in sorted {
        h.update(lang.name().as_bytes());
        h.update([0]);
        h.update(rel.as_bytes());
        h.update([0]);
    }
    let digest = h.finalize();
    dir.join(format!("{}.idx", crate::digest::hex(&digest[..16])))
}

/// The checksum of a file's parts, in order (each part's bytes and length).
fn checksum<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h = FxHasher::default();
    for p in parts {
        h.write(p);
        h.write_usize(p.len());
    }
    h.finish()
}

/// A slice of token ids or positions as the file's bytes (little-endian, as the
/// machines typist is built for are; a big-endian one would store its own order and
/// read back only its own files, the magic being the same: not a case typist meets).
fn bytes_of(v: &[u32]) -> &[u8] {
    // SAFETY: u8 has no alignment and every u32 is 4 initialized bytes; the slice
    // covers exactly the memory of `v` and borrows it.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn bytes_of_mut(v: &mut [u32]) -> &mut [u8] {
    // SAFETY: as in `bytes_of`; any 4 bytes are a valid u32, so writing bytes through
    // the view cannot make an invalid value.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// The file's head: the words, and per language its name, files (path, hash, span) and
/// the lengths of its two arrays, which follow the head in the file in that order.
fn head(e: &Entry) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.u32(e.words.len() as u32);
    for word in &e.words {
        w.bytes(word.as_bytes());
    }
    w.u32(e.langs.len() as u32);
    for l in &e.langs {
        w.bytes(l.language.name().as_bytes());
        w.u32(l.files.len() as u32);
        for ((rel, hash), &(start, end)) in l.files.iter().zip(l.index.spans()) {
            w.bytes(rel.as_bytes());
            w.0.extend_from_slice(hash);
            w.u32(start);
            w.u32(end);
        }
        w.u32(l.index.tokens().len() as u32);
        w.u32(l.index.order().len() as u32);
    }
    w.0
}

/// A language as the head gives it: name, files, spans, and the arrays' lengths.
type HeadLang = (Language, Vec<(String, Hash)>, Vec<(u32, u32)>, usize, usize);

fn read_head(head: &[u8]) -> Option<(Vec<String>, Vec<HeadLang>)> {
    let mut r = Reader(head);
    let n = r.u32()? as usize;
    let mut words = Vec::with_capacity(n.min(head.len()));
    for _ in 0..n {
        words.push(String::from_utf8(r.bytes()?.to_vec()).ok()?);
    }
    let mut langs = Vec::new();
    for _ in 0..r.u32()? {
        let language = Language::from_name(std::str::from_utf8(r.bytes()?).ok()?)?;
        let nfiles = r.u32()? as usize;
        let mut files = Vec::with_capacity(nfiles.min(head.len()));
        let mut spans = Vec::with_capacity(nfiles.min(head.len()));
        for _ in 0..nfiles {
            let rel = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            let hash: Hash = r.take(32)?.try_into().ok()?;
            spans.push((r.u32()?, r.u32()?));
            files.push((rel, hash));
        }
        let (nt, no) = (r.u32()? as usize, r.u32()? as usize);
        if langs.iter().any(|l: &HeadLang| l.0 == language) {
            return None;
        }
        langs.push((language, files, spans, nt, no));
    }
    r.0.is_empty().then_some((words, langs))
}

/// Reads a cache file back: the head, then each array straight into its own buffer
/// (no copy of the whole file). `None` when it is missing or does not read back whole.
fn read_entry(path: &Path) -> Option<Entry> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    let mut f = std::io::BufReader::with_capacity(1 << 16, f);
    let mut fixed = vec![0u8; MAGIC.len() + 16];
    f.read_exact(&mut fixed).ok()?;
    let rest = fixed.strip_prefix(MAGIC)?;
    let sum = u64::from_le_bytes(rest[..8].try_into().ok()?);
    let head_len = u64::from_le_bytes(rest[8..16].try_into().ok()?);
    if head_len > size {
        return None;
    }
    let mut head = vec![0u8; head_len as usize];
    f.read_exact(&mut head).ok()?;
    let (words, langs) = read_head(&head)?;
    let arrays: u64 = langs.iter().map(|l| 4 * (l.3 + l.4) as u64).sum();
    if (MAGIC.len() + 16) as u64 + head_len + arrays != size {
        return None;
    }
    let mut read = Vec::with_capacity(langs.len());
    for (language, files, spans, nt, no) in langs {
        let mut tokens = vec![0u32; nt];
        f.read_exact(bytes_of_mut(&mut tokens)).ok()?;
        let mut order = vec![0u32; no];
        f.read_exact(bytes_of_mut(&mut order)).ok()?;
        read.push((language, files, spans, tokens, order));
    }
    let parts = std::iter::once(head.as_slice()).chain(
        read.iter()
            .flat_map(|(_, _, _, t, o)| [bytes_of(t), bytes_of(o)]),
    );
    if checksum(parts) != sum {
        tracing::debug!(file = %path.display(), "ngram index cache: checksum differs, ignored");
        return None;
    }
    let mut out = Vec::with_capacity(read.len());
    for (language, files, spans, tokens, order) in read {
        if tokens
            .iter()
            .any(|&t| t != u32::MAX && t as usize >= words.len())
        {
            return None;
        }
        let index = Index::from_parts(tokens, order, spans)?;
        out.push(LangIndex {
            language,
            files,
            index,
        });
    }
    Some(Entry { words, langs: out })
}

/// Reads a cache file back; `None` when it is missing or does not read back whole. A
/// file read is marked used (its modification time), for [`evict`].
pub(super) fn load(path: &Path) -> Option<Entry> {
    let entry = read_entry(path);
    if entry.is_some()
        && let Ok(f) = std::fs::File::options().write(true).open(path)
    {
        let _ = f.set_modified(std::time::SystemTime::now());
    } else if entry.is_none() && path.exists() {
        tracing::debug!(file = %path.display(), "ngram index cache: does not read back, ignored");
    }
    entry
}

/// Writes `entry` to `path` (a temporary file renamed over it), then trims the folder to
/// [`MAX_BYTES`]. A failure is logged and otherwise ignored: the cache only saves time.
pub(super) fn save(path: &Path, entry: &Entry) {
    use std::io::Write;
    let head = head(entry);
    let arrays = entry
        .langs
        .iter()
        .flat_map(|l| [bytes_of(l.index.tokens()), bytes_of(l.index.order())]);
    let sum = checksum(std::iter::once(head.as_slice()).chain(arrays.clone()));
    let Some(dir) = path.parent() else { return };
    // Unique to this write: `typist host --listen` serves sessions side by side in one
    // process.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}-{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("index"),
        std::process::id(),
        WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        f.write_all(MAGIC)?;
        f.write_all(&sum.to_le_bytes())?;
        f.write_all(&(head.len() as u64).to_le_bytes())?;
        f.write_all(&head)?;
        for a in arrays.clone() {
            f.write_all(a)?;
        }
        f.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&tmp, path)
    };
    match write() {
        Ok(()) => {
            tracing::debug!(file = %path.display(), "ngram index cache: written");
            evict(dir, MAX_BYTES);
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(file = %path.display(), error = %e, "ngram index cache: not written");
        }
    }
}

/// Removes the cache files least recently used until the folder's `.idx` files hold at
/// most `limit` bytes, and temporary files over an hour old (a host killed mid-write).
fn evict(dir: &Path, limit: u64) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let entries: Vec<std::fs::DirEntry> = rd.flatten().collect();
    for e in &entries {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "tmp")
            && e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < hour_ago)
        {
            let _ = std::fs::remove_file(&p);
        }
    }
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .iter()
        .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
        .filter_map(|e| {
            let md = e.metadata().ok()?;
            Some((md.modified().ok()?, md.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, p) in files {
        if total <= limit {
            break;
        }
        if std::fs::remove_file(&p).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        let index = Index::build(&[&[0, 1, 2, 1], &[2, 0]]);
        Entry {
            words: vec!["a".into(), "b".into(), "é".into()],
            langs: vec![LangIndex {
                language: Language::Python,
                files: vec![
                    ("x.py".into(), hash("a b é b")),
                    ("y.py".into(), hash("é a")),
                ],
                index,
            }],
        }
    }

    #[test]
    fn an_entry_reads_back_whole_and_a_damaged_one_not_at_all() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("ngram").join("k.idx");
        save(&p, &entry());
        let back = load(&p).unwrap();
        assert_eq!(back.words, entry().words);
        assert_eq!(back.langs[0].files, entry().langs[0].files);
        assert_eq!(
            back.langs[0].index.tokens(),
            entry().langs[0].index.tokens()
        );
        assert_eq!(back.langs[0].index.order(), entry().langs[0].index.order());
        let mut bytes = std::fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert!(load(&p).is_none(), "a flipped bit");
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        assert!(load(&p).is_none(), "a cut file");
        assert!(load(&t.path().join("none.idx")).is_none());
    }

    #[test]
    fn the_least_recently_used_files_go_first() {
        let t = tempfile::tempdir().unwrap();
        let now = std::time::SystemTime::now();
        for (i, name) in ["old.idx", "mid.idx", "new.idx"].iter().enumerate() {
            let p = t.path().join(name);
            std::fs::write(&p, vec![0u8; 100]).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(now - std::time::Duration::from_secs(100 - i as u64))
                .unwrap();
        }
        std::fs::write(t.path().join("other.txt"), vec![0u8; 1000]).unwrap();
        // A temporary file of a host killed mid-write two hours ago goes; a fresh one
        // (a write under way) stays.
        for (name, age) in [(".a.idx.1-0.tmp", 7200), (".b.idx.2-0.tmp", 0)] {
            let p = t.path().join(name);
            std::fs::write(&p, b"x").unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(now - std::time::Duration::from_secs(age))
                .unwrap();
        }
        evict(t.path(), 200);
        assert!(!t.path().join("old.idx").exists());
        assert!(t.path().join("mid.idx").exists() && t.path().join("new.idx").exists());
        assert!(t.path().join("other.txt").exists());
        assert!(!t.path().join(".a.idx.1-0.tmp").exists());
        assert!(t.path().join(".b.idx.2-0.tmp").exists());
    }

    #[test]
    fn the_name_depends_on_the_paths_and_languages_not_their_order() {
        let d = Path::new("/c");
        let a = vec![
            ("a.py".to_string(), Language::Python),
            ("b.js".into(), Language::JavaScript),
        ];
        let b = vec![a[1].clone(), a[0].clone()];
        assert_eq!(path_for(d, &a), path_for(d, &b));
        assert_ne!(path_for(d, &a), path_for(d, &a[..1]));
    }
}
