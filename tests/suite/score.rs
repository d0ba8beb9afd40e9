//! The scoring core against hand-computed sets, a naive reference implementation,
//! shuffled input, malformed files, and a coverage simulation of the bootstrap.

use std::io::Write;

use serde_json::{Value, json};
use typist::score::records::{Outcome, Place, Row, RowParts, Table};
use typist::score::{Options, read_records, summarize};

/// A small deterministic RNG for generating cases (splitmix64).
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn string(&mut self, max: u64) -> String {
        const ALPHA: &[char] = &['a', 'b', 'c', ' ', '(', ')', 'é', '日', '😀', 'x', '_', '.'];
        (0..self.below(max + 1))
            .map(|_| ALPHA[self.below(ALPHA.len() as u64) as usize])
            .collect()
    }
}

fn write_records(lines: &[Value]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    f.flush().unwrap();
    f
}

fn score(lines: &[Value], bootstrap: usize) -> Value {
    let f = write_records(lines);
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    serde_json::to_value(summarize(
        &t,
        &Options {
            bootstrap,
            seed: 1,
            pass: 1,
            curve_bands: false,
        },
    ))
    .unwrap()
}

fn rec(
    case: &str,
    repo: &str,
    asst: &str,
    outcome: &str,
    expected: &str,
    predicted: Option<&str>,
) -> Value {
    json!({"case": case, "repo": repo, "file": "f.java", "line": 1, "language": "java",
           "assistant": asst, "pass": 1, "outcome": outcome, "expected": expected,
           "predicted": predicted, "latency_ms": 5.0})
}

#[test]
fn hand_computed_set() {
    // Lengths 10, 10, 20. c_help (ld2): 1, 0.5, 0 (empty). An error is left out.
    let lines = [
        rec(
            "1",
            "r1",
            "A",
            "suggestion",
            "abcdefghij",
            Some("abcdefghij"),
        ),
        rec("2", "r1", "A", "suggestion", "abcdefghij", Some("abcde")),
        rec("3", "r2", "A", "empty", "abcdefghijklmnopqrst", None),
        {
            let mut e = rec("4", "r2", "A", "error", "zzzz", None);
            e["error"] = json!("boom");
            e
        },
    ];
    let v = score(&lines, 0);
    let a = &v["assistants"]["A"];
    assert_eq!(a["records"], 4);
    assert_eq!(a["cases"], 3);
    // Errors over all records; empties over answered cases (1 of 3, not 1 of 4).
    assert_eq!(a["error_rate"], 0.25);
    assert_eq!(a["empty_rate"], 1.0 / 3.0);
    assert_eq!(a["errors"], 1);
    assert_eq!(a["top_error"], "boom");
    // H(S|0) = (10·1 + 10·0.5 + 0) / 40
    assert_eq!(a["help_at_0"]["value"], 15.0 / 40.0);
    // H(S|1) = 10 / 40
    assert_eq!(a["exact_share"]["value"], 0.25);
    // ℋ = (10·1 + 10·0.125) / 40
    assert_eq!(a["integral_help"]["value"], 11.25 / 40.0);
    // Non-empty only: (10 + 1.25) / 20
    assert_eq!(a["integral_help_nonempty"]["value"], 11.25 / 20.0);
    // The curve: t = 0.5 keeps both, t = 0.51 only the exact one.
    assert_eq!(a["curve"].as_array().unwrap().len(), 101);
    assert_eq!(a["curve"][50], json!({"t": 0.5, "help": 15.0 / 40.0}));
    assert_eq!(a["curve"][51], json!({"t": 0.51, "help": 0.25}));
    assert_eq!(a["curve"][100], json!({"t": 1.0, "help": 0.25}));
    assert_eq!(a["by_repo"]["r2"]["cases"], 1);
    assert_eq!(a["by_language"]["java"]["cases"], 3);
}

/// Naive reference: Wagner–Fischer with substitution cost `sub`, over chars.
fn naive_ld(a: &str, b: &str, sub: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let s = if a[i - 1] == b[j - 1] { 0 } else { sub };
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + s);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[test]
fn matches_a_naive_reference_on_random_records() {
    let mut g = Gen(99);
    for round in 0..20 {
        let mut lines = vec![];
        let (mut den, mut help, mut exact, mut cube, mut help1) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for i in 0..60 {
            let expected = g.string(12);
            let predicted = g.string(12);
            let outcome = [
                "suggestion",
                "suggestion",
                "suggestion",
                "empty",
                "error",
                "timeout",
            ][g.below(6) as usize];
            lines.push(rec(
                &format!("c{i}"),
                &format!("r{}", g.below(5)),
                "A",
                outcome,
                &expected,
                Some(&predicted),
            ));
            if outcome == "error" || outcome == "timeout" {
                continue;
            }
            let len = expected.chars().count() as f64;
            den += len;
            if outcome == "empty" || len == 0.0 {
                continue;
            }
            let c = (len - naive_ld(&expected, &predicted, 2) as f64).max(0.0) / len;
            let c1 = (len - naive_ld(&expected, &predicted, 1) as f64).max(0.0) / len;
            help += len * c;
            help1 += len * c1;
            cube += len * c * c * c;
            if c == 1.0 {
                exact += len;
            }
        }
        let v = score(&lines, 0);
        let a = &v["assistants"]["A"];
        let close = |x: &Value, y: f64| (x.as_f64().unwrap() - y / den).abs() < 1e-9;
        assert!(close(&a["help_at_0"]["value"], help), "round {round}");
        assert!(close(&a["help_at_0_ld1"], help1), "round {round}");
        assert!(close(&a["exact_share"]["value"], exact), "round {round}");
        assert!(close(&a["integral_help"]["value"], cube), "round {round}");
    }
}

#[test]
fn output_is_identical_whatever_the_record_order() {
    let mut g = Gen(3);
    let mut lines = vec![];
    for i in 0..300 {
        for asst in ["A", "B", "C"] {
            let e = g.string(20);
            let p = if g.below(2) == 0 {
                e.clone()
            } else {
                g.string(20)
            };
            lines.push(rec(
                &format!("c{i}"),
                &format!("r{}", i % 17),
                asst,
                "suggestion",
                &e,
                Some(&p),
            ));
        }
    }
    let one = score(&lines, 200).to_string();
    // Shuffle deterministically.
    for i in (1..lines.len()).rev() {
        lines.swap(i, g.below(i as u64 + 1) as usize);
    }
    let two = score(&lines, 200).to_string();
    assert_eq!(one, two);
    let v: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(
        v["pairwise"].as_array().unwrap().len(),
        9,
        "3 pairs × 3 metrics"
    );
}

#[test]
fn zero_spread_gives_no_p_value_never_zero() {
    let lines = [
        rec("1", "r1", "A", "suggestion", "abcd", Some("abcd")),
        rec("1", "r1", "B", "suggestion", "abcd", Some("abcd")),
        rec("1", "r1", "C", "suggestion", "abcd", Some("ab")),
    ];
    let v = score(&lines, 50);
    let p = |a: &str, b: &str| {
        v["pairwise"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["a"] == a && x["b"] == b && x["metric"] == "integral_help")
            .unwrap()
            .clone()
    };
    // One file: every resample is the original, sd = 0, and no p-value can be given
    // (it used to be 0, "significant", for any difference).
    assert_eq!(v["unit"], "file");
    assert_eq!(v["units"], 1);
    assert_eq!(p("A", "C")["sd"], 0.0);
    assert_eq!(p("A", "C")["p_value"], Value::Null);
    assert_eq!(p("A", "B")["p_value"], Value::Null);
    assert_eq!(p("A", "C")["few_units"], true);
}

