//! The crate's files form no circle, and no arrow runs up the layers of
//! `ARCHITECTURE.md`'s code map: read from the project's own sources, so the rule is
//! kept by the test suite rather than by review.
//!
//! What counts as an edge from file A to file B (each file under `src/` is a module:
//! `src/a/b.rs` and `src/a/b/mod.rs` are `crate::a::b`; `lib.rs` and `main.rs` are the
//! roots of the library and the binary, where `typist::` means the library's `crate::`):
//! - a path in a `use` item (braces expanded; `crate::`, `super::`, `self::`, or a
//!   child module this file declares), resolved to the deepest file it names;
//! - a `crate::…`, `super::…` or `self::…` path in code, and `child::…` for a child
//!   module this file declares with `mod child;`;
//! - a path that ends at an item a module file re-exports (`pub use x::Item`) goes on to
//!   the file that defines it, so a facade's re-export is not a circle with its users
//!   (the re-export itself is an edge from the facade to the file).
//!
//! Comments are not read. Inside a file's `mod tests { … }` (which runs to the end of
//! the file), `super::` is the file itself. `mod x;` declarations are containment, not
//! edges, and an edge to a crate root (`lib.rs`, `main.rs`) is none.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of `ARCHITECTURE.md`'s code map, lowest first: a module path (its longest
/// listed prefix decides) and its rank. An arrow between two entries must go to a
/// strictly lower rank; within one entry only circles are refused. A module missing
/// here fails the test, so a new one gets a layer when it is added.
const LAYERS: &[(&str, u32)] = &[
    ("digest", 0),
    ("jail", 0),
    ("lang", 0),
    ("lines", 0),
    ("os", 0),
    ("secrets", 0),
    ("lsp", 1),
    ("dataset", 1),
    ("score", 1),
    ("vault", 1),
    ("sandbox", 1),
    ("copilot", 2),
    ("editor", 3),
    ("copilot::login", 4),
    ("host", 4),
    ("service", 4),
    ("replay", 5),
    ("doctor", 5),
    ("report", 6),
    ("config", 6),
    ("drill", 6),
    ("bench", 6),
    ("check", 6),
    ("hub", 6),
    ("cli", 7),
];

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// One source file: where it is, its module path, which crate it belongs to.
struct File {
    rel: String,
    module: Vec<String>,
    bin: bool,
}

fn files() -> Vec<File> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(SRC)];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(SRC).unwrap().to_string_lossy().into_owned();
                let mut module: Vec<String> = rel
                    .trim_end_matches(".rs")
                    .split('/')
                    .map(String::from)
                    .collect();
                if module
                    .last()
                    .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
                {
                    module.pop();
                }
                let bin = rel == "main.rs" || rel.starts_with("cli/");
                out.push(File { rel, module, bin });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// The file a module path names, walking folders as far as files exist; the rest of the
/// path (items) is returned beside it.
fn resolve_file(path: &[String], bin: bool) -> (String, usize) {
    let mut file = if bin { "main.rs" } else { "lib.rs" }.to_string();
    let mut dir = String::new();
    let mut used = 0;
    for s in path {
        let flat = format!("{dir}{s}.rs");
        let folder = format!("{dir}{s}/mod.rs");
        if Path::new(SRC).join(&flat).is_file() {
            file = flat;
        } else if Path::new(SRC).join(&folder).is_file() {
            file = folder;
        } else {
            break;
        }
        dir = format!("{dir}{s}/");
        used += 1;
    }
    (file, used)
}

/// Removes comments (line and block) and the text of string literals, keeping lines.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
            // A raw string's hashes are left as they are; its text is dropped.
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                } else if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = src[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (each as segments).
fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let mut pre = prefix.to_vec();
        pre.extend(head);
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &pre, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &pre, out);
    } else if !tree.is_empty() {
        let tree = tree.split(" as ").next().unwrap();
        let mut p = prefix.to_vec();
        p.extend(tree.split("::").map(|s| s.trim().to_string()));
        // `a::{self, b}`: `self` is `a`.
        if p.len() > 1 && p.last().is_some_and(|s| s == "self") {
            p.pop();
        }
        out.push(p);
    }
}

