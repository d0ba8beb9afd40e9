//! The n-gram backend's model of the workspace (`--ngram-context workspace`): counts of
//! the workspace's files read at `initialize`, files open in the editor shadowing their
//! disk content, and the prediction from what the editor shows.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::index::{self, Index, Part};
use super::index_cache;
use super::ngram::{self, Counts, Next, Vocab, predict_line, tokenize};
use crate::dataset::Language;

/// An open document as the host holds it: its text, language and path on disk.
pub(super) struct Doc {
    pub(super) text: String,
    pub(super) language: Option<Language>,
    pub(super) path: Option<PathBuf>,
}

const MAX_CRAWL_FILE: u64 = 1 << 20;
/// Weight of counts from the open documents against the workspace's.
const OPEN_WEIGHT: i64 = 4;

/// Which index of a language holds a crawled file's content.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Which {
    /// The workspace's index (built at `initialize`, or read from the cache).
    Main,
    /// The files whose content on disk the cached index does not hold.
    Delta,
}

/// A file found at `initialize`: its path, its path relative to the root, its language.
struct Found {
    path: PathBuf,
    rel: String,
    language: Language,
}

#[derive(Default)]
pub(super) struct Model {
    vocab: Vocab,
    /// Per language and [`Which`]: the index of the workspace's files, with the files
    /// not in the answers left out (open ones, and stale cached ones).
    parts: HashMap<(Language, Which), Part>,
    /// Files whose content on disk the cached index does not hold, indexed apart at
    /// the first prediction in their language.
    pending: Vec<(PathBuf, Language, String)>,
    /// Where each crawled file's content is indexed: its part and number there.
    at: HashMap<PathBuf, (Language, Which, usize)>,
    /// Crawled files that are open: their disk content is not used, the editor's is.
    shadowed: HashSet<PathBuf>,
    /// Counts of each open document's text (the lines above the cursor for the one
    /// asked about), extended as the document grows.
    open_counts: HashMap<String, ngram::GrowingCounts>,
}

fn ids_of(vocab: &mut Vocab, text: &str) -> Vec<u32> {
    tokenize(text).iter().map(|t| vocab.id(t)).collect()
}

