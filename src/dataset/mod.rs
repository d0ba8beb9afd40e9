//! The `dataset` layer: walking repositories (respecting ignore files), language
//! detection, code-line classification, seeded sampling, and the plan of cases.
//! Knows nothing of LSP, servers or scoring.
//!
//! Sampling follows the study (methodology §1): every code line is a case with
//! probability `rate`. The draw for a line is a hash of (seed, repo, file, line), so a
//! line's fate does not depend on the order files are walked or on other files.

pub mod classify;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Java,
    JavaScript,
    TypeScript,
    Rust,
    Go,
    C,
    Cpp,
    CSharp,
    Kotlin,
}

impl Language {
    pub fn from_extension(ext: &str) -> Option<Language> {
        Some(match ext {
            "py" | "pyi" => Language::Python,
            "java" => Language::Java,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" | "tsx" => Language::TypeScript,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "cs" => Language::CSharp,
            "kt" | "kts" => Language::Kotlin,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Kotlin => "kotlin",
        }
    }
}

/// A source file as replayed: text with a BOM removed and CRLF turned into LF.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub repo: String,
    /// Path inside the repository, with `/` separators.
    pub rel: String,
    pub language: Language,
    /// `sha256:` of the file's bytes on disk.
    pub hash: String,
    pub text: String,
    /// What was normalized (`bom`, `crlf`, `cr`: lone carriage returns).
    pub notes: Vec<String>,
}

impl SourceFile {
    pub fn lines(&self) -> Vec<&str> {
        self.text.split('\n').collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone)]
pub struct Repo {
    pub name: String,
    pub root: PathBuf,
    pub files: Vec<SourceFile>,
}

#[derive(Debug, Clone)]
pub struct Dataset {
    pub root: PathBuf,
    pub repos: Vec<Repo>,
    pub skipped: Vec<Skipped>,
}

impl Dataset {
    pub fn file(&self, repo: &str, rel: &str) -> Option<&SourceFile> {
        self.repos
            .iter()
            .find(|r| r.name == repo)?
            .files
            .iter()
            .find(|f| f.rel == rel)
    }
}

#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Treat the folder itself as one repository (also when it holds a `.git`).
    pub single_repo: bool,
    /// Larger files are skipped.
    pub max_file_bytes: u64,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            single_repo: false,
            max_file_bytes: 1 << 20,
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Walks `dir`: each top-level folder is a repository, or `dir` itself when it holds
/// a `.git` or `single_repo` is set. Files in `.gitignore`d paths are not walked;
/// binary, non-UTF-8, oversized, unreadable files and symlinks are skipped with a reason.
pub fn walk(dir: &Path, opts: &WalkOptions) -> Result<Dataset> {
    let meta =
        std::fs::metadata(dir).with_context(|| format!("cannot read dataset {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("dataset {} is not a folder", dir.display());
    }
    let mut skipped = Vec::new();
    let mut roots: Vec<(String, PathBuf)> = Vec::new();
    if opts.single_repo || dir.join(".git").exists() {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "repo".into());
        roots.push((name, dir.to_path_buf()));
    } else {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot list dataset {}", dir.display()))?
            .filter_map(|e| e.ok())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let ft = e.file_type()?;
            if ft.is_dir() {
                roots.push((name, e.path()));
            } else if ft.is_symlink() {
                skipped.push(Skipped {
                    path: name,
                    reason: "symlink (not followed)".into(),
                });
            }
        }
    }
    let mut repos = Vec::new();
    for (name, root) in roots {
        let files = walk_repo(&name, &root, opts, &mut skipped);
        if files.is_empty() {
            skipped.push(Skipped {
                path: name.clone(),
                reason: "repository has no source files".into(),
            });
        }
        repos.push(Repo { name, root, files });
    }
    Ok(Dataset {
        root: dir.to_path_buf(),
        repos,
        skipped,
    })
}

fn walk_repo(
    name: &str,
    root: &Path,
    opts: &WalkOptions,
    skipped: &mut Vec<Skipped>,
) -> Vec<SourceFile> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                skipped.push(Skipped {
                    path: name.to_string(),
                    reason: format!("walk error: {e}"),
                });
                continue;
            }
        };
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let shown = format!("{name}/{rel}");
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_symlink() {
            skipped.push(Skipped {
                path: shown,
                reason: "symlink (not followed)".into(),
            });
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        let Some(language) = path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Language::from_extension)
        else {
            continue;
        };
        match read_source(path, opts.max_file_bytes) {
            Ok((text, hash, notes)) => files.push(SourceFile {
                repo: name.to_string(),
                rel,
                language,
                hash,
                text,
                notes,
            }),
            Err(reason) => skipped.push(Skipped {
                path: shown,
                reason,
            }),
        }
    }
    files
}

