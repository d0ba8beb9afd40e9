//! The bad-input corpus of `fixtures/bad/` (its README lists each file): every bad
//! input gives a message naming the file and line, never a panic, and what is good in
//! it is kept.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;
use serde_json::Value;

fn bad(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bad")
        .join(name)
}

fn stderr(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// Refused with exit 2 and a message holding every one of `needles`.
fn refused(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for n in needles {
        assert!(e.contains(n), "{n:?} not in {e}");
    }
}

#[test]
fn a_dataset_of_bad_files_is_replayed_with_each_skip_and_fix_named() {
    let tmp = tempfile::tempdir().unwrap();
    // The committed corpus, plus a 5 MB line (too big for git).
    let ds = tmp.path().join("dataset");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(bad("dataset"))
        .arg(&ds)
        .status()
        .unwrap();
    assert!(status.success());
    let long = format!("x = \"{}\"\n", "a".repeat(5 << 20));
    std::fs::write(ds.join("repo/long_line.py"), long).unwrap();
    let out = tmp.path().join("out");
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--lines", "all", "--assistant", "typist-ngram", "--dataset"])
        .arg(&ds)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    stderr(&o);
    ok(&o);
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let skipped: Vec<(String, String)> = m["dataset"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    let reason = |p: &str| {
        skipped
            .iter()
            .find(|(q, _)| q == p)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("{p} not skipped: {skipped:?}"))
    };
    assert!(reason("empty").contains("no source files"));
    assert!(reason("repo/latin1.py").starts_with("not UTF-8"));
    assert!(reason("repo/nul.py").starts_with("binary"));
    assert!(reason("repo/loop").starts_with("symlink"));
    assert!(reason("repo/long_line.py").starts_with("oversized"));
    let notes: Vec<(String, Value)> = m["dataset"]["normalized"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["path"].as_str().unwrap().into(), n["notes"].clone()))
        .collect();
    assert!(
        notes.contains(&("repo/bom.py".into(), serde_json::json!(["bom"]))),
        "{notes:?}"
    );
    assert!(notes.contains(&("repo/crlf.py".into(), serde_json::json!(["crlf"]))));
    assert!(notes.contains(&("repo/mixed.py".into(), serde_json::json!(["crlf", "cr"]))));
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let expected = |file: &str| -> Vec<String> {
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["file"] == file)
            .map(|r| r["expected"].as_str().unwrap().to_string())
            .collect()
    };
    // Every ending is a line break, as the server counts lines.
    assert_eq!(
        expected("mixed.py"),
        ["a = 1", "b = a + 1", "c = b + 1", "print(c)"]
    );
    assert_eq!(expected("bom.py"), ["a = 1", "b = a + 1", "print(b)"]);
    assert_eq!(expected("crlf.py"), ["a = 1", "b = a + 1", "print(b)"]);
    assert!(!text.contains('\r'));
}

#[test]
fn a_plan_whose_files_changed_or_that_is_cut_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |plan: &str| {
        typist()
            .args([
                "run",
                "--config",
                "/dev/null",
                "--quiet",
                "--assistant",
                "typist-ngram",
            ])
            .arg("--dataset")
            .arg(bad("dataset"))
            .arg("--plan")
            .arg(bad(plan))
            .arg("--out")
            .arg(tmp.path().join(plan))
            .output()
            .unwrap()
    };
    refused(
        &run("plan-changed.jsonl"),
        &["plan-changed.jsonl", "repo/good.py"],
    );
    refused(&run("plan-malformed.jsonl"), &["plan-malformed.jsonl:4"]);
}

#[test]
fn damaged_records_are_named_by_line_and_the_rest_is_scored() {
    for (file, line, what) in [
        ("records-cut.jsonl", 4, "truncated last line"),
        ("records-malformed.jsonl", 3, ""),
    ] {
        let o = typist()
            .args(["score", "--json"])
            .arg(bad(file))
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(e.contains(&format!("{file}:{line}")), "{e}");
        assert!(e.contains(what), "{e}");
        let s: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(s["records"], 3, "the three good records are scored: {s}");
        assert_eq!(s["skipped_lines"], 1, "{s}");
    }
}

#[test]
fn a_profile_with_an_unknown_key_and_a_config_of_the_wrong_type_are_refused_by_line() {
    let o = typist()
        .args(["profiles", "--editors"])
        .arg(bad("editors"))
        .output()
        .unwrap();
    refused(
        &o,
        &[
            "unknown-key.toml",
            "line 7",
            "request_timout_ms",
            "request_timeout_ms",
        ],
    );
    let o = typist()
        .args(["run", "--config"])
        .arg(bad("config-wrong-type.toml"))
        .output()
        .unwrap();
    refused(&o, &["config-wrong-type.toml", "line 2", "expected f64"]);
}
