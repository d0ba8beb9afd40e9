//! `typist dataset add`: real releases fetched from the real registries (PyPI, npm,
//! crates.io, Debian: the network this project's machines and CI reach), unpacked,
//! recorded, sampled; a second add that changes nothing, a changed archive refused, a
//! missing package and an unreachable registry in one line each.

use std::path::Path;
use std::process::Output;

use super::common::{ok, typist};

fn add(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = typist();
    cmd.args(["dataset", "add"]).arg(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn manifest(dir: &Path) -> toml::Table {
    toml::from_str(&std::fs::read_to_string(dir.join("dataset.toml")).unwrap()).unwrap()
}

fn package<'a>(m: &'a toml::Table, spec: &str) -> &'a toml::Table {
    m["package"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_table().unwrap())
        .find(|p| p["spec"].as_str() == Some(spec))
        .unwrap_or_else(|| panic!("{spec} not recorded: {m:?}"))
}

fn sha256(path: &Path) -> String {
    typist::digest::sha256_hex(&std::fs::read(path).unwrap())
}

/// Four ecosystems in one dataset, without test environments: each folder holds the
/// release's code and licence; the manifest has what the registries state (the
/// licences below are the packages' own: six MIT, strsim MIT, left-pad WTFPL, Apache
/// Commons Lang Apache-2.0); sampling the folder finds Python, Rust, JavaScript and Java.
#[test]
fn four_registries_into_one_dataset_then_a_second_add_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("real");
    let specs = [
        "pypi:six==1.16.0",
        "crates:strsim@0.11.1",
        "npm:left-pad@1.3.0",
        "debian:libcommons-lang3-java",
    ];
    let mut args: Vec<&str> = specs.to_vec();
    args.push("--no-env");
    let out = add(&dir, &args, &[]);
    ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches(": added in ").count(), 4, "{said}");
    let m = manifest(&dir);
    for (spec, folder, licence, code, tests) in [
        (
            "pypi:six==1.16.0",
            "six",
            "MIT",
            "six.py",
            Some("python -m pytest -q"),
        ),
        (
            "crates:strsim@0.11.1",
            "strsim",
            "MIT",
            "src/lib.rs",
            Some("cargo test --offline"),
        ),
        (
            "npm:left-pad@1.3.0",
            "left-pad",
            "WTFPL",
            "index.js",
            Some("npm test"),
        ),
        (
            "debian:libcommons-lang3-java",
            "libcommons-lang3-java",
            "Apache-2.0",
            "src/main/java/org/apache/commons/lang3/StringUtils.java",
            None,
        ),
    ] {
        let p = package(&m, spec);
        assert_eq!(p["folder"].as_str(), Some(folder), "{spec}");
        assert_eq!(p["licence"].as_str(), Some(licence), "{spec}");
        assert!(dir.join(folder).join(code).is_file(), "{spec}: {code}");
        let files = p["licence_files"].as_array().unwrap();
        assert!(!files.is_empty(), "{spec}: a licence file");
        for f in files {
            assert!(
                dir.join(folder).join(f.as_str().unwrap()).is_file(),
                "{spec}: {f}"
            );
        }
        assert_eq!(
            p.get("test_command").and_then(|t| t.as_str()),
            tests,
            "{spec}"
        );
        let sha = p["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64, "{spec}: {sha}");
        assert!(p.get("env").is_none(), "{spec}: --no-env");
    }
    // The crate's sha256 is the one cargo's index states for it (crates.io's sparse
    // index entry for strsim 0.11.1).
    assert_eq!(
        package(&m, "crates:strsim@0.11.1")["sha256"].as_str(),
        Some("7da8b5736845d9f2fcb837ea5d9e2628564b3b043a70948a3f0b778838c5fb4f")
    );
    // The sdist's is PyPI's (https://pypi.org/simple/six/ lists it for six-1.16.0.tar.gz).
    assert_eq!(
        package(&m, "pypi:six==1.16.0")["sha256"].as_str(),
        Some("1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926")
    );
    let debian = package(&m, "debian:libcommons-lang3-java");
    assert!(
        debian["version"].as_str().unwrap().starts_with("3."),
        "{debian:?}"
    );
    assert!(
        debian["no_tests"]
            .as_str()
            .unwrap()
            .contains("--test-command")
    );

    // The folder is a dataset of four repositories.
    let plan = tmp.path().join("plan.jsonl");
    let out = typist()
        .args(["sample", "--rate", "0.05", "--seed", "1", "--dataset"])
        .arg(&dir)
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap();
    ok(&out);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains("in 4 repositories"), "{said}");
    let text = std::fs::read_to_string(&plan).unwrap();
    for lang in ["python", "rust", "javascript", "java"] {
        assert!(
            text.contains(&format!("\"language\":\"{lang}\"")),
            "no {lang} case"
        );
    }

    // A second add of the same specs checks each archive and changes nothing.
    let before = std::fs::read(dir.join("dataset.toml")).unwrap();
    let six = sha256(&dir.join("six/six.py"));
    let out = add(&dir, &args, &[]);
    ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        said.matches("already there, its archive unchanged").count(),
        4,
        "{said}"
    );
    assert_eq!(std::fs::read(dir.join("dataset.toml")).unwrap(), before);
    assert_eq!(sha256(&dir.join("six/six.py")), six);
    // No scratch folder left behind.
    let own: Vec<_> = std::fs::read_dir(dir.join(".typist"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(own.iter().all(|n| !n.starts_with("add-")), "{own:?}");

    // An archive that differs from the recorded one is refused, naming both; nothing
    // changes.
    let text = String::from_utf8(before.clone()).unwrap();
    let real = package(&m, "pypi:six==1.16.0")["sha256"].as_str().unwrap();
    let tampered = text.replace(real, &"0".repeat(64));
    std::fs::write(dir.join("dataset.toml"), &tampered).unwrap();
    let out = add(&dir, &["pypi:six==1.16.0", "--no-env"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("the registry's archive changed"), "{e}");
    assert!(e.contains(real) && e.contains(&"0".repeat(64)), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    assert_eq!(
        std::fs::read_to_string(dir.join("dataset.toml")).unwrap(),
        tampered
    );
    assert_eq!(sha256(&dir.join("six/six.py")), six);
}

/// A package the registry does not have, and a registry that cannot be reached: one
/// line each, naming the spec; nothing written. A recorded package whose registry is
/// unreachable stays as it is, said so.
#[test]
fn a_missing_package_and_an_unreachable_registry_are_one_line_each() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let out = add(
        &dir,
        &["pypi:typist-no-such-package-3a91==1.0", "--no-env"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("pypi:typist-no-such-package-3a91==1.0: PyPI has no such package or version"),
        "{e}"
    );
    let out = add(&dir, &["crates:strsim@99.0.0", "--no-env"], &[]);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("crates:strsim@99.0.0: crates.io has no such package or version"),
        "{e}"
    );
    assert!(!dir.join("dataset.toml").exists());

    // No registry (pip's index on a closed port).
    let offline = [
        ("PIP_INDEX_URL", "http://127.0.0.1:9/simple"),
        ("PIP_RETRIES", "1"),
    ];
    let out = add(&dir, &["pypi:six==1.16.0", "--no-env"], &offline);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("pypi:six==1.16.0: the registry could not be reached"),
        "{e}"
    );
    assert!(!dir.join("six").exists());

    // Recorded, then unreachable: kept, and said.
    ok(&add(&dir, &["pypi:six==1.16.0", "--no-env"], &[]));
    let out = add(&dir, &["pypi:six==1.16.0", "--no-env"], &offline);
    ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("already there; not checked against the registry"),
        "{said}"
    );
}

