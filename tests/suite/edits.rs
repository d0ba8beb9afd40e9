//! Edit sessions (methodology §13) replayed through typist's own client against the
//! host's next-edit backends, over `textDocument/copilotInlineEdit` as Copilot's
//! editors ask it: the oracle (the session's truth, from the plan given with
//! `--truth`), the rename baseline, and the n-gram host (which proposes no next edit).

use std::collections::BTreeMap;
use std::path::Path;

use typist::dataset::edits::{EditsHeader, Event, EventKind, Moment, Origin, Session};

use super::common::{DATASET, host_profile, ok, typist};

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
    // `typist score` on the records gives the run's score.
    let o = typist()
        .args(["score", "--json"])
        .arg(out.join("records.jsonl"))
        .output()
        .unwrap();
    ok(&o);
    let again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(again, score);
    // `typist report` on the records: the summary, and each proposed edit beside the
    // person's (the rename baseline exact at moment 1, its diff the second use fixed).
    let (html, md) = (tmp.path().join("report.html"), tmp.path().join("report.md"));
    ok(&typist()
        .arg("report")
        .arg(out.join("records.jsonl"))
        .arg("--out")
        .arg(&html)
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap());
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("Predicted against true edits"), "{h}");
    assert!(
        h.contains("<span class=\"add\">+    return value * y</span>"),
        "{h}"
    );
    let m = std::fs::read_to_string(&md).unwrap();
    let rename = &m[m.find("### rename").unwrap()..];
    assert!(
        rename.contains("calc@rename#1") && rename.contains("(exact)"),
        "{m}"
    );
    assert!(
        m.contains("### ngram\n\nNo edit proposed that applies."),
        "{m}"
    );
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

