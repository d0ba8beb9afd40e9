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

use super::common::host_profile as profile;

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
    assert!(md.contains("| oracle | 3 | 91.2 ["), "{md}");
    html_says_what_score_says(&f.tmp.path().join("report.html"), &s, 3);
}

/// The HTML report's golf section holds `typist score --json`'s golf figures, one row
/// per assistant (`assistants` of them), and its paired differences with their
/// p-values.
fn html_says_what_score_says(page: &Path, s: &Value, assistants: usize) {
    let html = std::fs::read_to_string(page).unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed");
    let section = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("golf"))
        .expect("a golf section");
    assert!(
        html.contains("<a href=\"#golf\">"),
        "the section is in the nav"
    );
    let num = |n: roxmltree::Node| -> f64 {
        serde_json::from_str(n.attribute("data-value").unwrap()).unwrap()
    };
    let mut rows = 0;
    let mut cells = 0;
    for row in section
        .descendants()
        .filter(|n| n.tag_name().name() == "tr" && n.attribute("data-assistant").is_some())
    {
        let name = row.attribute("data-assistant").unwrap();
        let g = &s["golf"][name];
        rows += 1;
        for td in row
            .children()
            .filter(|t| t.attribute("data-metric").is_some())
        {
            let metric = td.attribute("data-metric").unwrap();
            let want = match &g[metric] {
                Value::Object(o) => o["value"].as_f64().unwrap(),
                v => v.as_f64().unwrap_or_else(|| panic!("{name} {metric}: {v}")),
            };
            assert_eq!(num(td), want, "{name} {metric}");
            let text = td.text().unwrap();
            match metric {
                "keystrokes_saved" | "one_accept_share" => {
                    // The interval cut to 0..100%, as `[low, high]`.
                    let half = (g[metric]["ci95"][1].as_f64().unwrap()
                        - g[metric]["ci95"][0].as_f64().unwrap())
                        / 2.0;
                    let (lo, hi) = ((want - half).clamp(0.0, 1.0), (want + half).clamp(0.0, 1.0));
                    assert_eq!(
                        text,
                        format!("{:.1} [{:.1}, {:.1}]", 100.0 * want, 100.0 * lo, 100.0 * hi),
                        "{name} {metric}"
                    );
                }
                "requests_per_line" => {
                    assert!(text.starts_with(&format!("{want:.2} [")), "{text}")
                }
                _ => assert_eq!(text, format!("{want}"), "{name} {metric}"),
            }
            cells += 1;
        }
    }
    assert_eq!(rows, assistants);
    assert_eq!(cells, 9 * assistants);
    let pairs = s["golf_pairwise"].as_array().unwrap();
    let table = section
        .descendants()
        .find(|n| n.attribute("id") == Some("golf-pairs"))
        .expect("paired differences");
    let trs: Vec<_> = table
        .descendants()
        .filter(|n| n.tag_name().name() == "tr" && n.attribute("data-a").is_some())
        .collect();
    assert_eq!(trs.len(), pairs.len());
    for (tr, p) in trs.iter().zip(pairs) {
        assert_eq!(tr.attribute("data-a"), p["a"].as_str());
        assert_eq!(tr.attribute("data-b"), p["b"].as_str());
        assert_eq!(tr.attribute("data-metric"), p["metric"].as_str());
        let tds: Vec<_> = tr.children().filter(|c| c.is_element()).collect();
        assert_eq!(num(tds[4]), p["diff"].as_f64().unwrap());
        match p["p_value"].as_f64() {
            Some(v) => assert_eq!(num(tds[5]), v),
            None => assert_eq!(tds[5].attribute("data-value"), Some("")),
        }
    }
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

/// Golf on completion lists: tokens none of which starts with `p` (so the fixed host's
/// one item, "pass", is filtered out by the first character typed).
const T: &str =
    "import os\n\n\ndef helper(value):\n    return value + 1\n\n\nresult = helper(len(os.sep))\n";

