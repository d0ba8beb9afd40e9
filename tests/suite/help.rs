//! `--help` is complete (issue 42): every visible argument of every command has a
//! description, every command shows an example that parses, and what `typist profiles`
//! prints is what the flags take. Read through clap's own model of the command line:
//! the binary's `main.rs` (and with it `cli/`) is compiled into this module, so the
//! walk sees exactly the `Command` that `typist` parses with.

use clap::{CommandFactory, Parser};

use crate::common::*;

#[allow(dead_code, unused_imports)]
#[path = "../../src/main.rs"]
mod bin;

/// Each visible argument without a description, as `typist SUB --flag`, and each
/// command without an `Example:` block, as `typist SUB: no example`, over `cmd` and
/// every command below it.
fn undescribed(cmd: &clap::Command, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let text = a
            .get_help()
            .or(a.get_long_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        if text.trim().is_empty() {
            let name = match a.get_long() {
                Some(l) => format!("--{l}"),
                None => format!("<{}>", a.get_id()),
            };
            out.push(format!("{path} {name}"));
        }
    }
    let example = cmd
        .get_after_help()
        .or(cmd.get_after_long_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    if !example.starts_with("Example") {
        out.push(format!("{path}: no example"));
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.extend(undescribed(sub, &format!("{path} {}", sub.get_name())));
    }
    out
}

/// The example lines (`typist …`) of `cmd` and every command below it.
fn examples(cmd: &clap::Command, out: &mut Vec<String>) {
    let text = cmd
        .get_after_help()
        .or(cmd.get_after_long_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    out.extend(
        text.lines()
            .map(str::trim)
            .filter(|l| l.starts_with("typist "))
            .map(String::from),
    );
    for sub in cmd.get_subcommands() {
        examples(sub, out);
    }
}

#[test]
fn every_argument_of_every_command_is_described_and_every_command_has_an_example() {
    // The walk itself finds what it is for: a command with one bare flag and no example.
    let toy = clap::Command::new("toy")
        .arg(clap::Arg::new("described").long("described").help("Said."))
        .arg(clap::Arg::new("bare").long("bare"));
    assert_eq!(
        undescribed(&toy, "toy"),
        ["toy --bare", "toy: no example"],
        "the walk must see a missing description"
    );

    let cli = bin::Cli::command();
    let missing = undescribed(&cli, "typist");
    assert!(
        missing.is_empty(),
        "described nowhere in --help:\n  {}",
        missing.join("\n  ")
    );
    // Every subcommand was walked (not only the top).
    assert!(cli.get_subcommands().count() >= 14);

    // Each example is a command line typist parses.
    let mut lines = Vec::new();
    examples(&cli, &mut lines);
    assert!(lines.len() >= cli.get_subcommands().count(), "{lines:?}");
    for line in &lines {
        let words = shlex::split(line).unwrap_or_else(|| panic!("not a command line: {line}"));
        if let Err(e) = bin::Cli::try_parse_from(&words) {
            panic!("the example `{line}` does not parse:\n{e}");
        }
    }
}

/// `typist profiles` prints a header, then each profile's dialect exactly as
/// `--dialect` takes it.
#[test]
fn profiles_prints_dialects_as_the_dialect_flag_takes_them() {
    let o = typist().arg("profiles").output().unwrap();
    ok(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["PROFILE", "DIALECT", "SERVER"], "{text}");
    let mut dialects = std::collections::BTreeSet::new();
    for l in lines {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert!(cols.len() >= 3, "{l}");
        dialects.insert(cols[1].to_string());
    }
    // The bundled profiles use every dialect but one or two; the multi-word ones are
    // among them.
    for d in [
        "lsp-ai",
        "llm-ls",
        "lsp-ai-generation",
        "inline",
        "completion",
    ] {
        assert!(dialects.contains(d), "{d} not printed: {text}");
    }
    for d in &dialects {
        let args = ["typist", "profiles", "--server", "x", "--dialect", d];
        if let Err(e) = bin::Cli::try_parse_from(args) {
            panic!("`typist profiles` printed dialect {d}, which --dialect refuses:\n{e}");
        }
    }
}

/// `--editors DIR` adds DIR's profiles to the built-in ones; a file of DIR named like a
/// built-in profile replaces it (in the list, and for `--assistant`).
#[test]
fn editors_dir_adds_to_the_built_in_profiles_and_overrides_one_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let fixed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/editors/typist-fixed.toml"
    ))
    .unwrap();
    let mine = fixed.replace("name = \"typist-fixed\"", "name = \"mine\"");
    std::fs::write(tmp.path().join("mine.toml"), mine).unwrap();
    let over = fixed
        .replace("name = \"typist-fixed\"", "name = \"typist-ngram\"")
        .replace("description = \"", "description = \"OVERRIDDEN ");
    std::fs::write(tmp.path().join("typist-ngram.toml"), over).unwrap();

    let o = typist()
        .args(["profiles", "--editors"])
        .arg(tmp.path())
        .output()
        .unwrap();
    ok(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for n in ["mine", "typist-ngram", "typist-previous-line", "pyright"] {
        assert!(names.contains(&n), "{n} not listed: {text}");
    }
    assert_eq!(
        names.iter().filter(|n| **n == "typist-ngram").count(),
        1,
        "{text}"
    );
    let builtin = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/editors"))
        .unwrap()
        .count();
    assert_eq!(names.len(), builtin + 1, "{text}");

    let o = typist()
        .args(["profiles", "--show", "typist-ngram", "--editors"])
        .arg(tmp.path())
        .output()
        .unwrap();
    ok(&o);
    let shown = String::from_utf8(o.stdout).unwrap();
    assert!(shown.contains("OVERRIDDEN"), "{shown}");
    assert!(shown.contains("\"fixed\""), "{shown}");
}
