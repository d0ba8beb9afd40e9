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

/// The careless inputs of a newcomer's first steps (issue 42): a rate that is no
/// probability, no worker, one's own folder of code (one repository, said so), a
/// folder with no code, a plan sampled over, an empty dataset, the wrong file (or none) given to `score` and
/// `report`: each refused with what to do, nothing written. A run's folder stands for
/// its records, and a cut line is said by `report` as by `score`.
#[test]
fn a_newcomers_careless_inputs_are_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |args: &[&str]| typist().args(args).output().unwrap();
    let plan = tmp.path().join("plan.jsonl");
    let p = plan.to_str().unwrap();
    let ds = "fixtures/dataset";
    refused(
        &t(&["sample", "--dataset", ds, "--rate", "2", "--out", p]),
        &["--rate 2", "above 0 and at most 1"],
    );
    assert!(!plan.exists());
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    let run = ["run", "--config", "/dev/null", "--quiet", "--dataset", ds];
    let prev = ["--assistant", "typist-previous-line", "--out", o];
    refused(
        &t(&[&run[..], &["--rate", "0.05", "--jobs", "0"], &prev[..]].concat()),
        &["--jobs 0", "at least one worker"],
    );
    refused(
        &t(&[&run[..], &["--rate", "0.05", "--passes", "0"], &prev[..]].concat()),
        &["--passes 0"],
    );
    assert!(!out.exists());

    // Own code: a folder of files is one repository, said so; a folder of folders
    // without code is refused naming what it holds and what to pass.
    let mine = tmp.path().join("mycode");
    std::fs::create_dir_all(&mine).unwrap();
    for i in 0..3 {
        std::fs::write(
            mine.join(format!("m{i}.py")),
            format!("import os\n\ndef f{i}(x):\n    y = x + 1\n    return y * 2\n"),
        )
        .unwrap();
    }
    let m = mine.to_str().unwrap();
    refused(
        &t(&["sample", "--dataset", m, "--rate", "0.01", "--out", p]),
        &["0 cases from 3 files in 1 repository", "raise --rate"],
    );
    assert!(!plan.exists());
    let o2 = t(&["sample", "--dataset", m, "--rate", "0.5", "--out", p]);
    assert!(o2.status.success(), "{}", stderr(&o2));
    let said = String::from_utf8_lossy(&o2.stdout);
    assert!(
        said.contains("in 1 repository (") && said.contains("code files at its top level"),
        "{said}"
    );
    // A second sampling over the plan is refused: runs made from it would be orphaned.
    let before = std::fs::read(&plan).unwrap();
    refused(
        &t(&["sample", "--dataset", m, "--rate", "0.4", "--out", p]),
        &[p, "exists", "--force"],
    );
    assert_eq!(std::fs::read(&plan).unwrap(), before);
    let forced = t(&[
        "sample",
        "--dataset",
        m,
        "--rate",
        "0.4",
        "--out",
        p,
        "--force",
    ]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_ne!(std::fs::read(&plan).unwrap(), before);
    let nested = tmp.path().join("nested");
    std::fs::create_dir_all(nested.join("docs")).unwrap();
    std::fs::write(nested.join("docs/notes.txt"), "not code\n").unwrap();
    let q = tmp.path().join("q.jsonl");
    refused(
        &t(&[
            "sample",
            "--dataset",
            nested.to_str().unwrap(),
            "--out",
            q.to_str().unwrap(),
        ]),
        &[
            "0 cases",
            "1 folder without code files",
            "--single-repo",
            "nothing written",
        ],
    );
    assert!(!q.exists());
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    refused(
        &t(&[
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--dataset",
            e,
            "--assistant",
            "typist-previous-line",
            "--out",
            o,
        ]),
        &["0 cases", "nothing written"],
    );
    assert!(!out.exists());

    // The wrong file, or none, to score and report.
    refused(&t(&["score", "/dev/null"]), &["no record in /dev/null"]);
    refused(&t(&["score", p]), &["no record in", "not a plan"]);
    let html = tmp.path().join("r.html");
    let h = html.to_str().unwrap();
    refused(&t(&["report", p, "--out", h]), &["no record in"]);
    refused(
        &t(&["score", tmp.path().to_str().unwrap()]),
        &["is a folder with no records.jsonl"],
    );

    // A run's folder stands for its records; a cut line is said by report too.
    let ran = t(&[&run[..], &["--rate", "0.05"], &prev[..]].concat());
    assert!(ran.status.success(), "{}", stderr(&ran));
    let by_folder = t(&["score", o, "--json"]);
    let by_file = t(&[
        "score",
        out.join("records.jsonl").to_str().unwrap(),
        "--json",
    ]);
    assert!(by_folder.status.success(), "{}", stderr(&by_folder));
    assert_eq!(by_folder.stdout, by_file.stdout);
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let cut = tmp.path().join("cut.jsonl");
    std::fs::write(&cut, &text[..text.len() - 20]).unwrap();
    let r = t(&["report", cut.to_str().unwrap(), "--out", h]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("skipped 1 malformed line"),
        "{}",
        stderr(&r)
    );
}

/// A misspelt name that typist looks up itself gets the closest known one; clap's own
/// possible values (a dialect, an editor, `--lines`) get clap's.
#[test]
fn a_misspelt_profile_or_flag_value_is_refused_with_a_did_you_mean() {
    let t = |args: &[&str]| typist().args(args).output().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = t(&[
        "run",
        "--config",
        "/dev/null",
        "--dataset",
        "fixtures/dataset",
        "--assistant",
        "typist-ngarm",
        "--out",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["typist-ngarm", "did you mean `typist-ngram`?"]);
    assert!(!out.exists(), "nothing is written");
    let e = stderr(&o);
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    refused(
        &t(&["doctor", "--profile", "pyrigth"]),
        &["pyrigth", "did you mean `pyright`?"],
    );
    // Nothing close: the list alone.
    let e = stderr(&t(&["doctor", "--profile", "zzzzzz"]));
    assert!(e.contains("known: ") && !e.contains("did you mean"), "{e}");
    // clap's values: its own suggestion, exit 2.
    for (args, said) in [
        (
            &["profiles", "--server", "x", "--dialect", "lspai"][..],
            "lsp-ai",
        ),
        (&["run", "--editor", "neovm"][..], "neovim"),
        (&["run", "--lines", "al"][..], "all"),
    ] {
        let o = t(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("'{said}'")), "{args:?}: {e}");
    }
}
