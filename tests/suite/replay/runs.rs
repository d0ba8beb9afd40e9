//! Whole runs: every case recorded once with a manifest and a score, the same bytes for
//! any number of jobs, shards apart and merged, two passes, the shard index read from
//! Kubernetes and Slurm.

use super::*;

#[test]
fn a_run_records_every_case_once_with_a_manifest_and_a_score() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "typist-ngram",
        "--assistant",
        "typist-previous-line",
        "--out",
        out.to_str().unwrap(),
        "--rate",
        "0.05",
        "--seed",
        "3",
    ]);
    ok(&o);
    let recs = parsed(&out);
    let plan_cases = recs
        .iter()
        .filter(|r| r["assistant"] == "typist-ngram")
        .count();
    assert!(plan_cases > 50, "{plan_cases}");
    assert_eq!(recs.len(), 2 * plan_cases);
    for r in &recs {
        let outcome = r["outcome"].as_str().unwrap();
        assert!(["suggestion", "empty"].contains(&outcome), "{r}");
        assert_eq!(r["latency_ms"], Value::Null, "--no-latency");
        if outcome == "suggestion" {
            assert!(r["predicted"].is_string());
        }
    }
    // The n-gram baseline helps on real code: at least a few suggestions are exact.
    let exact = recs
        .iter()
        .filter(|r| r["assistant"] == "typist-ngram" && r["predicted"] == r["expected"])
        .count();
    assert!(exact >= 2, "{exact} exact suggestions");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    assert_eq!(m["records"], recs.len());
    assert_eq!(m["assistants"][0]["server"]["name"], "typist-host (ngram)");
    assert!(m["plan"]["hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(m["conditions"]["context"], "prefix");
    let score: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("score.json")).unwrap()).unwrap();
    assert_eq!(score["assistants"]["typist-ngram"]["cases"], plan_cases);
}

/// The same records with 1 and 3 jobs, and whether the n-gram host's index cache is off,
/// cold (every repository's first session builds and writes it) or warm (every session
/// reads it back, the files whose content differs left out).
#[test]
fn records_are_byte_identical_for_any_number_of_jobs_and_any_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let mut outs = vec![];
    for (jobs, cache_dir) in [
        ("1", "off".to_string()),
        ("1", cache.display().to_string()),
        ("3", cache.display().to_string()),
    ] {
        let out = tmp.path().join(format!("out{}", outs.len()));
        let mut args = vec!["--dataset", DATASET, "--assistant", "typist-ngram"];
        args.extend(DS_ARGS);
        let out_s = out.to_str().unwrap().to_string();
        args.extend(["--jobs", jobs, "--out", &out_s]);
        let o = typist()
            .arg("run")
            .args(["--config", "/dev/null", "--quiet", "--no-latency"])
            .args(&args)
            .env("TYPIST_CACHE_DIR", &cache_dir)
            .output()
            .unwrap();
        ok(&o);
        outs.push(records(&out));
        if outs.len() == 1 {
            assert!(!cache.exists(), "off writes no cache");
        }
    }
    assert!(!outs[0].is_empty());
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    let cached = std::fs::read_dir(cache.join("ngram")).unwrap().count();
    assert!(cached > 1, "one index per repository: {cached}");
}

#[test]
fn shards_run_apart_and_merged_equal_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.jsonl");
    let mut sample = typist();
    sample
        .args([
            "sample",
            "--dataset",
            DATASET,
            "--out",
            plan.to_str().unwrap(),
        ])
        .args(DS_ARGS);
    ok(&sample.output().unwrap());
    let one = tmp.path().join("one");
    let common = [
        "--dataset",
        DATASET,
        "--plan",
        plan.to_str().unwrap(),
        "--assistant",
        "typist-ngram",
    ];
    let mut a = common.to_vec();
    let one_s = one.to_str().unwrap().to_string();
    a.extend(["--out", &one_s]);
    ok(&run(&a));
    // Two shards as separate processes, at the same time; the second takes its index
    // from a Kubernetes Indexed Job's environment.
    let s0 = tmp.path().join("s0");
    let s1 = tmp.path().join("s1");
    let mut c0 = typist();
    c0.arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(["--shard", "0/2", "--out", s0.to_str().unwrap()]);
    let mut c1 = typist();
    c1.arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(["--shard", "auto/2", "--out", s1.to_str().unwrap()]);
    // What a Kubernetes Indexed Job sets: the index, not the count.
    c1.env("JOB_COMPLETION_INDEX", "1");
    let (h0, h1) = (c0.spawn().unwrap(), c1.spawn().unwrap());
    ok(&h0.wait_with_output().unwrap());
    ok(&h1.wait_with_output().unwrap());
    let n0 = parsed(&s0).len();
    let n1 = parsed(&s1).len();
    assert!(n0 > 0 && n1 > 0, "both shards have work: {n0} {n1}");
    let merged = tmp.path().join("merged");
    let mut m = typist();
    m.args([
        "merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    ok(&m.output().unwrap());
    assert_eq!(records(&merged), records(&one));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["merged_from"].as_array().unwrap().len(), 2);
    // Scored and reported as the one run is (no latencies here: the same score).
    let score = |dir: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("score.json")).unwrap()).unwrap()
    };
    assert_eq!(score(&merged), score(&one));
    assert!(merged.join("report.html").is_file());
}