/// A record of a line with `typed` characters typed before asking; the prediction is
/// the whole accepted line, as the replay writes it (typed prefix + suggestion).
fn typed_rec(
    case: &str,
    repo: &str,
    expected: &str,
    typed: usize,
    predicted: Option<&str>,
) -> Value {
    let mut r = rec(
        case,
        repo,
        "A",
        if predicted.is_some() {
            "suggestion"
        } else {
            "empty"
        },
        expected,
        predicted,
    );
    r["typed"] = json!(typed);
    r
}

#[test]
fn the_users_typed_characters_are_never_the_assistants_help() {
    // The issue's example: 8 characters typed, the assistant adds only "@@".
    let line = "abcdefgh@@";
    let echo = score(&[typed_rec("1", "r", line, 8, Some("abcdefgh"))], 0);
    let a = &echo["assistants"]["A"];
    // Before: (10 − ld2(line, "abcdefgh")) / 10 = 0.8 of help for typing nothing.
    assert_eq!(a["help_at_0"]["value"], 0.0);
    assert_eq!(a["integral_help"]["value"], 0.0);
    assert_eq!(a["curve"][0]["help"], 0.0);
    let done = score(&[typed_rec("1", "r", line, 8, Some(line))], 0);
    let a = &done["assistants"]["A"];
    assert_eq!(a["help_at_0"]["value"], 1.0);
    assert_eq!(a["exact_share"]["value"], 1.0);
    // Half of the two characters: w = 2, ld2 = 1 (one insertion).
    let half = score(&[typed_rec("1", "r", line, 8, Some("abcdefgh@"))], 0);
    assert_eq!(half["assistants"]["A"]["help_at_0"]["value"], 0.5);
    assert_eq!(half["assistants"]["A"]["help_at_0_ld1"], 0.5);
    // Weights are len − k: a 2-character case and a 10-character one.
    let both = score(
        &[
            typed_rec("1", "r", line, 8, Some(line)),
            typed_rec("2", "r", "0123456789", 0, None),
        ],
        0,
    );
    assert_eq!(both["assistants"]["A"]["help_at_0"]["value"], 2.0 / 12.0);
    // A line no longer than what was typed is not a case: counted apart, with its reason.
    let short = score(
        &[
            typed_rec("1", "r", line, 8, Some(line)),
            typed_rec("2", "r", "abcd", 4, Some("abcd")),
            typed_rec("3", "r", "ab", 4, None),
        ],
        0,
    );
    let a = &short["assistants"]["A"];
    assert_eq!(a["cases"], 1);
    assert_eq!(a["records"], 1);
    assert_eq!(a["skipped"]["line not longer than the typed prefix"], 2);
    assert_eq!(a["help_at_0"]["value"], 1.0);
}

#[test]
fn no_typed_prefix_gives_the_same_figures_as_records_without_the_field() {
    let mut g = Gen(17);
    let mut without = vec![];
    let mut with = vec![];
    for i in 0..80 {
        let (e, p) = (g.string(14), g.string(14));
        let r = rec(
            &format!("r{}/f:{i}", i % 3),
            &format!("r{}", i % 3),
            "A",
            "suggestion",
            &e,
            Some(&p),
        );
        without.push(r.clone());
        let mut r = r;
        r["typed"] = json!(0);
        with.push(r);
    }
    assert_eq!(score(&without, 200), score(&with, 200));
}

#[test]
fn typed_prefix_figures_match_a_naive_reference() {
    let mut g = Gen(4242);
    for round in 0..20 {
        let mut lines = vec![];
        let (mut den, mut help, mut exact, mut cube, mut help1, mut skipped) =
            (0.0, 0.0, 0.0, 0.0, 0.0, 0u64);
        let mut curve_half = 0.0;
        for i in 0..60 {
            let expected = g.string(14);
            let chars: Vec<char> = expected.chars().collect();
            let k = g.below(chars.len() as u64 + 2) as usize;
            let typed: String = chars.iter().take(k).collect();
            let empty = g.below(4) == 0;
            let predicted = if g.below(3) == 0 {
                expected.clone()
            } else {
                format!("{typed}{}", g.string(8))
            };
            lines.push(typed_rec(
                &format!("c{i}"),
                &format!("r{}", g.below(5)),
                &expected,
                k,
                (!empty).then_some(predicted.as_str()),
            ));
            let w = chars.len() as f64 - k as f64;
            if w <= 0.0 {
                skipped += 1;
                continue;
            }
            den += w;
            if empty {
                continue;
            }
            let c = (w - naive_ld(&expected, &predicted, 2) as f64).max(0.0) / w;
            let c1 = (w - naive_ld(&expected, &predicted, 1) as f64).max(0.0) / w;
            help += w * c;
            help1 += w * c1;
            cube += w * c * c * c;
            if c >= 0.5 {
                curve_half += w * c;
            }
            if c == 1.0 {
                exact += w;
            }
        }
        let v = score(&lines, 0);
        let a = &v["assistants"]["A"];
        let close = |x: &Value, y: f64| (x.as_f64().unwrap() - y / den).abs() < 1e-9;
        assert!(close(&a["help_at_0"]["value"], help), "round {round}");
        assert!(close(&a["help_at_0_ld1"], help1), "round {round}");
        assert!(close(&a["exact_share"]["value"], exact), "round {round}");
        assert!(close(&a["integral_help"]["value"], cube), "round {round}");
        assert!(close(&a["curve"][50]["help"], curve_half), "round {round}");
        let sk = a["skipped"]["line not longer than the typed prefix"]
            .as_u64()
            .unwrap_or(0);
        assert_eq!(sk, skipped, "round {round}");
    }
}

#[test]
fn the_resampling_unit_is_the_repository_from_ten_on_and_the_file_below() {
    let mut lines = vec![];
    for repo in 0..9 {
        for file in 0..2 {
            for line in 0..3 {
                let case = format!("r{repo}/f{file}.py:{line}");
                let mut r = rec(
                    &case,
                    &format!("r{repo}"),
                    "A",
                    "suggestion",
                    "abcdef",
                    Some("abc"),
                );
                r["file"] = json!(format!("f{file}.py"));
                lines.push(r);
                let mut r = rec(&case, &format!("r{repo}"), "B", "empty", "abcdef", None);
                r["file"] = json!(format!("f{file}.py"));
                lines.push(r);
            }
        }
    }
    let v = score(&lines, 100);
    assert_eq!(v["repositories"], 9);
    assert_eq!(v["unit"], "file");
    // Files of the same name in different repositories are different units.
    assert_eq!(v["units"], 18);
    assert!(
        v["pairwise"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["few_units"] == Value::Null || p["few_units"] == false)
    );
    for file in 0..2 {
        let case = format!("r9/f{file}.py:0");
        let mut r = rec(&case, "r9", "A", "suggestion", "abcdef", Some("abc"));
        r["file"] = json!(format!("f{file}.py"));
        lines.push(r);
    }
    let v = score(&lines, 100);
    assert_eq!(v["unit"], "repository");
    assert_eq!(v["units"], 10);
}