struct Lists {
    tmp: tempfile::TempDir,
    plan: std::path::PathBuf,
    editors: std::path::PathBuf,
    /// Each token's length, in plan order.
    n: Vec<u64>,
}

fn list_profile(editors: &Path, name: &str, args: &[&str], extra: &str) {
    let mut all = vec!["host", "--backend"];
    all.extend(args);
    std::fs::write(
        editors.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\ncommand = \"@typist\"\nargs = {all:?}\ndialect = \"completion\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\n{extra}"
        ),
    )
    .unwrap();
}

fn lists() -> Lists {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("r")).unwrap();
    std::fs::write(ds.join("r/t.py"), T).unwrap();
    let truth = tmp.path().join("truth");
    std::fs::create_dir_all(&truth).unwrap();
    let plan = truth.join("tokens.jsonl");
    let o = typist()
        .args(["sample", "--dataset"])
        .arg(&ds)
        .args([
            "--cases", "tokens", "--prefix", "0", "--lines", "all", "--out",
        ])
        .arg(&plan)
        .output()
        .unwrap();
    ok(&o);
    let n: Vec<u64> = std::fs::read_to_string(&plan)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["expected"].as_str().map(|t| t.chars().count() as u64))
        .collect();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let p = plan.to_str().unwrap();
    for r in ["1", "3"] {
        list_profile(
            &editors,
            &format!("oracle-rank{r}"),
            &["oracle", "--truth", p, "--list-rank", r],
            "request_timeout_ms = 20000\n",
        );
    }
    list_profile(
        &editors,
        "typist-fixed",
        &["fixed"],
        "request_timeout_ms = 20000\n",
    );
    list_profile(
        &editors,
        "stalls",
        &["oracle", "--truth", p, "--hang-after", "2"],
        "request_timeout_ms = 400\nrestart_after_timeouts = 0\n",
    );
    Lists {
        tmp,
        plan,
        editors,
        n,
    }
}

/// (keys, n, requests, accepts, failures, typed) of each token of `who`, in plan order.
fn list_tallies(recs: &[Value], who: &str) -> Vec<(u64, u64, u64, u64, u64, u64)> {
    tallies(recs, who)
        .into_iter()
        .zip(recs.iter().filter(|r| r["assistant"] == who))
        .map(|((k, n, q, a, f), r)| (k, n, q, a, f, r["golf"]["typed"].as_u64().unwrap()))
        .collect()
}

fn run_lists(l: &Lists, out: &str, assistants: &[&str], extra: &[&str]) -> (Vec<Value>, Value) {
    let f = Fixture {
        tmp: tempfile::tempdir().unwrap(),
        plan: l.plan.clone(),
        editors: l.editors.clone(),
    };
    std::os::unix::fs::symlink(l.tmp.path().join("ds"), f.tmp.path().join("ds")).unwrap();
    let got = run(&f, out, assistants, extra);
    drop(f);
    got
}

