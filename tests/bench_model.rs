//! `typist bench model` against the real installed model (SmolLM2 on llama.cpp's
//! `llama-server`, installed by scripts/install-servers.sh): every request captured
//! during the replay is sent again directly, and the table's JSON says so. A benchmark:
//! its structure is checked, never its timings. Also `typist bench run`'s limit line.

mod common;

use common::{DATASET, ok, typist};
use serde_json::Value;

#[test]
fn bench_model_replays_every_captured_request_directly() {
    let p = typist::editor::profile::find_profile("smollm2", None).unwrap();
    let spec = p.service.as_ref().unwrap().list()[0].clone();
    assert!(
        typist::editor::profile::resolve_program(&spec.command).is_some(),
        "llama-server is not installed: run scripts/install-servers.sh"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = typist()
        .args([
            "bench",
            "model",
            "--config",
            "/dev/null",
            "--quiet",
            "--json",
        ])
        .args(["--dataset", DATASET, "--rate", "0.002", "--seed", "1"])
        .args(["--assistant", "smollm2", "--jobs", "1", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    ok(&out);
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(r["assistant"], "smollm2");
    let requests = r["requests"].as_u64().unwrap();
    assert!(requests >= 1, "{r}");
    assert_eq!(r["direct_requests"].as_u64(), Some(requests), "{r}");
    let identical = r["identical_answers"].as_u64().expect("identical_answers");
    let different = r["different_answers"].as_u64().expect("different_answers");
    assert_eq!(identical + different, requests, "{r}");
    // The replay's server starts (typist's host, spawned per file) are inside its time,
    // and with one job the ratio is also given with them set aside.
    let starts = r["server_start_seconds"].as_f64().unwrap();
    assert!(
        starts > 0.0 && starts < r["typist_seconds"].as_f64().unwrap(),
        "{r}"
    );
    assert!(
        r["ratio_starts_aside"].as_f64().unwrap() > r["ratio"].as_f64().unwrap(),
        "{r}"
    );
    // Every captured request is kept with both answers.
    let kept = std::fs::read_to_string(tmp.path().join("smollm2/requests.jsonl")).unwrap();
    assert_eq!(kept.lines().count() as u64, requests);
    let (mut timed, mut direct_timed, mut streamed) = (0, 0, 0);
    for line in kept.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["path"], "/v1/completions", "{v}");
        assert!(
            v["direct_answer"].as_str().unwrap().contains("choices"),
            "{v}"
        );
        // The host streams when it cuts the line itself, and leaves at the line end.
        let body: Value = serde_json::from_str(v["body"].as_str().unwrap()).unwrap();
        streamed += u64::from(body["stream"] == true);
        timed += u64::from(v["answer"].as_str().unwrap().contains("\"timings\""));
        direct_timed += u64::from(v["direct_answer"].as_str().unwrap().contains("\"timings\""));
    }
    assert!(streamed >= 1, "{kept}");
    // llama.cpp's timings were read from the answers that carry them (a stream left at
    // the line end has none), both ways.
    assert_eq!(r["typist_timings"]["answers"].as_u64(), Some(timed), "{r}");
    assert_eq!(
        r["direct_timings"]["answers"].as_u64(),
        Some(direct_timed),
        "{r}"
    );
}

/// `typist bench run`'s limit line: the runs' cases, sampled the same way, sent straight
/// to the instant host by the bare client, every one answered.
#[test]
fn bench_run_sends_the_same_cases_to_the_instant_host_for_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = typist()
        .args(["bench", "run", "--assistant", "typist-fixed", "--jobs", "1"])
        .args([
            "--runs",
            "1",
            "--rate",
            "0.05",
            "--dataset",
            DATASET,
            "--dir",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("| typist-fixed | 1 | "))
        .unwrap_or_else(|| panic!("{text}"));
    // "| typist-fixed | 1 | A of R | ...": every case answered by typist-fixed.
    let answered = row.split(" | ").nth(2).unwrap();
    let (a, r) = answered.split_once(" of ").unwrap();
    assert_eq!(a, r, "{row}");
    let limit = text
        .lines()
        .find(|l| l.starts_with("limit: the same "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        limit.starts_with(&format!("limit: the same {r} cases "))
            && limit.contains(&format!(": {r} answered in ")),
        "{limit}"
    );
}
