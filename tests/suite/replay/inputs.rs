//! What a run refuses or skips: completion-only servers for line runs, a changed
//! dataset, bad inputs, short lines and other languages, a server without the dialect's
//! capability.

use super::*;

#[test]
fn completion_only_servers_are_refused_for_line_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "pyright",
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("pyright answers completion lists only") && err.contains("inline-completion"),
        "{err}"
    );
}

#[test]
fn a_changed_dataset_refuses_the_plan_with_the_changed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    copy_dir(&dataset(), &ds);
    let plan = tmp.path().join("plan.jsonl");
    ok(&typist()
        .args([
            "sample",
            "--dataset",
            ds.to_str().unwrap(),
            "--rate",
            "0.05",
            "--out",
            plan.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    // The plan remembers its dataset: no --dataset needed.
    let o = run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--assistant",
        "typist-ngram",
        "--out",
        tmp.path().join("o1").to_str().unwrap(),
    ]);
    ok(&o);
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("o1/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        std::fs::canonicalize(m["dataset"]["path"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(&ds).unwrap()
    );
    let f = ds.join("pluggy/src/pluggy/_result.py");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, text + "\n# changed\n").unwrap();
    // Without --dataset, the refusal names the dataset the plan was sampled from.
    let o = run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--assistant",
        "typist-ngram",
        "--out",
        tmp.path().join("o2").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let ds_canon = std::fs::canonicalize(&ds).unwrap();
    assert!(
        err.contains(&format!("sampled from {}", ds_canon.display())),
        "{err}"
    );
    let o = run(&[
        "--dataset",
        ds.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--assistant",
        "typist-ngram",
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("pluggy/src/pluggy/_result.py") && err.contains("changed"),
        "{err}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Empty repository, non-UTF-8 file, CRLF + BOM file, a 5 MB one-line file, an
/// unreadable file and a symlink loop: each skipped (or normalized) with a reason in
/// the manifest, and the run completes.
#[test]
fn bad_inputs_are_skipped_with_reasons_and_the_run_completes() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    let repo = ds.join("repo");
    std::fs::create_dir_all(ds.join("empty")).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("good.py"),
        "import os\n\ndef f(x):\n    return os.path.join(x, x)\n\nprint(f('a'))\n",
    )
    .unwrap();
    std::fs::write(repo.join("latin1.py"), b"x = '\xe9t\xe9'\n").unwrap();
    std::fs::write(
        repo.join("crlf.py"),
        "\u{feff}a = 1\r\nb = a + 1\r\nprint(b)\r\n",
    )
    .unwrap();
    std::fs::write(repo.join("huge.py"), "x = 1;".repeat(5 << 20 >> 2)).unwrap();
    std::fs::write(repo.join("secret.py"), "y = 2\n").unwrap();
    std::fs::set_permissions(
        repo.join("secret.py"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    std::os::unix::fs::symlink(&repo, repo.join("loop")).unwrap();
    for d in [tmp.path(), &ds, &repo, &ds.join("empty")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for f in ["good.py", "latin1.py", "crlf.py", "huge.py"] {
        std::fs::set_permissions(repo.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Root reads any file: run as nobody then, so the unreadable file is unreadable.
    let mut cmd = if unsafe_is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", TYPIST]);
        c
    } else {
        Command::new(TYPIST)
    };
    cmd.env("TYPIST_EXE", TYPIST).env("HOME", tmp.path()).args([
        "run",
        "--config",
        "/dev/null",
        "--quiet",
        "--no-latency",
        "--lines",
        "all",
        "--dataset",
        ds.to_str().unwrap(),
        "--assistant",
        "typist-ngram",
        "--editors",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("editors")
            .to_str()
            .unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let o = cmd.output().unwrap();
    ok(&o);
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let reasons: Vec<(String, String)> = m["dataset"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let reason = |p: &str| {
        reasons
            .iter()
            .find(|(q, _)| q == p)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("{p} not skipped: {reasons:?}"))
    };
    assert!(reason("empty").contains("no source files"));
    assert!(reason("repo/latin1.py").starts_with("not UTF-8"));
    assert!(reason("repo/huge.py").starts_with("oversized"));
    assert!(reason("repo/secret.py").starts_with("unreadable"));
    assert!(reason("repo/loop").starts_with("symlink"));
    assert_eq!(m["dataset"]["normalized"][0]["path"], "repo/crlf.py");
    assert_eq!(
        m["dataset"]["normalized"][0]["notes"],
        serde_json::json!(["bom", "crlf"])
    );
    let recs = parsed(&out);
    let crlf: Vec<&Value> = recs.iter().filter(|r| r["file"] == "crlf.py").collect();
    assert_eq!(
        crlf.iter()
            .map(|r| r["expected"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["a = 1", "b = a + 1", "print(b)"]
    );
    assert_eq!(recs.len(), 3 + 4, "crlf.py and good.py code lines");
}

fn unsafe_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Cases a profile cannot be asked are counted, never sent: lines no longer than the
/// typed prefix, and languages the profile does not list.
#[test]
fn short_lines_and_other_languages_are_skipped_with_counted_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    std::fs::write(
        editors.join("py-only.toml"),
        format!(
            "name = \"py-only\"\ncommand = \"{TYPIST}\"\nargs = [\"host\", \"--backend\", \"previous-line\"]\ndialect = \"inline\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    ok(&run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "py-only",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.05",
        "--seed",
        "1",
        "--typed-prefix",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]));
    let recs = parsed(&out);
    assert!(recs.len() > 20);
    for r in &recs {
        assert_eq!(r["language"], "python", "{r}");
        assert_eq!(r["typed"], 30, "{r}");
        assert!(r["expected"].as_str().unwrap().chars().count() > 30, "{r}");
    }
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let skipped = &m["skipped_cases"]["py-only"];
    let short = skipped["line not longer than the typed prefix"]
        .as_u64()
        .unwrap();
    let lang = skipped["language not served by the profile"]
        .as_u64()
        .unwrap();
    assert!(short > 0 && lang > 0, "{skipped}");
    assert_eq!(
        recs.len() as u64 + short + lang,
        m["plan"]["cases"].as_u64().unwrap(),
        "every planned case is recorded or counted as skipped"
    );
}

/// A profile whose dialect needs a capability the server does not declare is refused
/// before any case, naming both (pyright answers completion lists, not inline ones).
#[test]
fn a_server_without_the_dialects_capability_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let pyright =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/pyright.toml"))
            .unwrap()
            .replace("name = \"pyright\"", "name = \"pyright-inline\"")
            .replace("dialect = \"completion\"", "dialect = \"inline\"");
    std::fs::write(editors.join("pyright-inline.toml"), pyright).unwrap();
    let out = tmp.path().join("out");
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "pyright-inline",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.01",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("pyright-inline") && err.contains("inlineCompletionProvider"),
        "{err}"
    );
    assert!(!out.join("records.jsonl").exists());
}
