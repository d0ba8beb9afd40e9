//! The score as a text table for people (`typist score`, `typist run`): the headline
//! figures per assistant, failures and determinism notes, and the paired comparisons.
//!
//! [`score_table`] writes it. Completion-only assistants get a sessions table (sessions,
//! empty, error, timeout, latency) instead of the line headline.

use super::bootstrap::Estimate;
use super::side_figures::{self, Kind, SideFigure, Value};
use super::summary::Summary;

/// A share as a percentage with one decimal ("-" when undefined).
fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * x)
    }
}

/// A resampling unit's plural ("files", "repositories").
pub fn plural(unit: &str) -> String {
    match unit.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None if ["s", "x", "ch", "sh"].iter().any(|e| unit.ends_with(e)) => format!("{unit}es"),
        None => format!("{unit}s"),
    }
}

/// `n` and the unit, singular for one: "1 repository", "2 repositories".
pub fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {}", plural(unit))
    }
}

/// The summary as text: a line on the data, the headline table, notes per assistant,
/// and the pairwise table when there are pairs.
pub fn score_table(s: &Summary) -> String {
    let lines = s.assistants.values().any(|a| !lists_only(a));
    let mut out = format!(
        "{}, {}, pass {}, {} resamples of {} (seed {}){}{}",
        count(s.records, "record"),
        count(s.repositories, "repository"),
        s.pass,
        s.bootstrap,
        count(s.units, s.unit),
        s.seed,
        match &s.estimand {
            Some(e) => format!(" — fewer than 10 repositories: files are resampled.\n{e}"),
            None => String::new(),
        },
        if lines {
            format!("\n\n{}", headline(s))
        } else {
            String::new()
        }
    );
    notes(s, &mut out);
    if !s.pairwise.is_empty() {
        pairwise(s, &s.pairwise, &mut out);
    }
    for fig in side_figures::all(s) {
        out.push_str(&format!("\n\n{}\n{}", title(fig.kind), side_table(&fig)));
        if !fig.pairwise.is_empty() {
            pairwise(s, fig.pairwise, &mut out);
        }
    }
    if s.assistants.values().any(|a| !a.ranking.is_empty()) {
        out.push_str(&format!(
            "\n\ncompletion lists (top-n over sessions answered)\n{}",
            ranking(s)
        ));
        if let Some(t) = list_sessions(s) {
            out.push_str(&format!("\n\n{t}"));
        }
        if !s.ranking_pairwise.is_empty() {
            pairwise(s, &s.ranking_pairwise, &mut out);
        }
    }
    out
}

/// Completion-only assistants have no line cases: they are left out of the headline.
fn lists_only(a: &super::summary::AssistantScore) -> bool {
    a.cases == 0 && !a.ranking.is_empty()
}

/// Completion-only assistants, which the headline leaves out: their sessions, empty
/// lists, failures and latency (`None` when every assistant has line cases).
fn list_sessions(s: &Summary) -> Option<comfy_table::Table> {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "assistant",
        "sessions",
        "empty %",
        "error %",
        "timeout %",
        "p50 ms",
        "p95 ms",
    ]);
    let mut any = false;
    for (name, a) in s.assistants.iter().filter(|(_, a)| lists_only(a)) {
        let Some(all) = a.ranking.get("all") else {
            continue;
        };
        let (p50, p95) = a
            .latency_ms
            .as_ref()
            .map(|l| (format!("{:.1}", l.p50), format!("{:.1}", l.p95)))
            .unwrap_or_default();
        t.add_row([
            name.clone(),
            all.sessions.to_string(),
            pct(all.empty_rate),
            pct(a.error_rate),
            pct(a.timeout_rate),
            p50,
            p95,
        ]);
        any = true;
    }
    any.then_some(t)
}