/// With its environment (the default; a second add makes one that is missing), an
/// sdist's own tests run with the recorded command in the dataset's venv, on the
/// folder's code (the package itself is not installed): they pass, and fail once the
/// folder's code is broken.
#[test]
fn an_sdists_own_tests_run_in_the_environment_add_made() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    // Added without its environment, then again with: the second add makes it.
    ok(&add(&dir, &["pypi:six==1.16.0", "--no-env"], &[]));
    assert!(
        package(&manifest(&dir), "pypi:six==1.16.0")
            .get("env")
            .is_none()
    );
    ok(&add(&dir, &["pypi:six==1.16.0"], &[]));
    let m = manifest(&dir);
    let p = package(&m, "pypi:six==1.16.0");
    let env = p["env"].as_table().unwrap();
    assert_eq!(env["kind"].as_str(), Some("venv"));
    let venv = dir.join(env["path"].as_str().unwrap());
    let command = p["test_command"].as_str().unwrap();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "python");
    // All but the moved-module tests (they need a Python built with every optional
    // module: `dbm.ndbm` is missing from some).
    let run = |folder: &Path| {
        std::process::Command::new(venv.join("bin/python"))
            .args(&words[1..])
            .args(["-k", "not move_items"])
            .current_dir(folder)
            .output()
            .unwrap()
    };
    let out = run(&dir.join("six"));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(" passed"), "{said}");
    // The tests import the folder's six: break one function there and they fail.
    let six = dir.join("six/six.py");
    let text = std::fs::read_to_string(&six).unwrap();
    let broken = text.replacen(
        "def with_metaclass(meta, *bases):",
        "def with_metaclass(meta, *bases):\n    return None",
        1,
    );
    assert_ne!(broken, text);
    std::fs::write(&six, broken).unwrap();
    assert!(!run(&dir.join("six")).status.success());
}

