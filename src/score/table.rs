//! The score as a text table for people (`typist score`, `typist run`): the headline
//! figures per assistant, failures and determinism notes, and the paired comparisons.

use super::bootstrap::Estimate;
use super::summary::Summary;

/// A share as a percentage with one decimal ("-" when undefined).
fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * x)
    }
}

/// The summary as text: a line on the data, the headline table, notes per assistant,
/// and the pairwise table when there are pairs.
pub fn score_table(s: &Summary) -> String {
    let mut out = format!(
        "{} records, {} repositories, pass {}, {} resamples of {} {}s (seed {}){}\n\n{}",
        s.records,
        s.repositories,
        s.pass,
        s.bootstrap,
        s.units,
        s.unit,
        s.seed,
        if s.unit == "file" {
            " — fewer than 10 repositories: files are resampled"
        } else {
            ""
        },
        headline(s)
    );
    notes(s, &mut out);
    if !s.pairwise.is_empty() {
        pairwise(s, &mut out);
    }
    out
}

fn headline(s: &Summary) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "assistant",
        "cases",
        "empty %",
        "error %",
        "timeout %",
        "integral help % (±2sd)",
        "exact share % (±2sd)",
        "help@0 %",
        "integral non-empty %",
        "p50 ms",
        "p95 ms",
    ]);
    for (name, a) in &s.assistants {
        let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(2.0 * e.sd));
        let (p50, p95) = a
            .latency_ms
            .as_ref()
            .map(|l| (format!("{:.1}", l.p50), format!("{:.1}", l.p95)))
            .unwrap_or_default();
        t.add_row([
            name.clone(),
            a.cases.to_string(),
            pct(a.empty_rate),
            pct(a.error_rate),
            pct(a.timeout_rate),
            pm(&a.integral_help),
            pm(&a.exact_share),
            pct(a.help_at_0.value),
            pct(a.integral_help_nonempty.value),
            p50,
            p95,
        ]);
    }
    t
}

/// Per assistant: what failed, and identical requests answered differently.
fn notes(s: &Summary, out: &mut String) {
    for (name, a) in &s.assistants {
        if a.errors + a.timeouts > 0 {
            out.push_str(&format!(
                "\n{name}: {} error(s), {} timeout(s){}",
                a.errors,
                a.timeouts,
                a.top_error
                    .as_deref()
                    .map(|e| format!("; most common: {e}"))
                    .unwrap_or_default()
            ));
        }
        if a.cases == 0 {
            out.push_str(&format!("\n{name}: answered no case"));
        }
        if let Some(share) = a.nondeterminism.share
            && a.nondeterminism.differing > 0
        {
            out.push_str(&format!(
                "\n{name}: {} of {} repeated requests answered differently ({})",
                a.nondeterminism.differing,
                a.nondeterminism.repeated,
                pct(share)
            ));
        }
        for (reason, n) in &a.skipped {
            out.push_str(&format!("\n{name}: {n} record(s) not scored: {reason}"));
        }
    }
}

fn pairwise(s: &Summary, out: &mut String) {
    let mut p = comfy_table::Table::new();
    p.load_style(comfy_table::presets::ASCII_MARKDOWN);
    p.set_header([
        "a",
        "b",
        "metric",
        "shared cases",
        "diff % (a-b)",
        "sd %",
        "p-value",
    ]);
    for r in &s.pairwise {
        p.add_row([
            r.a.clone(),
            r.b.clone(),
            r.metric.clone(),
            r.cases.to_string(),
            pct(r.diff),
            pct(r.sd),
            match r.p_value {
                Some(p) => format!("{p:.4}{}", if r.few_units { "*" } else { "" }),
                None => "n/a".to_string(),
            },
        ]);
    }
    out.push_str(&format!("\n\n{p}"));
    if s.pairwise.iter().any(|r| r.few_units) {
        out.push_str(&format!(
            "\n* {} {}s resampled (fewer than 10): read with care",
            s.units, s.unit
        ));
    }
    if s.pairwise.iter().any(|r| r.p_value.is_none()) {
        out.push_str("\nn/a: no spread in the resamples, so no p-value");
    }
}
