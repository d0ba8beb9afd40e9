//! The markdown summary, for a pull-request comment: the verdict per pair first, then
//! the figures.

use std::fmt::Write as _;

use super::format::{INTERVALS_NOTE, mean_with_interval, p_text, pct, share_with_interval};
use super::verdict::{CLEAR_P, verdicts};
use crate::score::side_figures::{self, Kind, SideFigure, Value};
use crate::score::{Estimate, Summary};

/// A compact summary for a pull-request comment.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "### typist: {}, {} (pass {}, {} resamples of {})\n",
        crate::score::table::count(s.records, "record"),
        crate::score::table::count(s.repositories, "repository"),
        s.pass,
        s.bootstrap,
        crate::score::table::count(s.units, s.unit)
    );
    let verdicts = verdicts(s);
    for v in &verdicts {
        let _ = writeln!(m, "**{}**{}\n", v.lead, v.rest);
    }
    if !verdicts.is_empty() {
        let _ = writeln!(
            m,
            "(On integral help; clear: a paired p-value below {CLEAR_P}.)\n"
        );
    }
    if let Some(e) = &s.estimand {
        let _ = writeln!(m, "{e}\n");
    }
    let _ = writeln!(
        m,
        "| assistant | cases | integral help % [95%] | exact share % [95%] | help at 0 % | empty % | error % | timeout % |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (n, a) in &s.assistants {
        let pm = |e: &Estimate| share_with_interval(e.value, e.half());
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
    let _ = writeln!(m, "\n{INTERVALS_NOTE}");
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
                    format!(
                        "; only {} {} resampled",
                        s.units,
                        crate::score::table::plural(s.unit)
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    if !s.curve_pairwise.is_empty() {
        let _ = writeln!(m, "\nAlong the thresholds (H(S|t), paired):\n");
        for c in &s.curve_pairwise {
            let _ = writeln!(m, "- {}", crate::score::curve_pairs::curve_pair_sentence(c));
        }
    }
    if let Some(d) = &s.design {
        let deffs: Vec<String> = d
            .assistants
            .iter()
            .map(|(n, a)| {
                format!(
                    "{n} {}",
                    a.integral_help
                        .deff
                        .map_or("n/a".to_string(), |x| format!("{x:.2}"))
                )
            })
            .collect();
        let _ = writeln!(
            m,
            "\n**Design:** {} (design effect of integral help: {}.)",
            d.sentence,
            deffs.join(", ")
        );
    }
    spread(s, &mut m);
    error_codes(s, &mut m);
    ranking(s, &mut m);
    for fig in side_figures::all(s) {
        side(s, &fig, &mut m);
    }
    m
}

/// A line on the spread of integral help across passes and one on distinct answers
/// per repeated request.
fn spread(s: &Summary, m: &mut String) {
    let parts: Vec<String> = (s.repeat_skip.iter())
        .map(|(n, rs)| {
            let x = &rs.spread.integral_help;
            format!(
                "{n} sd {} points, range {}–{} % over {} passes ({} cases answered in every pass)",
                pct(x.sd),
                pct(x.min),
                pct(x.max),
                rs.spread.passes.len(),
                rs.spread.cases
            )
        })
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(
            m,
            "
**Across passes**, integral help: {}.",
            parts.join("; ")
        );
    }
    let distinct: Vec<String> = (s.assistants.iter())
        .filter_map(|(n, a)| {
            let d = &a.nondeterminism;
            d.distinct_mean.map(|mean| {
                format!(
                    "{n} {mean:.2} (max {}, over {} repeated requests)",
                    d.distinct_max, d.repeated
                )
            })
        })
        .collect();
    if !distinct.is_empty() {
        let _ = writeln!(
            m,
            "
**Distinct answers per repeated request**, mean: {}.",
            distinct.join("; ")
        );
    }
}

/// The most frequent codes of the new errors accepted suggestions add, per assistant.
fn error_codes(s: &Summary, m: &mut String) {
    let parts: Vec<String> = (s.checks.iter())
        .filter(|(_, c)| !c.new_errors_by_code.is_empty())
        .map(|(n, c)| {
            let top: Vec<String> = super::extras::top_codes(&c.new_errors_by_code)
                .into_iter()
                .map(|(k, e)| format!("`{k}` {}", e.errors))
                .collect();
            format!("{n}: {}", top.join(", "))
        })
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(m, "\n**New errors by code** (most frequent first):\n");
        for p in parts {
            let _ = writeln!(m, "- {p}");
        }
    }
}

/// Paired differences of `metric` among `rows`, as list items.
fn paired_list(
    s: &Summary,
    rows: &[crate::score::pairwise::Pairwise],
    metric: &str,
    m: &mut String,
) {
    for p in rows.iter().filter(|p| p.metric == metric) {
        let _ = writeln!(
            m,
            "- {} − {}: {} points, p = {} ({} shared cases{})",
            p.a,
            p.b,
            pct(p.diff),
            p_text(p.p_value),
            p.cases,
            if p.few_units {
                format!(
                    "; only {} {} resampled",
                    s.units,
                    crate::score::table::plural(s.unit)
                )
            } else {
                String::new()
            }
        );
    }
}