/// `git` with a fixed identity and date in `dir`: the same commits, hashes and sampled
/// sessions on every run.
fn git(dir: &Path, args: &[&str]) {
    let o = std::process::Command::new("git")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Commits of a real git repository sampled into sessions by the command line, and
/// replayed: the oracle scores 100 on every figure with no false alarm, and the records
/// are byte-identical with one worker or two.
#[test]
fn sessions_from_git_commits_through_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = calc_plan(tmp.path());
    let (_, sessions) = typist::dataset::edits::read_edits_plan(&plan).unwrap();
    let moments: usize = sessions.iter().map(|s| s.moments.len()).sum();
    assert!(sessions.iter().all(|s| !s.moments.is_empty()));
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let truth = plan.to_str().unwrap().to_string();
    host_profile(&editors, "oracle", &["oracle", "--truth", &truth], "");
    host_profile(&editors, "rename", &["rename"], "");
    host_profile(&editors, "ngram", &["ngram"], "");
    let run = |jobs: &str, out: &Path, shard: Option<&str>| {
        let o = typist()
            .args(["run", "--quiet", "--no-latency", "--jobs", jobs, "--plan"])
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
            .args(shard.map(|s| ["--shard", s]).into_iter().flatten())
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        // A shard may hold only moments where no assistant proposed anything (exit 3,
        // the records kept); the whole run may not.
        if shard.is_none() || o.status.code() != Some(3) {
            ok(&o);
        }
        std::fs::read(out.join("records.jsonl")).unwrap()
    };
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let a = run("1", &one, None);
    assert_eq!(a, run("2", &two, None), "one worker or two: the same bytes");
    assert_eq!(records(&one).len(), 3 * moments);
    // Three shards (each session in one of them), merged: the same bytes again.
    let parts: Vec<std::path::PathBuf> = (0..3)
        .map(|i| {
            let dir = tmp.path().join(format!("shard{i}"));
            run("1", &dir, Some(&format!("{i}/3")));
            dir
        })
        .collect();
    let merged = tmp.path().join("merged");
    ok(&typist()
        .arg("merge")
        .args(&parts)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(merged.join("records.jsonl")).unwrap(),
        a,
        "three shards merged: the whole run's bytes"
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["status"], "complete", "{m:#}");
    assert_eq!(m["merged_from"].as_array().unwrap().len(), 3);
    // A shard resumed as another shard is refused.
    let o = typist()
        .args(["run", "--quiet", "--resume", "--shard", "1/3", "--editors"])
        .arg(&editors)
        .arg("--out")
        .arg(&parts[0])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--shard 0/3"),
        "{o:?}"
    );
    // Inline suggestions are asked where the person goes on typing at the end of a line:
    // the n-gram host answers them (and proposes no next edit).
    let inline: Vec<serde_json::Value> = records(&one)
        .into_iter()
        .filter(|r| r["assistant"] == "ngram" && !r["inline"].is_null())
        .collect();
    assert!(!inline.is_empty());
    for r in &inline {
        let i = &r["inline"];
        assert!(
            ["suggestion", "empty"].contains(&i["outcome"].as_str().unwrap()),
            "{r:#}"
        );
        let (typed, expected) = (
            i["typed"].as_str().unwrap(),
            i["expected"].as_str().unwrap(),
        );
        assert!(
            expected.starts_with(typed) && expected.len() > typed.len(),
            "{r:#}"
        );
    }
    let score: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(one.join("score.json")).unwrap()).unwrap();
    let o = &score["assistants"]["oracle"];
    for f in ["delta_chrf", "exact_share", "location_hit"] {
        let want = if f == "delta_chrf" { 100.0 } else { 1.0 };
        assert_eq!(o[f]["value"].as_f64(), Some(want), "{f}: {score:#}");
    }
    assert!(
        o["silences"].as_u64().unwrap() > 0,
        "the new function is silence: {o}"
    );
    assert_eq!(o["false_alarm_rate"]["value"].as_f64(), Some(0.0));
    // Inline at the moments where the person goes on typing a line: the oracle gives the
    // line's rest, all of it.
    assert!(o["inline_asked"].as_u64().unwrap() > 0, "{o}");
    assert_eq!(o["inline_help"]["value"].as_f64(), Some(1.0), "{o}");
    assert_eq!(o["inline_exact"]["value"].as_f64(), Some(1.0), "{o}");
    // The rename baseline proposes `x` → `amount` after the first rename: exact at
    // least once.
    assert!(
        score["assistants"]["rename"]["exact_share"]["value"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{score:#}"
    );
}

/// A small git repository of three commits (a rename across two hunks, then a new
/// file and a call of it), sampled into an edits plan by the command line.
fn calc_plan(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("calc");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let write = |f: &str, t: &str| std::fs::write(repo.join(f), t).unwrap();
    // The parameter's two uses are lines apart: two hunks, a pause between them.
    let body = "    base = 2\n    extra = 1\n    more = 0\n    other = 3\n";
    write(
        "app.py",
        &format!(
            "def total(x, rate):\n{body}    return x * base + rate\n\n\nprint(total(3, 0.5))\n"
        ),
    );
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "first"]);
    write(
        "app.py",
        &format!(
            "def total(amount, rate):\n{body}    return amount * base + rate\n\n\nprint(total(3, 0.5))\n"
        ),
    );
    git(&repo, &["commit", "-qam", "rename x"]);
    write(
        "util.py",
        // Indented with tabs: in VS Code its editor is made to indent with tabs.
        "def clamp(v, lo, hi):\n\tlow = max(lo, v)\n\treturn min(low, hi)\n",
    );
    write(
        "app.py",
        &format!(
            "from util import clamp\n\n\ndef total(amount, rate):\n{body}    return clamp(amount * base + rate, 0, 100)\n\n\nprint(total(3, 0.5))\n"
        ),
    );
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "clamp the total"]);
    let plan = dir.join("edits.jsonl");
    let o = typist()
        .args(["sample", "--cases", "edits", "--git"])
        .arg(&repo)
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap();
    ok(&o);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("in 2 edit sessions from 1 repository"),
        "{said}"
    );
    plan
}

/// Two releases of a package, unpacked side by side: each code file changed between
/// them is a session, and the oracle replays each to 100 on every figure.
#[test]
fn sessions_from_two_releases_through_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("calc-1.0"), tmp.path().join("calc-1.1"));
    for (d, rate) in [(&old, "rate"), (&new, "fee")] {
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(
            d.join("src/app.py"),
            format!("def total(x, {rate}):\n    base = 2\n    return x * base + {rate}\n"),
        )
        .unwrap();
        std::fs::write(d.join("README"), "same\n").unwrap();
    }
    let plan = tmp.path().join("edits.jsonl");
    let o = typist()
        .args(["sample", "--cases", "edits", "--releases"])
        .arg(&old)
        .arg(&new)
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap();
    ok(&o);
    let (_, sessions) = typist::dataset::edits::read_edits_plan(&plan).unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    let s = &sessions[0];
    assert_eq!(s.session, "calc@calc-1.0..calc-1.1:src/app.py");
    assert_eq!(s.repo, "calc");
    assert!(!s.moments.is_empty());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let truth = plan.to_str().unwrap().to_string();
    host_profile(&editors, "oracle", &["oracle", "--truth", &truth], "");
    let out = tmp.path().join("out");
    ok(&typist()
        .args(["run", "--quiet", "--no-latency", "--plan"])
        .arg(&plan)
        .arg("--editors")
        .arg(&editors)
        .args(["--assistant", "oracle", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    let score: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("score.json")).unwrap()).unwrap();
    assert_eq!(
        score["assistants"]["oracle"]["exact_share"]["value"].as_f64(),
        Some(1.0),
        "{score:#}"
    );
}

