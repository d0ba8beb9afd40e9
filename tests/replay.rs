//! The replay engine through the CLI, on the bundled dataset, against typist's own host
//! (the n-gram baseline) and Copilot's real server: determinism across jobs, shards and
//! a SIGKILL, bad inputs, faults (crash, hang), and refusal of completion-only servers.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{DATASET, TYPIST, editors_with, ok, typist};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn dataset() -> PathBuf {
    PathBuf::from(DATASET)
}

fn run(args: &[&str]) -> Output {
    typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(args)
        .output()
        .unwrap()
}

/// The run finished but `name` answered no case: exit 3, and stderr names it.
fn no_answers(o: &Output, name: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("no answered case from {name}")),
        "{stderr}"
    );
}

fn records(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("records.jsonl")).unwrap()
}

fn parsed(dir: &Path) -> Vec<Value> {
    records(dir)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const DS_ARGS: [&str; 4] = ["--rate", "0.05", "--seed", "3"];

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

#[test]
fn records_are_byte_identical_for_any_number_of_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = vec![];
    for jobs in ["1", "3"] {
        let out = tmp.path().join(format!("out{jobs}"));
        let mut args = vec!["--dataset", DATASET, "--assistant", "typist-ngram"];
        args.extend(DS_ARGS);
        let out_s = out.to_str().unwrap().to_string();
        args.extend(["--jobs", jobs, "--out", &out_s]);
        ok(&run(&args));
        outs.push(records(&out));
    }
    assert!(!outs[0].is_empty());
    assert_eq!(outs[0], outs[1]);
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
}

#[test]
fn a_run_killed_mid_way_and_resumed_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "slow-ngram", &["--delay-ms", "15"], 10_000);
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "slow-ngram",
        "--editors",
        editors.to_str().unwrap(),
    ];
    let whole = tmp.path().join("whole");
    let mut a = common.to_vec();
    a.extend(DS_ARGS);
    let whole_s = whole.to_str().unwrap().to_string();
    a.extend(["--out", &whole_s]);
    ok(&run(&a));

    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let mut child = typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(DS_ARGS)
        .args(["--out", &cut_s])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(cut.join("records.jsonl"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 20 {
            break;
        }
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = records(&cut).lines().count();
    assert!(
        partial < records(&whole).lines().count(),
        "killed before the end"
    );
    // Without --resume the folder is refused; with it the run completes.
    let refused = run(&[&common[..], &DS_ARGS[..], &["--out", &cut_s]].concat());
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--resume"],
    ]
    .concat()));
    assert_eq!(records(&cut), records(&whole));
}

#[test]
fn copilot_not_signed_in_yields_errors_never_empties() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = run(&[
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
    ]);
    no_answers(&o, "copilot");
    let recs = parsed(&out);
    assert!(!recs.is_empty());
    for r in &recs {
        assert_eq!(r["outcome"], "error", "{r}");
        assert!(
            r["error"].as_str().unwrap().contains("not signed in"),
            "{r}"
        );
    }
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

/// The host answers from the document alone, so pasting the context and typing the file
/// from the top (by line or by character, through many incremental `didChange`s) must
/// give the same records: a check of incremental sync end to end.
#[test]
fn typing_by_line_or_by_character_gives_the_same_answers_as_pasting() {
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = vec![];
    for (name, extra) in [
        ("paste", vec![]),
        ("type-line", vec!["--typing", "type"]),
        (
            "type-char",
            vec!["--typing", "type", "--granularity", "char"],
        ),
    ] {
        let out = tmp.path().join(name);
        let out_s = out.to_str().unwrap().to_string();
        let mut args = vec![
            "--dataset",
            DATASET,
            "--assistant",
            "typist-ngram",
            "--rate",
            "0.02",
            "--seed",
            "5",
            "--out",
            &out_s,
        ];
        args.extend(extra);
        ok(&run(&args));
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        outs.push((records(&out), m["conditions"]["typing"].clone()));
    }
    assert!(outs[0].0.lines().count() > 20);
    assert_eq!(outs[0].0, outs[1].0, "type by line");
    assert_eq!(outs[0].0, outs[2].0, "type by character");
    assert_eq!(outs[1].1, "type");
}

