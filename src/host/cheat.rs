//! The cheating backend (`typist host --backend cheat`): the adversary of the replay's
//! honesty invariant. It reads every file of its workspace from disk at `initialize`,
//! at every `didOpen` and at every request, remembers every version of every file it
//! has ever seen (disk copies and the editor's documents alike), and answers a request
//! at line n with the rest of line n of any remembered version of that file that
//! starts with what the user has typed. Against an honest driver it finds nothing: the
//! server never holds a copy of the line it is asked to predict.
//!
//! A completion request is answered with every identifier it can read (disk, every
//! version of every document), the identifier standing at the cursor in any version
//! first; `tests/suite/completion.rs` checks it never finds a token that only appears
//! later.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Files larger than this are not read (the workspace copies are small).
const MAX_FILE: u64 = 4 << 20;

#[derive(Default)]
pub struct Memory {
    root: Option<PathBuf>,
    seen: HashMap<PathBuf, BTreeSet<String>>,
}

impl Memory {
    pub fn set_root(&mut self, root: PathBuf) {
        self.root = Some(root);
    }

    /// Reads the whole workspace as it is on disk now, hidden and ignored files too.
    pub fn read_workspace(&mut self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        let walker = ignore::WalkBuilder::new(&root)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file())
                || entry.metadata().map(|m| m.len() > MAX_FILE).unwrap_or(true)
            {
                continue;
            }
            if let Ok(bytes) = std::fs::read(entry.path()) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                self.remember(entry.path(), text);
            }
        }
    }

    pub fn remember(&mut self, path: &Path, text: String) {
        self.seen
            .entry(path.to_path_buf())
            .or_default()
            .insert(text);
    }

    /// The rest of 0-based line `line` of `path` after `typed`, from any version seen.
    pub fn peek(&self, path: &Path, line: usize, typed: &str) -> Option<String> {
        self.seen
            .get(path)?
            .iter()
            .filter_map(|text| text.split('\n').nth(line))
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .filter(|l| l.len() > typed.len() && l.starts_with(typed))
            .map(|l| l[typed.len()..].to_string())
            .next()
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

impl Memory {
    /// A completion list made of everything it has read (issue 11's adversary): first
    /// the identifier standing at the cursor in any version of `path` whose line starts
    /// with what the line holds before the cursor (`before`), then every identifier of
    /// every version of every file, each once, in name order.
    pub fn completion_items(
        &self,
        path: &Path,
        line: usize,
        before: &str,
    ) -> Vec<(String, String)> {
        let word_start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_ident(*c))
            .last()
            .map_or(before.len(), |(i, _)| i);
        let word = &before[word_start..];
        let mut out = Vec::new();
        if let Some(rest) = self.peek(path, line, before) {
            let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            if word.len() + end > 0 {
                out.push((format!("{word}{}", &rest[..end]), "0".to_string()));
            }
        }
        let mut all = BTreeSet::new();
        for text in self.seen.values().flatten() {
            for w in text.split(|c: char| !is_ident(c)) {
                if w.chars().next().is_some_and(|c| !c.is_ascii_digit()) {
                    all.insert(w);
                }
            }
        }
        out.extend(all.into_iter().map(|w| (w.to_string(), format!("1{w}"))));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_line_in_any_version_it_has_seen() {
        let mut m = Memory::default();
        let p = Path::new("/w/a.py");
        m.remember(p, "import os\n".into());
        assert_eq!(m.peek(p, 1, ""), None);
        m.remember(p, "import os\nprint(os.sep)\n".into());
        assert_eq!(m.peek(p, 1, "pri").as_deref(), Some("nt(os.sep)"));
        assert_eq!(m.peek(p, 1, "x"), None);
        assert_eq!(m.peek(Path::new("/w/b.py"), 0, ""), None);
    }

    #[test]
    fn lists_the_token_at_the_cursor_from_any_version_first() {
        let mut m = Memory::default();
        let p = Path::new("/w/a.py");
        m.remember(p, "import os\nos.".into());
        let items = m.completion_items(p, 1, "os.");
        assert_eq!(
            items,
            [
                ("import".into(), "1import".into()),
                ("os".into(), "1os".into())
            ]
        );
        m.remember(p, "import os\nos.path.join\n".into());
        let items = m.completion_items(p, 1, "os.pa");
        assert_eq!(items[0], ("path".to_string(), "0".to_string()));
        assert!(items.contains(&("join".to_string(), "1join".to_string())));
    }

    #[test]
    fn reads_the_workspace_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".hidden")).unwrap();
        std::fs::write(dir.path().join(".hidden/x.py"), "a = 1\nb = 2\n").unwrap();
        let mut m = Memory::default();
        m.set_root(dir.path().to_path_buf());
        m.read_workspace();
        assert_eq!(
            m.peek(&dir.path().join(".hidden/x.py"), 1, "").as_deref(),
            Some("b = 2")
        );
    }
}
