//! Walking a dataset: each top-level folder a repository, ignore files respected,
//! unreadable, binary, non-UTF-8, oversized files and symlinks skipped with a reason, and
//! BOM, CRLF and lone CR normalized.
//!
//! A repository's build configuration ([`BUILD_FILES`]: `compile_flags.txt`) is kept as
//! `Repo::build` and copied into the servers' workspaces (`Repo::workspace_contents`); it
//! is never a case.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{BuildFile, Dataset, Language, Repo, Skipped, SourceFile};
use crate::digest::sha256_hex;

/// File names of build configuration a server needs to parse a repository's code
/// (include paths and language flags for clangd), copied into every workspace. They
/// hold flags, never code, so they reveal nothing of a case's token.
pub const BUILD_FILES: &[&str] = &["compile_flags.txt"];

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

/// Files whose presence at a folder's top level makes it one project (one repository),
/// not a folder of repositories.
pub const PROJECT_FILES: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "package.json",
    "tsconfig.json",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "CMakeLists.txt",
    "meson.build",
    "compile_flags.txt",
    "compile_commands.json",
];

/// Why `dir` itself is one repository, or `None` when it is a folder of repositories:
/// `--single-repo`, a `.git`, a project file ([`PROJECT_FILES`]) or a code file of a
/// known language at its top level. A folder of repositories holds only folders (and
/// notes such as a README).
fn one_repo(dir: &Path, single_repo: bool) -> Option<String> {
    if single_repo {
        return Some("--single-repo".into());
    }
    if dir.join(".git").exists() {
        return Some("it holds .git".into());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    if let Some(n) = names.iter().find(|n| PROJECT_FILES.contains(&n.as_str())) {
        return Some(format!("it holds {n}"));
    }
    let code = names
        .iter()
        .find(|n| Language::of_path(Path::new(n)).is_some())?;
    Some(format!("code files at its top level, {code} …"))
}

/// Walks `dir`: each top-level folder is a repository, or `dir` itself when it is one
/// project (see [`one_repo`]: `single_repo` set, a `.git`, a project file or code files
/// at its top level). Files in `.gitignore`d paths are not walked;
/// binary, non-UTF-8, oversized, unreadable files and symlinks are skipped with a reason.
pub fn walk(dir: &Path, opts: &WalkOptions) -> Result<Dataset> {
    let meta =
        std::fs::metadata(dir).with_context(|| format!("cannot read dataset {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("dataset {} is not a folder", dir.display());
    }
    let mut skipped = Vec::new();
    let mut roots: Vec<(String, PathBuf)> = Vec::new();
    let one = one_repo(dir, opts.single_repo);
    if one.is_some() {
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
        let (files, build) = walk_repo(&name, &root, opts, &mut skipped);
        if files.is_empty() {
            skipped.push(Skipped {
                path: name.clone(),
                reason: "repository has no source files".into(),
            });
        }
        repos.push(Repo {
            name,
            root,
            files,
            build,
        });
    }
    Ok(Dataset {
        root: dir.to_path_buf(),
        repos,
        skipped,
        one_repo: one,
    })
}

/// A folder of installed dependencies, never walked.
pub const DEPENDENCY_DIR: &str = "node_modules";

fn walk_repo(
    name: &str,
    root: &Path,
    opts: &WalkOptions,
    skipped: &mut Vec<Skipped>,
) -> (Vec<SourceFile>, Vec<BuildFile>) {
    let mut files = Vec::new();
    let mut build = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        // Installed dependencies are not the repository's code (an npm package's
        // node_modules, as `typist dataset add` installs them for its tests).
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir()) && e.file_name() == DEPENDENCY_DIR)
        })
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
        let rel = rel_path(path, root);
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
        if is_build_file(path) {
            match read_source(path, opts.max_file_bytes) {
                Ok((text, ..)) => build.push(BuildFile { rel, text }),
                Err(reason) => skipped.push(Skipped {
                    path: shown,
                    reason,
                }),
            }
            continue;
        }
        let Some(language) = Language::of_path(path) else {
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
    (files, build)
}

/// `path` inside `root`, with `/` separators.
fn rel_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn is_build_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| BUILD_FILES.contains(&n))
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
        write(d.path(), "a/compile_flags.txt", "-xc\n-Iinclude\n");
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
        // Build configuration is copied, never a case.
        assert_eq!(
            ds.repos[0].build,
            vec![BuildFile {
                rel: "compile_flags.txt".into(),
                text: "-xc\n-Iinclude\n".into()
            }]
        );
        assert!(ds.repos[1].build.is_empty());
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
        assert_eq!(single.one_repo.as_deref(), Some("--single-repo"));
        assert_eq!(ds.one_repo, None, "a README beside repositories is a note");
    }

    #[test]
    fn a_project_folder_is_one_repository() {
        // Code files at the top level: one's own folder of files.
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "m.py", "x = 1\n");
        write(d.path(), "pkg/n.py", "y = 2\n");
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        assert_eq!(ds.repos.len(), 1);
        assert_eq!(ds.repos[0].files.len(), 2);
        assert!(ds.one_repo.unwrap().contains("m.py"));
        // A project file at the top level, the code in folders below.
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "pyproject.toml", "[project]\n");
        write(d.path(), "src/a.py", "x = 1\n");
        write(d.path(), "tests/t.py", "y = 2\n");
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        assert_eq!(ds.repos.len(), 1);
        assert_eq!(ds.one_repo.as_deref(), Some("it holds pyproject.toml"));
        // Only folders: a folder of repositories.
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "src/a.py", "x = 1\n");
        write(d.path(), "tests/t.py", "y = 2\n");
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        assert_eq!(ds.repos.len(), 2);
        assert_eq!(ds.one_repo, None);
    }
}