#[test]
fn the_bootstrap_is_pinned_to_fixed_figures() {
    // Three repositories' sums drawn 4 times from seed 7: a change of generator, of
    // draw method or of the order of draws changes these figures.
    let m = [1.0, 10.0, 100.0];
    let sums: Vec<f64> = typist::score::bootstrap::resample_sums(&m, 3, 1, 4, 7)
        .into_iter()
        .map(|s| s[0])
        .collect();
    eprintln!("{sums:?}");
    // Each sum is three draws of 1, 10 or 100: its digits count the draws.
    for s in &sums {
        let s = *s as u64;
        assert_eq!(s % 10 + (s / 10) % 10 + s / 100, 3, "{s}");
    }
    assert_eq!(sums, PINNED_SUMS);
    // And through `score`: the spread of a fixed records set.
    let mut lines = vec![];
    for i in 0..12 {
        let p = ["abcdef", "abc", "xyz", "abcde", "ab"][i % 5];
        lines.push(rec(
            &format!("r{}/f:{i}", i % 4),
            &format!("r{}", i % 4),
            "A",
            "suggestion",
            "abcdef",
            Some(p),
        ));
    }
    let v = score(&lines, 50);
    let sd = v["assistants"]["A"]["integral_help"]["sd"]
        .as_f64()
        .unwrap();
    eprintln!("sd {sd:?}");
    assert!((sd - PINNED_SD).abs() < 1e-12, "{sd}");
}

const PINNED_SD: f64 = 0.05712857913699974;

const PINNED_SUMS: [f64; 4] = [102.0, 120.0, 12.0, 111.0];

#[test]
fn nondeterminism_counts_identical_requests_answered_differently() {
    let mut lines = vec![];
    for (pass, resp) in [(1, "aa"), (2, "aa"), (1, "b1"), (2, "b2"), (1, "c1")] {
        let case = match resp.as_bytes()[0] {
            b'a' => "r/f:1",
            b'b' => "r/f:2",
            _ => "r/f:3",
        };
        let mut r = rec(case, "r", "A", "suggestion", "abc", Some("abc"));
        r["pass"] = json!(pass);
        let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
        r["request_hash"] = json!(format!("{:0<64}", hex(case)));
        r["response_hash"] = json!(format!("{:0<64}", hex(resp)));
        lines.push(r);
    }
    let v = score(&lines, 0);
    let n = &v["assistants"]["A"]["nondeterminism"];
    assert_eq!(n["repeated"], 2);
    assert_eq!(n["differing"], 1);
    assert_eq!(n["share"], 0.5);
    // Without hashes (older records) there is nothing to say.
    let v = score(&[rec("1", "r", "A", "suggestion", "abc", Some("abc"))], 0);
    assert_eq!(v["assistants"]["A"]["nondeterminism"]["share"], Value::Null);
}

