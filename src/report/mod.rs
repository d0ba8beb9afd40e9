//! `typist report`: one self-contained HTML file (inline SVG and CSS, readable without
//! JavaScript; a few lines of script sort the tables), a markdown summary for a pull
//! request, and the pairs as CSV. Reads records (and the run's manifest beside them);
//! every figure comes from the scoring core, so the report says what `typist score`
//! says. Knows nothing of LSP or replay.

pub mod charts;
pub mod pairs;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use serde_json::Value;

use crate::score::{Estimate, Options, Summary, read_records_and_pairs, summarize};
use pairs::Pair;

#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub bootstrap: usize,
    pub seed: u64,
    pub pass: u32,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            bootstrap: 1000,
            seed: 0,
            pass: 1,
        }
    }
}

pub struct Report {
    pub html: String,
    pub markdown: String,
    pub pairs: Vec<Pair>,
    pub summary: Summary,
}

/// Escapes text for HTML and XML (the report is also well-formed XML).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// A share as a percentage with one decimal ("–" when undefined).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", 100.0 * x)
    } else {
        "–".into()
    }
}

fn num_attr(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

pub fn build(records: &[PathBuf], opts: &ReportOptions) -> Result<Report> {
    // Read once: the scoring table and the pairs come from one parse.
    let (table, pairs) = read_records_and_pairs(records, false, 0)?;
    let summary = summarize(
        &table,
        &Options {
            bootstrap: opts.bootstrap,
            seed: opts.seed,
            pass: opts.pass,
            curve_bands: true,
        },
    );
    let manifest: Option<Value> = records
        .first()
        .and_then(|p| p.parent())
        .map(|d| d.join("manifest.json"))
        .and_then(|m| std::fs::read_to_string(m).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    let html = html(&summary, &pairs, manifest.as_ref(), records);
    let markdown = markdown(&summary);
    Ok(Report {
        html,
        markdown,
        pairs,
        summary,
    })
}

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:0 20px 60px;color:#1a1a1a;line-height:1.45}
h1{margin:28px 0 4px}h2{margin-top:40px;border-bottom:1px solid #ddd;padding-bottom:4px}
nav a{margin-right:14px}table{border-collapse:collapse;margin:10px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f4f4f4;cursor:pointer}td.name,th.name{text-align:left}
.legend span{display:inline-block;margin-right:18px}.swatch{display:inline-block;width:14px;height:4px;margin-right:6px;vertical-align:middle}
figure{margin:12px 0}figcaption{color:#555;font-size:0.9em}
.charts{display:flex;flex-wrap:wrap;gap:10px}
pre{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:0.85em}
code.line{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
table.examples td.name{max-width:760px}
.del{background:#fdd;text-decoration:line-through}.ins{background:#cfc}
.pv td{color:#000}.small{color:#555;font-size:0.9em}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
"#;

const SORT_JS: &str = r#"
document.querySelectorAll('table.sortable th').forEach(function(th, i){
  th.addEventListener('click', function(){
    var table = th.closest('table'), body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.asc !== 'true'; th.dataset.asc = asc;
    rows.sort(function(a, b){
      var x = a.cells[i].dataset.value || a.cells[i].textContent, y = b.cells[i].dataset.value || b.cells[i].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return asc ? c : -c;
    });
    rows.forEach(function(r){ body.appendChild(r); });
  });
});
"#;

fn html(s: &Summary, pairs: &[Pair], manifest: Option<&Value>, records: &[PathBuf]) -> String {
    let names: Vec<&String> = s.assistants.keys().collect();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>typist report</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(
        h,
        "<h1>typist report</h1><p class=\"small\">{} records from {} · pass {} · {} bootstrap resamples of {} {}s (seed {}) · typist {}</p>",
        s.records,
        esc(&records
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")),
        s.pass,
        s.bootstrap,
        s.units,
        s.unit,
        s.seed,
        env!("CARGO_PKG_VERSION")
    );
    h.push_str("<nav><a href=\"#summary\">Summary</a><a href=\"#curves\">H(t) curves</a><a href=\"#intervals\">Intervals</a><a href=\"#rates\">Rates</a><a href=\"#pvalues\">p-values</a><a href=\"#breakdowns\">Breakdowns</a><a href=\"#examples\">Examples</a><a href=\"#run\">Run</a></nav>");

    // Summary table.
    h.push_str("<section id=\"summary\"><h2>Summary</h2><p>Integral AI code help ℋ = Σ len·c³ / Σ len (the headline), the share of perfectly suggested code H(S|1), and the plain help H(S|0), each with the study's ±2·sd interval from the bootstrap. Errors and timeouts are not empty suggestions: they are left out of the help figures and counted apart; the empty rate is over answered cases. With a typed prefix of k characters, a case weighs len − k and c_help = max(0, len − k − ld2) / (len − k): the user's own keystrokes are never the assistant's help.</p>");
    let _ = write!(
        h,
        "<p id=\"unit\" data-unit=\"{}\" data-units=\"{}\">Resampling unit: <b>{}</b> ({} {}s{}).</p>",
        s.unit,
        s.units,
        s.unit,
        s.units,
        s.unit,
        if s.unit == "file" {
            format!(
                "; fewer than {} repositories ({}), so files are resampled and p-values are to be read with care",
                crate::score::summary::MIN_UNITS,
                s.repositories
            )
        } else {
            String::new()
        }
    );
    h.push_str("<table id=\"headline\" class=\"sortable\"><thead><tr><th class=\"name\">assistant</th><th>cases</th><th>integral help %</th><th>±2sd</th><th>exact share %</th><th>±2sd</th><th>help at t=0 %</th><th>integral, non-empty %</th><th>empty %</th><th>error %</th><th>timeout %</th><th>p50 ms</th><th>p95 ms</th></tr></thead><tbody>");
    for (n, a) in &s.assistants {
        let cell = |metric: &str, v: f64| {
            format!(
                "<td data-metric=\"{metric}\" data-value=\"{}\">{}</td>",
                num_attr(v),
                pct(v)
            )
        };
        let (p50, p95) = a
            .latency_ms
            .as_ref()
            .map(|l| (format!("{:.1}", l.p50), format!("{:.1}", l.p95)))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<tr data-assistant=\"{}\"><td class=\"name\">{}</td><td data-metric=\"cases\" data-value=\"{}\">{}</td>{}<td>{}</td>{}<td>{}</td>{}{}{}{}{}<td>{p50}</td><td>{p95}</td></tr>",
            esc(n),
            esc(n),
            a.cases,
            a.cases,
            cell("integral_help", a.integral_help.value),
            pct(2.0 * a.integral_help.sd),
            cell("exact_share", a.exact_share.value),
            pct(2.0 * a.exact_share.sd),
            cell("help_at_0", a.help_at_0.value),
            cell("integral_help_nonempty", a.integral_help_nonempty.value),
            cell("empty_rate", a.empty_rate),
            cell("error_rate", a.error_rate),
            cell("timeout_rate", a.timeout_rate),
        );
    }
    h.push_str("</tbody></table></section>");

    // Curves.
    let legend = {
        let mut l = String::from("<p class=\"legend\">");
        for (i, n) in names.iter().enumerate() {
            let _ = write!(
                l,
                "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
                charts::colour(i),
                esc(n)
            );
        }
        l.push_str("</p>");
        l
    };
    let curve_data = |nonempty: bool| -> Vec<CurveData> {
        s.assistants
            .values()
            .map(|a| {
                let (c, b) = if nonempty {
                    (&a.curve_nonempty, &a.curve_nonempty_band)
                } else {
                    (&a.curve, &a.curve_band)
                };
                (
                    c.iter().map(|p| (p.t, p.help)).collect(),
                    b.iter().map(|p| (p.t, p.lo, p.hi)).collect(),
                )
            })
            .collect()
    };
    h.push_str("<section id=\"curves\"><h2>AI code help against the acceptance threshold</h2><p>H(S|t): the share of the expected code typed by suggestions a developer who accepts only suggestions with c_help ≥ t would take. Shaded: the 95% percentile band of the repository bootstrap.</p>");
    h.push_str(&legend);
    for (id, nonempty, caption) in [
        (
            "curve-help",
            false,
            "H(S|t) with empty suggestions counted as no help (the true help).",
        ),
        (
            "curve-help-nonempty",
            true,
            "H(S|t) over non-empty suggestions only (quality when the assistant speaks).",
        ),
    ] {
        let data = curve_data(nonempty);
        let curves: Vec<charts::Curve> = data
            .iter()
            .map(|(p, b)| charts::Curve { points: p, band: b })
            .collect();
        let _ = write!(
            h,
            "<figure id=\"{id}\" data-assistants=\"{}\">{}<figcaption>{caption}</figcaption></figure>",
            esc(&names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(",")),
            charts::curves_svg(&curves, "AI code help H(S|t)")
        );
    }
    h.push_str("</section>");

    // Interval charts.
    h.push_str("<section id=\"intervals\"><h2>Headline figures with intervals</h2><p>Dots: the estimate; whiskers: ±2·sd from the repository bootstrap.</p><div class=\"charts\">");
    for (title, get) in [
        (
            "Integral AI code help",
            (|a: &crate::score::summary::AssistantScore| a.integral_help)
                as fn(&crate::score::summary::AssistantScore) -> Estimate,
        ),
        ("Exact-match share", |a| a.exact_share),
        ("Help at t = 0", |a| a.help_at_0),
    ] {
        let rows: Vec<(String, f64, f64, f64)> = s
            .assistants
            .iter()
            .map(|(n, a)| {
                let e = get(a);
                (n.clone(), e.value, e.ci95[0].max(0.0), e.ci95[1])
            })
            .collect();
        let _ = write!(
            h,
            "<figure>{}</figure>",
            charts::intervals_svg(title, &rows)
        );
    }
    h.push_str("</div></section>");

    // Rates per pass and repeat-skip.
    h.push_str("<section id=\"rates\"><h2>Empty, error and timeout rates</h2><table class=\"sortable\"><thead><tr><th class=\"name\">assistant</th><th>pass</th><th>records</th><th>empty % (of answered)</th><th>errors</th><th>timeouts</th></tr></thead><tbody>");
    for (n, a) in &s.assistants {
        match s.repeat_skip.get(n) {
            Some(rs) => {
                for p in &rs.passes {
                    let _ = write!(
                        h,
                        "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        esc(n),
                        p.pass,
                        p.records,
                        pct(p.empty_rate),
                        p.errors,
                        p.timeouts
                    );
                }
            }
            None => {
                let _ = write!(
                    h,
                    "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(n),
                    s.pass,
                    a.records,
                    pct(a.empty_rate),
                    a.errors,
                    a.timeouts
                );
            }
        }
    }
    h.push_str("</tbody></table>");
    h.push_str("<h3>Failures and determinism</h3><p>The most common error of each assistant, and how many identical requests (same request hash, over every pass) it answered differently.</p><table id=\"failures\"><thead><tr><th class=\"name\">assistant</th><th>errors</th><th>timeouts</th><th class=\"name\">most common error</th><th>requests asked again</th><th>answered differently %</th></tr></thead><tbody>");
    for (n, a) in &s.assistants {
        let nd = &a.nondeterminism;
        let _ = write!(
            h,
            "<tr data-assistant=\"{}\"><td class=\"name\">{}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td><td>{}</td><td data-metric=\"nondeterminism\">{}</td></tr>",
            esc(n),
            esc(n),
            a.errors,
            a.timeouts,
            esc(a.top_error.as_deref().unwrap_or("")),
            nd.repeated,
            nd.share.map_or("n/a".to_string(), pct)
        );
    }
    h.push_str("</tbody></table>");
    if !s.repeat_skip.is_empty() {
        h.push_str("<h3>Repeat-skip</h3><p>Does an assistant skip the same lines again? (Only true empty answers are skips; errors and timeouts are not.)</p><table><thead><tr><th class=\"name\">assistant</th><th>cases answered in both passes</th><th>pass-1 empties empty again %</th><th>pass-1 answers now empty %</th></tr></thead><tbody>");
        for (n, rs) in &s.repeat_skip {
            let _ = write!(
                h,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(n),
                rs.paired_cases,
                pct(rs.empty_again),
                pct(rs.became_empty)
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");

    // p-value matrices.
    h.push_str("<section id=\"pvalues\"><h2>Paired comparisons</h2><p>Two-sided p-values of the paired difference (row − column) on the same bootstrap resamples, over cases both assistants answered. Darker cells: smaller p. n/a: the difference has no spread in the resamples (one unit, or the same figure in every resample), so no p-value can be given. *: fewer than 10 resampling units; read with care.</p>");
    for (metric, title) in [
        ("integral_help", "Integral help"),
        ("exact_share", "Exact-match share"),
    ] {
        let _ = write!(
            h,
            "<h3>{title}</h3><table class=\"pv\" data-metric=\"{metric}\"><thead><tr><th class=\"name\"></th>"
        );
        for n in &names {
            let _ = write!(h, "<th>{}</th>", esc(n));
        }
        h.push_str("</tr></thead><tbody>");
        for a in &names {
            let _ = write!(h, "<tr><th class=\"name\">{}</th>", esc(a));
            for b in &names {
                if a == b {
                    h.push_str("<td>–</td>");
                    continue;
                }
                let found = s.pairwise.iter().find(|p| {
                    p.metric == metric && ((&&p.a == a && &&p.b == b) || (&&p.a == b && &&p.b == a))
                });
                match found {
                    Some(p) => {
                        let diff = if &&p.a == a { p.diff } else { -p.diff };
                        let shade = match p.p_value {
                            Some(v) if v.is_finite() => (1.0 - v.clamp(0.0, 1.0)).powi(2),
                            _ => 0.0,
                        };
                        let (bg, fg) = blue(shade);
                        let _ = write!(
                            h,
                            "<td style=\"background:{bg};color:{fg}\" data-a=\"{}\" data-b=\"{}\" data-value=\"{}\" data-few-units=\"{}\" title=\"difference {} points over {} shared cases\">{}{}</td>",
                            esc(a),
                            esc(b),
                            p.p_value.map_or("n/a".to_string(), num_attr),
                            p.few_units,
                            pct(diff),
                            p.cases,
                            p_text(p.p_value),
                            if p.few_units { "*" } else { "" }
                        );
                    }
                    None => h.push_str("<td>n/a</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");

    // Breakdowns.
    h.push_str("<section id=\"breakdowns\"><h2>By language and by repository</h2><p class=\"small\">Click a column to sort.</p>");
    for (title, by_repo) in [("By language", false), ("By repository", true)] {
        let _ = write!(
            h,
            "<h3>{title}</h3><table class=\"sortable\"><thead><tr><th class=\"name\">assistant</th><th class=\"name\">{}</th><th>cases</th><th>integral help %</th><th>exact share %</th><th>help at 0 %</th><th>empty %</th></tr></thead><tbody>",
            if by_repo { "repository" } else { "language" }
        );
        for (n, a) in &s.assistants {
            let rows = if by_repo { &a.by_repo } else { &a.by_language };
            for (k, b) in rows {
                let _ = write!(
                    h,
                    "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td data-value=\"{}\">{}</td><td data-value=\"{}\">{}</td><td data-value=\"{}\">{}</td><td data-value=\"{}\">{}</td></tr>",
                    esc(n),
                    esc(k),
                    b.cases,
                    num_attr(b.integral_help),
                    pct(b.integral_help),
                    num_attr(b.exact_share),
                    pct(b.exact_share),
                    num_attr(b.help_at_0),
                    pct(b.help_at_0),
                    num_attr(b.empty_rate),
                    pct(b.empty_rate)
                );
            }
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");

    // Completion ranking.
    if s.assistants.values().any(|a| !a.ranking.is_empty()) {
        h.push_str("<section id=\"ranking\"><h2>Completion lists</h2><table class=\"sortable\"><thead><tr><th class=\"name\">assistant</th><th class=\"name\">typed prefix</th><th>sessions</th><th>top-1 %</th><th>top-5 %</th><th>recall %</th><th>mean position</th><th>MRR</th></tr></thead><tbody>");
        for (n, a) in &s.assistants {
            for (k, r) in &a.ranking {
                let _ = write!(
                    h,
                    "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.3}</td></tr>",
                    esc(n),
                    esc(k),
                    r.sessions,
                    pct(r.top1),
                    pct(r.top5),
                    pct(r.recall),
                    r.mean_position,
                    r.mrr
                );
            }
        }
        h.push_str("</tbody></table></section>");
    }

    examples(&mut h, &names, pairs, s.pass);
    run_section(&mut h, manifest, s);
    // CDATA inside comments: valid HTML, and the file stays well-formed XML.
    let _ = write!(
        h,
        "<script>//<![CDATA[\n{SORT_JS}\n//]]></script></body></html>\n"
    );
    h
}

/// One assistant's curve points and band points.
type CurveData = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

/// A light-to-dark blue for 0..1 and a readable text colour on it.
fn blue(x: f64) -> (String, &'static str) {
    let lerp = |a: f64, b: f64| (a + (b - a) * x).round() as u8;
    let (r, g, b) = (lerp(247.0, 8.0), lerp(251.0, 48.0), lerp(255.0, 107.0));
    (
        format!("rgb({r},{g},{b})"),
        if x > 0.55 { "#fff" } else { "#000" },
    )
}

/// The expected line with what the prediction lacks struck out, and the predicted line
/// with what it adds highlighted (a character diff).
fn diff_lines(expected: &str, predicted: &str) -> (String, String) {
    let diff = similar::TextDiff::from_chars(expected, predicted);
    let (mut e, mut p) = (String::new(), String::new());
    for op in diff.iter_all_changes() {
        let v = esc(op.value());
        match op.tag() {
            similar::ChangeTag::Equal => {
                e.push_str(&v);
                p.push_str(&v);
            }
            similar::ChangeTag::Delete => {
                let _ = write!(e, "<span class=\"del\">{v}</span>");
            }
            similar::ChangeTag::Insert => {
                let _ = write!(p, "<span class=\"ins\">{v}</span>");
            }
        }
    }
    (e, p)
}

fn pair_row(p: &Pair) -> String {
    let pred = p.predicted.as_deref().unwrap_or("");
    let (e, pr) = diff_lines(&p.expected, pred);
    format!(
        "<tr><td class=\"name\">{}:{}</td><td>{}</td><td class=\"name\"><code class=\"line\">{e}</code><br/><code class=\"line\">{pr}</code></td></tr>",
        esc(&format!("{}/{}", p.repo, p.file)),
        p.line,
        p.c_help
            .map(|c| format!("{c:.2}"))
            .unwrap_or_else(|| "–".into()),
    )
}

fn examples(h: &mut String, names: &[&String], pairs: &[Pair], pass: u32) {
    h.push_str("<section id=\"examples\"><h2>Examples</h2><p>Per assistant, the best, worst and typical non-empty suggestions (by c_help, longest lines first among ties). First line: expected, with what the suggestion lacks struck out; second: the suggestion, with what it adds highlighted.</p>");
    let mut by_assistant: BTreeMap<&str, Vec<&Pair>> = BTreeMap::new();
    for p in pairs
        .iter()
        .filter(|p| p.pass == pass && p.outcome == "suggestion")
    {
        by_assistant.entry(&p.assistant).or_default().push(p);
    }
    for n in names {
        let Some(list) = by_assistant.get(n.as_str()) else {
            continue;
        };
        let mut sorted = list.clone();
        sorted.sort_by(|a, b| {
            b.c_help
                .unwrap_or(0.0)
                .total_cmp(&a.c_help.unwrap_or(0.0))
                .then(b.expected.len().cmp(&a.expected.len()))
                .then(a.case.cmp(&b.case))
        });
        let k = 5.min(sorted.len());
        let mid = sorted.len() / 2;
        let typical =
            &sorted[mid.saturating_sub(k / 2)..(mid.saturating_sub(k / 2) + k).min(sorted.len())];
        let worst: Vec<&Pair> = sorted.iter().rev().take(k).copied().collect();
        let _ = write!(
            h,
            "<details open=\"open\"><summary>{} ({} suggestions)</summary>",
            esc(n),
            sorted.len()
        );
        for (title, rows) in [
            ("best", &sorted[..k]),
            ("typical", typical),
            ("worst", &worst[..]),
        ] {
            let _ = write!(
                h,
                "<h4>{title}</h4><table class=\"examples\"><thead><tr><th class=\"name\">where</th><th>c_help</th><th class=\"name\">expected / suggested</th></tr></thead><tbody>"
            );
            for p in rows {
                h.push_str(&pair_row(p));
            }
            h.push_str("</tbody></table>");
        }
        h.push_str("</details>");
    }
    // The same lines side by side across assistants.
    if names.len() > 1 {
        let mut by_case: BTreeMap<&str, Vec<&Pair>> = BTreeMap::new();
        for p in pairs
            .iter()
            .filter(|p| p.pass == pass && p.c_help.is_some())
        {
            by_case.entry(&p.case).or_default().push(p);
        }
        let shared: Vec<(&&str, &Vec<&Pair>)> = by_case
            .iter()
            .filter(|(_, v)| v.len() == names.len())
            .collect();
        let step = (shared.len() / 10).max(1);
        h.push_str("<h3 id=\"side-by-side\">The same lines across assistants</h3><table><thead><tr><th class=\"name\">where / expected</th>");
        for n in names {
            let _ = write!(h, "<th class=\"name\">{}</th>", esc(n));
        }
        h.push_str("</tr></thead><tbody>");
        for (_, v) in shared.iter().step_by(step).take(10) {
            let first = v[0];
            let _ = write!(
                h,
                "<tr><td class=\"name\">{}:{}<br/><code class=\"line\">{}</code></td>",
                esc(&format!("{}/{}", first.repo, first.file)),
                first.line,
                esc(&first.expected)
            );
            for n in names {
                match v.iter().find(|p| &&p.assistant == n) {
                    Some(p) => {
                        let (_, pr) = diff_lines(&p.expected, p.predicted.as_deref().unwrap_or(""));
                        let _ = write!(
                            h,
                            "<td class=\"name\"><code class=\"line\">{pr}</code><br/><span class=\"small\">{} · c_help {}</span></td>",
                            esc(&p.outcome),
                            p.c_help.map(|c| format!("{c:.2}")).unwrap_or_default()
                        );
                    }
                    None => h.push_str("<td></td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");
}

fn run_section(h: &mut String, manifest: Option<&Value>, s: &Summary) {
    h.push_str("<section id=\"run\"><h2>The run</h2>");
    let Some(m) = manifest else {
        h.push_str("<p>No manifest.json beside the records: the run's conditions are unknown.</p></section>");
        return;
    };
    let txt = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    };
    let _ = write!(
        h,
        "<table><tbody><tr><th class=\"name\">status</th><td class=\"name\">{}</td></tr><tr><th class=\"name\">dataset</th><td class=\"name\">{} ({} repositories, {} files, {} skipped)</td></tr><tr><th class=\"name\">plan</th><td class=\"name\">{} cases, {}<br/><span class=\"small\">{}</span></td></tr><tr><th class=\"name\">started / ended</th><td class=\"name\">{} / {}</td></tr><tr><th class=\"name\">typist</th><td class=\"name\">{}</td></tr>",
        esc(&txt(&m["status"])),
        esc(&txt(&m["dataset"]["path"])),
        esc(&txt(&m["dataset"]["repositories"])),
        esc(&txt(&m["dataset"]["files"])),
        m["dataset"]["skipped"].as_array().map_or(0, |a| a.len()),
        esc(&txt(&m["plan"]["cases"])),
        esc(&txt(&m["plan"]["hash"])),
        esc(&txt(&m["plan"]["source"])),
        esc(&txt(&m["started_at"])),
        esc(&txt(&m["ended_at"])),
        esc(&txt(&m["typist_version"])),
    );
    let hours = match (
        m["started_at"]
            .as_str()
            .and_then(|t| humantime::parse_rfc3339(t).ok()),
        m["ended_at"]
            .as_str()
            .and_then(|t| humantime::parse_rfc3339(t).ok()),
    ) {
        (Some(a), Some(b)) => b
            .duration_since(a)
            .ok()
            .map(|d| d.as_secs_f64().max(1.0) / 3600.0),
        _ => None,
    };
    if let Some(hr) = hours {
        let _ = write!(
            h,
            "<tr><th class=\"name\">throughput</th><td class=\"name\">{:.0} records per hour (all assistants; wall clock to the second)</td></tr>",
            s.records as f64 / hr
        );
    }
    h.push_str("</tbody></table><h3>Assistants</h3><table><thead><tr><th class=\"name\">profile</th><th class=\"name\">server</th><th class=\"name\">dialect</th><th class=\"name\">command</th><th>latency p50 / p95 ms</th></tr></thead><tbody>");
    for a in m["assistants"].as_array().into_iter().flatten() {
        let name = txt(&a["name"]);
        let lat = s
            .assistants
            .get(&name)
            .and_then(|x| x.latency_ms.as_ref())
            .map(|l| format!("{:.1} / {:.1}", l.p50, l.p95))
            .unwrap_or_else(|| "–".into());
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{} {}</td><td class=\"name\">{}</td><td class=\"name\"><code>{} {}</code></td><td>{lat}</td></tr>",
            esc(&name),
            esc(a["server"]["name"].as_str().unwrap_or("")),
            esc(a["server"]["version"].as_str().unwrap_or("")),
            esc(&txt(&a["profile"]["dialect"])),
            esc(&txt(&a["profile"]["command"])),
            esc(&a["profile"]["args"]
                .as_array()
                .map(|v| v.iter().map(txt).collect::<Vec<_>>().join(" "))
                .unwrap_or_default()),
        );
    }
    let _ = write!(
        h,
        "</tbody></table><h3>Editor conditions</h3><pre>{}</pre></section>",
        esc(&serde_json::to_string_pretty(&m["conditions"]).unwrap_or_default())
    );
}

/// A p-value to three places, or "n/a" when there is none.
pub fn p_text(p: Option<f64>) -> String {
    p.map_or("n/a".to_string(), |v| format!("{v:.3}"))
}

/// A compact summary for a pull-request comment.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "### typist: {} records, {} repositories (pass {}, {} resamples of {} {}s)\n",
        s.records, s.repositories, s.pass, s.bootstrap, s.units, s.unit
    );
    let _ = writeln!(
        m,
        "| assistant | cases | integral help % | exact share % | help at 0 % | empty % | error % | timeout % |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (n, a) in &s.assistants {
        let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(2.0 * e.sd));
        let _ = writeln!(
            m,
            "| {n} | {} | {} | {} | {} | {} | {} | {} |",
            a.cases,
            pm(&a.integral_help),
            pm(&a.exact_share),
            pct(a.help_at_0.value),
            pct(a.empty_rate),
            pct(a.error_rate),
            pct(a.timeout_rate)
        );
    }
    let sig: Vec<_> = s
        .pairwise
        .iter()
        .filter(|p| p.metric == "integral_help")
        .collect();
    if !sig.is_empty() {
        let _ = writeln!(m, "\nIntegral help, paired differences:\n");
        for p in sig {
            let _ = writeln!(
                m,
                "- {} − {}: {} points, p = {} ({} shared cases{})",
                p.a,
                p.b,
                pct(p.diff),
                p_text(p.p_value),
                p.cases,
                if p.few_units {
                    format!("; only {} {}s resampled", s.units, s.unit)
                } else {
                    String::new()
                }
            );
        }
    }
    m
}
