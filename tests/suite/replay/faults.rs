//! Servers that fail: Copilot not signed in, crashes, hangs and timeouts, restarts after
//! timeouts in a row, invalid UTF-8 on stderr, retried errors, a full disk.

use super::*;

/// An assistant that is not signed in stops the run at its first case, naming it and
/// the login to run: never a run of empties, nor of errors.
#[test]
fn copilot_not_signed_in_stops_the_run_naming_the_login() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "copilot",
            "--rate",
            "0.01",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ])
        .env("TYPIST_CONFIG_DIR", tmp.path().join("config"))
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GH_COPILOT_TOKEN")
        .env_remove("GITHUB_COPILOT_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("copilot is not signed in"), "{stderr}");
    assert!(stderr.contains("run `typist login copilot`"), "{stderr}");
    // Nothing was recorded as an answer, an empty or an error.
    assert!(parsed(&out).is_empty(), "{}", records(&out));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "failed", "{m}");
}

#[test]
fn a_crashing_server_is_restarted_and_a_hopeless_one_stops_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    // Crashes on its 4th request: every restarted server answers 3, so every case ends
    // answered (the crashed one retried once on a fresh server).
    let editors = editors_with(tmp.path(), "crashy", &["--crash-after", "4"], 10_000);
    let out = tmp.path().join("out");
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "crashy",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.02",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    ok(&o);
    let recs = parsed(&out);
    assert!(recs.len() > 10);
    assert!(
        recs.iter().all(|r| r["outcome"] != "error"),
        "crashes were retried"
    );

    // Crashes on every request: the run stops after the allowed restarts, keeping what
    // it recorded, and says why.
    let editors = editors_with(tmp.path(), "dead", &["--crash-after", "1"], 10_000);
    let out = tmp.path().join("out2");
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "dead",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.02",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
        "--max-restarts",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dead keeps failing"), "{err}");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "failed");
    for r in parsed(&out) {
        assert_eq!(r["outcome"], "error", "{r}");
    }
}

#[test]
fn a_hanging_server_gives_timeouts_not_empties() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "hangs", &["--hang-after", "1"], 300);
    let out = tmp.path().join("out");
    no_answers(
        &run(&[
            "--dataset",
            DATASET,
            "--assistant",
            "hangs",
            "--editors",
            editors.to_str().unwrap(),
            "--rate",
            "0.005",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]),
        "hangs",
    );
    let recs = parsed(&out);
    assert!(!recs.is_empty());
    for r in &recs {
        assert_eq!(r["outcome"], "timeout", "{r}");
    }
}

