//! Profiles built on the fly from a server's command line (`typist run --server …`) and a
//! few facts (dialect, languages, name), so that trying a server needs no TOML. The
//! result is a plain [`Profile`], the same as one read from `editors/`:
//! `Profile::to_toml` prints it for saving.
//!
//! The command line is split shell-style (`shlex`, POSIX rules: quotes and backslashes
//! as a shell reads them, no expansion), because that is how people write it in a
//! terminal or a CI file: `--server "clangd --log=error"` or a path with spaces quoted.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::profile::{
    DialectKind, Probe, Profile, Readiness, ReadinessRule, language_id_for_extension,
};

/// Where a profile built from flags says it came from (the manifest records it).
pub const AD_HOC_SOURCE: &str = "(command-line flags)";

/// What the flags say of a server.
#[derive(Debug, Clone, Default)]
pub struct AdHoc {
    /// The server's command line, split shell-style; may be empty with `connect`.
    pub command_line: String,
    pub dialect: Option<DialectKind>,
    /// LSP language ids (`python`, `typescript`, …).
    pub languages: Vec<String>,
    /// Default: the program's file name (or `attached` with only `connect`).
    pub name: Option<String>,
    /// Default: `stable` for completion lists (a first answer may come before the
    /// server has loaded its index), `none` otherwise.
    pub readiness: Option<ReadinessRule>,
    /// Attach to this running server instead of starting one.
    pub connect: Option<String>,
}

/// Every extension a language id is given for (`crate::lang`'s table).
fn known_extensions() -> impl Iterator<Item = &'static str> {
    crate::lang::EXTENSIONS.iter().map(|e| e.ext)
}

/// The languages [`Profile::ad_hoc`] knows the file extensions of.
pub fn known_languages() -> Vec<&'static str> {
    let mut v: Vec<&str> = known_extensions()
        .filter_map(language_id_for_extension)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl Profile {
    /// A profile from a server's command line and the few facts a TOML file would add.
    /// Fails on an empty or unbalanced command line, a missing dialect or language,
    /// or a language with no known file extension. A program that is not installed is
    /// not an error here (as for a profile from `editors/`): `doctor` reports it
    /// missing and `run` refuses it.
    pub fn ad_hoc(spec: &AdHoc) -> Result<Profile> {
        let words = split_command(&spec.command_line)?;
        if words.is_empty() && spec.connect.is_none() {
            bail!(
                "--server is empty: give the server's command line, e.g. --server 'pyright-langserver --stdio'"
            );
        }
        let Some(dialect) = spec.dialect else {
            bail!(
                "--server and --connect need --dialect (inline, completion, copilot, lsp-ai, lsp-ai-generation, llm-ls)"
            );
        };
        if spec.languages.is_empty() {
            bail!(
                "--server and --connect need --language (one of: {})",
                known_languages().join(", ")
            );
        }
        let mut extensions = Vec::new();
        for l in &spec.languages {
            let of: Vec<String> = known_extensions()
                .filter(|e| language_id_for_extension(e) == Some(l.as_str()))
                .map(|e| e.to_string())
                .collect();
            if of.is_empty() {
                bail!(
                    "unknown language {l:?} (known: {})",
                    known_languages().join(", ")
                );
            }
            extensions.extend(of);
        }
        let (command, args) = match words.split_first() {
            Some((c, a)) => (c.clone(), a.to_vec()),
            None => (String::new(), Vec::new()),
        };
        let name = spec.name.clone().unwrap_or_else(|| default_name(&command));
        let rule = spec.readiness.unwrap_or(match dialect {
            DialectKind::Completion => ReadinessRule::Stable,
            _ => ReadinessRule::None,
        });
        let p = Profile {
            description: format!("built from flags: {}", spec.command_line.trim()),
            install_hint: "give a path to the program, or put it on PATH or in .servers/".into(),
            probe: probe_for(&spec.languages[0], dialect),
            readiness: Readiness {
                rule,
                ..Readiness::default()
            },
            connect: spec.connect.clone(),
            source: PathBuf::from(AD_HOC_SOURCE),
            ..Profile::minimal(
                name,
                command,
                args,
                dialect,
                spec.languages.clone(),
                extensions,
            )
        };
        p.check_connect()?;
        p.register_secrets();
        Ok(p)
    }

    /// A profile with every optional field at the default a TOML file gets.
    fn minimal(
        name: String,
        command: String,
        args: Vec<String>,
        dialect: DialectKind,
        languages: Vec<String>,
        extensions: Vec<String>,
    ) -> Profile {
        let mut t = toml::Table::new();
        t.insert("name".into(), name.into());
        t.insert("command".into(), command.into());
        t.insert(
            "dialect".into(),
            toml::Value::try_from(dialect).expect("a dialect is a string"),
        );
        t.insert("languages".into(), toml::Value::Array(vec![]));
        let mut p: Profile = t.try_into().expect("a minimal profile deserializes");
        p.args = args;
        p.languages = languages;
        p.extensions = extensions;
        p
    }
}