#[test]
fn two_passes_record_both_and_feed_the_repeat_skip_analysis() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "flaky", &["--empty-rate", "0.3"], 10_000);
    let out = tmp.path().join("out");
    ok(&run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "flaky",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.03",
        "--seed",
        "2",
        "--passes",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]));
    let recs = parsed(&out);
    let p1 = recs.iter().filter(|r| r["pass"] == 1).count();
    assert_eq!(recs.len(), 2 * p1);
    let score: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("score.json")).unwrap()).unwrap();
    let rs = &score["repeat_skip"]["flaky"];
    assert_eq!(rs["passes"].as_array().unwrap().len(), 2);
    assert_eq!(rs["paired_cases"], p1);
    // 30% injected empties on top of the model's own (about 10-20% here).
    let rate = rs["passes"][0]["empty_rate"].as_f64().unwrap();
    assert!((0.25..0.75).contains(&rate), "{rate}");
    // A deterministic assistant (a fresh server per repository, seeded faults) skips
    // exactly the same lines again.
    assert_eq!(rs["empty_again"], 1.0, "{rs}");
    assert_eq!(rs["became_empty"], 0.0, "{rs}");
}

/// Three passes of a deterministic assistant: the spread of every headline figure across
/// them is nothing (sd 0, min = max) over the cases answered in every pass, which are
/// every case (the faults injected are empties, seeded alike in each pass).
#[test]
fn three_passes_give_the_spread_across_passes_in_score_json() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "flaky", &["--empty-rate", "0.3"], 10_000);
    let out = tmp.path().join("out");
    ok(&run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "flaky",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.03",
        "--seed",
        "2",
        "--passes",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]));
    let recs = parsed(&out);
    let p1 = recs.iter().filter(|r| r["pass"] == 1).count();
    let score: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("score.json")).unwrap()).unwrap();
    let s = &score["repeat_skip"]["flaky"]["spread"];
    assert_eq!(s["passes"].as_array().unwrap().len(), 3, "{s}");
    assert_eq!(s["cases"], p1);
    for f in ["integral_help", "exact_share", "help_at_0", "empty_rate"] {
        assert_eq!(s[f]["sd"], 0.0, "{f} {s}");
        assert_eq!(s[f]["min"], s[f]["max"], "{f} {s}");
        assert_eq!(s[f]["min"], s["passes"][2][f], "{f} {s}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3 id=\"spread\">"));
    assert!(html.contains("<table data-assistant=\"flaky\" class=\"spread\">"));
}

/// The variables each scheduler really sets, read as `--shard auto[/n]` reads them.
#[test]
fn shard_auto_reads_what_kubernetes_and_slurm_set() {
    use typist::replay::Shard;
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let sh = |index, count| Shard { index, count };
    // Kubernetes Indexed Job (completions: 8): JOB_COMPLETION_INDEX only.
    let k8s: &[(&str, &str)] = &[
        ("JOB_COMPLETION_INDEX", "3"),
        ("HOSTNAME", "typist-run-3-x7k2p"),
    ];
    assert_eq!(Shard::from_env(env(k8s), Some(8)).unwrap(), sh(3, 8));
    let e = Shard::from_env(env(k8s), None).unwrap_err().to_string();
    assert!(e.contains("auto/n"), "{e}");
    assert!(Shard::from_env(env(k8s), Some(3)).is_err(), "index 3 of 3");
    // Slurm, sbatch --array=0-7.
    let slurm: &[(&str, &str)] = &[
        ("SLURM_ARRAY_JOB_ID", "4711"),
        ("SLURM_ARRAY_TASK_ID", "5"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
        ("SLURM_ARRAY_TASK_MAX", "7"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
        ("SLURM_ARRAY_TASK_STEP", "1"),
    ];
    assert_eq!(Shard::from_env(env(slurm), None).unwrap(), sh(5, 8));
    assert_eq!(Shard::from_env(env(slurm), Some(8)).unwrap(), sh(5, 8));
    let e = Shard::from_env(env(slurm), Some(4))
        .unwrap_err()
        .to_string();
    assert!(e.contains("SLURM_ARRAY_TASK_COUNT"), "{e}");
    // --array=1-8: ids from 1.
    let from1: &[(&str, &str)] = &[
        ("SLURM_ARRAY_TASK_ID", "8"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_MAX", "8"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
    ];
    assert_eq!(Shard::from_env(env(from1), None).unwrap(), sh(7, 8));
    // --array=0-14:2: eight tasks, ids 0, 2, …, 14.
    let stepped: &[(&str, &str)] = &[
        ("SLURM_ARRAY_TASK_ID", "14"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
        ("SLURM_ARRAY_TASK_MAX", "14"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
        ("SLURM_ARRAY_TASK_STEP", "2"),
    ];
    assert_eq!(Shard::from_env(env(stepped), None).unwrap(), sh(7, 8));
    // --array=1,4,9: a list has no arithmetic index.
    let list: &[(&str, &str)] = &[
        ("SLURM_ARRAY_TASK_ID", "9"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_MAX", "9"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ];
    let e = format!("{:#}", Shard::from_env(env(list), None).unwrap_err());
    assert!(e.contains("--shard i/n"), "{e}");
    // Nothing set, or a value that is not a number.
    assert!(Shard::from_env(env(&[]), Some(2)).is_err());
    let bad: &[(&str, &str)] = &[("JOB_COMPLETION_INDEX", "three")];
    let e = Shard::from_env(env(bad), Some(4)).unwrap_err().to_string();
    assert!(e.contains("JOB_COMPLETION_INDEX"), "{e}");
    assert_eq!(Shard::parse("2/4").unwrap(), sh(2, 4));
    assert!(Shard::parse("auto/x").is_err());
    assert!(Shard::parse("autox").is_err());
}
