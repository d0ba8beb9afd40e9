//! Runs are objects: `--resume --out DIR` continues from the manifest alone, a flag
//! given again must agree (the error names it and both values), and the manifest keeps
//! each start of the run.

use super::*;

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// A run cut short (a worker's panic after 25 records, with two jobs) and resumed with
/// nothing but `--resume --out DIR` equals the run made in one go, byte for byte; flags
/// that say what the run is are refused when they differ, and the refusals touch
/// nothing; the manifest then holds both starts.
#[test]
fn a_run_resumed_from_its_manifest_alone_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "typist-ngram",
        "--assistant",
        "typist-previous-line",
        "--jobs",
        "2",
    ];
    let whole = whole_run(tmp.path(), &common);
    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let o = run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--drill-panic-at", "25"],
    ]
    .concat());
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let kept = records(&cut);
    assert!(kept.lines().count() < records(&whole).lines().count());
    let first = manifest(&cut);
    assert_eq!(first["history"].as_array().unwrap().len(), 1, "{first}");

    // Each flag that says what the run is, given with another value: one line naming
    // the flag and both values, exit 2, nothing written.
    for (flag, want) in [
        (
            &["--assistant", "typist-ngram"][..],
            "--assistant: this run was made with typist-ngram, typist-previous-line; given typist-ngram",
        ),
        (
            &["--rate", "0.1"][..],
            "--rate: this run was made with 0.05; given 0.1",
        ),
        (
            &["--seed", "4"][..],
            "--seed: this run was made with 3; given 4",
        ),
        (
            &["--settle-ms", "5"][..],
            "--settle-ms: this run was made with 0; given 5",
        ),
        (
            &["--passes", "2"][..],
            "--passes: this run was made with 1; given 2",
        ),
    ] {
        let o = run(&[&["--resume", "--out", &cut_s][..], flag].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {err}");
        assert!(err.contains(want), "{flag:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(records(&cut), kept, "a refused resume writes nothing");
    assert_eq!(manifest(&cut), first, "a refused resume writes nothing");

    // Only --resume and --out (and --jobs, which may differ); no config.toml read.
    let o = typist()
        .current_dir(tmp.path())
        .args(["run", "--resume", "--out", &cut_s, "--jobs", "1", "--quiet"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(records(&cut), records(&whole));
    let m = manifest(&cut);
    assert_eq!(m["status"], "complete");
    let history = m["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{m}");
    assert_eq!(history[0]["resumed"], false);
    assert_eq!(history[0]["status"], "failed");
    assert_eq!(history[0]["jobs"], 2);
    assert_eq!(history[1]["resumed"], true);
    assert_eq!(history[1]["status"], "complete");
    assert_eq!(history[1]["jobs"], 1);
    // The run started with its first start; its work is the sum of both starts'.
    assert_eq!(m["started_at"], history[0]["started_at"]);
    assert_eq!(m["started_at"], first["started_at"]);
    let new: u64 = history
        .iter()
        .map(|h| h["new_records"].as_u64().unwrap())
        .sum();
    assert_eq!(new as usize, records(&whole).lines().count());
    let sessions: u64 = history
        .iter()
        .map(|h| h["sessions"]["started"].as_u64().unwrap())
        .sum();
    assert_eq!(m["sessions"]["started"], sessions);
    assert!(
        history
            .iter()
            .all(|h| h["sessions"]["started"].as_u64() > Some(0))
    );
    // The seconds spent starting sessions are summed like the sessions; the peak
    // memory is the higher of the two starts'.
    let f = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("not a number: {m}"));
    let start_seconds: f64 = history
        .iter()
        .map(|h| f(&h["sessions"]["start_seconds"]))
        .sum();
    assert!((f(&m["sessions"]["start_seconds"]) - start_seconds).abs() < 1e-9);
    assert!(
        history
            .iter()
            .all(|h| f(&h["sessions"]["start_seconds"]) > 0.0)
    );
    for who in ["typist", "servers"] {
        let peaks: Vec<f64> = history.iter().map(|h| f(&h["peak_mb"][who])).collect();
        assert!(peaks.iter().all(|p| *p > 0.0), "{who}: {peaks:?}");
        assert_eq!(f(&m["peak_mb"][who]), peaks[0].max(peaks[1]), "{who}");
    }
    // The settings it was resumed from are the first start's.
    assert_eq!(m["settings"], first["settings"]);
    assert_eq!(m["settings"]["sampling"]["rate"], 0.05);
}

/// A manifest written before `sessions.start_seconds` and `peak_mb` were kept still
/// resumes: its start stays as it was written (no field added to it), and the run's
/// totals are those of the starts that have them.
#[test]
fn a_manifest_without_start_seconds_or_peak_memory_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "typist-previous-line",
        "--rate",
        "0.02",
        "--seed",
        "3",
        "--jobs",
        "1",
        "--out",
        &cut_s,
        "--drill-panic-at",
        "5",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // What an older typist wrote: the same manifest without the two fields.
    let strip = |m: &mut Value| {
        let m = m.as_object_mut().unwrap();
        assert!(m.remove("peak_mb").is_some(), "{m:?}");
        let s = m.get_mut("sessions").unwrap().as_object_mut().unwrap();
        assert!(s.remove("start_seconds").is_some(), "{s:?}");
    };
    let mut old = manifest(&cut);
    strip(&mut old);
    strip(&mut old["history"][0]);
    let first = old["history"][0].clone();
    std::fs::write(
        cut.join("manifest.json"),
        serde_json::to_string_pretty(&old).unwrap(),
    )
    .unwrap();
    ok(&run(&["--resume", "--out", &cut_s]));
    let m = manifest(&cut);
    assert_eq!(m["status"], "complete", "{m}");
    assert_eq!(m["history"][0], first, "the older start is kept as written");
    let now = &m["history"][1];
    assert_eq!(
        m["sessions"]["start_seconds"],
        now["sessions"]["start_seconds"]
    );
    assert!(now["sessions"]["start_seconds"].as_f64() > Some(0.0), "{m}");
    assert_eq!(m["peak_mb"], now["peak_mb"]);
    assert!(m["peak_mb"]["servers"].as_f64() > Some(0.0), "{m}");
}