#[test]
fn pairwise_uses_only_cases_both_answered() {
    let lines = [
        rec("1", "r1", "A", "suggestion", "abcd", Some("abcd")),
        rec("1", "r1", "B", "error", "abcd", None),
        rec("2", "r1", "A", "suggestion", "wxyz", Some("")),
        rec("2", "r1", "B", "suggestion", "wxyz", Some("wxyz")),
    ];
    let v = score(&lines, 0);
    let ih = v["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["metric"] == "integral_help")
        .unwrap()
        .clone();
    assert_eq!(ih["cases"], 1);
    assert_eq!(ih["diff"], -1.0);
}

/// Completion sessions by typed prefix, an empty list among them: the ranking counts
/// it as a session with its own empty rate, and the text table of a completion-only
/// assistant shows its sessions, empty lists and latency (the headline, made of line
/// cases, leaves it out).
#[test]
fn completion_ranking_by_prefix_length() {
    let mut lines = vec![];
    for (i, (prefix, rank, outcome)) in [
        (0, Some(1), "suggestion"),
        (0, Some(3), "suggestion"),
        (1, None, "suggestion"),
        (1, Some(7), "suggestion"),
        (1, None, "empty"),
        (2, Some(1), "suggestion"),
        (3, None, "suggestion"),
    ]
    .iter()
    .enumerate()
    {
        let mut r = rec(&format!("c{i}"), "r", "ls", outcome, "path", Some("path"));
        r["kind"] = json!("completion");
        r["prefix_len"] = json!(prefix);
        r["rank"] = json!(rank);
        r["items"] = json!(["a", "b"]);
        r["latency_ms"] = json!(10.0 * (i + 1) as f64);
        lines.push(r);
    }
    let v = score(&lines, 0);
    let rk = &v["assistants"]["ls"]["ranking"];
    assert_eq!(
        rk["0"],
        json!({"sessions": 2, "empty": 0, "empty_rate": 0.0, "top1": 0.5, "top5": 1.0, "recall": 1.0, "mean_position": 2.0, "mrr": (1.0 + 1.0 / 3.0) / 2.0})
    );
    assert_eq!(rk["1"]["recall"], 1.0 / 3.0);
    assert_eq!(rk["1"]["top5"], 0.0);
    assert_eq!(
        (&rk["1"]["empty"], &rk["1"]["empty_rate"]),
        (&json!(1), &json!(1.0 / 3.0))
    );
    assert_eq!(
        (&rk["all"]["sessions"], &rk["all"]["empty"]),
        (&json!(7), &json!(1))
    );
    // Line-level figures are those of no line case.
    assert_eq!(v["assistants"]["ls"]["cases"], 0);
    assert_eq!(v["assistants"]["ls"]["empty_rate"], Value::Null);
    let f = write_records(&lines);
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    let opts = Options {
        bootstrap: 0,
        seed: 1,
        pass: 1,
        curve_bands: false,
    };
    let table = typist::score::score_table(&summarize(&t, &opts));
    let row = table
        .lines()
        .find(|l| l.starts_with("| ls ") && l.contains("| 40.0 "))
        .unwrap_or_else(|| panic!("no sessions row (p50 40 ms) in\n{table}"));
    // Prefix 3 found nothing: its MRR is 0, not the -0 of an empty float sum.
    assert!(table.contains("| prefix 3    | 1 "), "{table}");
    assert!(!table.contains("-0.000"), "{table}");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // Latencies 10..70 ms: p50 40, p95 67 (interpolated between the 6th and 7th).
    assert_eq!(
        cells[1..8],
        ["ls", "7", "14.3", "0.0", "0.0", "40.0", "67.0"],
        "{table}"
    );
}

/// Completion records of two servers over the same sessions in four files: the
/// breakdown by token kind, ±2sd intervals of top-1/top-5/MRR, paired differences over
/// the shared sessions (an error is no shared session), and the text table.
#[test]
fn completion_ranking_by_kind_with_intervals_and_pairs() {
    let mut lines = vec![];
    for i in 0..16u32 {
        for (asst, rank) in [
            ("a", Some(1 + i % 3)),
            ("b", if i % 2 == 0 { Some(4) } else { None }),
        ] {
            let mut r = rec(
                &format!("c{i}"),
                &format!("r{}", i % 4),
                asst,
                "suggestion",
                "path",
                Some("x"),
            );
            r["file"] = json!(format!("f{}.py", i % 4));
            r["kind"] = json!("completion");
            r["token_kind"] = json!(if i % 4 == 0 { "member" } else { "call" });
            r["prefix_len"] = json!(i % 2);
            r["rank"] = json!(rank);
            if asst == "b" && i == 15 {
                r["outcome"] = json!("error");
                r["error"] = json!("boom");
            }
            lines.push(r);
        }
    }
    let v = score(&lines, 200);
    let a = &v["assistants"]["a"];
    assert_eq!(a["ranking_by_kind"]["member"]["sessions"], 4);
    assert_eq!(a["ranking_by_kind"]["call"]["sessions"], 12);
    // a's ranks cycle 1, 2, 3: top-1 is 6/16, top-5 all of them.
    assert_eq!(a["ranking"]["all"]["top1"], 6.0 / 16.0);
    let ci = &a["ranking_ci"]["all"];
    assert_eq!(ci["top1"]["value"], 6.0 / 16.0);
    assert_eq!(ci["top5"]["sd"], 0.0);
    assert!(ci["top1"]["sd"].as_f64().unwrap() > 0.0, "{ci}");
    assert!(a["ranking_by_kind_ci"]["member"]["mrr"]["value"].is_f64());
    let b = &v["assistants"]["b"];
    assert_eq!(
        b["ranking"]["all"]["sessions"], 15,
        "the error is no session"
    );
    let pairs = v["ranking_pairwise"].as_array().unwrap();
    let metrics: Vec<&str> = pairs
        .iter()
        .map(|p| p["metric"].as_str().unwrap())
        .collect();
    assert_eq!(metrics, ["top1", "top5", "mrr", "recall", "mean_position"]);
    for p in pairs {
        assert_eq!(
            (&p["a"], &p["b"], &p["cases"]),
            (&json!("a"), &json!("b"), &json!(15))
        );
    }
    // On the 15 shared sessions a finds all (top-5 1.0), b finds 8 at rank 4.
    assert_eq!(pairs[1]["diff"], 1.0 - 8.0 / 15.0);
    // No line-level pairs: only completion records.
    assert_eq!(v["pairwise"], json!([]));
}

/// The whole list's figures on five sessions, computed by hand (issue 45):
///
/// | session | rank | items | record                                          |
/// |---|---|---|---|
/// | s1 | 1    | 3  | a new record, the whole list kept                     |
/// | s2 | 4    | 30 | capped by `--list-cap 3`: 3 texts kept, rank the list's |
/// | s3 | 27   | 30 | an old record: the first 20 texts only                |
/// | s4 | –    | 5  | not in the list                                       |
/// | s5 | –    | 0  | an empty list                                         |
///
/// found@k steps: k = 1: 1/5 = 0.2, k = 4: 2/5 = 0.4, k = 27: 3/5 = 0.6 (recall);
/// mean position (1 + 4 + 27) / 3 = 32/3. By list length: "0" 1 session, none found;
/// "2–3" 1, found 1.0 at 1; "4–7" 1, none; "16–31" 2, found 1.0, mean (4 + 27) / 2 =
/// 15.5. A second assistant with the same records: every paired difference 0 and no
/// p-value (no spread).
#[test]
fn whole_lists_found_at_k_recall_mean_position_and_length() {
    let mut lines = vec![];
    let texts = |n: usize| (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>();
    for asst in ["a", "b"] {
        for (i, (rank, items, top, cap)) in [
            (Some(1), 3, 3, None),
            (Some(4), 30, 3, Some(3)),
            (Some(27), 30, 20, None),
            (None, 5, 5, None),
            (None, 0, 0, None),
        ]
        .into_iter()
        .enumerate()
        {
            let outcome = if items == 0 { "empty" } else { "suggestion" };
            let mut r = rec(
                &format!("s{i}"),
                &format!("r{i}"),
                asst,
                outcome,
                "path",
                None,
            );
            r["kind"] = json!("completion");
            r["prefix_len"] = json!(0);
            r["rank"] = json!(rank);
            r["items"] = json!(items);
            r["listed"] = json!(items);
            r["top"] = json!(texts(top));
            if let Some(c) = cap {
                r["list_cap"] = json!(c);
            }
            lines.push(r);
        }
    }
    let v = score(&lines, 200);
    let a = &v["assistants"]["a"];
    assert_eq!(a["ranking"]["all"]["recall"], 0.6);
    assert_eq!(a["ranking"]["all"]["mean_position"], 32.0 / 3.0);
    let c = &a["ranking_curves"]["all"];
    assert_eq!(c["found_at"], json!([[1, 0.2], [4, 0.4], [27, 0.6]]));
    assert_eq!(
        c["by_length"],
        json!([
            {"items": "0", "sessions": 1, "found": 0.0, "mean_position": null},
            {"items": "2–3", "sessions": 1, "found": 1.0, "mean_position": 1.0},
            {"items": "4–7", "sessions": 1, "found": 0.0, "mean_position": null},
            {"items": "16–31", "sessions": 2, "found": 1.0, "mean_position": 15.5},
        ])
    );
    assert_eq!(a["ranking_curves"]["0"], *c, "one prefix: the same");
    let ci = &a["ranking_ci"]["all"];
    assert_eq!(ci["recall"]["value"], 0.6);
    assert_eq!(ci["mean_position"]["value"], 32.0 / 3.0);
    assert!(ci["recall"]["sd"].as_f64().unwrap() > 0.0, "{ci}");
    assert!(ci["mean_position"]["sd"].as_f64().unwrap() > 0.0, "{ci}");
    let pairs = v["ranking_pairwise"].as_array().unwrap();
    assert_eq!(pairs.len(), 5);
    for p in pairs {
        assert_eq!(
            (&p["diff"], &p["p_value"]),
            (&json!(0.0), &Value::Null),
            "{p}"
        );
        assert_eq!(p["cases"], 5);
    }
    // Records without `items` (older ones) have no curve by length, and a group
    // that found nothing no steps: the field is left out.
    let old: Vec<Value> = lines[..5]
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("items");
            r
        })
        .collect();
    let v = score(&old, 0);
    let c = &v["assistants"]["a"]["ranking_curves"]["all"];
    assert_eq!(c["found_at"], json!([[1, 0.2], [4, 0.4], [27, 0.6]]));
    assert!(c.get("by_length").is_none(), "{c}");
}

#[test]
fn repeat_skip_as_in_the_study() {
    let mut lines = vec![];
    // Pass 1: cases 1-4 empty, 5-10 suggestions. Pass 2: 1-3 empty again, 4 answered,
    // 5 becomes empty, 6 is an error (not a skip), the rest answered.
    for i in 1..=10 {
        let p1 = if i <= 4 { "empty" } else { "suggestion" };
        let p2 = match i {
            1..=3 | 5 => "empty",
            6 => "error",
            _ => "suggestion",
        };
        for (pass, o) in [(1, p1), (2, p2)] {
            let mut r = rec(&format!("c{i}"), "r", "A", o, "abc", Some("abc"));
            r["pass"] = json!(pass);
            lines.push(r);
        }
    }
    let v = score(&lines, 0);
    let rs = &v["repeat_skip"]["A"];
    assert_eq!(rs["passes"][0]["empty_rate"], 0.4);
    assert_eq!(rs["passes"][1]["empty_rate"], 4.0 / 9.0);
    assert_eq!(rs["passes"][1]["errors"], 1);
    assert_eq!(rs["paired_cases"], 9);
    assert_eq!(rs["empty_again"], 0.75);
    assert_eq!(rs["became_empty"], 0.2);
}