/// `--resume --retry-errors` asks again the cases recorded as `timeout` or `error`; the
/// new records replace the failed ones, and the result equals a run that never failed.
#[test]
fn retry_errors_replaces_failed_records_with_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "flaky", &["--hang-after", "1"], 300);
    let out = tmp.path().join("out");
    let args = |out: &Path| {
        vec![
            "--dataset".to_string(),
            DATASET.into(),
            "--assistant".into(),
            "flaky".into(),
            "--editors".into(),
            editors.to_str().unwrap().into(),
            "--rate".into(),
            "0.01".into(),
            "--seed".into(),
            "3".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let a: Vec<String> = args(&out);
    // An assistant that answered no case: the run says so and exits 3 (documented).
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("no answered case from flaky"), "{stderr}");

    let first = parsed(&out);
    assert!(first.len() > 5);
    assert!(first.iter().all(|r| r["outcome"] == "timeout"));
    let scored = typist()
        .args(["score", out.join("records.jsonl").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(scored.status.code(), Some(3));
    let table = String::from_utf8_lossy(&scored.stdout);
    assert!(
        table.contains("flaky: 0 error(s),")
            && table.contains("most common: timeout")
            && table.contains("flaky: answered no case"),
        "{table}"
    );
    // --resume keeps the failed records and so still has nothing to show from flaky.
    // The server is mended under the same name; a plain resume has nothing to do.
    editors_with(tmp.path(), "flaky", &[], 10_000);
    let mut resume = a.clone();
    resume.push("--resume".into());
    let o = run(&resume.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        parsed(&out),
        first,
        "--resume alone keeps the failed records"
    );
    resume.push("--retry-errors".into());
    ok(&run(&resume.iter().map(String::as_str).collect::<Vec<_>>()));
    let clean = tmp.path().join("clean");
    let c: Vec<String> = args(&clean);
    ok(&run(&c.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(records(&out), records(&clean));
}

/// Groups records by file, in line order.
fn by_file(recs: &[Value]) -> BTreeMap<String, Vec<&Value>> {
    let mut m: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in recs {
        m.entry(format!("{}/{}", r["repo"], r["file"]))
            .or_default()
            .push(r);
    }
    for v in m.values_mut() {
        v.sort_by_key(|r| r["line"].as_u64());
    }
    m
}

/// A server that stops answering (from its 3rd request) is restarted after 3 timeouts
/// in a row and the case asked once more; with the policy off, it is never restarted.
#[test]
fn a_hung_server_is_restarted_after_timeouts_in_a_row() {
    let tmp = tempfile::tempdir().unwrap();
    let run_with = |name: &str, extra_toml: &str| -> (Vec<Value>, Value) {
        let dir = tmp.path().join(name);
        let editors = editors_with(&dir, "hangs-later", &["--hang-after", "3"], 300);
        let file = editors.join("hangs-later.toml");
        let toml = std::fs::read_to_string(&file).unwrap() + extra_toml;
        std::fs::write(&file, toml).unwrap();
        let out = dir.join("out");
        let o = run(&[
            "--dataset",
            DATASET,
            "--assistant",
            "hangs-later",
            "--editors",
            editors.to_str().unwrap(),
            "--rate",
            "0.3",
            "--max-per-file",
            "6",
            "--max-per-repo",
            "12",
            "--jobs",
            "2",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        (parsed(&out), m)
    };
    let answered = |r: &&Value| r["outcome"] == "suggestion" || r["outcome"] == "empty";
    let (recs, m) = run_with("restarts", "");
    let mut long_files = 0;
    for (file, rs) in by_file(&recs) {
        if rs.len() < 6 {
            continue;
        }
        long_files += 1;
        let outcomes: Vec<&str> = rs.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
        // ok ok T T ok(after the restart) ok T T ok …
        assert!(answered(&rs[0]) && answered(&rs[1]), "{file}: {outcomes:?}");
        assert_eq!(&outcomes[2..4], ["timeout", "timeout"], "{file}");
        assert!(answered(&rs[4]) && answered(&rs[5]), "{file}: {outcomes:?}");
    }
    assert!(long_files > 0);
    assert!(
        m["sessions"]["restarted_after_timeouts"].as_u64().unwrap() > 0,
        "{m}"
    );
    // Policy off: from the 3rd case of a file on, every case times out.
    let (recs, m) = run_with("never", "restart_after_timeouts = 0\n");
    for (file, rs) in by_file(&recs) {
        for r in rs.iter().skip(2) {
            assert_eq!(r["outcome"], "timeout", "{file}: {r}");
        }
    }
    assert_eq!(m["sessions"]["restarted_after_timeouts"], 0);
}

/// A server that floods its stderr with lines that are not UTF-8 keeps being drained
/// (were the drain to stop, the pipe would fill and the server stall into timeouts).
#[test]
fn a_server_writing_invalid_utf8_to_stderr_keeps_answering() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "noisy", &["--stderr-junk", "200000"], 5_000);
    let out = tmp.path().join("out");
    ok(&run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "noisy",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.02",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]));
    let recs = parsed(&out);
    assert!(recs.len() > 10);
    for r in &recs {
        assert!(
            r["outcome"] == "suggestion" || r["outcome"] == "empty",
            "{r}"
        );
    }
}

/// A full disk (records written to /dev/full) stops the run with a message naming the
/// records file; once there is room, `--resume` completes the run.
#[test]
fn a_full_disk_is_named_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let common = ["--dataset", DATASET, "--assistant", "typist-ngram"];
    let whole = whole_run(tmp.path(), &common);
    let cut = tmp.path().join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    std::os::unix::fs::symlink("/dev/full", cut.join("records.jsonl")).unwrap();
    let cut_s = cut.to_str().unwrap().to_string();
    let o = run(&[&common[..], &DS_ARGS[..], &["--out", &cut_s, "--resume"]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("records.jsonl"),
        "the message names the file: {err}"
    );
    assert!(
        err.contains("No space left on device"),
        "the message says why: {err}"
    );
    // Room again: a real file in place of the full device.
    std::fs::remove_file(cut.join("records.jsonl")).unwrap();
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--resume"],
    ]
    .concat()));
    assert_eq!(records(&cut), records(&whole));
}