/// A record without what differs between editors by nature: its latency and request
/// hash (its inline ask's too).
fn comparable(mut r: serde_json::Value) -> serde_json::Value {
    for k in ["latency_ms", "request_hash"] {
        r.as_object_mut().map(|o| o.remove(k));
        r["inline"].as_object_mut().map(|o| o.remove(k));
    }
    r
}

/// The sessions of `calc_plan` replayed through typist's own client, a real Neovim and a
/// real VS Code (issue 44): the n-gram host's inline records are the same in all three;
/// the next edits (the rename baseline's, asked in Neovim as copilot-lsp asks them)
/// are the same in Neovim as in typist's client; in VS Code, asked through the fixture
/// extension as Copilot's extension asks them and read once VS Code draws them, the
/// n-gram host's and the oracle's records are the same as in typist's client, next
/// edits and inline alike, and the requests reach the host in Copilot's shape. The
/// cheating host (and in VS Code the cheating extension) never shows a line the person
/// had not typed by the moment.
#[test]
fn edit_sessions_replay_alike_through_neovim_and_vscode() {
    super::vscode::require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let plan = calc_plan(tmp.path());
    let (_, sessions) = typist::dataset::edits::read_edits_plan(&plan).unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    host_profile(&editors, "rename", &["rename"], "");
    host_profile(&editors, "ngram", &["ngram"], "");
    host_profile(&editors, "cheat", &["cheat"], "");
    let truth = plan.to_str().unwrap().to_string();
    host_profile(&editors, "oracle", &["oracle", "--truth", &truth], "");
    let vs_cheat =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vscode/editors/typist-cheat.toml");
    let run = |editor: &str, assistants: &[&str]| {
        let out = tmp.path().join(editor);
        let o = typist()
            .env(
                "TYPIST_HOST_TRACE",
                tmp.path().join(format!("{editor}.trace")),
            )
            .args(["run", "--quiet", "--no-latency", "--jobs", "1", "--plan"])
            .arg(&plan)
            .arg("--editors")
            .arg(&editors)
            .args(assistants.iter().flat_map(|a| ["--assistant", a]))
            .args(["--editor", editor, "--key-interval-ms", "20", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some_and(|c| c == 0 || c == 3),
            "{editor}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        records(&out)
            .into_iter()
            .map(comparable)
            .collect::<Vec<_>>()
    };
    let own = run("typist", &["ngram", "rename", "cheat", "oracle"]);
    let nvim = run("neovim", &["ngram", "rename", "cheat"]);
    let vs = run("vscode", &["ngram", "oracle", vs_cheat.to_str().unwrap()]);
    let of = |recs: &[serde_json::Value], a: &str| -> Vec<serde_json::Value> {
        recs.iter()
            .filter(|r| r["assistant"] == a)
            .cloned()
            .collect()
    };
    // Neovim: every record the same as typist's client's, next edits and inline alike;
    // the one difference allowed is the rename baseline proposing nothing through
    // Neovim, whose client batches its whole-text changes (docs/neovim.md).
    let no_oracle = |recs: &[serde_json::Value]| -> Vec<serde_json::Value> {
        recs.iter()
            .filter(|r| r["assistant"] != "oracle")
            .cloned()
            .collect()
    };
    let own_but_oracle = no_oracle(&own);
    assert_eq!(own_but_oracle.len(), nvim.len());
    for (a, b) in own_but_oracle.iter().zip(&nvim) {
        if a["assistant"] == "cheat" || a == b {
            continue;
        }
        assert!(
            a["assistant"] == "rename" && b["outcome"] == "empty" && a["inline"] == b["inline"],
            "typist | neovim: {a:#} | {b:#}"
        );
    }
    assert!(
        of(&own, "rename")
            .iter()
            .any(|r| r["outcome"] == "suggestion"),
        "the rename baseline proposed an edit: {own:#?}"
    );
    // VS Code: the n-gram host's and the oracle's records the same as typist's client's,
    // the next edit and the inline ask alike.
    let ngram = of(&own, "ngram");
    let mut asked = 0;
    for name in ["ngram", "oracle"] {
        let (mine, theirs) = (of(&own, name), of(&vs, name));
        assert_eq!(mine.len(), theirs.len(), "{name}");
        for (a, b) in mine.iter().zip(&theirs) {
            assert_eq!(a, b, "{name}: typist | vscode");
            asked += usize::from(!a["inline"].is_null());
        }
    }
    assert!(asked >= 4, "{asked} inline asks");
    assert!(
        ngram.iter().any(|r| r["inline"]["outcome"] == "suggestion"),
        "the n-gram host showed something: {ngram:#?}"
    );
    let vs_oracle = of(&vs, "oracle");
    let shown = vs_oracle
        .iter()
        .filter(|r| r["outcome"] == "suggestion")
        .count();
    assert!(
        shown >= 2,
        "the oracle's edits shown in VS Code: {vs_oracle:#?}"
    );
    // Extensions measured alone: their next edits are not read, and say so.
    for r in of(&vs, "typist-cheat") {
        assert!(
            r["error"].as_str().unwrap().starts_with("not asked: "),
            "{r:#}"
        );
    }
    // The requests through VS Code as Copilot's editors send them: one `copilotInlineEdit`
    // per moment and assistant with the document's version and the cursor, `didFocus`
    // before a document's first, `didShowInlineEdit` for each edit VS Code showed.
    let trace: Vec<serde_json::Value> = std::fs::read_to_string(tmp.path().join("vscode.trace"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |ev: &str| trace.iter().filter(|t| t["ev"] == ev).count();
    let asks: Vec<&serde_json::Value> = trace
        .iter()
        .filter(|t| t["ev"] == "copilotInlineEdit" && t["params"].is_object())
        .collect();
    assert_eq!(asks.len(), ngram.len() * 2, "{trace:#?}");
    for a in &asks {
        let p = &a["params"];
        assert!(
            p["textDocument"]["uri"].as_str().unwrap().ends_with(".py"),
            "{p}"
        );
        assert!(p["textDocument"]["version"].as_i64().unwrap() >= 1, "{p}");
        assert!(p["position"]["line"].is_u64() && p["position"]["character"].is_u64());
    }
    assert!((1..=asks.len()).contains(&count("didFocus")), "{trace:#?}");
    assert_eq!(count("didShowInlineEdit"), shown, "{trace:#?}");
    // The cheaters: any line shown is one the person had by the moment (a line of some
    // buffer before it), never one typed later.
    for (editor, recs, name) in [
        ("typist", &own, "cheat"),
        ("neovim", &nvim, "cheat"),
        ("vscode", &vs, "typist-cheat"),
    ] {
        let cheat = of(recs, name);
        assert!(!cheat.is_empty(), "{editor}");
        for r in &cheat {
            let Some(p) = r["inline"]["predicted"].as_str() else {
                continue;
            };
            if p.contains("typist-cheat: read ") {
                continue;
            }
            let s = sessions.iter().find(|s| s.session == r["session"]).unwrap();
            let m = &s.moments[r["moment"].as_u64().unwrap() as usize];
            let had = (0..=m.after).any(|k| {
                s.buffers_after(k)
                    .unwrap()
                    .files
                    .values()
                    .any(|t| t.lines().any(|l| l.trim_end() == p.trim_end()))
            });
            assert!(
                had,
                "{editor}: the cheater showed a line not typed yet: {r:#}"
            );
        }
    }
}

/// The rename session's plan in `dir`, and an `editors` folder beside it with the
/// oracle (given that plan) and the rename baseline.
fn rename_plan_with_oracle_and_rename(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let plan = write_plan(dir, &[rename_session()]);
    let editors = dir.join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let truth = plan.to_str().unwrap().to_string();
    host_profile(&editors, "oracle", &["oracle", "--truth", &truth], "");
    host_profile(&editors, "rename", &["rename"], "");
    (plan, editors)
}

/// A run cut short (its last record half written) resumes from its manifest alone
/// (plan, assistants, passes) and ends with the uninterrupted run's records, byte for
/// byte; a changed plan is refused.
#[test]
fn an_edits_run_resumes_from_its_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, editors) = rename_plan_with_oracle_and_rename(tmp.path());
    let full = tmp.path().join("full");
    ok(&typist()
        .args(["run", "--quiet", "--no-latency", "--plan"])
        .arg(&plan)
        .arg("--editors")
        .arg(&editors)
        .args(["--assistant", "oracle", "--assistant", "rename", "--out"])
        .arg(&full)
        .output()
        .unwrap());
    let want = std::fs::read_to_string(full.join("records.jsonl")).unwrap();
    let lines: Vec<&str> = want.lines().collect();
    assert_eq!(lines.len(), 4);
    // Killed while writing the third record.
    let cut = tmp.path().join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    std::fs::copy(full.join("manifest.json"), cut.join("manifest.json")).unwrap();
    std::fs::write(
        cut.join("records.jsonl"),
        format!(
            "{}\n{}\n{}",
            lines[0],
            lines[1],
            &lines[2][..lines[2].len() / 2]
        ),
    )
    .unwrap();
    let resume = |out: &Path| {
        typist()
            .args(["run", "--quiet", "--resume", "--editors"])
            .arg(&editors)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    ok(&resume(&cut));
    assert_eq!(
        std::fs::read_to_string(cut.join("records.jsonl")).unwrap(),
        want
    );
    // The plan changed since: refused, nothing touched.
    std::fs::write(
        &plan,
        std::fs::read_to_string(&plan)
            .unwrap()
            .replace("rename x", "rename y"),
    )
    .unwrap();
    let o = resume(&full);
    assert_eq!(o.status.code(), Some(2), "a refused input");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the plan differs"),
        "{o:?}"
    );
    assert_eq!(
        std::fs::read_to_string(full.join("records.jsonl")).unwrap(),
        want
    );
}

/// `--pace`: the rename session's changes reach the server 300 ms apart (`--pace 300`;
/// the host's trace times each change it took in), the records are byte for byte those
/// of the run at the editor's own speed, and the manifest names the pace (absent at the
/// default). A resumed run keeps its pace (another is refused), and a plan of line
/// cases refuses the flag.
#[test]
fn an_edits_run_goes_at_its_pace() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, editors) = rename_plan_with_oracle_and_rename(tmp.path());
    let run = |name: &str, pace: &[&str]| {
        let out = tmp.path().join(name);
        let trace = tmp.path().join(format!("{name}.trace.jsonl"));
        ok(&typist()
            .env("TYPIST_HOST_TRACE", &trace)
            .args(["run", "--quiet", "--no-latency", "--jobs", "1", "--plan"])
            .arg(&plan)
            .arg("--editors")
            .arg(&editors)
            .args(["--assistant", "oracle", "--assistant", "rename"])
            .args(pace)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap());
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        let changes: Vec<(u64, u64)> = std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["ev"] == "didChange")
            .map(|v| (v["pid"].as_u64().unwrap(), v["ms"].as_u64().unwrap()))
            .collect();
        (out, manifest, changes)
    };
    let (asap, m0, _) = run("asap", &[]);
    let (paced, m1, changes) = run("paced", &["--pace", "300"]);
    assert_eq!(
        std::fs::read_to_string(asap.join("records.jsonl")).unwrap(),
        std::fs::read_to_string(paced.join("records.jsonl")).unwrap()
    );
    assert!(m0["conditions"].get("pace").is_none(), "{m0:#}");
    assert_eq!(m1["conditions"]["pace"], serde_json::json!({"fixed": 300}));
    // Each host (one per assistant) took the session's changes in at least 300 ms
    // apart; only the first one's arrival may be late, by up to one gap.
    let mut by_host: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (pid, ms) in changes {
        by_host.entry(pid).or_default().push(ms);
    }
    assert_eq!(by_host.len(), 2, "{by_host:?}");
    for times in by_host.values() {
        let n = times.len() as u64;
        assert!(n >= 5, "{times:?}");
        let span = times[times.len() - 1] - times[0];
        assert!(
            span + 300 >= (n - 1) * 300,
            "{n} changes in {span} ms: {times:?}"
        );
    }
    // Resumed with another pace: refused, nothing touched.
    let o = typist()
        .args([
            "run",
            "--quiet",
            "--resume",
            "--pace",
            "recorded",
            "--editors",
        ])
        .arg(&editors)
        .arg("--out")
        .arg(&paced)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--pace differs"),
        "{o:?}"
    );
    // A plan of line cases: the flag is refused, naming what it is for.
    let o = typist()
        .args(["run", "--quiet", "--pace", "recorded", "--dataset", DATASET])
        .args(["--assistant", "typist-fixed", "--rate", "0.005", "--out"])
        .arg(tmp.path().join("lines"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--pace is for edit sessions"),
        "{o:?}"
    );
}
