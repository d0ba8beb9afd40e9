//! The HTML report: well-formed, one curve per assistant, the same numbers as
//! `typist score --json`, markdown and CSV outputs, and seen as a person would: headless
//! Chromium renders it without console errors to a non-empty screenshot.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{DATASET, TYPIST, ok, typist};
use serde_json::Value;

fn run_fixture(out: &Path) {
    let o = typist()
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--dataset",
            DATASET,
            "--assistant",
            "typist-ngram",
            "--assistant",
            "typist-previous-line",
            "--rate",
            "0.05",
            "--seed",
            "1",
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap();
    ok(&o);
}

/// Elements by tag name anywhere below `node`.
fn all<'a>(node: roxmltree::Node<'a, 'a>, tag: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    node.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .collect()
}

#[test]
fn the_report_is_well_formed_and_says_what_score_says() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    run_fixture(&out);
    let md = tmp.path().join("summary.md");
    let csv = tmp.path().join("pairs.csv");
    let html_path = tmp.path().join("report.html");
    let records = out.join("records.jsonl");
    let o = Command::new(TYPIST)
        .args(["report"])
        .arg(&records)
        .arg("--out")
        .arg(&html_path)
        .arg("--markdown")
        .arg(&md)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&html_path).unwrap();
    // `typist run` wrote the same report into its folder.
    assert_eq!(
        std::fs::read_to_string(out.join("report.html"))
            .unwrap()
            .len(),
        html.len()
    );
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed");

    // One curve (a 2-pixel line in its colour) per assistant in each curve figure.
    let palette = ["#0072B2", "#E69F00"];
    for id in ["curve-help", "curve-help-nonempty"] {
        let fig = doc
            .descendants()
            .find(|n| n.attribute("id") == Some(id))
            .unwrap();
        assert_eq!(
            fig.attribute("data-assistants"),
            Some("typist-ngram,typist-previous-line")
        );
        for colour in palette {
            let lines = all(fig, "polyline")
                .into_iter()
                .filter(|p| {
                    p.attribute("stroke") == Some(colour)
                        && p.attribute("stroke-width") == Some("2")
                })
                .count();
            assert_eq!(lines, 1, "{id} {colour}");
        }
        assert_eq!(all(fig, "polygon").len(), 2, "{id}: one band per assistant");
        // Each band outlined in its own colour (dashed, thin), so overlapping bands stay
        // apart; and a legend in every chart naming each assistant.
        for colour in palette {
            let edges = all(fig, "polyline")
                .into_iter()
                .filter(|p| {
                    p.attribute("stroke") == Some(colour)
                        && p.attribute("stroke-width") == Some("1")
                })
                .count();
            assert!(edges > 10, "{id} {colour}: dashed band edges, {edges}");
        }
        let labels: Vec<&str> = all(fig, "text")
            .iter()
            .filter_map(|t| Some(t.text()?.trim()))
            .collect();
        for name in ["typist-ngram", "typist-previous-line"] {
            assert!(
                labels.contains(&name),
                "{id}: a legend names {name}: {labels:?}"
            );
        }
    }
    // Files are resampled here: no caption speaks of a repository bootstrap, and the
    // curves' and the intervals' captions name the files.
    assert!(!html.contains("repository bootstrap"));
    for id in ["curves", "intervals", "pvalues"] {
        let caption = section_text(&doc, id);
        assert!(
            caption.contains(" files of 4 repositories"),
            "{id}: {caption}"
        );
    }

    // The numbers of the summary table are `typist score --json`'s.
    let score = Command::new(TYPIST)
        .args(["score", "--json"])
        .arg(&records)
        .output()
        .unwrap();
    let score: Value = serde_json::from_slice(&score.stdout).unwrap();
    let table = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("headline"))
        .unwrap();
    let mut checked = 0;
    for row in all(table, "tr")
        .into_iter()
        .filter(|r| r.attribute("data-assistant").is_some())
    {
        let name = row.attribute("data-assistant").unwrap();
        let a = &score["assistants"][name];
        for td in all(row, "td")
            .into_iter()
            .filter(|t| t.attribute("data-metric").is_some())
        {
            let metric = td.attribute("data-metric").unwrap();
            let want = match &a[metric] {
                Value::Object(o) => o["value"].as_f64().unwrap(),
                v => v.as_f64().unwrap(),
            };
            // Parsed by the same (serde_json) parser as the score's JSON, so the two
            // shortest-round-trip texts of one f64 compare equal.
            let got: f64 = serde_json::from_str(td.attribute("data-value").unwrap()).unwrap();
            assert_eq!(got, want, "{name} {metric}");
            if metric != "cases" {
                assert_eq!(
                    td.text().unwrap(),
                    format!("{:.1}", 100.0 * want),
                    "{name} {metric}"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * 8);
    // The p-value matrices print the pairwise p-values.
    let pv = doc
        .descendants()
        .find(|n| {
            n.attribute("data-metric") == Some("integral_help") && n.tag_name().name() == "table"
        })
        .unwrap();
    let cell = all(pv, "td")
        .into_iter()
        .find(|t| t.attribute("data-a").is_some())
        .unwrap();
    let want = score["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["metric"] == "integral_help")
        .unwrap()["p_value"]
        .as_f64()
        .unwrap();
    assert_eq!(
        cell.attribute("data-value")
            .unwrap()
            .parse::<f64>()
            .unwrap(),
        want
    );

    // The bundled dataset has 4 repositories: files are resampled, and the report and
    // the pairwise entries say so.
    assert_eq!(score["unit"], "file");
    let unit = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("unit"))
        .expect("the report names the resampling unit");
    assert_eq!(unit.attribute("data-unit"), Some("file"));
    assert_eq!(
        unit.attribute("data-units").unwrap(),
        score["units"].to_string()
    );
    let few = score["units"].as_u64().unwrap() < 10;
    assert_eq!(
        cell.attribute("data-few-units"),
        Some(if few { "true" } else { "false" })
    );
    assert_eq!(cell.text().unwrap().ends_with('*'), few);
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| typist-ngram | 154 |"), "{md}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("case,repo,file,line,language,assistant,pass,outcome,typed,expected,predicted,c_help,ld2,ld1,latency_ms\n"));
    assert_eq!(csv.lines().count(), 1 + 308);

    // The design section says what `typist score --json` says: per assistant its
    // design effect, the sentence on the page and in the markdown, and an
    // autocorrelation chart with each assistant in the legend.
    let design = &score["design"];
    let section = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("design"))
        .expect("a design section");
    let text: String = section
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    let sentence = design["sentence"].as_str().unwrap();
    assert!(text.contains(sentence), "{text}");
    assert!(md.contains(&format!("**Design:** {sentence}")), "{md}");
    let rows = all(all(section, "table")[0], "tr");
    for name in ["typist-ngram", "typist-previous-line"] {
        let deff = design["assistants"][name]["integral_help"]["deff"]
            .as_f64()
            .map_or("n/a".to_string(), |d| format!("{d:.2}"));
        let row = rows
            .iter()
            .find(|r| all(**r, "td").first().and_then(|t| t.text()) == Some(name))
            .unwrap_or_else(|| panic!("no design row for {name}"));
        assert_eq!(all(*row, "td")[6].text(), Some(deff.as_str()), "{name}");
    }
    let svg = all(section, "svg");
    assert_eq!(svg.len(), 1);
    let legend: Vec<&str> = all(svg[0], "text")
        .iter()
        .filter_map(|t| t.text())
        .collect();
    for name in [
        "typist-ngram",
        "typist-previous-line",
        "distance in lines (pairs of cases under each bin)",
    ] {
        assert!(legend.contains(&name), "{legend:?}");
    }
}