#[test]
fn malformed_and_truncated_lines_are_reported_with_file_and_line() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "{}", rec("1", "r", "A", "suggestion", "ab", Some("ab"))).unwrap();
    writeln!(f, "{{not json").unwrap();
    writeln!(
        f,
        "{}",
        json!({"case": "2", "repo": "r", "assistant": "A", "outcome": "maybe", "expected": "x"})
    )
    .unwrap();
    writeln!(f, "{}", rec("3", "r", "A", "empty", "ab", None)).unwrap();
    write!(f, "{{\"case\": \"4\", \"repo\"").unwrap();
    f.flush().unwrap();
    let t = read_records(&[f.path().to_path_buf()], false, 2).unwrap();
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.skipped, 3);
    let name = f.path().display().to_string();
    assert!(
        t.problems[0].starts_with(&format!("{name}:2: ")),
        "{:?}",
        t.problems
    );
    assert!(
        t.problems[1].starts_with(&format!("{name}:3: unknown outcome \"maybe\"")),
        "{:?}",
        t.problems
    );
    assert!(
        t.problems[2].starts_with(&format!("{name}:5: truncated last line")),
        "{:?}",
        t.problems
    );
    let err = read_records(&[f.path().to_path_buf()], true, 2)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("{name}:2:")), "{err}");
}

/// Simulated hierarchical data with a known truth: every line has length 10 and is
/// either matched exactly or skipped, with a per-repository match probability drawn
/// uniformly from [0.2, 0.8] and repositories of 5–40 lines. The population integral
/// help is E[p·n]/E[n] = 0.5. The ±2·sd interval should cover it about 95% of the time.
#[test]
fn bootstrap_interval_covers_the_truth_about_95_percent_of_the_time() {
    let mut g = Gen(2024);
    let sims = 300;
    let mut covered = 0;
    let mut covered_pct = 0;
    for s in 0..sims {
        let mut t = Table {
            assistants: vec!["A".into()],
            languages: vec!["x".into()],
            ..Default::default()
        };
        let repos = 40;
        for r in 0..repos {
            t.repos.push(format!("r{r}"));
            t.places.push(Place {
                repo: r,
                file: 0,
                language: 0,
            });
            let p = 0.2 + 0.6 * g.unit();
            let n = 5 + g.below(36);
            for _ in 0..n {
                let hit = g.unit() < p;
                let case = t.cases as u32;
                t.cases += 1;
                t.rows.push(Row::from(RowParts {
                    case,
                    place: r,
                    outcome: if hit {
                        Outcome::Suggestion
                    } else {
                        Outcome::Empty
                    },
                    len: 10,
                    ld2: if hit { 0 } else { 10 },
                    ld1: if hit { 0 } else { 10 },
                    ..RowParts::default()
                }));
            }
        }
        let sum = summarize(
            &t,
            &Options {
                bootstrap: 300,
                seed: s,
                pass: 1,
                curve_bands: false,
            },
        );
        let e = sum.assistants["A"].integral_help;
        if e.ci95[0] <= 0.5 && 0.5 <= e.ci95[1] {
            covered += 1;
        }
        if e.pct95[0] <= 0.5 && 0.5 <= e.pct95[1] {
            covered_pct += 1;
        }
    }
    let rate = covered as f64 / sims as f64;
    let rate_pct = covered_pct as f64 / sims as f64;
    eprintln!("coverage: ±2sd {rate:.3}, percentile {rate_pct:.3}");
    assert!((0.88..=0.99).contains(&rate), "±2sd coverage {rate}");
    assert!(
        (0.88..=0.99).contains(&rate_pct),
        "percentile coverage {rate_pct}"
    );
}

#[test]
fn line_numbers_stay_right_across_read_chunks() {
    // Over 4 MB, so the file is read and parsed in several chunks on several threads.
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let pad = "x".repeat(300);
    let total = 20_000;
    for i in 1..=total {
        if i == 17_345 {
            writeln!(f, "{{\"case\": broken").unwrap();
        } else {
            writeln!(
                f,
                "{}",
                rec(&format!("c{i}"), "r", "A", "suggestion", &pad, Some(&pad))
            )
            .unwrap();
        }
    }
    f.flush().unwrap();
    assert!(std::fs::metadata(f.path()).unwrap().len() > 5 << 20);
    let t = read_records(&[f.path().to_path_buf()], false, 2).unwrap();
    assert_eq!(t.rows.len(), total - 1);
    assert_eq!(t.skipped, 1);
    let name = f.path().display().to_string();
    assert!(
        t.problems[0].starts_with(&format!("{name}:17345: ")),
        "{:?}",
        t.problems
    );
}

#[test]
fn duplicates_are_reduced_to_one_chosen_by_content_not_order() {
    let a = rec("1", "r1", "A", "suggestion", "abcd", Some("abcd"));
    let b = rec("1", "r1", "A", "suggestion", "abcd", Some("ab"));
    let c = rec("2", "r1", "A", "empty", "wxyz", None);
    let one = score(&[a.clone(), b.clone(), c.clone()], 20);
    let two = score(&[c, b, a], 20);
    assert_eq!(one.to_string(), two.to_string());
    assert_eq!(one["duplicates"], 1);
    assert_eq!(one["assistants"]["A"]["cases"], 2);
}

#[test]
fn duplicates_alike_in_outcome_and_distance_are_still_chosen_by_content() {
    // Two errors of one case with the same latency, differing only in their message,
    // and two suggestions differing only in their response hash: whichever comes
    // first, the same one is kept (the smaller message, the smaller hash).
    let mut e1 = rec("1", "r1", "A", "error", "abcd", None);
    e1["error"] = json!("timeout of the upstream");
    let mut e2 = e1.clone();
    e2["error"] = json!("connection refused");
    let mut s1 = rec("2", "r1", "A", "suggestion", "abcd", Some("ab"));
    s1["request_hash"] = json!("00000000000000aa");
    s1["response_hash"] = json!("00000000000000bb");
    let mut s2 = s1.clone();
    s2["response_hash"] = json!("00000000000000cc");
    let mut s3 = s1.clone();
    s3["case"] = json!("3");
    let one = score(
        &[e1.clone(), e2.clone(), s1.clone(), s2.clone(), s3.clone()],
        20,
    );
    let two = score(&[s3, s2, e2, s1, e1], 20);
    assert_eq!(one.to_string(), two.to_string());
    assert_eq!(one["duplicates"], 2);
    assert_eq!(one["assistants"]["A"]["top_error"], "connection refused");
    // Case 3 asks the same request as the kept answer of case 2: the same response, so
    // the request repeats without differing.
    assert_eq!(one["assistants"]["A"]["nondeterminism"]["repeated"], 1);
    assert_eq!(one["assistants"]["A"]["nondeterminism"]["differing"], 0);
}

