//! What a walk finds: languages by extension, the source files of a repository, what
//! was skipped and why, a repository's build files, the dataset. Plain values the
//! walk, the draw and the plan share; this file uses none of them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// The language of a file extension (`crate::lang`'s table).
    pub fn from_extension(ext: &str) -> Option<Language> {
        Language::from_name(crate::lang::extension(ext)?.language)
    }
    /// The language of a file by its extension.
    pub fn of_path(path: &std::path::Path) -> Option<Language> {
        Language::from_extension(path.extension()?.to_str()?)
    }
    /// The language of a [`Language::name`].
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }
    const ALL: [Language; 10] = [
        Language::Python,
        Language::Java,
        Language::JavaScript,
        Language::TypeScript,
        Language::Rust,
        Language::Go,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Kotlin,
    ];
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

/// A repository's build configuration that a server reads to parse its code (clangd's
/// `compile_flags.txt`: flags and include paths, no code): copied into every workspace
/// as it is, never a case. Which names count is [`crate::dataset::BUILD_FILES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFile {
    /// Path inside the repository, with `/` separators.
    pub rel: String,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Repo {
    pub name: String,
    pub root: PathBuf,
    pub files: Vec<SourceFile>,
    /// Build configuration copied beside the files (see [`BuildFile`]).
    pub build: Vec<BuildFile>,
}

impl Repo {
    /// What a server's workspace holds (path inside the repository, text): the build
    /// configuration, then every source file, the file `target` holding `text` (what
    /// the editor shows) instead of its own.
    pub fn workspace_contents(&self, target: &str, text: &str) -> Vec<(String, String)> {
        let build = self.build.iter().map(|b| (b.rel.clone(), b.text.clone()));
        let files = self.files.iter().map(|f| {
            let t = if f.rel == target { text } else { &f.text };
            (f.rel.clone(), t.to_string())
        });
        build.chain(files).collect()
    }
}

#[derive(Debug, Clone)]
pub struct Dataset {
    pub root: PathBuf,
    pub repos: Vec<Repo>,
    pub skipped: Vec<Skipped>,
    /// Why the folder itself is one repository (`holds .git`, `--single-repo`, `code
    /// files at its top level`, `holds pyproject.toml`), or `None` when each top-level
    /// folder is one.
    pub one_repo: Option<String>,
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