/// The text of the first paragraph of the section `id`.
fn section_text(doc: &roxmltree::Document, id: &str) -> String {
    let section = doc
        .descendants()
        .find(|n| n.attribute("id") == Some(id))
        .unwrap_or_else(|| panic!("no section {id}"));
    let p = all(section, "p").into_iter().next().unwrap();
    p.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

/// A line record: `predicted` empty is an empty answer.
fn rec(case: &str, repo: &str, assistant: &str, expected: &str, predicted: &str) -> Value {
    serde_json::json!({"case": case, "repo": repo, "file": format!("{case}.py"), "line": 1,
        "language": "python", "assistant": assistant, "pass": 1,
        "outcome": if predicted.is_empty() { "empty" } else { "suggestion" },
        "expected": expected, "predicted": predicted, "latency_ms": 1.0})
}

/// The report of `records` (and `typist score --json` of them) in `dir`: the parsed
/// page's text, the markdown and the score.
fn report_of(dir: &Path, records: &[Value]) -> (String, String, Value) {
    let path = dir.join("records.jsonl");
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (html, md) = (dir.join("report.html"), dir.join("summary.md"));
    let o = typist()
        .arg("report")
        .arg(&path)
        .arg("--out")
        .arg(&html)
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    ok(&o);
    let score = typist()
        .args(["score", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    ok(&score);
    (
        std::fs::read_to_string(html).unwrap(),
        std::fs::read_to_string(md).unwrap(),
        serde_json::from_slice(&score.stdout).unwrap(),
    )
}

fn parse(html: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse_with_options(
        html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed")
}

/// The verdicts of a page: (ahead, behind, clear, sentence).
fn verdicts(doc: &roxmltree::Document) -> Vec<(String, String, bool, String)> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("verdict"))
        .map(|n| {
            (
                n.attribute("data-ahead").unwrap().to_string(),
                n.attribute("data-behind").unwrap().to_string(),
                n.attribute("data-clear") == Some("true"),
                n.descendants()
                    .filter(|t| t.is_text())
                    .filter_map(|t| t.text())
                    .collect(),
            )
        })
        .collect()
}

/// The integral-help pair of `typist score --json`: (diff a − b, p-value).
fn integral_pair(score: &Value) -> (f64, Option<f64>) {
    let p = score["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["metric"] == "integral_help")
        .expect("an integral-help pair");
    (p["diff"].as_f64().unwrap(), p["p_value"].as_f64())
}

const EXPECTED: &str = "value = compute(alpha, beta)";

/// 12 repositories (repositories are resampled) of four cases each; `beta` and `alpha`
/// answer case `i` of repository `r` as `answer(r, i)` gives.
fn two_assistants(answer: impl Fn(u32, u32) -> (&'static str, &'static str)) -> Vec<Value> {
    let mut out = Vec::new();
    for r in 0..12 {
        for i in 0..4 {
            let case = format!("r{r}c{i}");
            let (alpha, beta) = answer(r, i);
            out.push(rec(&case, &format!("repo{r}"), "alpha", EXPECTED, alpha));
            out.push(rec(&case, &format!("repo{r}"), "beta", EXPECTED, beta));
        }
    }
    out
}

#[test]
fn the_verdict_names_the_assistant_that_helps_more_or_says_no_clear_difference() {
    let tmp = tempfile::tempdir().unwrap();

    // beta (second in name order: the pair's difference alpha − beta is negative) is
    // far better, in every repository.
    let dir = tmp.path().join("clear");
    std::fs::create_dir(&dir).unwrap();
    let records = two_assistants(|r, i| {
        let alpha = if (r + i) % 3 == 0 { "value = comp" } else { "" };
        let beta = if (r * 7 + i) % 5 == 0 {
            "value = compute(al"
        } else {
            EXPECTED
        };
        (alpha, beta)
    });
    let (html, md, score) = report_of(&dir, &records);
    let (diff, p) = integral_pair(&score);
    assert!(
        diff < -0.5 && p.unwrap() < 0.001,
        "the premise: {diff} {p:?}"
    );
    let doc = parse(&html);
    let v = verdicts(&doc);
    assert_eq!(v.len(), 1);
    let (ahead, behind, clear, text) = &v[0];
    assert_eq!(
        (ahead.as_str(), behind.as_str(), *clear),
        ("beta", "alpha", true)
    );
    let points = format!("{:.1}", -100.0 * diff);
    let lead = format!("beta helps {points} points more than alpha");
    assert!(
        text.starts_with(&format!(
            "{lead} (integral help, p < 0.001, 48 shared cases in 12 repositories)"
        )),
        "{text}"
    );
    // First on the summary, before the formula paragraph; first in the markdown too.
    let summary = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("summary"))
        .unwrap();
    let first_p = all(summary, "p").into_iter().next().unwrap();
    assert_eq!(first_p.attribute("class"), Some("verdict"));
    let first_para = md.split("\n\n").nth(1).unwrap();
    assert!(
        first_para.starts_with(&format!("**{lead}** (integral help")),
        "{md}"
    );
    // The heat map says which way: beta's row is ahead of alpha's column, and back.
    let cell = |a: &str, b: &str| {
        doc.descendants()
            .find(|n| {
                n.attribute("data-a") == Some(a)
                    && n.attribute("data-b") == Some(b)
                    && n.parent()
                        .and_then(|r| r.parent())
                        .and_then(|t| t.parent())
                        .and_then(|t| t.attribute("data-metric"))
                        == Some("integral_help")
            })
            .unwrap()
    };
    let (up, down) = (cell("beta", "alpha"), cell("alpha", "beta"));
    assert_eq!(up.attribute("data-direction"), Some("higher"));
    assert!(up.text().unwrap().starts_with('▲'), "{:?}", up.text());
    assert_eq!(down.attribute("data-direction"), Some("lower"));
    assert!(down.text().unwrap().starts_with('▼'), "{:?}", down.text());
    assert_ne!(up.attribute("style"), down.attribute("style"));
    // Repositories are resampled here, and the captions say so.
    assert!(section_text(&doc, "curves").contains("resampling the 12 repositories"));

    // The same answers: no clear difference, said as such.
    let dir = tmp.path().join("equal");
    std::fs::create_dir(&dir).unwrap();
    let records = two_assistants(|r, i| {
        let same = if (r + i) % 3 == 0 {
            "value = comp"
        } else {
            EXPECTED
        };
        (same, same)
    });
    let (html, md, score) = report_of(&dir, &records);
    assert_eq!(integral_pair(&score), (0.0, None), "the premise");
    let v = verdicts(&parse(&html));
    assert_eq!(v.len(), 1);
    assert!(!v[0].2);
    assert!(
        v[0].3
            .starts_with("No clear difference between alpha and beta: the same integral help"),
        "{}",
        v[0].3
    );
    assert!(
        md.contains("**No clear difference between alpha and beta**"),
        "{md}"
    );

    // beta better on one case of one repository only: ahead, but not clearly.
    let dir = tmp.path().join("unclear");
    std::fs::create_dir(&dir).unwrap();
    let records = two_assistants(|r, i| {
        let alpha = if (r + i) % 3 == 0 {
            "value = comp"
        } else {
            EXPECTED
        };
        let beta = if (r, i) == (0, 0) { EXPECTED } else { alpha };
        (alpha, beta)
    });
    let (html, _, score) = report_of(&dir, &records);
    let (diff, p) = integral_pair(&score);
    assert!(
        diff < 0.0 && p.unwrap() >= 0.05,
        "the premise: {diff} {p:?}"
    );
    let v = verdicts(&parse(&html));
    let (ahead, behind, clear, text) = &v[0];
    assert_eq!(
        (ahead.as_str(), behind.as_str(), *clear),
        ("beta", "alpha", false)
    );
    assert!(
        text.starts_with(&format!(
            "No clear difference between beta and alpha: beta is {:.1} points ahead on integral help, but p = {:.3} is not below 0.05",
            -100.0 * diff,
            p.unwrap()
        )),
        "{text}"
    );
}

#[test]
fn an_interval_of_a_share_is_never_printed_below_zero() {
    // alpha is exact in one repository of twelve: its exact share's value − 2·sd is
    // below 0.
    let tmp = tempfile::tempdir().unwrap();
    let records = two_assistants(|r, _| (if r == 0 { EXPECTED } else { "value" }, EXPECTED));
    let (html, md, score) = report_of(tmp.path(), &records);
    let exact = &score["assistants"]["alpha"]["exact_share"];
    let (value, lo, hi) = (
        exact["value"].as_f64().unwrap(),
        exact["ci95"][0].as_f64().unwrap(),
        exact["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo < 0.0, "the premise: {lo}");
    let want = format!("[0.0, {:.1}]", 100.0 * hi);
    let doc = parse(&html);
    let row = doc
        .descendants()
        .find(|n| n.attribute("data-assistant") == Some("alpha") && n.tag_name().name() == "tr")
        .unwrap();
    let cells: Vec<&str> = all(row, "td").iter().filter_map(|t| t.text()).collect();
    assert!(cells.contains(&want.as_str()), "{cells:?}");
    assert!(
        md.contains(&format!("| {:.1} {want} |", 100.0 * value)),
        "{md}"
    );
    // Nowhere a negative bound, nor a figure written `value ± half`.
    for text in [html.as_str(), md.as_str()] {
        assert!(!text.contains("[-"), "a negative bound");
        let written = text
            .match_indices(" ± ")
            .any(|(i, _)| text[..i].ends_with(|c: char| c.is_ascii_digit()));
        assert!(!written, "value ± half");
    }
    // The page and the markdown say the intervals are cut.
    assert!(html.contains("cut to what the figure can be"));
    assert!(md.contains("cut to what the figure can be"));
}

#[test]
fn typical_and_worst_examples_differ_and_unrelated_lines_show_whole() {
    // Of 40 suggestions, 30 score 0 (an unrelated line) and 10 score between 0 and 1:
    // the middle of the list and its end are both zeros.
    let tmp = tempfile::tempdir().unwrap();
    let mut records = Vec::new();
    for i in 0..40u32 {
        let predicted = if i < 30 {
            "xyz += 1".to_string()
        } else {
            EXPECTED[..(12 + i as usize - 30)].to_string()
        };
        records.push(rec(
            &format!("c{i:02}"),
            &format!("repo{}", i % 4),
            "alpha",
            EXPECTED,
            &predicted,
        ));
    }
    let (html, _, _) = report_of(tmp.path(), &records);
    let doc = parse(&html);
    let examples = doc
        .descendants()
        .find(|n| {
            n.attribute("data-assistant") == Some("alpha") && n.tag_name().name() == "details"
        })
        .unwrap();
    let group = |title: &str| -> Vec<(String, String)> {
        let table = all(examples, "table")
            .into_iter()
            .find(|t| t.attribute("data-group") == Some(title))
            .unwrap_or_else(|| panic!("no {title} group"));
        all(table, "tr")
            .into_iter()
            .filter_map(|r| {
                let case = r.attribute("data-case")?;
                let score = all(r, "td")
                    .into_iter()
                    .find(|t| t.attribute("data-metric") == Some("c_help"))?;
                Some((case.to_string(), score.text()?.to_string()))
            })
            .collect()
    };
    let (best, typical, worst) = (group("best"), group("typical"), group("worst"));
    assert_eq!((best.len(), typical.len(), worst.len()), (5, 5, 5));
    let mut cases: Vec<&String> = best
        .iter()
        .chain(&typical)
        .chain(&worst)
        .map(|c| &c.0)
        .collect();
    cases.sort();
    cases.dedup();
    assert_eq!(cases.len(), 15, "no case twice");
    assert!(worst.iter().all(|w| w.1 == "0.00"), "{worst:?}");
    for t in &typical {
        assert!(
            worst.iter().all(|w| w.1 != t.1),
            "typical {t:?} repeats a worst score"
        );
    }
    // "xyz += 1" against the expected line: struck out and highlighted whole, not a
    // scattering of shared letters.
    let row = all(examples, "tr")
        .into_iter()
        .find(|r| r.attribute("data-case") == Some(worst[0].0.as_str()))
        .unwrap();
    let marked: Vec<(Option<&str>, &str)> = all(row, "span")
        .iter()
        .map(|s| (s.attribute("class"), s.text().unwrap_or("")))
        .collect();
    assert_eq!(marked, [(Some("del"), EXPECTED), (Some("ins"), "xyz += 1")]);
    // A prefix of the line keeps its character diff: the rest is struck out.
    let row = all(examples, "tr")
        .into_iter()
        .find(|r| r.attribute("data-case") == Some(best[0].0.as_str()))
        .unwrap();
    let dels: Vec<&str> = all(row, "span").iter().filter_map(|s| s.text()).collect();
    assert_eq!(
        dels,
        [", beta)"],
        "best: c39, all but the last seven characters"
    );
}

fn chromium() -> PathBuf {
    let p = PathBuf::from("/usr/bin/chromium");
    assert!(
        p.is_file(),
        "chromium is not installed (scripts/install-servers.sh installs Debian's chromium)"
    );
    p
}

/// Renders `page` headless; returns the console lines Chromium logged and the screenshot.
fn render(page: &Path, dir: &Path) -> (Vec<String>, PathBuf) {
    let shot = dir.join("shot.png");
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    (console, shot)
}

/// Share of pixels that are not (near) white.
fn ink(png_path: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let pixels = data.len() / px;
    let inked = data
        .chunks(px)
        .filter(|p| p[..3].iter().any(|&c| c < 235))
        .count();
    inked as f64 / pixels as f64
}

#[test]
fn the_report_renders_in_headless_chromium_without_console_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // The check can fail: a page with a script error is caught.
    let bad = tmp.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>",
    )
    .unwrap();
    let (console, _) = render(&bad, &tmp.path().join("bad"));
    assert!(
        console.iter().any(|l| l.contains("undefinedFunction")),
        "the console check sees errors: {console:?}"
    );
    let blank = tmp.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let (_, shot) = render(&blank, &tmp.path().join("blank"));
    assert!(ink(&shot) < 0.001, "a blank page is blank");

    let out = tmp.path().join("out");
    run_fixture(&out);
    let (console, shot) = render(&out.join("report.html"), &tmp.path().join("good"));
    assert!(console.is_empty(), "console output: {console:?}");
    let ink = ink(&shot);
    assert!(ink > 0.03, "the page has content: {ink}");
    // Keep the fixture run's screenshot for the README when asked to.
    if let Some(dest) = std::env::var_os("TYPIST_SAVE_SCREENSHOT") {
        std::fs::copy(&shot, dest).unwrap();
    }
}

/// Alpha helps more at low thresholds only: where beta is silent it gives the line's
/// first 16 of 28 characters (c_help = 16/28, bucket 57); elsewhere both answer alike
/// (exact, or both silent). So D(t) > 0 up to t = 0.55 and D = 0, with no spread and no
/// p-value, from t = 0.60; the section says so, marks it, and the heat map has a column
/// per threshold.
#[test]
fn the_difference_along_the_thresholds_is_charted_and_said_where_it_is_significant() {
    let dir = tempfile::tempdir().unwrap();
    let partial = "value = compute(";
    let records = two_assistants(|r, i| match (i, r % 2) {
        (0, _) | (1, 0) => (partial, ""),
        (2, _) => (EXPECTED, EXPECTED),
        _ => ("", ""),
    });
    let (html, md, _) = report_of(dir.path(), &records);
    let doc = parse(&html);
    let section = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("thresholds"))
        .expect("the section along the thresholds");
    let sentence = "alpha is ahead of beta at t ≤ 0.55 (p < 0.05). No clear difference at the other thresholds.";
    let said: Vec<String> = section
        .descendants()
        .filter(|n| n.attribute("class") == Some("curve-pair-sentence"))
        .map(text_of)
        .collect();
    assert_eq!(said.len(), 1);
    assert!(said[0].starts_with(sentence), "{}", said[0]);
    assert!(md.contains(&format!("- {sentence}")), "{md}");
    // The chart: its legend names the difference, the band and the significant dots, and
    // there are as many dots as significant thresholds (t = 0 … 0.55: 12).
    let svg = section
        .descendants()
        .find(|n| n.has_tag_name("svg"))
        .unwrap();
    let texts = text_of(svg);
    for label in ["alpha − beta", "95% band", "p < 0.05", "threshold t"] {
        assert!(texts.contains(label), "{label} in the chart");
    }
    let dots = svg
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some("#D55E00"))
        .count();
    assert_eq!(
        dots,
        12 + 1,
        "12 significant thresholds and the legend's dot"
    );
    // The heat map: a column per threshold, n/a where the difference has no spread.
    let table = section
        .descendants()
        .find(|n| n.has_tag_name("table"))
        .unwrap();
    let cells: Vec<String> = table
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .map(text_of)
        .collect();
    assert_eq!(cells.len(), 21);
    assert!(cells[..12].iter().all(|c| c.starts_with('▲')), "{cells:?}");
    assert!(cells[12..].iter().all(|c| c == "=n/a"), "{cells:?}");
}

