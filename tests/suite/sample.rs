//! `typist sample`: line plans stay what they were; token plans are deterministic and
//! hold what the replay needs.

use crate::common::{DATASET, ok, typist};
use serde_json::Value;

const DATASET_C: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dataset-c");

/// Runs `typist sample` into `out`; its stdout and the plan's cases (no header).
fn sample(dataset: &str, out: &std::path::Path, args: &[&str]) -> (String, String) {
    let o = typist()
        .args([
            "sample",
            "--dataset",
            dataset,
            "--out",
            out.to_str().unwrap(),
            "--force",
        ])
        .args(args)
        .output()
        .unwrap();
    ok(&o);
    let plan = std::fs::read_to_string(out).unwrap();
    let cases = plan.lines().skip(1).map(|l| format!("{l}\n")).collect();
    (String::from_utf8(o.stdout).unwrap(), cases)
}

/// The hash of line plans made before token cases existed: `--cases lines` (the
/// default) writes the same bytes.
#[test]
fn line_plans_are_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("p.jsonl");
    for (args, hash) in [
        (
            &["--rate", "0.05", "--seed", "1"][..],
            "sha256:cca0981fa3e55f97f1b9c5c4f5a968ea13ed0c39d6a79d8e047fa0272bdc412e",
        ),
        (
            &[
                "--rate",
                "0.2",
                "--seed",
                "7",
                "--max-per-file",
                "5",
                "--cases",
                "lines",
            ],
            "sha256:bfee3f38afafab24a267bf224c7b583cc696e35ce80f806fc869632f96872092",
        ),
    ] {
        let (stdout, cases) = sample(DATASET, &plan, args);
        assert!(
            stdout.trim_end().ends_with(&format!("({hash})")),
            "{stdout}"
        );
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        assert!(!cases.contains("\"token\""));
    }
    let o = typist()
        .args(["sample", "--dataset", DATASET, "--prefix", "1", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(!o.status.success(), "--prefix belongs to --cases tokens");
}

#[test]
fn token_plans_are_deterministic_and_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"));
    let args = ["--cases", "tokens", "--rate", "0.05", "--seed", "4"];
    let (out_a, cases_a) = sample(DATASET_C, &a, &args);
    let (out_b, cases_b) = sample(DATASET_C, &b, &args);
    assert_eq!(cases_a, cases_b);
    assert_eq!(out_a.replace("a.jsonl", "b.jsonl"), out_b);
    assert!(out_a.contains("cases by kind: "), "{out_a}");
    let cases: Vec<Value> = cases_a
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() > 20, "{}", cases.len());
    let text = |rel: &str| std::fs::read_to_string(format!("{DATASET_C}/{rel}")).unwrap();
    let mut langs = std::collections::BTreeSet::new();
    for c in &cases {
        let t = &c["token"];
        let (expected, line) = (c["expected"].as_str().unwrap(), c["line"].as_u64().unwrap());
        let (col, p) = (
            t["column"].as_u64().unwrap(),
            t["prefix_len"].as_u64().unwrap(),
        );
        // The token is where the case says, in characters of its line.
        let file = text(&format!(
            "{}/{}",
            c["repo"].as_str().unwrap(),
            c["file"].as_str().unwrap()
        ));
        let l: Vec<char> = file
            .lines()
            .nth(line as usize - 1)
            .unwrap()
            .chars()
            .collect();
        let at: String = l[col as usize..col as usize + expected.chars().count()]
            .iter()
            .collect();
        assert_eq!(at, expected, "{c}");
        assert!(p < expected.chars().count() as u64 && p <= 3);
        assert!(
            c["case"]
                .as_str()
                .unwrap()
                .ends_with(&format!(":{line}:{}+{p}", col + 1))
        );
        assert_eq!(t["context"], "prefix");
        assert_eq!(t["actions"][0], "open", "{c}");
        langs.insert(c["language"].as_str().unwrap().to_string());
    }
    assert_eq!(langs.into_iter().collect::<Vec<_>>(), ["c", "cpp"]);
}

/// `--kinds member,call`: only those kinds are cases, and they are exactly the
/// unfiltered plan's cases of those kinds (a token's draw is its own); an unknown kind
/// is refused with the valid ones and a "did you mean", nothing written.
#[test]
fn token_kinds_filter_the_plan_and_a_bad_kind_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (all, some) = (tmp.path().join("all.jsonl"), tmp.path().join("some.jsonl"));
    let args = ["--cases", "tokens", "--rate", "0.2", "--seed", "4"];
    let (_, every) = sample(DATASET_C, &all, &args);
    let (_, kept) = sample(
        DATASET_C,
        &some,
        &[&args[..], &["--kinds", "member,call"]].concat(),
    );
    let kind = |l: &str| {
        let v: Value = serde_json::from_str(l).unwrap();
        v["token"]["kind"].as_str().unwrap().to_string()
    };
    let expect: Vec<&str> = every
        .lines()
        .filter(|l| ["member", "call"].contains(&kind(l).as_str()))
        .collect();
    let got: Vec<&str> = kept.lines().collect();
    assert!(!got.is_empty());
    assert!(every.lines().any(|l| kind(l) == "name"), "a kind left out");
    assert_eq!(got, expect);
    let bad = tmp.path().join("bad.jsonl");
    let o = typist()
        .args(["sample", "--dataset", DATASET_C, "--out"])
        .arg(&bad)
        .args(["--cases", "tokens", "--kinds", "member,cal"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no token kind named \"cal\"; did you mean `call`?")
            && err.contains("(known: member, call, name, import, type)"),
        "{err}"
    );
    assert!(!bad.exists());
    let o = typist()
        .args(["sample", "--dataset", DATASET_C, "--out"])
        .arg(&bad)
        .args(["--kinds", "member"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "--kinds belongs to --cases tokens");
}