#[test]
fn golf_on_completion_lists_picks_rank_r_for_r_keys() {
    let l = lists();
    let sum_n: u64 = l.n.iter().sum();
    // The fixture's tokens: some shorter than 3 characters ("os"), some longer.
    assert!(l.n.len() >= 4, "tokens: {:?}", l.n);
    assert!(l.n.iter().any(|&n| n < 3) && l.n.iter().any(|&n| n > 3));
    let (recs, s) = run_lists(
        &l,
        "lists",
        &["oracle-rank1", "oracle-rank3", "typist-fixed"],
        &["--golf", "full"],
    );
    assert_eq!(
        recs.len(),
        3 * l.n.len(),
        "one record per token and assistant"
    );
    // Rank 1: one request, one pick (1 key), nothing typed.
    let want1: Vec<_> = l.n.iter().map(|&n| (1, n, 1, 1, 0, 0)).collect();
    assert_eq!(list_tallies(&recs, "oracle-rank1"), want1);
    // Rank 3 (two decoys first): 3 keys for a token of 3 or more characters; a shorter
    // one is typed, since 3 keys would cost more than its characters. The list stays
    // complete and keeps items for every prefix, so it is never asked again.
    let want3: Vec<_> =
        l.n.iter()
            .map(|&n| {
                if n >= 3 {
                    (3, n, 1, 1, 0, 0)
                } else {
                    (n, n, 1, 0, 0, n)
                }
            })
            .collect();
    assert_eq!(list_tallies(&recs, "oracle-rank3"), want3);
    // Fixed ("pass"): no fit; after the first character the list shows nothing, so the
    // editor asks again at every character: n keys, n requests.
    let want_fixed: Vec<_> = l.n.iter().map(|&n| (n, n, n, 0, 0, n)).collect();
    assert_eq!(list_tallies(&recs, "typist-fixed"), want_fixed);
    // The record is the token case at prefix 0: ranked, the token first at rank 1.
    let r1 = recs
        .iter()
        .find(|r| r["assistant"] == "oracle-rank1")
        .unwrap();
    assert_eq!(r1["kind"], "completion");
    assert_eq!(r1["rank"], 1);
    let r3 = recs
        .iter()
        .find(|r| r["assistant"] == "oracle-rank3")
        .unwrap();
    assert_eq!(r3["rank"], 3);
    let tokens = l.n.len() as f64;
    let keys3: u64 = want3.iter().map(|t| t.0).sum();
    let g = |who: &str, m: &str| s["golf"][who][m]["value"].clone();
    close(
        &g("oracle-rank1", "keystrokes_saved"),
        1.0 - tokens / sum_n as f64,
        "rank 1 saved",
    );
    close(
        &g("oracle-rank3", "keystrokes_saved"),
        1.0 - keys3 as f64 / sum_n as f64,
        "rank 3 saved",
    );
    close(
        &g("oracle-rank1", "one_accept_share"),
        1.0,
        "rank 1 one pick",
    );
    let picked3 = l.n.iter().filter(|&&n| n >= 3).count() as f64;
    close(
        &g("oracle-rank3", "one_accept_share"),
        picked3 / tokens,
        "rank 3 one pick",
    );
    close(&g("typist-fixed", "keystrokes_saved"), 0.0, "fixed saved");
    close(
        &g("typist-fixed", "requests_per_line"),
        sum_n as f64 / tokens,
        "fixed requests",
    );
    assert_eq!(s["golf"]["oracle-rank3"]["keys"], keys3);
    let pair = s["golf_pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["metric"] == "keystrokes_saved"
                && p["a"] == "oracle-rank1"
                && p["b"] == "oracle-rank3"
        })
        .expect("paired keystrokes saved");
    assert_eq!(pair["cases"], l.n.len());
    close(
        &pair["diff"],
        (keys3 as f64 - tokens) / sum_n as f64,
        "paired diff",
    );
}