impl Model {
    /// Reads the workspace's source files under `root` (ignore files respected) into an
    /// index per language: from the cache when it holds this workspace (the files whose
    /// content differs left out and indexed apart), else built and cached.
    pub(super) fn crawl(&mut self, root: &Path) {
        let t0 = std::time::Instant::now();
        let found = walk(root);
        let names: Vec<(String, Language)> =
            found.iter().map(|f| (f.rel.clone(), f.language)).collect();
        let cache = index_cache::dir().map(|d| index_cache::path_for(&d, &names));
        // Each file's text and its hash, read once.
        let texts: Vec<Option<(String, index_cache::Hash)>> = found
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(&f.path).ok()?;
                let h = index_cache::hash(&t);
                Some((t, h))
            })
            .collect();
        let total: usize = texts.iter().flatten().map(|(t, _)| t.len()).sum();
        let read_ms = t0.elapsed().as_millis() as u64;
        if let Some(entry) = cache.as_deref().and_then(index_cache::load) {
            let load_ms = t0.elapsed().as_millis() as u64 - read_ms;
            // Which of the cached files hold what is on disk now.
            let mut cached: HashMap<(&str, Language), (usize, &index_cache::Hash)> = HashMap::new();
            for l in &entry.langs {
                for (i, (rel, h)) in l.files.iter().enumerate() {
                    cached.insert((rel.as_str(), l.language), (i, h));
                }
            }
            let mut kept: HashMap<(Language, usize), &Path> = HashMap::new();
            let mut delta: Vec<(&Found, &str)> = Vec::new();
            for (f, text) in found.iter().zip(&texts) {
                let Some((t, hash)) = text else { continue };
                match cached.get(&(f.rel.as_str(), f.language)) {
                    Some(&(i, h)) if h == hash => {
                        kept.insert((f.language, i), &f.path);
                    }
                    _ => delta.push((f, t)),
                }
            }
            // Reused while what differs is small beside the whole; else built anew.
            let delta_bytes: usize = delta.iter().map(|(_, t)| t.len()).sum();
            if 4 * delta_bytes <= total {
                let stale = entry.langs.iter().map(|l| l.files.len()).sum::<usize>() - kept.len();
                for (&(lang, i), path) in &kept {
                    self.at.insert(path.to_path_buf(), (lang, Which::Main, i));
                }
                self.pending = delta
                    .iter()
                    .map(|(f, t)| (f.path.clone(), f.language, t.to_string()))
                    .collect();
                self.vocab = Vocab::from_words(entry.words);
                for l in entry.langs {
                    let n = l.files.len();
                    let mut part = Part::new(l.index);
                    for i in (0..n).filter(|i| !kept.contains_key(&(l.language, *i))) {
                        part.set_excluded(i, true);
                    }
                    self.parts.insert((l.language, Which::Main), part);
                }
                tracing::debug!(
                    files = found.len(),
                    index_bytes = self.index_bytes(),
                    stale,
                    apart = self.pending.len(),
                    read_ms,
                    load_ms,
                    ms = t0.elapsed().as_millis() as u64,
                    "ngram index: read from the cache"
                );
                return;
            }
        }
        self.build_main(&found, texts, cache.as_deref());
        tracing::debug!(
            files = found.len(),
            bytes = total,
            index_bytes = self.index_bytes(),
            ms = t0.elapsed().as_millis() as u64,
            "ngram index: built"
        );
    }

    fn index_bytes(&self) -> usize {
        self.parts.values().map(|p| p.index.bytes()).sum()
    }

    /// Indexes every file found (walk order) and caches the index at `cache`.
    fn build_main(
        &mut self,
        found: &[Found],
        texts: Vec<Option<(String, index_cache::Hash)>>,
        cache: Option<&Path>,
    ) {
        // Per language: the files (path, hash) and their token ids.
        type Files = (Vec<(String, index_cache::Hash)>, Vec<Vec<u32>>);
        let mut by_lang: HashMap<Language, Files> = HashMap::new();
        let mut tokens = 0;
        for (f, text) in found.iter().zip(texts) {
            let Some((t, hash)) = text else { continue };
            let ids = ids_of(&mut self.vocab, &t);
            tokens += ids.len() + 1;
            if tokens > index::MAX_TOKENS / 2 {
                tracing::warn!(file = %f.path.display(), "ngram index: the workspace is too large; this file and the rest are left out");
                break;
            }
            let (files, seqs) = by_lang.entry(f.language).or_default();
            self.at
                .insert(f.path.clone(), (f.language, Which::Main, files.len()));
            files.push((f.rel.clone(), hash));
            seqs.push(ids);
        }
        let mut langs: Vec<index_cache::LangIndex> = by_lang
            .into_iter()
            .map(|(language, (files, seqs))| {
                let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
                index_cache::LangIndex {
                    language,
                    files,
                    index: Index::build(&refs),
                }
            })
            .collect();
        langs.sort_by_key(|l| l.language);
        let entry = index_cache::Entry {
            words: self.vocab.words().to_vec(),
            langs,
        };
        if let Some(p) = cache
            && !entry.langs.is_empty()
        {
            index_cache::save(p, &entry);
        }
        for l in entry.langs {
            self.parts
                .insert((l.language, Which::Main), Part::new(l.index));
        }
    }

    /// Indexes the files waiting in `language` (their content differs from the cached
    /// index's), leaving out those open.
    fn index_pending(&mut self, language: Language) {
        if !self.pending.iter().any(|(_, l, _)| *l == language) {
            return;
        }
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(_, l, _)| *l == language);
        self.pending = rest;
        let seqs: Vec<Vec<u32>> = mine
            .iter()
            .map(|(_, _, t)| ids_of(&mut self.vocab, t))
            .collect();
        let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
        let mut part = Part::new(Index::build(&refs));
        for (i, (path, _, _)) in mine.iter().enumerate() {
            self.at.insert(path.clone(), (language, Which::Delta, i));
            if self.shadowed.contains(path) {
                part.set_excluded(i, true);
            }
        }
        self.parts.insert((language, Which::Delta), part);
    }

    /// Takes a crawled file's disk content out of the answers while it is open (`on`),
    /// and back when it is closed.
    pub(super) fn shadow(&mut self, path: &Path, on: bool) {
        let already = self.shadowed.contains(path);
        if on == already {
            return;
        }
        if on {
            self.shadowed.insert(path.to_path_buf());
        } else {
            self.shadowed.remove(path);
        }
        if let Some(&(lang, which, i)) = self.at.get(path)
            && let Some(part) = self.parts.get_mut(&(lang, which))
        {
            part.set_excluded(i, on);
        }
    }

    /// The rest of the line at byte `at` of `doc` (open as `uri` among `docs`).
    pub(super) fn predict(
        &mut self,
        uri: &str,
        doc: &Doc,
        docs: &HashMap<String, Doc>,
        at: usize,
    ) -> String {
        let prefix = &doc.text[..at];
        let prefix_ids: Vec<u32> = tokenize(prefix).iter().map(|t| self.vocab.id(t)).collect();
        // What the editor shows: the lines above the cursor, the text below the
        // cursor's line, and the other open documents of the same language.
        let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
        let mut keys = vec![uri.to_string()];
        self.open_counts
            .entry(uri.to_string())
            .or_default()
            .update(&mut self.vocab, &doc.text[..line_start]);
        for (u, d) in docs.iter() {
            if u != uri && d.language == doc.language {
                self.open_counts
                    .entry(u.clone())
                    .or_default()
                    .update(&mut self.vocab, &d.text);
                keys.push(u.clone());
            }
        }
        let mut below = Counts::default();
        if let Some(i) = doc.text[at..].find('\n') {
            let ids: Vec<u32> = tokenize(&doc.text[at + i..])
                .iter()
                .map(|t| self.vocab.id(t))
                .collect();
            below.add(&ids, 1);
        }
        if let Some(l) = doc.language {
            self.index_pending(l);
        }
        let mut tables: Vec<(&dyn Next, i64)> = keys
            .iter()
            .filter_map(|k| self.open_counts.get(k))
            .map(|g| (&g.counts as &dyn Next, OPEN_WEIGHT))
            .collect();
        tables.push((&below, OPEN_WEIGHT));
        if let Some(l) = doc.language {
            for which in [Which::Main, Which::Delta] {
                if let Some(p) = self.parts.get(&(l, which)) {
                    tables.push((p, 1));
                }
            }
        }
        predict_line(&self.vocab, &prefix_ids, &tables)
    }
}

/// The workspace's source files under `root` (ignore files respected, at most
/// [`MAX_CRAWL_FILE`] bytes each), in the walk's order.
fn walk(root: &Path) -> Vec<Found> {
    let walker = ignore::WalkBuilder::new(root)
        .require_git(false)
        .follow_links(false)
        .build();
    let mut out = Vec::new();
    for entry in walker.flatten() {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(language) = Language::of_path(path) else {
            continue;
        };
        if entry
            .metadata()
            .map(|md| md.len() > MAX_CRAWL_FILE)
            .unwrap_or(true)
        {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        out.push(Found {
            path: path.to_path_buf(),
            rel,
            language,
        });
    }
    out
}