#[test]
fn typed_prefixes_full_context_and_open_tabs_are_applied_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("prefix3");
    ok(&run(&[
        "--dataset",
        DATASET,
        "--assistant",
        "typist-previous-line",
        "--rate",
        "0.05",
        "--seed",
        "5",
        "--typed-prefix",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]));
    let recs = parsed(&out);
    let mut checked = 0;
    for r in &recs {
        if r["outcome"] == "suggestion" {
            let typed: String = r["expected"].as_str().unwrap().chars().take(3).collect();
            assert!(r["predicted"].as_str().unwrap().starts_with(&typed), "{r}");
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked}");
    // The three typed characters are the user's: scoring the whole lines with k = 3 gives
    // exactly what scoring the lines without their first three characters (k = 0) gives
    // (an edit distance does not change when a common prefix is removed).
    let mut stripped = String::new();
    for r in &recs {
        assert_eq!(r["typed"], 3, "{r}");
        let mut r = r.clone();
        let cut = |v: &Value| -> String { v.as_str().unwrap().chars().skip(3).collect() };
        r["expected"] = json!(cut(&r["expected"]));
        if r["predicted"].is_string() {
            r["predicted"] = json!(cut(&r["predicted"]));
        }
        r["typed"] = json!(0);
        stripped.push_str(&format!("{r}\n"));
    }
    let stripped_path = tmp.path().join("stripped.jsonl");
    std::fs::write(&stripped_path, stripped).unwrap();
    let score = |p: &Path| -> Value {
        let o = typist().args(["score", "--json"]).arg(p).output().unwrap();
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let (whole, cut) = (score(&out.join("records.jsonl")), score(&stripped_path));
    let a = &whole["assistants"]["typist-previous-line"];
    assert_eq!(a, &cut["assistants"]["typist-previous-line"]);
    assert!(a["help_at_0"]["value"].as_f64().unwrap() > 0.0);

    // Full context and open tabs change what the n-gram model sees.
    let plain = tmp.path().join("plain");
    let full = tmp.path().join("full");
    let tabs = tmp.path().join("tabs");
    for (out, extra) in [
        (&plain, vec![]),
        (&full, vec!["--context", "full"]),
        (&tabs, vec!["--open-tabs", "2"]),
    ] {
        let out_s = out.to_str().unwrap().to_string();
        let mut args = vec![
            "--dataset",
            DATASET,
            "--assistant",
            "typist-ngram",
            "--rate",
            "0.05",
            "--seed",
            "5",
            "--out",
            &out_s,
        ];
        args.extend(extra);
        ok(&run(&args));
    }
    assert_ne!(records(&plain), records(&full));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(full.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["conditions"]["context"], "full");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(tabs.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["conditions"]["open_tabs"], 2);
    assert_eq!(parsed(&tabs).len(), parsed(&plain).len());
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

#[test]
fn ctrl_c_stops_cleanly_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "slow", &["--delay-ms", "15"], 10_000);
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "slow",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.05",
        "--seed",
        "3",
    ];
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap().to_string();
    let child = typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(["--out", &out_s])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(out.join("records.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 10
    {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "interrupted");
    let partial = parsed(&out);
    assert!(!partial.is_empty());
    // What was kept is sorted and complete records.
    let keys: Vec<(String, String, u64)> = partial
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap().to_string(),
                r["file"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    ok(&run(&[&common[..], &["--out", &out_s, "--resume"]].concat()));
    let whole = tmp.path().join("whole");
    ok(&run(
        &[&common[..], &["--out", whole.to_str().unwrap()]].concat()
    ));
    assert_eq!(records(&out), records(&whole));
}

/// The honesty invariant: a server never holds the line it is asked to predict. The
/// adversary (`typist host --backend cheat`) reads the whole workspace at `initialize`,
/// at every `didOpen` and at every request, remembers every version of every file it
/// has seen, and answers with the line at the cursor from any of them. Under every
/// context and typing mode, with a typed prefix, lines below, open tabs, several files
/// per repository and servers that crash and are restarted mid-file, it finds nothing:
/// every case is empty, so its exact-match share is 0. (`tests/host.rs` shows the same
/// adversary finding a line that was left on disk.)
#[test]
fn a_cheating_server_that_reads_the_workspace_finds_no_target_line() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "cheat", &["--backend", "cheat"], 10_000);
    editors_with(
        tmp.path(),
        "cheat-crashy",
        &["--backend", "cheat", "--crash-after", "2"],
        10_000,
    );
    let modes: &[(&str, &str, &[&str])] = &[
        ("prefix", "cheat", &[]),
        ("full", "cheat", &["--context", "full"]),
        ("suffix", "cheat", &["--suffix-lines", "4"]),
        ("typed", "cheat", &["--typed-prefix", "4"]),
        ("type", "cheat", &["--typing", "type"]),
        ("tabs", "cheat", &["--open-tabs", "3", "--passes", "2"]),
        ("restarts", "cheat-crashy", &[]),
    ];
    for (label, assistant, extra) in modes {
        let out = tmp.path().join(label);
        let mut args = vec![
            "--dataset",
            DATASET,
            "--assistant",
            assistant,
            "--editors",
            editors.to_str().unwrap(),
            "--rate",
            "0.08",
            "--seed",
            "5",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        ok(&run(&args));
        let recs = parsed(&out);
        assert!(recs.len() > 100, "{label}: {} records", recs.len());
        let files: std::collections::BTreeSet<(&str, &str)> = recs
            .iter()
            .map(|r| (r["repo"].as_str().unwrap(), r["file"].as_str().unwrap()))
            .collect();
        assert!(files.len() > 10, "{label}: several files per repository");
        for r in &recs {
            assert_eq!(r["outcome"], "empty", "{label}: the cheater found {r}");
        }
        let score = typist()
            .args(["score", "--json"])
            .arg(out.join("records.jsonl"))
            .output()
            .unwrap();
        ok(&score);
        let s: Value = serde_json::from_slice(&score.stdout).unwrap();
        let a = &s["assistants"][assistant];
        assert_eq!(a["exact_share"]["value"], 0.0, "{label}: {a}");
        assert_eq!(a["integral_help"]["value"], 0.0, "{label}: {a}");
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

/// Processes whose parent is `pid`, with their command lines.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if ppid == pid {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            out.push((p, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The `--linger-secs` servers of typist `pid`: once `want` have started (or at least
/// one and 10 s have passed); fails after 30 s with none.
fn lingering_servers(pid: u32, want: usize) -> Vec<(u32, String)> {
    let started = Instant::now();
    loop {
        let s: Vec<(u32, String)> = children_of(pid)
            .into_iter()
            .filter(|(_, c)| c.contains("--linger-secs"))
            .collect();
        if s.len() >= want || (!s.is_empty() && started.elapsed() > Duration::from_secs(10)) {
            return s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no server started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits up to 5 s for every server to be gone; kills and fails on any left.
fn assert_gone_within_5s(servers: &[(u32, String)]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|(p, _)| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<_> = servers.iter().filter(|(p, _)| alive(*p)).collect();
    for (p, _) in &left {
        // SAFETY: kill(2); clean up before failing.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "servers left running: {left:?}");
}

/// SIGKILL of typist leaves no server behind, even one that would linger for minutes
/// after its client is gone: servers get PR_SET_PDEATHSIG besides their own group.
#[test]
fn no_server_outlives_a_killed_typist() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(
        tmp.path(),
        "lingers",
        &["--linger-secs", "300", "--hang-after", "1"],
        60_000,
    );
    let out = tmp.path().join("out");
    let mut child = typist()
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--jobs",
            "2",
        ])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "lingers",
            "--rate",
            "0.02",
        ])
        .arg("--editors")
        .arg(&editors)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let servers = lingering_servers(child.id(), 2);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_gone_within_5s(&servers);
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

/// The first Ctrl-C waits for the cases in flight (here a server that never answers,
/// with a 60 s deadline); the second stops typist at once, and its servers with it.
#[test]
fn ctrl_c_twice_forces_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(
        tmp.path(),
        "stuck",
        &["--linger-secs", "300", "--hang-after", "1"],
        60_000,
    );
    let out = tmp.path().join("out");
    let transcripts = tmp.path().join("transcripts");
    let mut child = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "stuck",
            "--rate",
            "0.02",
        ])
        .arg("--editors")
        .arg(&editors)
        .arg("--out")
        .arg(&out)
        .arg("--transcripts")
        .arg(&transcripts)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = StderrLines::of(&mut child);
    let servers = lingering_servers(child.id(), 1);
    // The first suggestion request is in flight once the transcript holds it (the
    // transcript is flushed per message, before the frame is written to the server).
    wait_for("a suggestion request in a transcript", Duration::from_secs(60), || {
        std::fs::read_dir(&transcripts).ok().is_some_and(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("inlineCompletion"))
            })
        })
    });
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    wait_for("typist's answer to the first Ctrl-C", Duration::from_secs(10), || {
        stderr.text().contains("stopping after the cases in flight")
    });
    if let Some(s) = child.try_wait().unwrap() {
        panic!(
            "one Ctrl-C waits for the case in flight; exited {s}: {}",
            stderr.text()
        );
    }
    // The second Ctrl-C's own message (below) shows typist was still waiting when it
    // came: only the handler of a second Ctrl-C prints it.
    let second = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if second.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("a second Ctrl-C did not stop typist within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    wait_for("typist's answer to the second Ctrl-C", Duration::from_secs(5), || {
        stderr.closed()
    });
    let err = stderr.text();
    assert!(err.contains("stopped at once"), "{err}");
    assert_gone_within_5s(&servers);
}

