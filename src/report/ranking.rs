//! The report's completion-list section: rankings by typed prefix and by token kind
//! with their intervals, and the paired differences between servers.

use super::format::{mean_with_interval, p_text, pct, share_with_interval};
use crate::score::Summary;

pub(super) struct RankRow<'a> {
    pub(super) name: &'a str,
    /// "prefix 0".."prefix 4+", "all", "kind member", …
    pub(super) group: String,
    pub(super) sessions: u64,
    pub(super) top1: String,
    pub(super) top5: String,
    pub(super) recall: String,
    pub(super) mean_position: String,
    pub(super) mrr: String,
}

pub(super) struct RankPair<'a> {
    pub(super) a: &'a str,
    pub(super) b: &'a str,
    pub(super) metric: &'a str,
    pub(super) cases: u64,
    pub(super) diff: String,
    pub(super) p: String,
}

/// Completion-list rankings by typed prefix, then by token kind, with 95% intervals;
/// empty when no assistant has any.
pub(super) fn ranking(s: &Summary) -> Vec<RankRow<'_>> {
    let mut out = Vec::new();
    for (n, a) in &s.assistants {
        let by_prefix = a.ranking.iter().map(|(k, r)| {
            let group = if k == "all" {
                "all".to_string()
            } else {
                format!("prefix {k}")
            };
            (group, r, a.ranking_ci.get(k))
        });
        let by_kind = a
            .ranking_by_kind
            .iter()
            .map(|(k, r)| (format!("kind {k}"), r, a.ranking_by_kind_ci.get(k)));
        for (group, r, ci) in by_prefix.chain(by_kind) {
            let pm = |v: f64, half: Option<f64>| match half {
                Some(h) => share_with_interval(v, h),
                None => pct(v),
            };
            out.push(RankRow {
                name: n,
                group,
                sessions: r.sessions,
                top1: pm(r.top1, ci.map(|c| c.top1.half())),
                top5: pm(r.top5, ci.map(|c| c.top5.half())),
                recall: pm(r.recall, ci.map(|c| c.recall.half())),
                mean_position: mean_with_interval(
                    r.mean_position,
                    ci.map_or(f64::NAN, |c| c.mean_position.half()),
                    f64::MAX,
                    2,
                ),
                mrr: match ci {
                    Some(c) => mean_with_interval(r.mrr, c.mrr.half(), 1.0, 3),
                    None => format!("{:.3}", r.mrr),
                },
            });
        }
    }
    out
}

/// Paired differences of completion-list rankings.
pub(super) fn ranking_pairs(s: &Summary) -> Vec<RankPair<'_>> {
    s.ranking_pairwise
        .iter()
        .map(|p| RankPair {
            a: &p.a,
            b: &p.b,
            metric: &p.metric,
            cases: p.cases,
            diff: diff_text(&p.metric, p.diff),
            p: p_text(p.p_value),
        })
        .collect()
}

/// A paired difference as its metric reads: places for the mean position (lower is
/// better), points of a share otherwise.
pub(super) fn diff_text(metric: &str, diff: f64) -> String {
    if metric == "mean_position" {
        if diff.is_finite() {
            format!("{diff:+.2} places")
        } else {
            "–".into()
        }
    } else {
        pct(diff)
    }
}

/// The whole lists' figures (issue 45): found@k against k, every assistant's "all"
/// group as a step curve to its longest found place; and the mean place found against
/// the list's length (each bin at its smallest length). Empty when none has any.
pub(super) fn list_charts(s: &Summary) -> (String, String) {
    let mut found = Vec::new();
    let mut length = Vec::new();
    for (n, a) in &s.assistants {
        let Some(c) = a.ranking_curves.get("all") else {
            continue;
        };
        let mut steps = Vec::new();
        let mut last = 0.0;
        for &(k, share) in &c.found_at {
            if k > 1 {
                steps.push((f64::from(k), last));
            }
            steps.push((f64::from(k), share));
            last = share;
        }
        found.push((n.as_str(), steps));
        let at = |label: &str| -> f64 {
            let lo = label.split(['–', '+']).next().unwrap_or("0");
            lo.parse::<f64>().unwrap_or(f64::NAN).max(1.0)
        };
        length.push((
            n.as_str(),
            (c.by_length.iter())
                .map(|b| (at(&b.items), b.mean_position))
                .collect(),
        ));
    }
    let any = |v: &[(&str, Vec<(f64, f64)>)]| v.iter().any(|c| !c.1.is_empty());
    (
        if any(&found) {
            super::charts::log_x_svg(&found, "k: places of the list looked at", "found@k", true)
        } else {
            String::new()
        },
        if any(&length) {
            super::charts::log_x_svg(
                &length,
                "the list's length (items shown, bins of powers of two)",
                "mean place of the expected item where found",
                false,
            )
        } else {
            String::new()
        },
    )
}
