//! The markdown summary, for a pull-request comment.

use std::fmt::Write as _;

use super::format::{p_text, pct};
use crate::score::{Estimate, Summary};

/// A compact summary for a pull-request comment.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "### typist: {} records, {} repositories (pass {}, {} resamples of {} {})\n",
        s.records,
        s.repositories,
        s.pass,
        s.bootstrap,
        s.units,
        crate::score::table::plural(s.unit)
    );
    if let Some(e) = &s.estimand {
        let _ = writeln!(m, "{e}\n");
    }
    let _ = writeln!(
        m,
        "| assistant | cases | integral help % | exact share % | help at 0 % | empty % | error % | timeout % |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (n, a) in &s.assistants {
        let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(e.half()));
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
    ranking(s, &mut m);
    blocks(s, &mut m);
    golf(s, &mut m);
    checks(s, &mut m);
    m
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

/// Block cases (methodology §9), beside the first line's integral help.
fn blocks(s: &Summary, m: &mut String) {
    if s.blocks.is_empty() {
        return;
    }
    let _ = writeln!(
        m,
        "\nBlocks (the whole suggestion against the expected block):\n"
    );
    let _ = writeln!(
        m,
        "| assistant | block cases | block integral help % | block exact share % | lines accepted % | chars accepted % | first line integral help % |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---:|---:|---:|");
    let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(e.half()));
    for (n, b) in &s.blocks {
        let _ = writeln!(
            m,
            "| {n} | {} | {} | {} | {} | {} | {} |",
            b.cases,
            pm(&b.integral_help),
            pm(&b.exact_share),
            pm(&b.lines_accepted),
            pct(b.chars_accepted.value),
            s.assistants
                .get(n)
                .map_or("-".into(), |a| pct(a.integral_help.value))
        );
    }
    if s.block_pairwise
        .iter()
        .any(|p| p.metric == "block_integral_help")
    {
        let _ = writeln!(m, "\nBlock integral help, paired differences:\n");
        paired_list(s, &s.block_pairwise, "block_integral_help", m);
    }
}

/// Keystrokes saved (methodology §10).
fn golf(s: &Summary, m: &mut String) {
    if s.golf.is_empty() {
        return;
    }
    let _ = writeln!(
        m,
        "\nKeystrokes saved (completion golf: keys to write each line with the assistant):\n"
    );
    let _ = writeln!(
        m,
        "| assistant | lines | keystrokes saved % | one accept % | requests / line | lines with failures |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---:|---:|");
    let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(e.half()));
    for (n, g) in &s.golf {
        let _ = writeln!(
            m,
            "| {n} | {} | {} | {} | {:.2} | {} |",
            g.lines,
            pm(&g.keystrokes_saved),
            pm(&g.one_accept_share),
            g.requests_per_line.value,
            g.lines_with_failures
        );
    }
    if s.golf_pairwise
        .iter()
        .any(|p| p.metric == "keystrokes_saved")
    {
        let _ = writeln!(m, "\nKeystrokes saved, paired differences:\n");
        paired_list(s, &s.golf_pairwise, "keystrokes_saved", m);
    }
}

/// What accepted suggestions do to the file (methodology §11).
fn checks(s: &Summary, m: &mut String) {
    if s.checks.is_empty() {
        return;
    }
    let _ = writeln!(m, "\nChecks (the file with the suggestion accepted):\n");
    let _ = writeln!(
        m,
        "| assistant | checked | syntax valid % | no new error % |"
    );
    let _ = writeln!(m, "|---|---:|---:|---:|");
    let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(e.half()));
    for (n, c) in &s.checks {
        let _ = writeln!(
            m,
            "| {n} | {} | {} | {} |",
            c.checked,
            pm(&c.syntax_valid),
            c.no_new_error.as_ref().map_or("-".into(), pm)
        );
    }
    if s.checks_pairwise.iter().any(|p| p.metric == "syntax_valid") {
        let _ = writeln!(m, "\nSyntax kept valid, paired differences:\n");
        paired_list(s, &s.checks_pairwise, "syntax_valid", m);
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
        "| assistant | sessions of | sessions | top-1 % | top-5 % | MRR |"
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
            let half = |f: fn(&crate::score::summary::RankCi) -> f64| ci.map_or(0.0, f);
            let _ = writeln!(
                m,
                "| {n} | {} | {} | {} ± {} | {} ± {} | {:.3} ± {:.3} |",
                g.replace("prefix all", "all"),
                r.sessions,
                pct(r.top1),
                pct(half(|c| c.top1.half())),
                pct(r.top5),
                pct(half(|c| c.top5.half())),
                r.mrr,
                half(|c| c.mrr.half())
            );
        }
    }
    for p in &s.ranking_pairwise {
        let _ = writeln!(
            m,
            "- {} − {} ({}): {} points, p = {} ({} shared sessions)",
            p.a,
            p.b,
            p.metric,
            pct(p.diff),
            p_text(p.p_value),
            p.cases
        );
    }
}