/// Three passes (as `spread_across_three_passes…` in score.rs): cases a and b, 4
/// characters each, both exact in pass 1, one in pass 2, none in pass 3: each help
/// figure is 100, 50, 0 % by pass, sd √((50² + 0 + 50²) / 2) = 50 points, range 0–100.
#[test]
fn the_spread_across_passes_is_a_table_and_a_markdown_line() {
    let tmp = tempfile::tempdir().unwrap();
    let mut records = vec![];
    for (pass, answers) in [(1, ["abcd", "abcd"]), (2, ["abcd", ""]), (3, ["", ""])] {
        for (case, predicted) in ["a", "b"].iter().zip(answers) {
            let mut r = rec(case, "r", "A", "abcd", predicted);
            r["pass"] = serde_json::json!(pass);
            records.push(r);
        }
    }
    let (html, md, score) = report_of(tmp.path(), &records);
    assert_eq!(
        score["repeat_skip"]["A"]["spread"]["integral_help"]["sd"],
        0.5
    );
    let doc = parse(&html);
    let table = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("spread"))
        .expect("a spread table");
    let row = |class: &str| -> Vec<String> {
        let tr = all(table, "tr")
            .into_iter()
            .find(|n| n.attribute("class") == Some(class))
            .unwrap();
        all(tr, "td")
            .iter()
            .map(|td| td.text().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(row("sd"), ["sd", "50.0", "50.0", "50.0", "50.0"]);
    assert_eq!(
        row("range"),
        ["range", "0.0–100.0", "0.0–100.0", "0.0–100.0", "0.0–100.0"]
    );
    assert!(
        md.contains("**Across passes**, integral help: A sd 50.0 points, range 0.0–100.0 % over 3 passes (2 cases answered in every pass)."),
        "{md}"
    );
}

/// The text of a node and everything under it, joined.
fn text_of(n: roxmltree::Node) -> String {
    n.descendants()
        .filter(|t| t.is_text())
        .filter_map(|t| t.text())
        .collect()
}