/// A side figure (blocks §9, keystrokes saved §10, checks §11): its table, then the
/// paired differences of its headline metric.
fn side(s: &Summary, fig: &SideFigure, m: &mut String) {
    let (title, pairs) = match fig.kind {
        Kind::Blocks => (
            "Blocks (the whole suggestion against the expected block):",
            "Block integral help, paired differences:",
        ),
        Kind::Golf => (
            "Keystrokes saved (completion golf: keys to write each line with the assistant):",
            "Keystrokes saved, paired differences:",
        ),
        Kind::Checks => (
            "Checks (the file with the suggestion accepted):",
            "Syntax kept valid, paired differences:",
        ),
        Kind::Tests => (
            "Tests after acceptance (the repository's own tests that notice the line, on the file with the suggestion accepted):",
            "Tests pass, paired differences:",
        ),
    };
    let cols = fig.shown(|c| c.markdown);
    let _ = writeln!(m, "\n{title}\n");
    let headers: Vec<&str> = cols.iter().map(|(_, h, _)| *h).collect();
    let _ = writeln!(m, "| assistant | {} |", headers.join(" | "));
    let _ = writeln!(m, "|---|{}", "---:|".repeat(cols.len()));
    for (n, values) in &fig.rows {
        let cells: Vec<String> = cols.iter().map(|(i, _, _)| cell(values[*i])).collect();
        let _ = writeln!(m, "| {n} | {} |", cells.join(" | "));
    }
    if fig.pairwise.iter().any(|p| p.metric == fig.headline) {
        let _ = writeln!(m, "\n{pairs}\n");
        paired_list(s, fig.pairwise, fig.headline, m);
    }
}

/// A side figure's value as the markdown writes it.
fn cell(v: Value) -> String {
    match v {
        Value::Count(n) => n.to_string(),
        Value::Share(x) => pct(x),
        Value::Interval(x, half) => share_with_interval(x, half),
        Value::Mean(x, _) => format!("{x:.2}"),
        Value::Ratio(a, b) => format!("{a} / {b}"),
        Value::Failures(lines, _) => lines.to_string(),
        Value::Triple(a, b, c) => format!("{a} / {b} / {c}"),
        Value::Missing => "-".into(),
    }
}

/// Completion lists: top-1, top-5 and MRR by typed prefix and token kind (95% intervals).
fn ranking(s: &Summary, m: &mut String) {
    if s.assistants.values().all(|a| a.ranking.is_empty()) {
        return;
    }
    let _ = writeln!(m, "\nCompletion lists:\n");
    let _ = writeln!(
        m,
        "| assistant | sessions of | sessions | top-1 % [95%] | top-5 % [95%] | MRR [95%] |"
    );
    let _ = writeln!(m, "|---|---|---:|---:|---:|---:|");
    for (n, a) in &s.assistants {
        let rows = a
            .ranking
            .iter()
            .map(|(k, r)| (format!("prefix {k}"), r, a.ranking_ci.get(k)))
            .chain(
                a.ranking_by_kind
                    .iter()
                    .map(|(k, r)| (format!("kind {k}"), r, a.ranking_by_kind_ci.get(k))),
            );
        for (g, r, ci) in rows {
            // Without intervals, the half-width is undefined and the value stands alone.
            let half = |f: fn(&crate::score::summary::RankCi) -> f64| ci.map_or(f64::NAN, f);
            let share = |v: f64, h: f64| {
                if h.is_finite() {
                    share_with_interval(v, h)
                } else {
                    pct(v)
                }
            };
            let _ = writeln!(
                m,
                "| {n} | {} | {} | {} | {} | {} |",
                g.replace("prefix all", "all"),
                r.sessions,
                share(r.top1, half(|c| c.top1.half())),
                share(r.top5, half(|c| c.top5.half())),
                mean_with_interval(r.mrr, half(|c| c.mrr.half()), 1.0, 3)
            );
        }
    }
    // The whole lists (issue 45): one line per assistant, recall and mean position with
    // their intervals, and found@k at 1, 5, 10, 20, 50 and the longest place found.
    for (n, a) in &s.assistants {
        let (Some(r), Some(c)) = (a.ranking.get("all"), a.ranking_curves.get("all")) else {
            continue;
        };
        let ci = a.ranking_ci.get("all");
        let half = |f: fn(&crate::score::summary::RankCi) -> f64| ci.map_or(f64::NAN, f);
        let recall = if half(|c| c.recall.half()).is_finite() {
            share_with_interval(r.recall, half(|c| c.recall.half()))
        } else {
            pct(r.recall)
        };
        let at = |k: u32| {
            (c.found_at.iter().rev())
                .find(|s| s.0 <= k)
                .map_or(0.0, |s| s.1)
        };
        let last = c.found_at.last().map_or(0, |s| s.0);
        let ks: Vec<String> = [1, 5, 10, 20, 50]
            .into_iter()
            .filter(|&k| k < last)
            .chain(Some(last).filter(|&k| k > 0))
            .map(|k| format!("@{k} {}", pct(at(k))))
            .collect();
        let _ = writeln!(
            m,
            "\n{n}: recall {recall} %, mean position {} (found@k: {})",
            mean_with_interval(
                r.mean_position,
                half(|c| c.mean_position.half()),
                f64::MAX,
                2
            ),
            ks.join(", ")
        );
    }
    for p in &s.ranking_pairwise {
        let _ = writeln!(
            m,
            "- {} − {} ({}): {}, p = {} ({} shared sessions)",
            p.a,
            p.b,
            p.metric,
            match super::ranking::diff_text(&p.metric, p.diff) {
                d if p.metric == "mean_position" => d,
                d => format!("{d} points"),
            },
            p_text(p.p_value),
            p.cases
        );
    }
}
