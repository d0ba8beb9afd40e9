//! Methodology §12 on a small fixture repository per runner
//! (`fixtures/tests-dataset`: `calc`, Python with pytest; `textfmt`, JavaScript with
//! `node:test`), with figures worked out by hand line by line below; and untrusted
//! suggestions (deleting files, looping forever, reaching the network) contained by
//! the sandbox. The Python environment is `.servers/venv` (pytest, pytest-cov and
//! coverage from `scripts/install-servers.sh`), linked where `dataset.toml` says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::common::{host_profile_for, ok, typist};

/// The fixture copied into `tmp`, its Python environment linked.
fn fixture(tmp: &Path) -> PathBuf {
    let dir = tmp.join("ds");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tests-dataset");
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(cp.success());
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/venv");
    assert!(
        venv.join("bin/python").exists(),
        "{} is missing: scripts/install-servers.sh makes it",
        venv.display()
    );
    std::fs::create_dir_all(dir.join(".typist/env")).unwrap();
    std::os::unix::fs::symlink(&venv, dir.join(".typist/env/python")).unwrap();
    dir
}

/// Every code line of the two source files (not the tests' own files) as a plan.
fn plan(tmp: &Path, dir: &Path, keep: &[(&str, u32)]) -> PathBuf {
    let all = tmp.join("all.jsonl");
    ok(&typist()
        .args(["sample", "--lines", "all", "--dataset"])
        .arg(dir)
        .arg("--out")
        .arg(&all)
        .output()
        .unwrap());
    let plan = tmp.join("plan.jsonl");
    let text: String = std::fs::read_to_string(&all)
        .unwrap()
        .lines()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let Some(file) = v["file"].as_str() else {
                return true; // the plan's header
            };
            let line = v["line"].as_u64().unwrap() as u32;
            (file == "src/calc/ops.py" || file == "index.js")
                && (keep.is_empty() || keep.contains(&(file, line)))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&plan, text).unwrap();
    plan
}

fn profile(editors: &Path, name: &str, args: &[&str]) {
    host_profile_for(
        editors,
        name,
        args,
        &[("python", "py"), ("javascript", "js")],
        "",
    );
}

/// Runs `assistants` on `plan`, then `check --tests`; the sidecar's lines.
fn run_and_check(
    tmp: &Path,
    dir: &Path,
    plan: &Path,
    editors: &Path,
    assistants: &[&str],
    timeout: &str,
) -> (String, Vec<serde_json::Value>, PathBuf) {
    run_and_check_with(tmp, dir, plan, editors, assistants, timeout, None)
}

/// The same, with `check --tests` given this PATH.
fn run_and_check_with(
    tmp: &Path,
    dir: &Path,
    plan: &Path,
    editors: &Path,
    assistants: &[&str],
    timeout: &str,
    path: Option<&str>,
) -> (String, Vec<serde_json::Value>, PathBuf) {
    let out = tmp.join("out");
    let mut cmd = typist();
    cmd.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--editors")
        .arg(editors)
        .arg("--plan")
        .arg(plan)
        .arg("--out")
        .arg(&out);
    for a in assistants {
        cmd.args(["--assistant", a]);
    }
    ok(&cmd.output().unwrap());
    let mut check = typist();
    check
        .arg("check")
        .arg(out.join("records.jsonl"))
        .arg("--dataset")
        .arg(dir)
        .args(["--tests", "--jobs", "2", "--test-timeout", timeout]);
    if let Some(p) = path {
        check.env("PATH", p);
    }
    let o = check.output().unwrap();
    ok(&o);
    let lines = std::fs::read_to_string(out.join("records.tests.jsonl"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), lines, out)
}