#[test]
fn figures_do_not_depend_on_the_number_of_parsing_threads() {
    // Several read chunks, random lines (ASCII and not, long and short), three assistants.
    let mut g = Gen(11);
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for i in 0..12_000 {
        for asst in ["A", "B", "C"] {
            let e = g.string(150);
            let p = if g.below(3) == 0 {
                e.clone()
            } else {
                g.string(150)
            };
            let outcome = ["suggestion", "suggestion", "empty", "error"][g.below(4) as usize];
            let mut r = rec(
                &format!("c{i}"),
                &format!("r{}", i % 41),
                asst,
                outcome,
                &e,
                Some(&p),
            );
            r["pad"] = json!("y".repeat(200));
            writeln!(f, "{r}").unwrap();
        }
    }
    f.flush().unwrap();
    let run = |threads| {
        let t = read_records(&[f.path().to_path_buf()], true, threads).unwrap();
        serde_json::to_string(&summarize(
            &t,
            &Options {
                bootstrap: 100,
                seed: 5,
                pass: 1,
                curve_bands: false,
            },
        ))
        .unwrap()
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert_eq!(one, run(2));
}

/// The scorer's token kinds (a lenient table, `other` for a kind it does not know) are
/// the names the replay writes: the dataset's `TokenKind`, in its order.
#[test]
fn the_scorers_token_kinds_are_the_written_ones() {
    use typist::dataset::token::TokenKind;
    use typist::score::records::{TOKEN_KINDS, token_kind_code};
    let written = [
        TokenKind::Member,
        TokenKind::Call,
        TokenKind::Name,
        TokenKind::Import,
        TokenKind::Type,
    ];
    assert_eq!(TOKEN_KINDS.len(), written.len() + 2);
    for (i, k) in written.into_iter().enumerate() {
        assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        assert_eq!(TOKEN_KINDS[i + 1], k.as_str());
        assert_eq!(usize::from(token_kind_code(Some(k.as_str()))), i + 1);
    }
}

/// The design section reads each record's `line`. One file, lines 1, 2, 3 exact
/// ("abcd" for "abcd": c = 1) and 10, 11, 12 empty (c = 0), all of length 4: integral
/// help 1/2, each case's contribution z = ±1/2, s² = 6·(1/4)/5 = 3/10, n = 6.
/// Pairs 1–5 lines apart: (1,2), (1,3), (2,3) and the same three at 10–12, products
/// +1/4: r = (6/4)/(6·3/10) + 1/6 = 5/6 + 1/6 = 1. Pairs 6–10 apart: 3–10 (7), 2–10 and
/// 3–11 (8), 1–10, 2–11, 3–12 (9), 1–11, 2–12 (10): 8 pairs of product −1/4,
/// r = −2/(8·3/10) + 1/6 = −5/6 + 1/6 = −2/3; 11–20: 1–12 alone, r = −2/3 too.
/// One repository: files are the units, so no repository ICC.
#[test]
fn the_design_reads_the_records_line_numbers() {
    let at = |line: u32, exact: bool| {
        let mut r = if exact {
            rec(
                &format!("r/f.java:{line}"),
                "r",
                "a",
                "suggestion",
                "abcd",
                Some("abcd"),
            )
        } else {
            rec(&format!("r/f.java:{line}"), "r", "a", "empty", "abcd", None)
        };
        r["line"] = json!(line);
        r
    };
    let lines: Vec<Value> = [
        (1, true),
        (2, true),
        (3, true),
        (10, false),
        (11, false),
        (12, false),
    ]
    .into_iter()
    .map(|(l, e)| at(l, e))
    .collect();
    let s = score(&lines, 50);
    let d = &s["design"];
    assert_eq!(d["unit"], "file");
    let a = &d["assistants"]["a"];
    assert_eq!(
        (a["cases"].as_u64(), a["files"].as_u64()),
        (Some(6), Some(1))
    );
    let lags = a["autocorrelation"].as_array().unwrap();
    let got: Vec<(u64, Option<f64>)> = lags
        .iter()
        .map(|l| (l["pairs"].as_u64().unwrap(), l["r"].as_f64()))
        .collect();
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        [6, 8, 1, 0, 0, 0]
    );
    for (i, want) in [(0, 1.0), (1, -2.0 / 3.0), (2, -2.0 / 3.0)] {
        assert!((got[i].1.unwrap() - want).abs() < 1e-12, "bin {i}: {got:?}");
    }
    assert!(got[3].1.is_none());
    assert!(a["integral_help"]["icc_repo"].is_null());
    // One assistant: nothing to compare, and no NaN anywhere in the section.
    assert_eq!(
        d["sentence"],
        "One assistant: no difference to resolve. With one repository, the figures are about its files only."
    );
    assert!(!s.to_string().contains("NaN"));
    // Records without `line`: no pair.
    let bare: Vec<Value> = lines
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("line");
            r
        })
        .collect();
    let s = score(&bare, 50);
    let lags = s["design"]["assistants"]["a"]["autocorrelation"]
        .as_array()
        .unwrap()
        .clone();
    assert!(lags.iter().all(|l| l["pairs"] == 0 && l["r"].is_null()));
}

/// The paired difference of the help curves, by hand. 12 repositories (the unit), two
/// cases each, every line 10 characters. Case 2: both exact. Case 1: B empty; A gives
/// `abcde` (c = 0.5) in six repositories and `abcdefgh` (c = 0.8) in six.
/// Σ w = 240 on both sides. Tails of A: t ≤ 0.50: 6·15 + 6·18 = 198; 0.50 < t ≤ 0.80:
/// 6·10 + 6·18 = 168; above: 120. B: 120 at every t. So D = 78/240 for t ≤ 0.50,
/// 48/240 up to 0.80, 0 above (identical in every resample: no p-value).
#[test]
fn the_paired_help_curve_difference_by_hand_with_the_paired_figures_at_its_ends() {
    let mut lines = vec![];
    for repo in 0..12 {
        let r = format!("r{repo:02}");
        let partial = if repo % 2 == 0 { "abcde" } else { "abcdefgh" };
        lines.push(rec(
            &format!("{r}:1"),
            &r,
            "A",
            "suggestion",
            "abcdefghij",
            Some(partial),
        ));
        lines.push(rec(&format!("{r}:1"), &r, "B", "empty", "abcdefghij", None));
        for a in ["A", "B"] {
            lines.push(rec(
                &format!("{r}:2"),
                &r,
                a,
                "suggestion",
                "abcdefghij",
                Some("abcdefghij"),
            ));
        }
    }
    let f = write_records(&lines);
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    let opts = |bands| Options {
        bootstrap: 200,
        seed: 1,
        pass: 1,
        curve_bands: bands,
    };
    let v = serde_json::to_value(summarize(&t, &opts(true))).unwrap();
    assert_eq!(v["unit"], "repository");
    let pairs = v["curve_pairwise"].as_array().unwrap();
    assert_eq!(pairs.len(), 1);
    let c = &pairs[0];
    assert_eq!(
        (c["a"].as_str(), c["b"].as_str(), c["cases"].as_u64()),
        (Some("A"), Some("B"), Some(24))
    );
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 21);
    for (i, p) in points.iter().enumerate() {
        let want = match i {
            // H_a − H_b, as computed (78/240 up to rounding).
            0..=10 => 198.0 / 240.0 - 120.0 / 240.0,
            11..=16 => 168.0 / 240.0 - 120.0 / 240.0,
            _ => 0.0,
        };
        assert_eq!(p["t"].as_f64().unwrap(), (i * 5) as f64 / 100.0, "t at {i}");
        assert_eq!(p["diff"].as_f64().unwrap(), want, "D at t = {}", p["t"]);
        if i <= 16 {
            let pv = p["p_value"].as_f64().unwrap();
            assert!(pv < 0.05, "significant at t = {}: {pv}", p["t"]);
            let ci = p["ci95"].as_array().unwrap();
            assert!(
                ci[0].as_f64().unwrap() > 0.0,
                "interval above 0 at t = {}",
                p["t"]
            );
        } else {
            assert_eq!(p["sd"], 0.0);
            assert_eq!(p["p_value"], Value::Null, "no p-value from a zero spread");
        }
    }
    // Its ends are help at 0 and the exact share: the same p-values as the paired figures.
    let paired = |m: &str| {
        v["pairwise"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["metric"] == m)
            .unwrap()
            .clone()
    };
    assert_eq!(paired("help_at_0")["diff"], points[0]["diff"]);
    assert_eq!(paired("help_at_0")["p_value"], points[0]["p_value"]);
    assert_eq!(paired("help_at_0")["sd"], points[0]["sd"]);
    assert_eq!(paired("exact_share")["p_value"], points[20]["p_value"]);
    assert_eq!(
        typist::score::curve_pairs::curve_pair_sentence(
            &summarize(&t, &opts(true)).curve_pairwise[0]
        ),
        "A is ahead of B at t ≤ 0.80 (p < 0.05). No clear difference at the other thresholds."
    );
    // Without bands (`typist score` without `--bands`) it is not computed.
    let plain = serde_json::to_value(summarize(&t, &opts(false))).unwrap();
    assert_eq!(plain["curve_pairwise"], Value::Null);
}