fn profile(editors: &Path, name: &str, args: &[&str]) {
    super::common::host_profile(editors, name, args, "");
}

/// Methodology §12 end to end on six's own tests: the oracle (the true line, exact)
/// passes on every case the tests notice; the oracle with a `(` appended never passes
/// (a fail or an error); both are judged on the same noticed cases; a second check is
/// answered from the cache with the same sidecar.
#[test]
fn check_tests_runs_the_repositorys_own_tests_on_each_accepted_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    ok(&add(&dir, &["pypi:six==1.16.0"], &[]));
    let plan = tmp.path().join("plan.jsonl");
    ok(&typist()
        .args(["sample", "--rate", "0.05", "--seed", "1", "--dataset"])
        .arg(&dir)
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let p = plan.to_str().unwrap();
    profile(&editors, "oracle", &["oracle", "--truth", p]);
    profile(
        &editors,
        "bracket",
        &["oracle", "--truth", p, "--append", "("],
    );
    let out = tmp.path().join("out");
    ok(&typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--editors")
        .arg(&editors)
        .arg("--plan")
        .arg(&plan)
        .args(["--assistant", "oracle", "--assistant", "bracket"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    let records = out.join("records.jsonl");
    let check = || {
        let o = typist()
            .arg("check")
            .arg(&records)
            .arg("--dataset")
            .arg(&dir)
            .args(["--tests", "--jobs", "2"])
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let said = check();
    let sidecar = out.join("records.tests.jsonl");
    let first = std::fs::read(&sidecar).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&first)
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let judged = |who: &str| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = lines
            .iter()
            .filter(|r| r["assistant"] == who)
            .filter(|r| ["pass", "fail", "error"].contains(&r["outcome"].as_str().unwrap()))
            .map(|r| {
                (
                    r["case"].as_str().unwrap().to_string(),
                    r["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let oracle = judged("oracle");
    let bracket = judged("bracket");
    assert!(oracle.len() >= 5, "too few noticed cases: {said}");
    assert!(
        oracle.iter().all(|(_, o)| o == "pass"),
        "the true line fails its own tests: {oracle:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|r| r["assistant"] == "oracle")
            .all(|r| r["exact"] == true),
        "the oracle is exact"
    );
    assert!(bracket.iter().all(|(_, o)| o != "pass"), "{bracket:?}");
    assert!(
        bracket.iter().any(|(_, o)| o == "error"),
        "a syntax error is an error: {bracket:?}"
    );
    let cases = |v: &[(String, String)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(cases(&oracle), cases(&bracket), "the same noticed cases");
    // Cases the tests do not run or do not notice are said, not judged.
    assert!(
        lines
            .iter()
            .any(|r| r["outcome"] == "not_covered" || r["outcome"] == "not_noticed")
    );
    // The score reads the sidecar: the oracle passes everywhere it was judged, and no
    // exact suggestion fails.
    let o = typist()
        .args(["score", "--json"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["tests"];
    assert_eq!(t["oracle"]["tests_pass"]["value"], 1.0, "{t}");
    assert_eq!(t["oracle"]["exact_but_fails"], 0);
    assert_eq!(t["bracket"]["not_exact_but_passes"], 0);
    assert!(t["bracket"]["errors"].as_u64().unwrap() > 0);
    // Again: every run from the cache, the same results.
    let again = check();
    assert!(again.contains(" 0 test runs ("), "{again}");
    assert_eq!(std::fs::read(&sidecar).unwrap(), first);
}
