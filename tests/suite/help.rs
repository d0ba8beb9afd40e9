//! What `typist profiles` prints is what the flags take (issue 42), checked with clap's
//! own model of the command line: the binary's `main.rs` (and with it `cli/`) is
//! compiled into this module, so the parser is exactly the one `typist` uses.

use clap::Parser;

use crate::common::*;

#[allow(dead_code, unused_imports)]
#[path = "../../src/main.rs"]
mod bin;

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
