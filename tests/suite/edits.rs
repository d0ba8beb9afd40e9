//! Edit sessions (methodology §13) replayed through typist's own client against the
//! host's next-edit backends, over `textDocument/copilotInlineEdit` as Copilot's
//! editors ask it: the oracle (the session's truth, from the plan given with
//! `--truth`), the rename baseline, and the n-gram host (which proposes no next edit).

use std::collections::BTreeMap;
use std::path::Path;

use typist::dataset::edits::{EditsHeader, Event, EventKind, Moment, Origin, Session};

use super::common::{host_profile, ok, typist};

/// A person renames `x` to `value` in `def f(x):` and then fixes its two uses, pausing
/// after the rename and after the first use. Worked out by hand:
/// - moment 0 (after the rename): the truth is the rest (both uses); the rename
///   baseline proposes the first use only: it applies, touches line 1 (the next edit's
///   line), and is not exact.
/// - moment 1 (after the first use): the truth is the second use, which the baseline
///   proposes: exact.
fn rename_session() -> Session {
    let start = "def f(x):\n    y = x + 1\n    return x * y\n";
    let ev = |t, what| Event { t, what };
    let file = || "calc.py".to_string();
    let events = vec![
        ev(
            0,
            EventKind::Open {
                file: file(),
                at: [0, 6],
            },
        ),
        ev(
            100,
            EventKind::Delete {
                file: file(),
                from: [0, 6],
                to: [0, 7],
            },
        ),
        ev(
            400,
            EventKind::Insert {
                file: file(),
                at: [0, 6],
                text: "value".into(),
                paste: false,
            },
        ),
        ev(
            2500,
            EventKind::Cursor {
                file: file(),
                at: [1, 8],
            },
        ),
        ev(
            2600,
            EventKind::Delete {
                file: file(),
                from: [1, 8],
                to: [1, 9],
            },
        ),
        ev(
            2900,
            EventKind::Insert {
                file: file(),
                at: [1, 8],
                text: "value".into(),
                paste: false,
            },
        ),
        ev(
            5000,
            EventKind::Delete {
                file: file(),
                from: [2, 11],
                to: [2, 12],
            },
        ),
        ev(
            5300,
            EventKind::Insert {
                file: file(),
                at: [2, 11],
                text: "value".into(),
                paste: false,
            },
        ),
    ];
    let moments = vec![
        Moment {
            after: 3,
            file: file(),
            cursor: [0, 11],
            pause_ms: 2100,
            until: 8,
            next_file: file(),
            next_lines: [1, 2],
            silence: false,
        },
        Moment {
            after: 6,
            file: file(),
            cursor: [1, 13],
            pause_ms: 2100,
            until: 8,
            next_file: file(),
            next_lines: [2, 2],
            silence: false,
        },
    ];
    let mut files = BTreeMap::new();
    files.insert(file(), start.to_string());
    Session {
        session: "calc@rename".into(),
        repo: "calc".into(),
        origin: Origin::Patch {
            patch: "rename.patch".into(),
            subject: "rename x to value".into(),
        },
        files,
        events,
        moments,
    }
}

/// The rename session's plan as text (for other modules' tests).
#[allow(non_snake_case)]
pub fn RENAME_PLAN_FOR_TESTS() -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::read_to_string(write_plan(dir.path(), &[rename_session()])).unwrap()
}

fn write_plan(dir: &Path, sessions: &[Session]) -> std::path::PathBuf {
    let plan = dir.join("edits.jsonl");
    typist::dataset::edits::write_edits_plan(
        &plan,
        &EditsHeader {
            edits_plan: "edits".into(),
            pause_ms: 1000,
            seed: 1,
        },
        sessions,
    )
    .unwrap();
    plan
}

