//! Two runs compared: `typist score` on both warns of the records it drops as
//! duplicates, and `typist compare` scores them as labelled arms on their shared
//! cases, saying how their conditions differ, and refuses runs that share no case.

use std::path::Path;

use serde_json::Value;

use crate::common::{DATASET, ok, typist};

/// A run of typist-ngram on the bundled dataset's sample into `out`, with `extra` flags.
fn a_run(out: &Path, extra: &[&str]) {
    ok(&typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--assistant", "typist-ngram"])
        .args(["--rate", "0.05", "--seed", "3", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap());
}

#[test]
fn compare_scores_two_runs_as_labelled_arms_and_score_warns_of_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let (before, after) = (tmp.path().join("before"), tmp.path().join("after"));
    a_run(&before, &[]);
    a_run(&after, &["--settle-ms", "1"]);
    let cases = std::fs::read_to_string(before.join("records.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(cases > 20, "{cases}");

    // score of both: half the records are duplicates, and the text output says so.
    let o = typist()
        .arg("score")
        .arg(&before)
        .arg(&after)
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("warning: {cases} duplicate record"))
            && err.contains("before")
            && err.contains("after")
            && err.contains("typist compare"),
        "{err}"
    );
    // One run alone has none to warn of.
    let o = typist().arg("score").arg(&before).output().unwrap();
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("duplicate"));

    // compare: labels from the folders' names, every case shared, the conditions'
    // difference said, the pair scored.
    let o = typist()
        .args(["compare", "--bootstrap", "50"])
        .arg(&before)
        .arg(&after)
        .output()
        .unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!(
            "{cases} shared cases (0 only in before, 0 only in after)"
        )),
        "{text}"
    );
    assert!(text.contains("before/typist-ngram") && text.contains("after/typist-ngram"));
    assert!(
        text.contains("the conditions differ: settle_ms before 0, after 1"),
        "{text}"
    );
    let o = typist()
        .args(["compare", "--json", "--bootstrap", "50"])
        .args(["--label", "old", "--label", "new"])
        .arg(before.join("records.jsonl"))
        .arg(&after)
        .output()
        .unwrap();
    ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["compare"]["shared_cases"], cases);
    assert_eq!(v["duplicates"], 0);
    let names: Vec<&String> = v["assistants"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["new/typist-ngram", "old/typist-ngram"]);
    let pair = v["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["metric"] == "integral_help")
        .unwrap();
    assert_eq!(
        (&pair["a"], &pair["b"]),
        (&"new/typist-ngram".into(), &"old/typist-ngram".into())
    );
    assert!(pair["cases"].as_u64().unwrap() > 0, "{pair}");

    // Runs that share no case are refused, in one line.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let moved = std::fs::read_to_string(after.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            r["case"] = format!("elsewhere-{}", r["case"].as_str().unwrap()).into();
            serde_json::to_string(&r).unwrap()
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(other.join("records.jsonl"), moved).unwrap();
    let o = typist()
        .arg("compare")
        .arg(&before)
        .arg(&other)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("share no case"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Two runs of one name need labels.
    let o = typist()
        .args(["compare", "--label", "x", "--label", "x"])
        .arg(&before)
        .arg(&after)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--label"));
}
