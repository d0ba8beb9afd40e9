//! Keystrokes saved (methodology §10, `typist run --golf`) end to end on a one-file
//! fixture whose figures are computed by hand below: the oracle (given the true lines
//! through a plan path outside the workspace) writes each line with one accept;
//! `typist-fixed` (always "pass") never continues a line, so every character is typed;
//! the oracle with "(" appended is never right to its end, so full mode types every
//! character and word mode accepts its words up to the last one that matches; an oracle
//! that stops answering has its failed requests counted apart and its lines flagged.

use std::path::Path;

use serde_json::Value;

use crate::common::{ok, typist};

/// Three code lines: 9, 13 and 12 characters (Σ n = 34).
const A: &str = "def f(x):\n    y = x + 1\n    return y\n";
const SUM_N: f64 = 34.0;

fn profile(editors: &Path, name: &str, args: &[&str], extra: &str) {
    let mut all = vec!["host", "--backend"];
    all.extend(args);
    std::fs::write(
        editors.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\ncommand = \"@typist\"\nargs = {all:?}\ndialect = \"inline\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\nrequest_timeout_ms = 20000\n{extra}"
        ),
    )
    .unwrap();
}

fn close(a: &Value, b: f64, what: &str) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{what}: {a}"));
    assert!((a - b).abs() < 1e-9, "{what}: {a} != {b}");
}

struct Fixture {
    tmp: tempfile::TempDir,
    plan: std::path::PathBuf,
    editors: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("r")).unwrap();
    std::fs::write(ds.join("r/a.py"), A).unwrap();
    let truth = tmp.path().join("truth");
    std::fs::create_dir_all(&truth).unwrap();
    let plan = truth.join("lines.jsonl");
    let o = typist()
        .args(["sample", "--dataset"])
        .arg(&ds)
        .args(["--lines", "all", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    ok(&o);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let p = plan.to_str().unwrap();
    profile(&editors, "oracle", &["oracle", "--truth", p], "");
    profile(
        &editors,
        "bracket",
        &["oracle", "--truth", p, "--append", "("],
        "",
    );
    profile(&editors, "typist-fixed", &["fixed"], "");
    // Answers the first request, then never again; timeouts do not restart it.
    std::fs::write(
        editors.join("stalls.toml"),
        format!(
            "name = \"stalls\"\ncommand = \"@typist\"\nargs = [\"host\", \"--backend\", \"oracle\", \"--truth\", {p:?}, \"--hang-after\", \"2\"]\ndialect = \"inline\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\nrequest_timeout_ms = 400\nrestart_after_timeouts = 0\n"
        ),
    )
    .unwrap();
    Fixture { tmp, plan, editors }
}

/// Runs `assistants` with `extra` flags into `out`; returns the records and the score.
fn run(f: &Fixture, out: &str, assistants: &[&str], extra: &[&str]) -> (Vec<Value>, Value) {
    let out = f.tmp.path().join(out);
    let mut c = typist();
    c.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .arg("--editors")
        .arg(&f.editors)
        .arg("--plan")
        .arg(&f.plan)
        .arg("--dataset")
        .arg(f.tmp.path().join("ds"))
        .arg("--out")
        .arg(&out);
    for a in assistants {
        c.args(["--assistant", a]);
    }
    ok(&c.args(extra).output().unwrap());
    let records = out.join("records.jsonl");
    let recs: Vec<Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let o = typist()
        .arg("score")
        .arg(&records)
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    (recs, serde_json::from_slice(&o.stdout).unwrap())
}

/// (keys, n, requests, accepts, failures) of each line of `who`, in line order.
fn tallies(recs: &[Value], who: &str) -> Vec<(u64, u64, u64, u64, u64)> {
    recs.iter()
        .filter(|r| r["assistant"] == who)
        .map(|r| {
            let g = &r["golf"];
            let n = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("{who}: {r}"));
            (
                n("keys"),
                n("n"),
                n("requests"),
                n("accepts"),
                n("failures"),
            )
        })
        .collect()
}

#[test]
fn golf_full_oracle_saves_the_most_and_fixed_nothing() {
    let f = fixture();
    let (recs, s) = run(
        &f,
        "full",
        &["oracle", "bracket", "typist-fixed"],
        &["--golf", "full"],
    );
    assert_eq!(recs.len(), 9, "one record per line and assistant");
    // The oracle: one request, one accept, one key per line.
    assert_eq!(
        tallies(&recs, "oracle"),
        [(1, 9, 1, 1, 0), (1, 13, 1, 1, 0), (1, 12, 1, 1, 0)]
    );
    // The record is also the line case at p = 0: the whole line suggested.
    assert_eq!(
        recs.iter().find(|r| r["assistant"] == "oracle").unwrap()["predicted"],
        "def f(x):"
    );
    // Fixed ("pass") and the bracket (the line plus "(") are never a prefix: one key and
    // one request per character.
    for who in ["typist-fixed", "bracket"] {
        assert_eq!(
            tallies(&recs, who),
            [(9, 9, 9, 0, 0), (13, 13, 13, 0, 0), (12, 12, 12, 0, 0)],
            "{who}"
        );
    }
    let g = |who: &str, m: &str| s["golf"][who][m].clone();
    close(
        &g("oracle", "keystrokes_saved")["value"],
        1.0 - 3.0 / SUM_N,
        "oracle saved",
    );
    close(
        &g("oracle", "one_accept_share")["value"],
        1.0,
        "oracle one accept",
    );
    close(
        &g("oracle", "requests_per_line")["value"],
        1.0,
        "oracle requests",
    );
    assert_eq!(g("oracle", "keys"), 3);
    assert_eq!(g("oracle", "chars"), 34);
    assert_eq!(g("oracle", "lines_with_failures"), 0);
    close(
        &g("typist-fixed", "keystrokes_saved")["value"],
        0.0,
        "fixed saved",
    );
    close(
        &g("typist-fixed", "one_accept_share")["value"],
        0.0,
        "fixed one accept",
    );
    close(
        &g("typist-fixed", "requests_per_line")["value"],
        SUM_N / 3.0,
        "fixed requests",
    );
    // Paired: the oracle against fixed on the three lines.
    let pair = s["golf_pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["metric"] == "keystrokes_saved" && p["a"] == "oracle" && p["b"] == "typist-fixed"
        })
        .expect("paired keystrokes saved");
    assert_eq!(pair["cases"], 3);
    close(&pair["diff"], 1.0 - 3.0 / SUM_N, "paired diff");
    // The text table has the section.
    let o = typist()
        .arg("score")
        .arg(f.tmp.path().join("full/records.jsonl"))
        .output()
        .unwrap();
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("keystrokes saved"));
    // And the report's markdown summary.
    let md = f.tmp.path().join("summary.md");
    let o = typist()
        .arg("report")
        .arg(f.tmp.path().join("full/records.jsonl"))
        .arg("--out")
        .arg(f.tmp.path().join("report.html"))
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    ok(&o);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("Keystrokes saved"), "{md}");
    assert!(md.contains("| oracle | 3 | 91.2 ± "), "{md}");
}