/// The command line's words, split as a POSIX shell would (no expansion).
pub fn split_command(line: &str) -> Result<Vec<String>> {
    match shlex::split(line) {
        Some(w) => Ok(w),
        None => bail!("cannot split --server {line:?}: unbalanced quotes or a trailing backslash"),
    }
}

/// The program's file name: `pyright-langserver` for `/opt/x/pyright-langserver`.
fn default_name(command: &str) -> String {
    Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .unwrap_or("attached")
        .to_string()
}

/// A tiny document doctor asks about, per language; completion lists are expected to
/// hold a member of the standard library.
fn probe_for(language: &str, dialect: DialectKind) -> Option<Probe> {
    let (file, text, member) = match language {
        "python" => ("probe.py", "import os\nos.pa", "path"),
        "typescript" | "typescriptreact" => (
            "probe.ts",
            "const s: string = \"abc\";\ns.toU",
            "toUpperCase",
        ),
        "javascript" | "javascriptreact" => {
            ("probe.js", "const s = \"abc\";\ns.toU", "toUpperCase")
        }
        "c" => (
            "probe.c",
            "#include <stdio.h>\nint main(void) {\n  prin",
            "printf",
        ),
        "cpp" => (
            "probe.cpp",
            "#include <cstdio>\nint main() {\n  prin",
            "printf",
        ),
        "go" => (
            "probe.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Pri",
            "Println",
        ),
        "rust" => (
            "probe.rs",
            "pub fn f() -> String {\n    String::from(\"a\").to_up",
            "to_uppercase",
        ),
        _ => return None,
    };
    Some(Probe {
        file: file.into(),
        text: text.into(),
        expect: (dialect == DialectKind::Completion).then(|| member.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pyright() -> AdHoc {
        AdHoc {
            command_line: "pyright-langserver --stdio".into(),
            dialect: Some(DialectKind::Completion),
            languages: vec!["python".into()],
            ..Default::default()
        }
    }

    #[test]
    fn flags_make_a_profile() {
        let p = Profile::ad_hoc(&pyright()).unwrap();
        assert_eq!(p.name, "pyright-langserver");
        assert_eq!(p.command, "pyright-langserver");
        assert_eq!(p.args, ["--stdio"]);
        assert_eq!(p.extensions, ["py", "pyi"]);
        assert_eq!(p.readiness.rule, ReadinessRule::Stable);
        assert_eq!(p.request_timeout_ms, 10_000);
        assert_eq!(p.probe.unwrap().expect.as_deref(), Some("path"));
    }

    #[test]
    fn the_command_line_is_split_as_a_shell_would() {
        let mut a = pyright();
        a.command_line =
            r#"'/opt/my servers/clangd' --log=error "--query-driver=/usr/bin/c*""#.into();
        a.name = Some("mine".into());
        let p = Profile::ad_hoc(&a).unwrap();
        assert_eq!(p.command, "/opt/my servers/clangd");
        assert_eq!(p.args, ["--log=error", "--query-driver=/usr/bin/c*"]);
        assert_eq!(p.name, "mine");
    }

    #[test]
    fn bad_flags_are_clear_errors() {
        let err = |a: AdHoc| format!("{:#}", Profile::ad_hoc(&a).unwrap_err());
        let mut a = pyright();
        a.command_line = "  ".into();
        assert!(err(a).contains("--server is empty"));
        let mut a = pyright();
        a.command_line = "pyright 'unclosed".into();
        assert!(err(a).contains("unbalanced quotes"));
        let mut a = pyright();
        a.dialect = None;
        assert!(err(a).contains("need --dialect"));
        let mut a = pyright();
        a.languages = vec!["cobol".into()];
        assert!(err(a).contains("unknown language \"cobol\""));
        let mut a = pyright();
        a.connect = Some("http://x".into());
        assert!(err(a).contains("connect"));
    }

    /// What `typist profiles --show` prints loads back to the same profile.
    #[test]
    fn toml_round_trip() {
        let mut a = pyright();
        a.connect = Some("tcp://127.0.0.1:4000".into());
        for p in [
            Profile::ad_hoc(&pyright()).unwrap(),
            Profile::ad_hoc(&a).unwrap(),
        ] {
            let text = p.to_toml().unwrap();
            let mut back = Profile::parse(&text, Path::new("x.toml")).unwrap();
            back.source = p.source.clone();
            assert_eq!(back, p, "{text}");
        }
    }

    /// Every shipped profile survives the round trip too (tables, services, settings).
    #[test]
    fn shipped_profiles_round_trip() {
        for p in crate::editor::profile::all_profiles(None).unwrap() {
            let text = p.to_toml().unwrap();
            let mut back = Profile::parse(&text, &p.source).unwrap();
            back.source = p.source.clone();
            assert_eq!(back, p, "{}:\n{text}", p.name);
        }
    }
}