fn read_source(
    path: &Path,
    max: u64,
) -> std::result::Result<(String, String, Vec<String>), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("unreadable: {e}"))?;
    if meta.len() > max {
        return Err(format!("oversized: {} bytes (limit {max})", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.contains(&0) {
        return Err("binary (NUL bytes)".into());
    }
    let hash = format!("sha256:{}", sha256_hex(&bytes));
    let mut text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let mut notes = Vec::new();
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        text = rest.to_string();
        notes.push("bom".to_string());
    }
    if text.contains("\r\n") {
        text = text.replace("\r\n", "\n");
        notes.push("crlf".to_string());
    }
    // A lone CR ends a line for LSP as for old Mac files: the server would count lines
    // differently from typist if it stayed inside one.
    if text.contains('\r') {
        text = text.replace('\r', "\n");
        notes.push("cr".to_string());
    }
    Ok((text, hash, notes))
}

#[derive(Debug, Clone)]
pub struct SampleOptions {
    /// Probability that a code line is a case.
    pub rate: f64,
    pub seed: u64,
    /// Every code line is a case.
    pub all_lines: bool,
    pub max_per_file: Option<usize>,
    pub max_per_repo: Option<usize>,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            rate: 0.01,
            seed: 0,
            all_lines: false,
            max_per_file: None,
            max_per_repo: None,
        }
    }
}

/// One case of a plan: a line to be predicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// `repo/file:line`: the same on every machine.
    pub case: String,
    pub repo: String,
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    pub language: String,
    pub expected: String,
    pub file_hash: String,
}

/// The sampling draw of a line, uniform in [0, 1).
pub fn draw(seed: u64, repo: &str, file: &str, line: u32) -> f64 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(repo.as_bytes());
    h.update([0]);
    h.update(file.as_bytes());
    h.update([0]);
    h.update(line.to_le_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// The plan: sampled cases, sorted by repository, file and line.
pub fn sample(ds: &Dataset, opts: &SampleOptions) -> Vec<Case> {
    let mut out = Vec::new();
    for repo in &ds.repos {
        let mut repo_cases: Vec<(f64, Case)> = Vec::new();
        for f in &repo.files {
            let lines = f.lines();
            let code = classify::code_lines(&f.text, f.language);
            let mut file_cases: Vec<(f64, Case)> = Vec::new();
            for (i, (line, is_code)) in lines.iter().zip(code).enumerate() {
                if !is_code {
                    continue;
                }
                let n = i as u32 + 1;
                let u = draw(opts.seed, &repo.name, &f.rel, n);
                if !opts.all_lines && u >= opts.rate {
                    continue;
                }
                file_cases.push((
                    u,
                    Case {
                        case: format!("{}/{}:{}", repo.name, f.rel, n),
                        repo: repo.name.clone(),
                        file: f.rel.clone(),
                        line: n,
                        language: f.language.name().to_string(),
                        expected: line.to_string(),
                        file_hash: f.hash.clone(),
                    },
                ));
            }
            cap(&mut file_cases, opts.max_per_file);
            repo_cases.extend(file_cases);
        }
        cap(&mut repo_cases, opts.max_per_repo);
        out.extend(repo_cases.into_iter().map(|(_, c)| c));
    }
    out.sort_by(|a, b| (&a.repo, &a.file, a.line).cmp(&(&b.repo, &b.file, b.line)));
    out
}

/// Keeps the `max` cases with the smallest draws (deterministic).
fn cap(cases: &mut Vec<(f64, Case)>, max: Option<usize>) {
    if let Some(m) = max
        && cases.len() > m
    {
        cases.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.line.cmp(&b.1.line)));
        cases.truncate(m);
    }
}

/// Where a plan was sampled from, kept in its first line (`{"plan": {...}}`) so that
/// `typist run --plan` finds the dataset by itself and names it when they disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSource {
    /// The dataset folder, absolute.
    pub dataset: PathBuf,
    /// The same, relative to the plan's folder (when both share a root): tried first,
    /// so a plan and its dataset can move together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_relative: Option<PathBuf>,
    #[serde(default)]
    pub single_repo: bool,
}

impl PlanSource {
    pub fn new(dataset: &Path, single_repo: bool, plan: &Path) -> PlanSource {
        let abs = |p: &Path| {
            std::fs::canonicalize(p).unwrap_or_else(|_| {
                std::env::current_dir()
                    .map(|d| d.join(p))
                    .unwrap_or_else(|_| p.to_path_buf())
            })
        };
        let dataset = abs(dataset);
        let plan_dir = abs(plan
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")));
        PlanSource {
            dataset_relative: relative_to(&dataset, &plan_dir),
            dataset,
            single_repo,
        }
    }

    /// The dataset folder, as seen from a plan at `plan`.
    pub fn resolve(&self, plan: &Path) -> PathBuf {
        let plan_dir = plan
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        match &self.dataset_relative {
            Some(r) if plan_dir.join(r).is_dir() => plan_dir.join(r),
            _ => self.dataset.clone(),
        }
    }
}

/// `path` relative to `base` (both absolute), through `..` where needed.
fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    if p.first() != b.first() {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    Some(if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    })
}

#[derive(Serialize, Deserialize)]
struct PlanHeader {
    plan: PlanSource,
}