#[test]
fn golf_word_accepts_up_to_the_last_matching_word() {
    let f = fixture();
    let (recs, s) = run(&f, "word", &["oracle", "bracket"], &["--golf", "word"]);
    assert_eq!(
        tallies(&recs, "oracle"),
        [(1, 9, 1, 1, 0), (1, 13, 1, 1, 0), (1, 12, 1, 1, 0)]
    );
    // "def f(x):(": words "def", " f", "(x" (3 keys, to 7); then "):(" has no word, so
    // ")" and ":" are typed (2 keys, 2 requests): 5 keys, 3 requests.
    // "    y = x + 1(": "    y", " = x", " + 1": 3 keys, the line written.
    // "    return y(": "    return", " y": 2 keys.
    assert_eq!(
        tallies(&recs, "bracket"),
        [(5, 9, 3, 1, 0), (3, 13, 1, 1, 0), (2, 12, 1, 1, 0)]
    );
    let g = |who: &str, m: &str| s["golf"][who][m]["value"].clone();
    close(
        &g("bracket", "keystrokes_saved"),
        1.0 - 10.0 / SUM_N,
        "bracket saved",
    );
    close(&g("bracket", "one_accept_share"), 0.0, "bracket one accept");
    close(
        &g("bracket", "requests_per_line"),
        5.0 / 3.0,
        "bracket requests",
    );
    close(
        &g("oracle", "keystrokes_saved"),
        1.0 - 3.0 / SUM_N,
        "oracle saved",
    );
}

#[test]
fn golf_failures_are_counted_apart_and_flagged() {
    let f = fixture();
    let (recs, s) = run(
        &f,
        "stalls",
        &["stalls"],
        &["--golf", "full", "--golf-max-requests", "3"],
    );
    // Request 1 answered (line 1 in one accept); every later one times out: no
    // suggestion, so the user types; after 3 requests the rest of the line is typed.
    assert_eq!(
        tallies(&recs, "stalls"),
        [(1, 9, 1, 1, 0), (13, 13, 3, 0, 3), (12, 12, 3, 0, 3)]
    );
    assert_eq!(recs[1]["outcome"], "timeout");
    assert_eq!(recs[1]["golf"]["capped"], true);
    let g = &s["golf"]["stalls"];
    close(&g["keystrokes_saved"]["value"], 1.0 - 26.0 / SUM_N, "saved");
    assert_eq!(g["lines_with_failures"], 2);
    assert_eq!(g["failures"], 6);
    assert_eq!(g["capped"], 2);
}

#[test]
fn golf_is_refused_with_a_typed_prefix_absent_without_the_flag_and_keeps_line_records() {
    let f = fixture();
    let (recs, s) = run(&f, "plain", &["oracle"], &[]);
    assert!(recs.iter().all(|r| r.get("golf").is_none()));
    assert!(s.get("golf").is_none());
    let manifest = std::fs::read_to_string(f.tmp.path().join("plain/manifest.json")).unwrap();
    assert!(!manifest.contains("golf"));
    // A golf record is the line case at p = 0 plus its tally: without `golf`, the
    // records of a plain run (so the §2 figures of a golf run are a plain run's).
    let (mut golfed, _) = run(&f, "golfed", &["oracle"], &["--golf", "word"]);
    for r in &mut golfed {
        r.as_object_mut()
            .unwrap()
            .remove("golf")
            .expect("a golf tally");
    }
    assert_eq!(golfed, recs);
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--editors"])
        .arg(&f.editors)
        .arg("--plan")
        .arg(&f.plan)
        .arg("--dataset")
        .arg(f.tmp.path().join("ds"))
        .arg("--out")
        .arg(f.tmp.path().join("refused"))
        .args([
            "--assistant",
            "oracle",
            "--golf",
            "full",
            "--typed-prefix",
            "2",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--typed-prefix"));
    // Not through a real editor yet: refused before any case, naming the flag.
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--editors"])
        .arg(&f.editors)
        .arg("--plan")
        .arg(&f.plan)
        .arg("--dataset")
        .arg(f.tmp.path().join("ds"))
        .arg("--out")
        .arg(f.tmp.path().join("refused-neovim"))
        .args([
            "--assistant",
            "oracle",
            "--golf",
            "full",
            "--editor",
            "neovim",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("drop --editor neovim"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!f.tmp.path().join("refused-neovim/records.jsonl").exists());
}