#[test]
fn golf_on_completion_lists_counts_failures_apart_and_refuses_typed_prefixes() {
    let l = lists();
    let (recs, s) = run_lists(
        &l,
        "stalls",
        &["stalls"],
        &["--golf", "full", "--golf-max-requests", "2"],
    );
    // Request 1 answered (the first token in one pick); every later one times out: no
    // list, so the user types and the editor asks again; after 2 requests the rest of
    // the token is typed.
    let mut want: Vec<_> =
        l.n.iter()
            .map(|&n| (n, n, 2.min(n), 0, 2.min(n), n))
            .collect();
    want[0] = (1, l.n[0], 1, 1, 0, 0);
    assert_eq!(list_tallies(&recs, "stalls"), want);
    assert_eq!(recs[1]["outcome"], "timeout");
    let g = &s["golf"]["stalls"];
    let failures: u64 = want.iter().map(|t| t.4).sum();
    assert_eq!(g["failures"], failures);
    assert_eq!(g["lines_with_failures"], l.n.len() - 1);
    // A token plan with typed prefixes is refused under --golf, naming the way out.
    let ds = l.tmp.path().join("ds");
    let plan = l.tmp.path().join("p0123.jsonl");
    ok(&typist()
        .args(["sample", "--dataset"])
        .arg(&ds)
        .args(["--cases", "tokens", "--lines", "all", "--out"])
        .arg(&plan)
        .output()
        .unwrap());
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--editors"])
        .arg(&l.editors)
        .arg("--plan")
        .arg(&plan)
        .arg("--dataset")
        .arg(&ds)
        .arg("--out")
        .arg(l.tmp.path().join("refused"))
        .args(["--assistant", "oracle-rank1", "--golf", "full"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--prefix 0"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Golf with the real pyright (scripts/install-servers.sh installs it) on every token of
/// a small file: no figure is pinned (they are pyright's), but every token's tally must
/// obey §10's rule: keys between 1 and n, never more than the rank of the whole token
/// in the first list (picking it there costs its rank), the typed characters within the
/// keys, at most one request per move, no failure; the score's keystrokes saved is
/// 1 − Σ keys / Σ n of the records; and each golf record is the plain token case at
/// prefix 0 (the same rank).
#[test]
fn golf_with_pyright_obeys_the_rule_on_every_token() {
    crate::common::tokens::require_installed("pyright");
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("demo")).unwrap();
    std::fs::write(
        ds.join("demo/app.py"),
        "import os\nimport collections\n\n\ndef helper_function(value):\n    return value + 1\n\n\ncounter = collections.Counter()\nresult = helper_function(2)\nprint(os.path.join(\"a\", \"b\"))\n",
    )
    .unwrap();
    let truth = tmp.path().join("truth");
    std::fs::create_dir_all(&truth).unwrap();
    let plan = truth.join("tokens.jsonl");
    ok(&typist()
        .args(["sample", "--dataset"])
        .arg(&ds)
        .args([
            "--cases", "tokens", "--prefix", "0", "--lines", "all", "--out",
        ])
        .arg(&plan)
        .output()
        .unwrap());
    let editors = crate::common::tokens::patient_profile(tmp.path(), "pyright");
    let f = Fixture { tmp, plan, editors };
    let (golfed, s) = run(&f, "golf", &["pyright"], &["--golf", "full", "--jobs", "1"]);
    let (plain, _) = run(&f, "plain", &["pyright"], &["--jobs", "1"]);
    assert!(golfed.len() >= 8, "{} tokens", golfed.len());
    assert_eq!(golfed.len(), plain.len());
    let (mut keys, mut chars, mut picked) = (0, 0, 0);
    for (g, p) in golfed.iter().zip(&plain) {
        let t = &g["golf"];
        let k = |f: &str| t[f].as_u64().unwrap();
        let (n, typed) = (k("n"), k("typed"));
        assert!(k("keys") >= 1 && k("keys") <= n, "{g}");
        assert!(typed <= k("keys"), "{g}");
        assert_eq!(k("failures"), 0, "{g}");
        assert!(
            k("requests") >= 1 && k("requests") <= 1 + typed + k("accepts"),
            "{g}"
        );
        if let Some(r) = g["rank"].as_u64().filter(|&r| r <= n) {
            assert!(k("keys") <= r, "a pick at rank {r} was there: {g}");
        }
        assert_eq!(g["case"], p["case"]);
        assert_eq!(
            g["rank"], p["rank"],
            "the golf record is the case at prefix 0"
        );
        keys += k("keys");
        chars += n;
        picked += k("accepts");
    }
    assert!(
        picked > 0,
        "pyright lists local names: some token is picked"
    );
    close(
        &s["golf"]["pyright"]["keystrokes_saved"]["value"],
        1.0 - keys as f64 / chars as f64,
        "keystrokes saved",
    );
}