pub fn write_plan(path: &Path, cases: &[Case], source: Option<&PlanSource>) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(path)
            .with_context(|| format!("cannot write plan {}", path.display()))?,
    );
    if let Some(s) = source {
        serde_json::to_writer(&mut w, &PlanHeader { plan: s.clone() })?;
        w.write_all(b"\n")?;
    }
    for c in cases {
        serde_json::to_writer(&mut w, c)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

/// The cases of a plan file, and where it was sampled from when it says so (plans
/// written before the header existed have none).
pub fn read_plan(path: &Path) -> Result<(Vec<Case>, Option<PlanSource>)> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot open plan {}", path.display()))?;
    let mut out = Vec::new();
    let mut source = None;
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read plan {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        if i == 0 && line.starts_with("{\"plan\"") {
            let h: PlanHeader = serde_json::from_str(&line)
                .with_context(|| format!("{}:1: malformed plan header", path.display()))?;
            source = Some(h.plan);
            continue;
        }
        let c: Case = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: malformed case", path.display(), i + 1))?;
        out.push(c);
    }
    Ok((out, source))
}

/// `sha256:` of the plan's canonical JSON Lines.
pub fn plan_hash(cases: &[Case]) -> String {
    let mut h = Sha256::new();
    for c in cases {
        h.update(serde_json::to_vec(c).unwrap_or_default());
        h.update(b"\n");
    }
    let d = h.finalize();
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Files whose content changed (or vanished) since the plan was made.
pub fn changed_files(ds: &Dataset, cases: &[Case]) -> Vec<String> {
    let mut want: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for c in cases {
        want.insert((&c.repo, &c.file), &c.file_hash);
    }
    want.into_iter()
        .filter(|((repo, file), hash)| ds.file(repo, file).map(|f| f.hash.as_str()) != Some(*hash))
        .map(|((repo, file), _)| format!("{repo}/{file}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn repositories_gitignore_and_languages() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a/.gitignore", "build/\n*.gen.py\n");
        write(d.path(), "a/src/m.py", "x = 1\n");
        write(d.path(), "a/src/skip.gen.py", "y = 2\n");
        write(d.path(), "a/build/out.py", "z = 3\n");
        write(d.path(), "a/web/app.tsx", "let a = 1;\n");
        write(d.path(), "a/README.md", "# not code\n");
        write(d.path(), "b/lib.rs", "fn f() {}\n");
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        let names: Vec<(&str, Vec<(&str, Language)>)> = ds
            .repos
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.files
                        .iter()
                        .map(|f| (f.rel.as_str(), f.language))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                (
                    "a",
                    vec![
                        ("src/m.py", Language::Python),
                        ("web/app.tsx", Language::TypeScript)
                    ]
                ),
                ("b", vec![("lib.rs", Language::Rust)]),
            ]
        );
        // With a .git, or --single-repo, the folder itself is the repository.
        std::fs::create_dir_all(d.path().join("a/.git")).unwrap();
        let one = walk(&d.path().join("a"), &WalkOptions::default()).unwrap();
        assert_eq!(one.repos.len(), 1);
        assert_eq!(one.repos[0].name, "a");
        let single = walk(
            d.path(),
            &WalkOptions {
                single_repo: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(single.repos.len(), 1);
        assert_eq!(single.repos[0].files.len(), 3);
    }

    #[test]
    fn sampling_rates_caps_and_all_lines() {
        let d = tempfile::tempdir().unwrap();
        let body: String = (0..400)
            .map(|i| format!("x{i} = {i}\n# comment {i}\n\n"))
            .collect();
        write(d.path(), "r/a.py", &body);
        write(d.path(), "r/b.py", &body);
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        let all = sample(
            &ds,
            &SampleOptions {
                all_lines: true,
                ..Default::default()
            },
        );
        assert_eq!(all.len(), 800, "code lines only");
        assert!(all.iter().all(|c| c.expected.starts_with('x')));
        let some = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                ..Default::default()
            },
        );
        assert!((140..260).contains(&some.len()), "{}", some.len());
        assert_eq!(
            some,
            sample(
                &ds,
                &SampleOptions {
                    rate: 0.25,
                    seed: 9,
                    ..Default::default()
                }
            )
        );
        let capped = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                max_per_file: Some(10),
                ..Default::default()
            },
        );
        assert_eq!(capped.len(), 20);
        assert!(
            capped.iter().all(|c| some.contains(c)),
            "caps keep a subset"
        );
        let repo_capped = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                max_per_repo: Some(7),
                ..Default::default()
            },
        );
        assert_eq!(repo_capped.len(), 7);
        assert_eq!(some[0].case, format!("r/{}:{}", some[0].file, some[0].line));
    }

    #[test]
    fn draws_are_uniform_enough_and_stable() {
        let n = 20_000;
        let hits = (0..n).filter(|&i| draw(1, "r", "f.py", i) < 0.1).count();
        assert!((1_800..2_200).contains(&hits), "{hits}");
        // Pinned: a change of the draw would silently change every plan.
        assert_eq!(
            format!("{:.15}", draw(7, "repo", "a/b.py", 42)),
            "0.089297374164059"
        );
        assert_ne!(draw(7, "repo", "a/b.py", 42), draw(8, "repo", "a/b.py", 42));
    }
}