/// Polls `done` every 20 ms until it holds; fails naming `what` after `deadline`.
fn wait_for(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < deadline, "no {what} within {deadline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child's stderr read on a thread of its own as it comes, so a test can wait for a
/// line without blocking on the pipe.
struct StderrLines {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl StderrLines {
    fn of(child: &mut std::process::Child) -> StderrLines {
        let mut pipe = child.stderr.take().unwrap();
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let into = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pipe, &mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        StderrLines { text, reader }
    }

    fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// The pipe reached its end (every writer gone).
    fn closed(&self) -> bool {
        self.reader.is_finished()
    }
}

/// A panic in a worker stops the run with a message and exit 1, keeps every record
/// already written, and `--resume` completes it to an uninterrupted run's records.
#[test]
fn a_worker_panic_keeps_the_records_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "typist-ngram",
        "--jobs",
        "2",
    ];
    let whole = tmp.path().join("whole");
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", whole.to_str().unwrap()],
    ]
    .concat()));
    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let o = typist()
        .env("TYPIST_DRILL_PANIC_AT", "25")
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(DS_ARGS)
        .args(["--out", &cut_s])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("worker panicked"), "{err}");
    let kept = records(&cut).lines().count();
    assert!(
        kept >= 20 && kept < records(&whole).lines().count(),
        "{kept}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(cut.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "failed");
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--resume"],
    ]
    .concat()));
    assert_eq!(records(&cut), records(&whole));
}

/// A full disk (records written to /dev/full) stops the run with a message naming the
/// records file; once there is room, `--resume` completes the run.
#[test]
fn a_full_disk_is_named_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let common = ["--dataset", DATASET, "--assistant", "typist-ngram"];
    let whole = tmp.path().join("whole");
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", whole.to_str().unwrap()],
    ]
    .concat()));
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
