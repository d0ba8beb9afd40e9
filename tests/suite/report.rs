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