/// The `use` items of stripped source (visibility dropped), as paths, with the byte
/// ranges they cover.
fn uses(code: &str) -> Vec<(Vec<String>, bool, std::ops::Range<usize>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ") {
        let s = i + at;
        i = s + 4;
        if s > 0 && is_ident(b[s - 1]) {
            continue;
        }
        let line_start = code[..s].rfind('\n').map_or(0, |n| n + 1);
        let before = code[line_start..s].trim();
        if !(before.is_empty() || before.starts_with("pub")) {
            continue;
        }
        let Some(end) = code[s..].find(';') else {
            break;
        };
        let mut paths = Vec::new();
        expand(&code[s + 4..s + end], &[], &mut paths);
        for p in paths {
            out.push((p, before.starts_with("pub"), line_start..s + end + 1));
        }
        i = s + end + 1;
    }
    out
}

/// `crate::a::B`, `super::x::y`, `self::z` and `child::w` paths in code (not in `use`).
fn code_paths(code: &str, children: &BTreeSet<String>) -> Vec<(Vec<String>, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_ident(b[i]) && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':')) {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                if s == j {
                    break;
                }
                segs.push(code[s..j].to_string());
                if b[j..].starts_with(b"::") && j + 2 < b.len() && is_ident(b[j + 2]) {
                    j += 2;
                } else {
                    break;
                }
            }
            let first = segs[0].as_str();
            let rooted = matches!(first, "crate" | "super" | "self" | "typist");
            if segs.len() > 1 && (rooted || children.contains(first)) {
                out.push((segs, i));
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// A file's edges: the files it names, each with the first place that names it.
struct Graph {
    files: Vec<File>,
    /// stripped text of each file
    code: BTreeMap<String, String>,
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

impl Graph {
    fn index(&self, rel: &str) -> &File {
        self.files.iter().find(|f| f.rel == rel).unwrap()
    }

    /// The children a file declares with `mod x;`.
    fn children(&self, rel: &str) -> BTreeSet<String> {
        let code = &self.code[rel];
        code.lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l
                    .strip_prefix("pub ")
                    .or(l.strip_prefix("pub(crate) "))
                    .unwrap_or(l);
                l.strip_prefix("mod ")?.strip_suffix(';').map(String::from)
            })
            .collect()
    }

    /// A path as used in `from` (relative to its module, or in a test module) made
    /// absolute; `None` for an external crate.
    fn absolute(&self, from: &File, path: &[String], in_tests: bool) -> Option<Vec<String>> {
        let mut module = from.module.clone();
        if in_tests {
            module.push("tests".into());
        }
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                module.clear();
                rest = &rest[1..];
            }
            Some("typist") if from.bin => return Some(lib_marker(&rest[1..])),
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    module.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) if self.children(&from.rel).contains(first) => {}
            _ => return None,
        }
        if in_tests && module.last().is_some_and(|m| m == "tests") {
            module.pop();
        }
        module.extend(rest.iter().cloned());
        Some(module)
    }

    /// The file an absolute path names, following re-exports.
    fn target(&self, path: &[String], bin: bool, depth: u32) -> String {
        let (bin, path) = match path.first().map(String::as_str) {
            Some(LIB) => (false, &path[1..]),
            _ => (bin, path),
        };
        let (file, used) = resolve_file(path, bin);
        if depth < 8
            && let Some(item) = path.get(used)
            && let Some(code) = self.code.get(&file)
        {
            let owner = self.index(&file);
            for (p, public, _) in uses(code) {
                if public
                    && p.last() == Some(item)
                    && let Some(abs) = self.absolute(owner, &p, false)
                {
                    let mut next = abs;
                    next.extend(path[used + 1..].iter().cloned());
                    return self.target(&next, owner.bin, depth + 1);
                }
            }
        }
        file
    }
}

const LIB: &str = "<lib>";

fn lib_marker(p: &[String]) -> Vec<String> {
    let mut v = vec![LIB.to_string()];
    v.extend(p.iter().cloned());
    v
}

