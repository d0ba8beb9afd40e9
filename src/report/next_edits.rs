//! The report of a next-edit run (methodology §13): its summary table (the same as
//! `typist score` prints), then, per assistant, a few moments where it proposed an edit
//! shown as diffs of the buffer's window: the person's true next edit beside the
//! proposed one. Self-contained HTML (no script, no network) and a markdown summary.

use crate::score::edit_records::EditRecord;
use crate::score::next_edit::{NextEditSummary, table};

use super::escape::esc;

/// Moments shown per assistant.
const SHOWN: usize = 6;
/// Lines of context around each change in the diffs.
const CONTEXT: usize = 2;

/// A unified diff of `a` → `b` with [`CONTEXT`] lines around each change.
fn diff(a: &str, b: &str) -> String {
    similar::TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(CONTEXT)
        .to_string()
}

/// A diff as HTML: added lines green, removed red, hunk headers grey.
fn diff_html(d: &str) -> String {
    if d.is_empty() {
        return "<pre class=\"diff\">(no change)</pre>".into();
    }
    let mut out = String::from("<pre class=\"diff\">");
    for line in d.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') => "add",
            Some(b'-') => "del",
            Some(b'@') => "hunk",
            _ => "ctx",
        };
        out.push_str(&format!("<span class=\"{class}\">{}</span>\n", esc(line)));
    }
    out.push_str("</pre>");
    out
}

/// The moments shown for `assistant`: those where it proposed an edit that applies,
/// not silence, by case id (the same on every run).
fn shown<'a>(records: &'a [EditRecord], assistant: &str) -> Vec<&'a EditRecord> {
    let mut v: Vec<&EditRecord> = records
        .iter()
        .filter(|r| {
            r.assistant == assistant
                && r.pass == 1
                && !r.silence
                && r.window.as_ref().is_some_and(|w| w.predicted.is_some())
        })
        .collect();
    v.sort_by(|a, b| a.case.cmp(&b.case));
    v.truncate(SHOWN);
    v
}

/// The HTML report and its markdown summary.
pub fn build(records: &[EditRecord], summary: &NextEditSummary) -> (String, String) {
    let text = table(summary);
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>typist: next edits</title><style>\
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}\
.diff .add{color:#116329;background:#e6ffec}.diff .del{color:#82071e;background:#ffebe9}\
.diff .hunk{color:#666}.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}\
h3{margin-top:1.6em}</style></head><body>\n<h1>Next edits</h1>\n",
    );
    html.push_str(
        "<p>Figures as in <code>docs/metrics.md#next-edits</code> (methodology §13): ± is a 95% interval, bootstrap by repository.</p>\n",
    );
    html.push_str(&format!("<pre>{}</pre>\n", esc(&text)));
    let mut md = format!("# Next edits\n\n{text}\n");
    html.push_str("<h2>Predicted against true edits</h2>\n");
    md.push_str("\n## Predicted against true edits\n");
    for assistant in summary.assistants.keys() {
        let moments = shown(records, assistant);
        html.push_str(&format!("<h3>{}</h3>\n", esc(assistant)));
        md.push_str(&format!("\n### {assistant}\n"));
        if moments.is_empty() {
            html.push_str("<p>No edit proposed that applies.</p>\n");
            md.push_str("\nNo edit proposed that applies.\n");
            continue;
        }
        for r in moments {
            let Some(w) = &r.window else { continue };
            let predicted = w.predicted.as_deref().unwrap_or_default();
            let (truth, pred) = (diff(&w.before, &w.truth), diff(&w.before, predicted));
            let exact = predicted == w.truth;
            let head = format!(
                "{} — {} line {}, cursor {}:{}{}",
                r.case,
                r.file,
                w.line + 1,
                r.cursor[0] + 1,
                r.cursor[1] + 1,
                if exact { " (exact)" } else { "" }
            );
            html.push_str(&format!(
                "<h4>{}</h4>\n<div class=\"pair\"><div><b>the person's next edit</b>{}</div><div><b>proposed</b>{}</div></div>\n",
                esc(&head),
                diff_html(&truth),
                diff_html(&pred)
            ));
            md.push_str(&format!(
                "\n#### {head}\n\nThe person's next edit:\n\n```diff\n{truth}```\n\nProposed:\n\n```diff\n{pred}```\n"
            ));
        }
    }
    html.push_str("</body></html>\n");
    (html, md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_coloured_by_line() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n");
        assert!(d.contains("-b\n") && d.contains("+B\n"), "{d}");
        let h = diff_html(&d);
        assert!(h.contains("<span class=\"del\">-b</span>"), "{h}");
        assert!(h.contains("<span class=\"add\">+B</span>"), "{h}");
        assert_eq!(diff_html(""), "<pre class=\"diff\">(no change)</pre>");
    }
}