/// The curve's t = 1 end where the exact shares differ (above they are alike, and both
/// p-values are null): A exact on every case; B exact on case 1 in even repositories
/// only (`abcde` elsewhere) and on case 2 everywhere. D(1) = 1 − 18/24 = 0.25, and
/// its p-value and sd are the paired exact share's.
#[test]
fn the_paired_help_curve_difference_ends_at_the_paired_exact_share() {
    let mut lines = vec![];
    for repo in 0..12 {
        let r = format!("r{repo:02}");
        let b1 = if repo % 2 == 0 { "abcdefghij" } else { "abcde" };
        for (case, a, b) in [(1, "abcdefghij", b1), (2, "abcdefghij", "abcdefghij")] {
            let id = format!("{r}:{case}");
            lines.push(rec(&id, &r, "A", "suggestion", "abcdefghij", Some(a)));
            lines.push(rec(&id, &r, "B", "suggestion", "abcdefghij", Some(b)));
        }
    }
    let f = write_records(&lines);
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    let opts = Options {
        bootstrap: 200,
        seed: 1,
        pass: 1,
        curve_bands: true,
    };
    let v = serde_json::to_value(summarize(&t, &opts)).unwrap();
    let end = &v["curve_pairwise"][0]["points"][20];
    let exact = (v["pairwise"].as_array().unwrap().iter())
        .find(|x| x["metric"] == "exact_share")
        .unwrap()
        .clone();
    assert_eq!(end["t"], 1.0);
    assert_eq!(end["diff"], 0.25);
    assert_eq!(exact["diff"], 0.25);
    assert!(
        end["p_value"].as_f64().is_some(),
        "a p-value at t = 1: {end}"
    );
    for k in ["p_value", "sd"] {
        assert_eq!(
            end[k], exact[k],
            "{k} at t = 1 against the paired exact share"
        );
    }
}

/// The tests sidecar (methodology §12) scored by hand. 12 repositories, one case each,
/// assistants A and B. A: pass in r00–r09 (exact in r00–r04), fail in r10–r11. B: pass
/// in r00–r05 (r00 exact), fail in r06–r09 and r11 (r11 exact: the check's own alarm),
/// an error in r10. Tests pass: A 10/12; B 6/11 (the error apart). Paired over the 11
/// cases both had judged (all but r10): A 10/11 − B 6/11 = 4/11. A stray line of another repository
/// and a not-covered case of r12 are left out of the judged figures.
#[test]
fn tests_after_acceptance_by_hand_from_the_tests_sidecar() {
    let mut lines = vec![];
    for i in 0..13 {
        let r = format!("r{i:02}");
        for a in ["A", "B"] {
            lines.push(rec(
                &format!("c{i}"),
                &r,
                a,
                "suggestion",
                "abc",
                Some("abd"),
            ));
        }
    }
    let f = write_records(&lines);
    let hash = typist::score::checks_file::file_hash(f.path()).unwrap();
    let result =
        |a: &str, i: usize, outcome: &str, exact: bool| typist::score::tests_file::TestResult {
            assistant: a.into(),
            pass: 1,
            repo: format!("r{i:02}"),
            file: "f.java".into(),
            line: 1,
            case: format!("c{i}"),
            exact,
            outcome: outcome.into(),
            reason: None,
            tests: 3,
        };
    let mut results = vec![];
    for i in 0..12 {
        results.push(result("A", i, if i < 10 { "pass" } else { "fail" }, i < 5));
        let b = match i {
            0..=5 => "pass",
            10 => "error",
            _ => "fail",
        };
        results.push(result("B", i, b, i == 0 || i == 11));
    }
    results.push(result("A", 12, "not_covered", false));
    results.push(result("B", 12, "not_covered", false));
    let mut stray = result("A", 99, "fail", false);
    stray.repo = "elsewhere".into();
    results.push(stray);
    let path = typist::score::tests_file::tests_path(f.path());
    typist::score::tests_file::write_tests(&path, &hash, std::path::Path::new("ds"), &results)
        .unwrap();
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    let opts = Options {
        bootstrap: 200,
        seed: 1,
        pass: 1,
        curve_bands: false,
    };
    let v = serde_json::to_value(summarize(&t, &opts)).unwrap();
    std::fs::remove_file(&path).unwrap();
    let (a, b) = (&v["tests"]["A"], &v["tests"]["B"]);
    assert_eq!(a["judged"], 12);
    assert_eq!(a["tests_pass"]["value"], 10.0 / 12.0);
    assert_eq!(a["exact_but_fails"], 0);
    assert_eq!(a["not_exact_but_passes"], 5);
    assert_eq!(a["not_covered"], 1);
    assert_eq!(b["judged"], 11);
    assert_eq!(b["errors"], 1);
    assert_eq!(b["tests_pass"]["value"], 6.0 / 11.0);
    assert_eq!(b["exact_but_fails"], 1, "the alarm counts");
    assert!(a["tests_pass"]["sd"].as_f64().unwrap() > 0.0);
    let pair = &v["tests_pairwise"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("A"), Some("B"))
    );
    assert_eq!(pair["cases"], 11);
    assert!(
        (pair["diff"].as_f64().unwrap() - 4.0 / 11.0).abs() < 1e-12,
        "{pair}"
    );
    // 12 of r00–r12's 13 cases are noticed (r12's is not covered); the stray
    // repository is not in the records.
    let noticed = &v["tests_noticed"];
    assert_eq!(
        noticed["r00"],
        json!({"cases": 1, "noticed": 1, "share": 1.0})
    );
    assert_eq!(
        noticed["r12"],
        json!({"cases": 1, "noticed": 0, "share": 0.0})
    );
    assert!(noticed.get("elsewhere").is_none());
}

