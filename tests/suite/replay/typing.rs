//! What the editor shows the server: typing by line or character against pasting, typed
//! prefixes, full context and open tabs, and a cheating server that finds no target line.

use super::*;

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

/// The honesty invariant: a server never holds the line it is asked to predict. The
/// adversary (`typist host --backend cheat`) reads the whole workspace at `initialize`,
/// at every `didOpen` and at every request, remembers every version of every file it
/// has seen, and answers with the line at the cursor from any of them. Under every
/// context and typing mode, with a typed prefix, lines below, open tabs, several files
/// per repository and servers that crash and are restarted mid-file, it finds nothing:
/// every case is empty, so its exact-match share is 0. (`tests/suite/host.rs` shows the same
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