fn records(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_rename_session_through_typists_client() {
    let tmp = tempfile::tempdir().unwrap();
    let s = rename_session();
    assert_eq!(
        s.buffers_after(8).unwrap().files["calc.py"],
        "def f(value):\n    y = value + 1\n    return value * y\n"
    );
    let plan = write_plan(tmp.path(), &[s]);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let truth = plan.to_str().unwrap().to_string();
    host_profile(&editors, "oracle", &["oracle", "--truth", &truth], "");
    host_profile(&editors, "rename", &["rename"], "");
    host_profile(&editors, "ngram", &["ngram"], "");
    let out = tmp.path().join("out");
    let trace = tmp.path().join("trace.jsonl");
    let o = typist()
        .env("TYPIST_HOST_TRACE", &trace)
        .args(["run", "--quiet", "--jobs", "2", "--plan"])
        .arg(&plan)
        .arg("--editors")
        .arg(&editors)
        .args([
            "--assistant",
            "oracle",
            "--assistant",
            "rename",
            "--assistant",
            "ngram",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let recs = records(&out);
    assert_eq!(recs.len(), 6, "{recs:#?}");
    let get = |a: &str, m: u64| {
        recs.iter()
            .find(|r| r["assistant"] == a && r["moment"] == m)
            .unwrap_or_else(|| panic!("no record of {a} at moment {m}"))
    };
    for m in [0, 1] {
        let o = get("oracle", m);
        assert_eq!(o["outcome"], "suggestion", "{o:#}");
        assert_eq!(o["applies"], true);
        assert_eq!(o["window"]["predicted"], o["window"]["truth"], "{o:#}");
        let n = get("ngram", m);
        assert_eq!(n["outcome"], "empty", "{n:#}");
        assert!(n["window"]["predicted"].is_null());
        assert_eq!(n["kind"], "next_edit");
    }
    let r0 = get("rename", 0);
    assert_eq!(r0["outcome"], "suggestion", "{r0:#}");
    assert_eq!(
        r0["window"]["predicted"],
        "def f(value):\n    y = value + 1\n    return x * y\n"
    );
    let r1 = get("rename", 1);
    assert_eq!(r1["window"]["predicted"], r1["window"]["truth"], "{r1:#}");
    // The score beside the records, worked out above: the oracle 100 on every figure;
    // the rename baseline exact at one moment of two, a location hit at both; the n-gram
    // host proposes nothing (empty at both: 0 on every figure).
    let score: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("score.json")).unwrap()).unwrap();
    let fig = |a: &str, f: &str| score["assistants"][a][f]["value"].as_f64().unwrap();
    assert_eq!(fig("oracle", "delta_chrf"), 100.0, "{score:#}");
    assert_eq!(fig("oracle", "exact_share"), 1.0);
    assert_eq!(fig("oracle", "location_hit"), 1.0);
    assert_eq!(fig("rename", "exact_share"), 0.5);
    assert_eq!(fig("rename", "location_hit"), 1.0);
    assert!(fig("rename", "delta_chrf") > 50.0 && fig("rename", "delta_chrf") < 100.0);
    assert_eq!(fig("ngram", "delta_chrf"), 0.0);
    assert_eq!(score["assistants"]["ngram"]["empty"], 2);
    // The requests as Copilot's editors send them: `didFocus` first, then
    // `copilotInlineEdit` with the document's version and the cursor, and
    // `didShowInlineEdit` with the edit shown when there was one.
    let trace: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let asks: Vec<&serde_json::Value> = trace
        .iter()
        .filter(|t| t["ev"] == "copilotInlineEdit")
        .collect();
    assert_eq!(asks.len(), 6, "{trace:#?}");
    for a in &asks {
        let p = &a["params"];
        assert!(
            p["textDocument"]["uri"]
                .as_str()
                .unwrap()
                .ends_with("/calc.py"),
            "{p}"
        );
        assert!(p["textDocument"]["version"].as_i64().unwrap() > 1, "{p}");
        assert!(p["position"]["line"].is_u64() && p["position"]["character"].is_u64());
    }
    assert_eq!(trace.iter().filter(|t| t["ev"] == "didFocus").count(), 3);
    // Shown: the oracle's two edits and the rename baseline's two.
    let shown: Vec<&serde_json::Value> = trace
        .iter()
        .filter(|t| t["ev"] == "didShowInlineEdit")
        .collect();
    assert_eq!(shown.len(), 4, "{trace:#?}");
    assert!(shown[0]["params"]["item"]["range"]["start"].is_object());
    // Sorted by case, assistant and pass, whatever the workers' order.
    let keys: Vec<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["case"].as_str().unwrap().into(),
                r["assistant"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}
