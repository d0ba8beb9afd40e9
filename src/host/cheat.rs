//! The cheating backend (`typist host --backend cheat`): the adversary of the replay's
//! honesty invariant. It reads every file of its workspace from disk at `initialize`,
//! at every `didOpen` and at every request, remembers every version of every file it
//! has ever seen (disk copies and the editor's documents alike), and answers a request
//! at line n with the rest of line n of any remembered version of that file that
//! starts with what the user has typed. Against an honest driver it finds nothing: the
//! server never holds a copy of the line it is asked to predict.

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
