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
const MAGIC: &[u8] = b"typist ngram index 1 (order 16, crawl 1 MiB)\n";

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
    let base = if let Some(d) = env("TYPIST_CACHE_DIR") {
        if d == "off" {
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
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{hex}.idx"))
}

fn checksum(body: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(body);
    h.write_usize(body.len());
    h.finish()
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
    fn u32s(&mut self, v: &[u32]) {
        self.u32(v.len() as u32);
        self.0.reserve(4 * v.len());
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
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
    fn u32s(&mut self) -> Option<Vec<u32>> {
        let n = self.u32()? as usize;
        let b = self.take(n.checked_mul(4)?)?;
        Some(
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }
}

fn encode(e: &Entry) -> Vec<u8> {
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
        w.u32s(l.index.tokens());
        w.u32s(l.index.order());
    }
    w.0
}

fn decode(body: &[u8]) -> Option<Entry> {
    let mut r = Reader(body);
    let n = r.u32()? as usize;
    let mut words = Vec::with_capacity(n.min(body.len()));
    for _ in 0..n {
        words.push(String::from_utf8(r.bytes()?.to_vec()).ok()?);
    }
    let mut langs = Vec::new();
    for _ in 0..r.u32()? {
        let name = std::str::from_utf8(r.bytes()?).ok()?;
        let language = Language::from_name(name)?;
        let nfiles = r.u32()? as usize;
        let mut files = Vec::with_capacity(nfiles.min(body.len()));
        let mut spans = Vec::with_capacity(nfiles.min(body.len()));
        for _ in 0..nfiles {
            let rel = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            let hash: Hash = r.take(32)?.try_into().ok()?;
            spans.push((r.u32()?, r.u32()?));
            files.push((rel, hash));
        }
        let tokens = r.u32s()?;
        let order = r.u32s()?;
        if tokens
            .iter()
            .any(|&t| t != u32::MAX && t as usize >= words.len())
        {
            return None;
        }
        let index = Index::from_parts(tokens, order, spans)?;
        langs.push(LangIndex {
            language,
            files,
            index,
        });
    }
    r.0.is_empty().then_some(Entry { words, langs })
}

/// Reads a cache file back; `None` when it is missing or does not read back whole. A
/// file read is marked used (its modification time), for [`evict`].
pub(super) fn load(path: &Path) -> Option<Entry> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (sum, body) = rest.split_at_checked(8)?;
    if u64::from_le_bytes(sum.try_into().ok()?) != checksum(body) {
        tracing::debug!(file = %path.display(), "ngram index cache: checksum differs, ignored");
        return None;
    }
    let entry = decode(body);
    if entry.is_none() {
        tracing::debug!(file = %path.display(), "ngram index cache: does not read back, ignored");
    } else if let Ok(f) = std::fs::File::options().write(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    entry
}

/// Writes `entry` to `path` (a temporary file renamed over it), then trims the folder to
/// [`MAX_BYTES`]. A failure is logged and otherwise ignored: the cache only saves time.
pub(super) fn save(path: &Path, entry: &Entry) {
    let body = encode(entry);
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&checksum(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    let Some(dir) = path.parent() else { return };
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("index"),
        std::process::id()
    ));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&tmp, &bytes))
        .and_then(|_| std::fs::rename(&tmp, path));
    match written {
        Ok(()) => {
            tracing::debug!(file = %path.display(), bytes = bytes.len(), "ngram index cache: written");
            evict(dir, MAX_BYTES);
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(file = %path.display(), error = %e, "ngram index cache: not written");
        }
    }
}

/// Removes the cache files least recently used until the folder's `.idx` files hold at
/// most `limit` bytes.
fn evict(dir: &Path, limit: u64) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
        .flatten()
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
        evict(t.path(), 200);
        assert!(!t.path().join("old.idx").exists());
        assert!(t.path().join("mid.idx").exists() && t.path().join("new.idx").exists());
        assert!(t.path().join("other.txt").exists());
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