#[test]
fn spread_across_three_passes_over_the_cases_answered_in_every_pass() {
    let mut lines = vec![];
    // Cases c1, c2 (expected "abcd", 4 characters each) answered in every pass:
    //   pass 1: both exact          → integral help 1, exact 1, help@0 1, empty 0
    //   pass 2: c1 exact, c2 empty  → 4/8 = 0.5 for each help figure, empty 1/2
    //   pass 3: both empty          → 0, 0, 0, empty 1
    // Case c3 is empty in pass 1 and an error in passes 2 and 3: not answered in every
    // pass, so left out (with it pass 1's exact share would be 8/12).
    // Each figure: values (1, 0.5, 0) or (0, 0.5, 1): mean 0.5, squares 0.25 + 0 + 0.25
    // = 0.5, over K − 1 = 2: 0.25, sd √0.25 = 0.5; range 0 to 1.
    let outcomes = [
        ("c1", ["suggestion", "suggestion", "empty"]),
        ("c2", ["suggestion", "empty", "empty"]),
        ("c3", ["empty", "error", "error"]),
    ];
    for (case, os) in outcomes {
        for (i, o) in os.iter().enumerate() {
            let pred = (*o == "suggestion").then_some("abcd");
            let mut r = rec(case, "r", "A", o, "abcd", pred);
            r["pass"] = json!(i + 1);
            lines.push(r);
        }
    }
    let v = score(&lines, 0);
    let s = &v["repeat_skip"]["A"]["spread"];
    assert_eq!(s["cases"], 2);
    let per = |f: &str| -> Vec<f64> {
        (0..3)
            .map(|i| s["passes"][i][f].as_f64().unwrap())
            .collect()
    };
    for f in ["integral_help", "exact_share", "help_at_0"] {
        assert_eq!(per(f), [1.0, 0.5, 0.0], "{f}");
        assert_eq!(s[f], json!({"sd": 0.5, "min": 0.0, "max": 1.0}), "{f}");
    }
    assert_eq!(per("empty_rate"), [0.0, 0.5, 1.0]);
    assert_eq!(s["empty_rate"], json!({"sd": 0.5, "min": 0.0, "max": 1.0}));
    // One pass: no repeat-skip, so no spread.
    let one: Vec<Value> = lines.iter().filter(|r| r["pass"] == 1).cloned().collect();
    assert_eq!(score(&one, 0)["repeat_skip"], json!({}));
}

#[test]
fn distinct_answers_per_repeated_request() {
    // Request x answered a, a, a (1 distinct); y: a, b, a (2); z: a, b, c (3); w asked
    // once (not repeated, not counted). Distribution {1: 1, 2: 1, 3: 1}; mean
    // (1 + 2 + 3) / 3 = 2; max 3; repeated 3, differing 2 (y and z).
    let mut lines = vec![];
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for (req, answers) in [("x", "aaa"), ("y", "aba"), ("z", "abc"), ("w", "a")] {
        for (i, resp) in answers.chars().enumerate() {
            let mut r = rec(req, "r", "A", "suggestion", "abc", Some("abc"));
            r["pass"] = json!(i + 1);
            r["request_hash"] = json!(format!("{:0<64}", hex(req)));
            r["response_hash"] = json!(format!("{:0<64}", hex(&resp.to_string())));
            lines.push(r);
        }
    }
    let v = score(&lines, 0);
    let n = &v["assistants"]["A"]["nondeterminism"];
    assert_eq!(n["repeated"], 3);
    assert_eq!(n["differing"], 2);
    assert_eq!(n["distinct"], json!({"1": 1, "2": 1, "3": 1}));
    assert_eq!(n["distinct_mean"], 2.0);
    assert_eq!(n["distinct_max"], 3);
}

#[test]
fn new_errors_by_code_and_message_class_from_the_checks_sidecar() {
    let lines: Vec<Value> = (1..=4)
        .map(|i| rec(&format!("c{i}"), "r", "A", "suggestion", "abc", Some("abd")))
        .collect();
    let f = write_records(&lines);
    let hash = typist::score::checks_file::file_hash(f.path()).unwrap();
    // c1: 2 undefined names; c2: 1 undefined name and 2 unclosed brackets (no code);
    // c3: no new error; c4 a sidecar line as written before codes were recorded (new
    // errors counted, no breakdown: still diagnosed).
    // Diagnosed: 4. By code: Pyright:reportUndefinedVariable 3 errors in 2 suggestions
    // (share 2/4 = 0.5), Pyright:(no code) 2 errors in 1 (0.25). By class likewise.
    let check = |case: &str, n: u64, diags: Value| {
        json!({"assistant": "A", "pass": 1, "repo": "r", "file": "f.java", "line": 1,
               "case": case, "language": "java", "syntax_delta": 0, "new_errors": n,
               "diagnostics": diags})
    };
    let undefined = |n: u64| {
        json!({"source": "Pyright", "code": "reportUndefinedVariable",
               "class": "\"_\" is not defined", "count": n})
    };
    let unclosed = json!({"source": "Pyright", "class": "\"_\" was not closed", "count": 2});
    let mut old = check("c4", 1, json!(null));
    old.as_object_mut().unwrap().remove("diagnostics");
    // c5: a check of a file the records do not hold: counted neither in `diagnosed`
    // nor in the breakdown (else the shares would be of other suggestions).
    let mut stray = check("c5", 5, json!([undefined(5)]));
    stray["file"] = json!("elsewhere.java");
    let sidecar = [
        json!({"checks": {"records": hash, "checker": "pyright"}}),
        check("c1", 2, json!([undefined(2)])),
        check("c2", 3, json!([undefined(1), unclosed])),
        check("c3", 0, json!([])),
        old,
        stray,
    ];
    let path = typist::score::checks_file::checks_path(f.path());
    let text: String = sidecar.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let t = read_records(&[f.path().to_path_buf()], true, 2).unwrap();
    let opts = Options {
        bootstrap: 0,
        seed: 1,
        pass: 1,
        curve_bands: false,
    };
    let v = serde_json::to_value(summarize(&t, &opts)).unwrap();
    std::fs::remove_file(&path).unwrap();
    let c = &v["checks"]["A"];
    assert_eq!(c["diagnosed"], 4);
    assert_eq!(
        c["new_errors_by_code"],
        json!({
            "Pyright:reportUndefinedVariable": {"errors": 3, "cases": 2, "share": 0.5},
            "Pyright:(no code)": {"errors": 2, "cases": 1, "share": 0.25},
        })
    );
    assert_eq!(
        c["new_errors_by_class"],
        json!({
            "\"_\" is not defined": {"errors": 3, "cases": 2, "share": 0.5},
            "\"_\" was not closed": {"errors": 2, "cases": 1, "share": 0.25},
        })
    );
}
