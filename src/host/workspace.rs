//! The n-gram backend's model of the workspace (`--ngram-context workspace`): counts of
//! the workspace's files read at `initialize`, files open in the editor shadowing their
//! disk content, and the prediction from what the editor shows.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::ngram::{self, Counts, Vocab, predict_line, tokenize};
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

#[derive(Default)]
pub(super) struct Model {
    vocab: Vocab,
    /// Workspace files by path: language and token ids (read once at `initialize`).
    crawled: HashMap<PathBuf, (Language, Vec<u32>)>,
    /// Per language: counts of every crawled file not currently open.
    workspace: HashMap<Language, Counts>,
    /// Crawled files that are open: their disk content is not used, the editor's is.
    shadowed: HashSet<PathBuf>,
    /// Counts of each open document's text (the lines above the cursor for the one
    /// asked about), extended as the document grows.
    open_counts: HashMap<String, ngram::GrowingCounts>,
}

impl Model {
    /// Reads the workspace's source files under `root` (ignore files respected).
    pub(super) fn crawl(&mut self, root: &Path) {
        let walker = ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            .build();
        for entry in walker.flatten() {
            let path = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Some(lang) = path
                .extension()
                .and_then(|e| e.to_str())
                .and_then(Language::from_extension)
            else {
                continue;
            };
            if entry
                .metadata()
                .map(|md| md.len() > MAX_CRAWL_FILE)
                .unwrap_or(true)
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let ids: Vec<u32> = tokenize(&text).iter().map(|t| self.vocab.id(t)).collect();
            self.workspace.entry(lang).or_default().add(&ids, 1);
            self.crawled.insert(path.to_path_buf(), (lang, ids));
        }
    }

    /// Takes a crawled file's disk content out of the counts while it is open (`on`),
    /// and back when it is closed.
    pub(super) fn shadow(&mut self, path: &Path, on: bool) {
        let Some((lang, ids)) = self.crawled.get(path) else {
            return;
        };
        let already = self.shadowed.contains(path);
        if on && !already {
            self.workspace.entry(*lang).or_default().add(ids, -1);
            self.shadowed.insert(path.to_path_buf());
        } else if !on && already {
            self.workspace.entry(*lang).or_default().add(ids, 1);
            self.shadowed.remove(path);
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
        let empty = Counts::default();
        let ws = doc
            .language
            .and_then(|l| self.workspace.get(&l))
            .unwrap_or(&empty);
        let mut tables: Vec<(&Counts, i64)> = keys
            .iter()
            .filter_map(|k| self.open_counts.get(k))
            .map(|g| (&g.counts, OPEN_WEIGHT))
            .collect();
        tables.push((&below, OPEN_WEIGHT));
        tables.push((ws, 1));
        predict_line(&self.vocab, &prefix_ids, &tables)
    }
}