/// Outcome by (repository, line) for one assistant.
fn outcomes(lines: &[serde_json::Value], who: &str) -> BTreeMap<(String, u64), String> {
    lines
        .iter()
        .filter(|r| r["assistant"] == who)
        .map(|r| {
            (
                (
                    r["repo"].as_str().unwrap().to_string(),
                    r["line"].as_u64().unwrap(),
                ),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn lines_with(o: &BTreeMap<(String, u64), String>, repo: &str, outcome: &str) -> Vec<u64> {
    o.iter()
        .filter(|((r, _), v)| r == repo && v.as_str() == outcome)
        .map(|((_, l), _)| *l)
        .collect()
}

/// Every code line of `calc/src/calc/ops.py` (15) and `textfmt/index.js` (19), with
/// the oracle (the true line), `typist-fixed` (`pass`, at the line's start: line
/// cases start at column 0, so the indentation is the assistant's to give) and the
/// oracle with `(` appended. Worked out by hand:
///
/// - **Not covered** (no test runs the line): ops.py 5 (`return high`: no test clamps
///   from above) and 19 (`unused`'s body). Everything else runs.
/// - **Not noticed**: index.js 1 (`'use strict'`: nothing the tests do depends on it).
///   Every other covered line is noticed: its blanked file fails or cannot load
///   (a blanked `def`, `if`, `for` or brace line leaves the file unparseable).
/// - So 13 Python and 18 JavaScript cases are judged; the oracle passes all 31.
/// - `pass` in Python at column 0: lines 6 and 15 (`return value`, `return total /
///   len(values)`) become a module-level `pass` after the function, which then falls
///   off its end and returns None: **fail**. Everywhere else (a `def`, or a line inside
///   an indented block) an unindented line breaks the indentation: **error** (the
///   module cannot be imported), 11 lines.
/// - `pass` in JavaScript is a name that is not defined:
///   - index.js 5 (`throw new TypeError(…)`): `pass` throws a ReferenceError instead,
///     and the test asks only that `pad(5, 2)` throws: **pass**, the one case where
///     `pass` does what the line did;
///   - lines 3, 4, 6, 8, 10, 12, 14, 20 hold a brace: the file no longer parses, and
///     22 (`module.exports = …`) throws while the module loads: **error**, before
///     any test starts, 9 lines;
///   - lines 7, 9, 11 and 15 throw the ReferenceError inside a test; 16–19 end the
///     `return name…` chain early (`return name` alone, then `pass` on a line of its
///     own), so `initials` returns the wrong value: **fail**, 8 lines.
/// - The bracket: every judged case is a syntax error: **error**, 31.
///
/// So tests pass (pass / (pass + fail)): the oracle 31/31, `typist-fixed` 1/11 with 20
/// errors apart, the bracket none judged (31 errors).
#[test]
fn tests_after_acceptance_on_a_fixture_worked_out_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let plan = plan(tmp.path(), &dir, &[]);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let p = plan.to_str().unwrap();
    profile(&editors, "oracle", &["oracle", "--truth", p]);
    profile(
        &editors,
        "bracket",
        &["oracle", "--truth", p, "--append", "("],
    );
    profile(&editors, "fixed", &["fixed"]);
    let (said, lines, out) = run_and_check(
        tmp.path(),
        &dir,
        &plan,
        &editors,
        &["oracle", "bracket", "fixed"],
        "60",
    );
    assert_eq!(lines.len(), 3 * (15 + 19), "{said}");
    let oracle = outcomes(&lines, "oracle");
    let fixed = outcomes(&lines, "fixed");
    let bracket = outcomes(&lines, "bracket");
    for o in [&oracle, &fixed, &bracket] {
        assert_eq!(lines_with(o, "calc", "not_covered"), [5, 19], "{said}");
        assert_eq!(lines_with(o, "textfmt", "not_noticed"), [1], "{said}");
    }
    let py_judged = [1, 2, 3, 4, 6, 9, 10, 11, 12, 13, 14, 15, 18];
    let js_judged = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 22,
    ];
    assert_eq!(lines_with(&oracle, "calc", "pass"), py_judged, "{said}");
    assert_eq!(lines_with(&oracle, "textfmt", "pass"), js_judged, "{said}");
    assert_eq!(lines_with(&bracket, "calc", "error"), py_judged);
    assert_eq!(lines_with(&bracket, "textfmt", "error"), js_judged);
    assert_eq!(lines_with(&fixed, "calc", "pass"), Vec::<u64>::new());
    assert_eq!(lines_with(&fixed, "calc", "fail"), [6, 15], "{said}");
    assert_eq!(
        lines_with(&fixed, "calc", "error"),
        [1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 18]
    );
    assert_eq!(lines_with(&fixed, "textfmt", "pass"), [5], "{said}");
    assert_eq!(
        lines_with(&fixed, "textfmt", "error"),
        [3, 4, 6, 8, 10, 12, 14, 20, 22]
    );
    assert_eq!(
        lines_with(&fixed, "textfmt", "fail"),
        [7, 9, 11, 15, 16, 17, 18, 19]
    );
    // The reasons say what broke.
    let reason = |who: &str, repo: &str, line: u64| -> String {
        lines
            .iter()
            .find(|r| r["assistant"] == who && r["repo"] == repo && r["line"] == line)
            .and_then(|r| r["reason"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        reason("fixed", "textfmt", 22).contains("ReferenceError: pass is not defined"),
        "{}",
        reason("fixed", "textfmt", 22)
    );
    assert!(reason("fixed", "textfmt", 3).contains("SyntaxError"));
    // The score: the oracle 31/31, fixed 1/11 (pass / (pass + fail)) with its 20
    // errors apart, the bracket's 31 errors, and no exact suggestion fails.
    let o = typist()
        .args(["score", "--json"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["tests"];
    assert_eq!(t["oracle"]["tests_pass"]["value"], 1.0, "{t}");
    assert_eq!(t["oracle"]["exact_but_fails"], 0, "{t}");
    assert_eq!(t["fixed"]["errors"], 20, "{t}");
    let fixed_pass = t["fixed"]["tests_pass"]["value"].as_f64().unwrap();
    assert!((fixed_pass - 1.0 / 11.0).abs() < 1e-12, "{t}");
    assert_eq!(t["bracket"]["errors"], 31, "{t}");
    assert_eq!(t["bracket"]["not_exact_but_passes"], 0, "{t}");
}

/// The JavaScript runner with Node 24 (code-server's, in `.servers/node24`, outside
/// `/usr`), whose `node:test` prints its `spec` reporter even into a pipe unless asked
/// for TAP: the same outcomes as with the system's Node 20 on two of the lines worked
/// out above (index.js 5: `pass` throws as the line did, a pass; 7: a ReferenceError in
/// a test, a fail).
#[test]
fn the_javascript_runner_reads_node_24_as_node_20() {
    let node24 = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/node24/bin");
    assert!(
        node24.join("node").exists(),
        "{} is missing: scripts/install-servers.sh installs it",
        node24.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let plan = plan(tmp.path(), &dir, &[("index.js", 5), ("index.js", 7)]);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    profile(&editors, "fixed", &["fixed"]);
    let path = format!(
        "{}:{}",
        node24.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (said, lines, _) = run_and_check_with(
        tmp.path(),
        &dir,
        &plan,
        &editors,
        &["fixed"],
        "60",
        Some(&path),
    );
    let fixed = outcomes(&lines, "fixed");
    assert_eq!(lines_with(&fixed, "textfmt", "pass"), [5], "{said}");
    assert_eq!(lines_with(&fixed, "textfmt", "fail"), [7], "{said}");
}

/// Suggestions that attack the machine, in both languages, where they run: Python's
/// at column 0 in place of ops.py's line 6 (a module-level statement, run at import);
/// JavaScript's in place of index.js's line 7 (run inside `pad`). None passes but the
/// JavaScript deleter, which catches its own failures and is then the true line; the
/// others say why, and nothing outside the working copy changes: the dataset's files
/// (bound read-only), a file beside the dataset (the sandbox's /tmp is its own), and a
/// listener on this machine's loopback that no connection reaches.
#[test]
fn suggestions_that_delete_loop_or_reach_the_network_are_contained() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let plan = plan(tmp.path(), &dir, &[("src/calc/ops.py", 6), ("index.js", 7)]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ds = dir.display().to_string();
    let beside = tmp.path().join("escaped").display().to_string();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let texts = [
        (
            "delete-py",
            format!(
                "import shutil, os; shutil.rmtree({ds:?}, ignore_errors=True); open({beside:?}, 'w').write('x'); shutil.rmtree(os.getcwd())"
            ),
        ),
        (
            "delete-js",
            format!(
                "const fs = require('fs'); try {{ fs.rmSync({ds:?}, {{ recursive: true, force: true }}); }} catch {{}} try {{ fs.writeFileSync({beside:?}, 'x'); }} catch {{}} let out = text;"
            ),
        ),
        ("loop-py", "while True: pass".to_string()),
        ("loop-js", "for (;;) {} let out = text;".to_string()),
        (
            "net-py",
            format!(
                "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=3)"
            ),
        ),
        (
            "net-js",
            format!("require('net').connect({port}, '127.0.0.1'); let out = text;"),
        ),
    ];
    for (name, text) in &texts {
        profile(&editors, name, &["fixed", "--text", text]);
    }
    let before: Vec<(PathBuf, Vec<u8>)> = walk(&dir);
    let names: Vec<&str> = texts.iter().map(|(n, _)| *n).collect();
    let (said, lines, _) = run_and_check(tmp.path(), &dir, &plan, &editors, &names, "8");
    assert_eq!(lines.len(), 2 * texts.len(), "{said}");
    for r in &lines {
        let who = r["assistant"].as_str().unwrap();
        let outcome = r["outcome"].as_str().unwrap();
        // The JavaScript deleter catches its own failures (a read-only dataset; a
        // write that lands in the sandbox's own /tmp) and then is the true line, so its
        // tests pass: the attack changed nothing they can see. Every other one breaks.
        let expected: &[&str] = if who == "delete-js" && r["repo"] == "textfmt" {
            &["pass"]
        } else {
            &["fail", "error"]
        };
        assert!(
            expected.contains(&outcome),
            "{who} on {}: {outcome}: {said}",
            r["case"]
        );
    }
    let reason = |who: &str, repo: &str| -> String {
        lines
            .iter()
            .find(|r| r["assistant"] == who && r["repo"] == repo)
            .and_then(|r| r["reason"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    // The loops are stopped by the time limit, and say so.
    assert!(
        reason("loop-py", "calc").contains("over its time limit"),
        "{said}"
    );
    assert!(
        reason("loop-js", "textfmt").contains("over its time limit"),
        "{said}"
    );
    // The network is not there: refused inside the sandbox's own loopback.
    assert!(
        reason("net-py", "calc").contains("refused")
            || reason("net-py", "calc").contains("URLError"),
        "{}",
        reason("net-py", "calc")
    );
    assert!(
        reason("net-js", "textfmt").contains("ECONNREFUSED"),
        "{}",
        reason("net-js", "textfmt")
    );
    assert!(
        listener.accept().is_err(),
        "a test run reached this machine's loopback"
    );
    // Nothing deleted or written outside the working copies.
    assert_eq!(walk(&dir), before, "the dataset changed");
    assert!(!tmp.path().join("escaped").exists());
}

/// Every file under `dir` (the dataset's own `.typist` and its cache left out) with
/// its bytes.
fn walk(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".typist") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The default dataset with tests (`datasets/tests.txt`, installed into
/// `.servers/datasets/tests` by `scripts/install-datasets.sh`, which the README's test
/// command runs): every pinned package is there with its licence and sha256; each
/// Python and npm package has a test command and an environment; and on 8 cases per
/// repository the oracle's suggestions (the true lines) pass every case the
/// repository's own tests notice, each such repository noticing some: its tests pass
/// unmodified, offline, in the sandbox.
#[test]
fn the_pinned_dataset_with_tests_is_installed_and_its_own_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(".servers/datasets/tests");
    assert!(
        dir.join("dataset.toml").exists(),
        "{} is missing: scripts/install-datasets.sh makes it",
        dir.display()
    );
    let pinned: Vec<String> = std::fs::read_to_string(root.join("datasets/tests.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    assert!(pinned.len() >= 10, "{pinned:?}");
    let m: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("dataset.toml")).unwrap()).unwrap();
    let pkgs: Vec<&toml::Table> = m["package"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_table().unwrap())
        .collect();
    let mut tested = Vec::new();
    for spec in &pinned {
        let p = pkgs
            .iter()
            .find(|p| p["spec"].as_str() == Some(spec))
            .unwrap_or_else(|| panic!("{spec} is not in {}", dir.display()));
        assert_eq!(p["sha256"].as_str().unwrap().len(), 64, "{spec}");
        assert!(p.contains_key("licence"), "{spec}");
        if spec.starts_with("pypi:") || spec.starts_with("npm:") {
            assert!(p.contains_key("test_command"), "{spec}: {p:?}");
            assert!(p.contains_key("env"), "{spec}: {p:?}");
            tested.push(p["folder"].as_str().unwrap().to_string());
        }
    }
    // Every run made now, none answered from an earlier run's cache.
    let _ = std::fs::remove_file(dir.join(".typist/tests-cache.jsonl"));
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.jsonl");
    ok(&typist()
        .args([
            "sample",
            "--rate",
            "0.2",
            "--seed",
            "1",
            "--max-per-repo",
            "8",
        ])
        .arg("--dataset")
        .arg(&dir)
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    profile(
        &editors,
        "oracle",
        &["oracle", "--truth", plan.to_str().unwrap()],
    );
    let out = tmp.path().join("out");
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--editors")
        .arg(&editors)
        .arg("--plan")
        .arg(&plan)
        .args(["--assistant", "oracle", "--jobs", "2", "--check-tests"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out.join("records.tests.jsonl"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &lines {
        let outcome = r["outcome"].as_str().unwrap();
        assert!(
            !["fail", "error", "broken"].contains(&outcome),
            "the true line does not pass its own tests: {r}"
        );
    }
    for repo in &tested {
        assert!(
            lines
                .iter()
                .any(|r| r["repo"] == repo.as_str() && r["outcome"] == "pass"),
            "no case of {repo} is noticed by its tests: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