/// Completion lists: by typed prefix, then by token kind, with 95% intervals.
fn ranking(s: &Summary) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "assistant",
        "sessions of",
        "sessions",
        "empty %",
        "top-1 % (±95%)",
        "top-5 % (±95%)",
        "recall %",
        "mean position",
        "MRR (±95%)",
    ]);
    for (name, a) in &s.assistants {
        let groups = a
            .ranking
            .iter()
            .map(|(k, r)| (format!("prefix {k}"), r, a.ranking_ci.get(k)))
            .chain(
                a.ranking_by_kind
                    .iter()
                    .map(|(k, r)| (format!("kind {k}"), r, a.ranking_by_kind_ci.get(k))),
            );
        for (group, r, ci) in groups {
            let pm = |v: f64, e: Option<&Estimate>| match e {
                Some(e) => format!("{} ± {}", pct(v), pct(e.half())),
                None => pct(v),
            };
            t.add_row([
                name.clone(),
                group.replace("prefix all", "all"),
                r.sessions.to_string(),
                pct(r.empty_rate),
                pm(r.top1, ci.map(|c| &c.top1)),
                pm(r.top5, ci.map(|c| &c.top5)),
                pct(r.recall),
                if r.mean_position.is_nan() {
                    "-".into()
                } else {
                    format!("{:.2}", r.mean_position)
                },
                match ci {
                    Some(c) => format!("{:.3} ± {:.3}", r.mrr, c.mrr.half()),
                    None => format!("{:.3}", r.mrr),
                },
            ]);
        }
    }
    t
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
        "integral help % (±95%)",
        "exact share % (±95%)",
        "help@0 %",
        "integral non-empty %",
        "p50 ms",
        "p95 ms",
    ]);
    for (name, a) in s.assistants.iter().filter(|(_, a)| !lists_only(a)) {
        let pm = |e: &Estimate| format!("{} ± {}", pct(e.value), pct(e.half()));
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

/// A side figure's heading.
fn title(kind: Kind) -> &'static str {
    match kind {
        Kind::Blocks => {
            "blocks (methodology §9: the whole suggestion against the true line and the deeper lines after it)"
        }
        Kind::Golf => {
            "keystrokes saved (methodology §10, completion golf: keys to write each line with the assistant)"
        }
        Kind::Checks => {
            "checks (methodology §11: the file with the suggestion accepted, over non-empty suggestions)"
        }
        Kind::Tests => {
            "tests after acceptance (methodology §12: the repository's tests that notice the line, on the file with the suggestion accepted)"
        }
    }
}

/// A side figure (blocks, keystrokes saved, checks) as a table.
fn side_table(fig: &SideFigure) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    let cols = fig.shown(|c| c.text);
    t.set_header(std::iter::once("assistant").chain(cols.iter().map(|(_, h, _)| *h)));
    for (name, values) in &fig.rows {
        let cells = cols.iter().map(|(i, _, _)| cell(values[*i]));
        t.add_row(std::iter::once(name.to_string()).chain(cells));
    }
    t
}

/// A side figure's value as the table writes it.
fn cell(v: Value) -> String {
    match v {
        Value::Count(n) => n.to_string(),
        Value::Share(x) => pct(x),
        Value::Interval(x, half) => format!("{} ± {}", pct(x), pct(half)),
        Value::Mean(x, _) => format!("{x:.2}"),
        Value::Ratio(a, b) => format!("{a} / {b}"),
        Value::Failures(0, _) => "0".into(),
        Value::Failures(lines, requests) => {
            format!("{lines} ({requests} failed requests) FLAGGED")
        }
        Value::Triple(a, b, c) => format!("{a} / {b} / {c}"),
        Value::Missing => "-".into(),
    }
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
        if a.cases == 0 && !lists_only(a) {
            out.push_str(&format!("\n{name}: answered no case"));
        }
        if let Some(share) = a.nondeterminism.share
            && a.nondeterminism.differing > 0
        {
            out.push_str(&format!(
                "\n{name}: {} of {} repeated requests answered differently ({}); distinct answers per request: mean {:.2}, max {}",
                a.nondeterminism.differing,
                a.nondeterminism.repeated,
                pct(share),
                a.nondeterminism.distinct_mean.unwrap_or(f64::NAN),
                a.nondeterminism.distinct_max
            ));
        }
        if let Some(rs) = s.repeat_skip.get(name) {
            let x = &rs.spread.integral_help;
            out.push_str(&format!(
                "\n{name}: integral help across {} passes: sd {} points, range {}–{} ({} cases answered in every pass)",
                rs.spread.passes.len(),
                pct(x.sd),
                pct(x.min),
                pct(x.max),
                rs.spread.cases
            ));
        }
        for (reason, n) in &a.skipped {
            out.push_str(&format!("\n{name}: {n} record(s) not scored: {reason}"));
        }
    }
}

fn pairwise(s: &Summary, rows: &[super::pairwise::Pairwise], out: &mut String) {
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
    for r in rows {
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
    if rows.iter().any(|r| r.few_units) {
        out.push_str(&format!(
            "\n* {} {} resampled (fewer than 10): read with care",
            s.units,
            plural(s.unit)
        ));
    }
    if let Some(e) = &s.estimand {
        out.push_str(&format!("\n{e}"));
    }
    if rows.iter().any(|r| r.p_value.is_none()) {
        out.push_str("\nn/a: no spread in the resamples, so no p-value");
    }
}
