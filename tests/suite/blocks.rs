//! Block cases (methodology §9) and checks (§11) end to end on a two-file fixture whose
//! figures are computed by hand below: `typist sample --cases blocks`, a run of four
//! assistants (the oracle, which is given the true blocks through a plan path outside the
//! workspace; the same oracle given single lines only; the oracle with an unmatched
//! bracket appended; `typist-fixed`), `typist check`, and the figures `typist score`
//! reads back from the records and the checks sidecar.

use std::path::Path;

use serde_json::Value;

use crate::common::{ok, typist};

/// `a.py`: three code lines. Expected blocks (K = 8): line 1 at depth 0 takes every
/// line after it (43 characters with the newlines), line 2 takes line 3 (33), line 3
/// stands alone (12). `b.py`: one line ending in a comment (12).
const A: &str = "def f(x):\n    y = x + 1  # one\n    return y\n";
const B: &str = "x = 1  # one\n";

fn profile(editors: &Path, name: &str, args: &[&str]) {
    super::common::host_profile(editors, name, args, "");
}

fn sample(ds: &Path, out: &Path, extra: &[&str]) -> Vec<Value> {
    let o = typist()
        .args(["sample", "--dataset"])
        .arg(ds)
        .args(["--lines", "all", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    ok(&o);
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn close(a: &Value, b: f64, what: &str) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{what}: {a}"));
    assert!((a - b).abs() < 1e-9, "{what}: {a} != {b}");
}

/// The fixture's dataset, its block plan (checked against the hand-written blocks),
/// and a run of the four assistants on it; returns the folder, the dataset and the
/// records file.
fn fixture() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    impl Fn(&[&str]) -> std::process::Output,
) {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("r")).unwrap();
    std::fs::write(ds.join("r/a.py"), A).unwrap();
    std::fs::write(ds.join("r/b.py"), B).unwrap();
    // The truth lives beside the dataset, never in the workspace the servers see.
    let truth = tmp.path().join("truth");
    std::fs::create_dir_all(&truth).unwrap();
    let blocks = truth.join("blocks.jsonl");
    let plan = sample(&ds, &blocks, &["--cases", "blocks"]);
    let got: Vec<(&str, &str)> = plan
        .iter()
        .map(|c| (c["case"].as_str().unwrap(), c["block"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("r/a.py:1", "def f(x):\n    y = x + 1  # one\n    return y"),
            ("r/a.py:2", "    y = x + 1  # one\n    return y"),
            ("r/a.py:3", "    return y"),
            ("r/b.py:1", "x = 1  # one"),
        ]
    );
    let short = sample(
        &ds,
        &tmp.path().join("k2.jsonl"),
        &["--cases", "blocks", "--max-lines", "2"],
    );
    assert_eq!(short[0]["block"], "def f(x):\n    y = x + 1  # one");
    let lines = truth.join("lines.jsonl");
    let line_plan = sample(&ds, &lines, &[]);
    assert!(line_plan.iter().all(|c| c.get("block").is_none()));

    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let b = blocks.to_str().unwrap();
    profile(&editors, "oracle", &["oracle", "--truth", b]);
    profile(
        &editors,
        "one-line",
        &["oracle", "--truth", lines.to_str().unwrap()],
    );
    profile(
        &editors,
        "bracket",
        &["oracle", "--truth", b, "--append", "("],
    );
    profile(&editors, "typist-fixed", &["fixed"]);
    let out = tmp.path().join("out");
    let records = out.join("records.jsonl");
    let run = move |extra: &[&str]| {
        let mut c = typist();
        c.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
            .arg("--editors")
            .arg(&editors)
            .arg("--plan")
            .arg(&blocks)
            .arg("--out")
            .arg(&out);
        for a in ["oracle", "one-line", "bracket", "typist-fixed"] {
            c.args(["--assistant", a]);
        }
        c.args(extra).output().unwrap()
    };
    // The rest of the block is below the cursor: a block plan refuses to show it.
    let refused = run(&["--context", "full"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("upper context only"));
    ok(&run(&[]));
    (tmp, ds, records, run)
}

#[test]
fn block_cases_score_the_whole_suggestion_and_checks_find_broken_syntax() {
    let (tmp, ds, records, run) = fixture();
    let out = tmp.path().join("out");
    let o = typist()
        .arg("check")
        .arg(&records)
        .arg("--dataset")
        .arg(&ds)
        .output()
        .unwrap();
    ok(&o);
    // `run --check` writes the same sidecar as `check` after the run.
    let sidecar = typist::score::checks_file::checks_path(&records);
    let checked = std::fs::read(&sidecar).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    ok(&run(&["--check"]));
    assert_eq!(std::fs::read(&sidecar).unwrap(), checked);
    let o = typist()
        .arg("score")
        .arg(&records)
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fig = |who: &str, m: &str| s["blocks"][who][m]["value"].clone();

    // The oracle: every block exactly, so every block figure is 100%.
    for m in [
        "integral_help",
        "exact_share",
        "help_at_0",
        "lines_accepted",
        "chars_accepted",
    ] {
        close(&fig("oracle", m), 1.0, m);
    }
    assert_eq!(s["blocks"]["oracle"]["cases"], 4);

    // One line only: P = L, so ld2(T, P) = len(T) − len(L) and c = len(L)/len(T):
    // 9/43, 20/33, 12/12, 12/12; Σ w = 43 + 33 + 12 + 12 = 100.
    close(
        &fig("one-line", "help_at_0"),
        (9 + 20 + 12 + 12) as f64 / 100.0,
        "help@0",
    );
    let cube = |l: f64, t: f64| t * (l / t).powi(3);
    close(
        &fig("one-line", "integral_help"),
        (cube(9.0, 43.0) + cube(20.0, 33.0) + 12.0 + 12.0) / 100.0,
        "integral",
    );
    close(&fig("one-line", "exact_share"), 24.0 / 100.0, "exact");
    // One line of each block accepted: 4 of 3 + 2 + 1 + 1 lines; characters: each
    // first line with its newline (10, 21), the single lines whole (12, 12).
    close(&fig("one-line", "lines_accepted"), 4.0 / 7.0, "lines");
    close(&fig("one-line", "chars_accepted"), 55.0 / 100.0, "chars");
    // Its first line is always right: the §2 figure beside it is 100%.
    close(
        &s["assistants"]["one-line"]["integral_help"]["value"],
        1.0,
        "first line",
    );

    // `pass` shares no character with any block (no p, a or s in them): nothing.
    for m in ["integral_help", "help_at_0", "lines_accepted"] {
        close(&fig("typist-fixed", m), 0.0, m);
    }

    // The bracket: one character too many per block (c = (w − 1)/w), and the last
    // line of each block is no longer accepted: lines 2 + 1 + 0 + 0 of 7.
    close(&fig("bracket", "help_at_0"), 96.0 / 100.0, "bracket help@0");
    close(&fig("bracket", "exact_share"), 0.0, "bracket exact");
    close(
        &fig("bracket", "lines_accepted"),
        3.0 / 7.0,
        "bracket lines",
    );
    close(
        &fig("bracket", "chars_accepted"),
        52.0 / 100.0,
        "bracket chars",
    );

    // Checks: the oracle and one-line leave the file as it was; typist-fixed's `pass`
    // parses in Python wherever it lands (tree-sitter-python reads a body-less `def`
    // followed by `pass` without an ERROR node); the bracket breaks every case but
    // b.py:1, whose block ends in a comment: the `(` lands inside it.
    let valid = |who: &str| s["checks"][who]["syntax_valid"]["value"].clone();
    for who in ["oracle", "one-line", "typist-fixed"] {
        close(&valid(who), 1.0, who);
        assert_eq!(s["checks"][who]["checked"], 4, "{who}");
    }
    close(&valid("bracket"), 0.25, "bracket");
    let sidecar = std::fs::read_to_string(out.join("records.checks.jsonl")).unwrap();
    let broken: Vec<(String, i64)> = sidecar
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|c| c["assistant"] == "bracket")
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_string(),
                c["syntax_delta"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        broken,
        [
            ("r/a.py:1".to_string(), 1),
            ("r/a.py:2".to_string(), 1),
            ("r/a.py:3".to_string(), 1),
            ("r/b.py:1".to_string(), 0),
        ]
    );
    let pair = s["checks_pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == "bracket" && p["b"] == "oracle")
        .unwrap();
    close(&pair["diff"], -0.75, "paired difference");

    // Records changed since the check: the sidecar is left out, never misapplied.
    let mut text = std::fs::read_to_string(&records).unwrap();
    text.push('\n');
    std::fs::write(&records, text).unwrap();
    let o = typist()
        .arg("score")
        .arg(&records)
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(s.get("checks").is_none());
    assert!(s.get("blocks").is_some());
}

/// `check --with pyright` (installed by scripts/install-servers.sh): error diagnostics
/// new in the file with the suggestion accepted. Python says, and so must pyright: a
/// `def` left without its body (one-line's `def f(x):` in place of the whole function,
/// typist-fixed's unindented `pass` after it) and an unclosed `(` are errors; the
/// oracle's files are the true ones; a `(` inside a comment is none.
#[test]
fn checks_with_pyright_count_errors_the_suggestion_adds() {
    crate::common::tokens::require_installed("pyright");
    let (_tmp, ds, records, _) = fixture();
    let o = typist()
        .arg("check")
        .arg(&records)
        .arg("--dataset")
        .arg(&ds)
        .args(["--with", "pyright"])
        .output()
        .unwrap();
    ok(&o);
    let sidecar =
        std::fs::read_to_string(typist::score::checks_file::checks_path(&records)).unwrap();
    let added: Vec<(String, String, bool)> = sidecar
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|c| {
            let n = c["new_errors"]
                .as_u64()
                .unwrap_or_else(|| panic!("no diagnostics: {c}"));
            (
                c["assistant"].as_str().unwrap().to_string(),
                c["case"].as_str().unwrap().to_string(),
                n > 0,
            )
        })
        .collect();
    let expect = |who: &str, case: &str| {
        matches!(
            (who, case),
            ("bracket", "r/a.py:1" | "r/a.py:2" | "r/a.py:3")
                | ("one-line", "r/a.py:1")
                | ("typist-fixed", "r/a.py:2")
        )
    };
    for (who, case, any) in &added {
        assert_eq!(*any, expect(who, case), "{who} {case}");
    }
    assert_eq!(added.len(), 16);
    // Each new error is recorded by kind: the kinds' counts add up to `new_errors`.
    for l in sidecar.lines().skip(1) {
        let c: Value = serde_json::from_str(l).unwrap();
        let kinds: u64 = (c["diagnostics"].as_array().map_or(&[][..], Vec::as_slice))
            .iter()
            .map(|d| d["count"].as_u64().unwrap())
            .sum();
        assert_eq!(kinds, c["new_errors"].as_u64().unwrap(), "{c}");
    }
    let o = typist()
        .arg("score")
        .arg(&records)
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The bracket left open is pyright's `"(" was not closed` (a syntax error: no
    // code), in the bracket's three suggestions that add an error, of 4 diagnosed.
    let classes = &s["checks"]["bracket"]["new_errors_by_class"];
    assert_eq!(classes["\"_\" was not closed"]["cases"], 3, "{classes}");
    assert_eq!(classes["\"_\" was not closed"]["share"], 0.75, "{classes}");
    let codes = &s["checks"]["bracket"]["new_errors_by_code"];
    assert!(codes.as_object().is_some_and(|m| !m.is_empty()), "{codes}");
    assert!(s["checks"]["oracle"].get("new_errors_by_code").is_none());
    for (who, share) in [
        ("oracle", 1.0),
        ("bracket", 0.25),
        ("one-line", 0.75),
        ("typist-fixed", 0.75),
    ] {
        close(&s["checks"][who]["no_new_error"]["value"], share, who);
        assert_eq!(s["checks"][who]["diagnosed"], 4, "{who}");
    }
}

/// `check --with clangd` (installed by scripts/install-servers.sh) on a C file: C says,
/// and so must clangd: the oracle's files are the true ones (no new error); an unclosed
/// `(` after any line is an error; `pass` in place of a line is an undeclared name.
#[test]
fn checks_with_clangd_count_errors_the_suggestion_adds() {
    crate::common::tokens::require_installed("clangd");
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("r")).unwrap();
    std::fs::write(
        ds.join("r/add.c"),
        "int add(int a, int b) {\n    int c = a + b;\n    return c;\n}\n",
    )
    .unwrap();
    let truth = tmp.path().join("truth");
    std::fs::create_dir_all(&truth).unwrap();
    let plan = truth.join("lines.jsonl");
    let cases = sample(&ds, &plan, &[]);
    assert!(cases.len() >= 3, "{cases:?}");
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let p = plan.to_str().unwrap();
    for (name, args) in [
        ("oracle", vec!["oracle", "--truth", p]),
        ("bracket", vec!["oracle", "--truth", p, "--append", "("]),
        ("typist-fixed", vec!["fixed"]),
    ] {
        let mut all = vec!["host", "--backend"];
        all.extend(args);
        std::fs::write(
            editors.join(format!("{name}.toml")),
            format!(
                "name = \"{name}\"\ncommand = \"@typist\"\nargs = {all:?}\ndialect = \"inline\"\nlanguages = [\"c\"]\nextensions = [\"c\"]\nrequest_timeout_ms = 20000\n"
            ),
        )
        .unwrap();
    }
    let out = tmp.path().join("out");
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--editors")
        .arg(&editors)
        .arg("--plan")
        .arg(&plan)
        .arg("--dataset")
        .arg(&ds)
        .arg("--out")
        .arg(&out)
        .args(["--assistant", "oracle", "--assistant", "bracket"])
        .args([
            "--assistant",
            "typist-fixed",
            "--check",
            "--check-with",
            "clangd",
        ])
        .output()
        .unwrap();
    ok(&o);
    let records = out.join("records.jsonl");
    let sidecar =
        std::fs::read_to_string(typist::score::checks_file::checks_path(&records)).unwrap();
    let mut seen = 0;
    for c in sidecar
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
    {
        let n = c["new_errors"]
            .as_u64()
            .unwrap_or_else(|| panic!("no diagnostics: {c}"));
        let who = c["assistant"].as_str().unwrap();
        assert_eq!(n > 0, who != "oracle", "{c}");
        seen += 1;
    }
    assert_eq!(seen, 3 * cases.len());
    let o = typist()
        .arg("score")
        .arg(&records)
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (who, share) in [("oracle", 1.0), ("bracket", 0.0), ("typist-fixed", 0.0)] {
        close(&s["checks"][who]["no_new_error"]["value"], share, who);
        assert_eq!(s["checks"][who]["diagnosed"], cases.len(), "{who}");
    }
}