fn build() -> Graph {
    let files = files();
    let code: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            (
                f.rel.clone(),
                strip(&std::fs::read_to_string(Path::new(SRC).join(&f.rel)).unwrap()),
            )
        })
        .collect();
    let mut g = Graph {
        files,
        code,
        edges: BTreeMap::new(),
    };
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for f in &g.files {
        let code = &g.code[&f.rel];
        let tests_at = code.find("mod tests {").unwrap_or(code.len());
        let line = |at: usize| code[..at].matches('\n').count() + 1;
        let mut add = |to: String, at: usize, what: &[String]| {
            if to != f.rel && to != "lib.rs" && to != "main.rs" {
                edges
                    .entry(f.rel.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{}:{}: {}", f.rel, line(at), what.join("::")));
            }
        };
        let mut blank = code.clone().into_bytes();
        for (p, _, range) in uses(code) {
            if let Some(abs) = g.absolute(f, &p, range.start > tests_at) {
                add(g.target(&abs, f.bin, 0), range.start, &p);
            }
            for b in &mut blank[range] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
        let rest = String::from_utf8(blank).unwrap();
        for (p, at) in code_paths(&rest, &g.children(&f.rel)) {
            if let Some(abs) = g.absolute(f, &p, at > tests_at) {
                add(g.target(&abs, f.bin, 0), at, &p);
            }
        }
    }
    g.edges = edges;
    g
}

/// The layer entry of a file: its longest listed module prefix.
fn layer(f: &File) -> Option<(&'static str, u32)> {
    // The binary's root is the CLI's, as `cli/` is.
    let m = if f.rel == "main.rs" {
        "cli".to_string()
    } else {
        f.module.join("::")
    };
    LAYERS
        .iter()
        .filter(|(p, _)| m == *p || m.starts_with(&format!("{p}::")))
        .max_by_key(|(p, _)| p.len())
        .copied()
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(next) = t.edges.get(v) {
            for w in next.keys() {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let l = t.low[w].min(t.low[v]);
                    t.low.insert(v, l);
                } else if t.on.contains(w) {
                    let l = t.index[w].min(t.low[v]);
                    t.low.insert(v, l);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_circle_between_files() {
    let g = build();
    let mut report = String::new();
    for c in circles(&g.edges) {
        report.push_str(&format!("circle: {}\n", c.join(" ")));
        for a in &c {
            for (b, why) in &g.edges[a] {
                if c.contains(b) {
                    report.push_str(&format!("  {a} -> {b}  ({why})\n"));
                }
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn no_arrow_up_the_layers() {
    let g = build();
    let mut report = String::new();
    for f in &g.files {
        let Some((from_layer, from_rank)) = layer(f) else {
            if f.rel != "lib.rs" {
                report.push_str(&format!("{}: no layer in LAYERS\n", f.rel));
            }
            continue;
        };
        for (to, why) in g.edges.get(&f.rel).into_iter().flatten() {
            let (to_layer, to_rank) = layer(g.index(to)).unwrap_or(("?", u32::MAX));
            if to_layer != from_layer && to_rank >= from_rank {
                report.push_str(&format!(
                    "{} ({from_layer}, {from_rank}) -> {to} ({to_layer}, {to_rank})  ({why})\n",
                    f.rel
                ));
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// The editors' own folders, which only the editor layer's interface files may import.
const EDITOR_FOLDERS: &[&str] = &["editor/typist/", "editor/neovim/", "editor/vscode/"];

/// The layers that drive an editor through its interface only (`EditorSession`, the
/// editors host, the shared vocabulary of `editor/`), never one editor's own files.
const INTERFACE_ONLY: &[&str] = &[
    "replay/",
    "cli/",
    "bench/",
    "drill/",
    "doctor.rs",
    "config.rs",
    "main.rs",
];

#[test]
fn the_replay_and_the_commands_know_only_the_editor_interface() {
    let g = build();
    let mut report = String::new();
    for f in &g.files {
        if !INTERFACE_ONLY.iter().any(|p| f.rel.starts_with(p)) {
            continue;
        }
        for (to, why) in g.edges.get(&f.rel).into_iter().flatten() {
            if EDITOR_FOLDERS.iter().any(|p| to.starts_with(p)) {
                report.push_str(&format!("{} -> {to}  ({why})\n", f.rel));
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// The reader sees what it must: a few edges known to exist, and a circle added on
/// purpose to a copy of the graph is found.
#[test]
fn the_graph_sees_known_edges() {
    let g = build();
    let has = |a: &str, b: &str| g.edges.get(a).is_some_and(|e| e.contains_key(b));
    assert!(
        has("editor/typist/mod.rs", "lsp/client.rs"),
        "{:?}",
        g.edges.get("editor/typist/mod.rs")
    );
    assert!(has("replay/worker.rs", "editor/options.rs"));
    assert!(has("main.rs", "cli/args.rs"));
    // The binary's paths into the library (`typist::…`) are edges to its files.
    assert!(has("cli/run.rs", "editor/profile.rs"));
    let mut edges = g.edges.clone();
    edges
        .entry("lsp/client.rs".into())
        .or_default()
        .insert("editor/typist/mod.rs".into(), "made up".into());
    assert!(!circles(&edges).is_empty());
}
