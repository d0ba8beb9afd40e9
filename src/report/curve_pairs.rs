//! The report's "Along the thresholds" section: for each pair of assistants the paired
//! difference of their H(S|t) curves with its 95% band (a chart, dots where p < 0.05),
//! the sentence saying where the difference is significant, and the p-value heat map
//! with a threshold axis (rows: pairs; columns: thresholds; colours as the paired
//! comparisons' key). Figures from [`crate::score::curve_pairs`].

use super::charts;
use super::format::{direction, diverging, p_text, pct, strength};
use crate::score::Summary;
use crate::score::curve_pairs::curve_pair_sentence;

pub(super) struct CurvePairsSection<'a> {
    pub thresholds: Vec<String>,
    pub pairs: Vec<CurvePairView<'a>>,
}

pub(super) struct CurvePairView<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub cases: u64,
    pub few_units: bool,
    pub sentence: String,
    pub chart: String,
    pub cells: Vec<ThresholdCell>,
}

pub(super) struct ThresholdCell {
    pub background: String,
    pub colour: &'static str,
    pub arrow: &'static str,
    pub p: String,
    pub title: String,
}

pub(super) fn curve_pairs_section(s: &Summary) -> Option<CurvePairsSection<'_>> {
    let first = s.curve_pairwise.first()?;
    let thresholds = first.points.iter().map(|p| format!("{:.2}", p.t)).collect();
    let pairs = s
        .curve_pairwise
        .iter()
        .map(|c| {
            let points: Vec<charts::DiffPoint> = c
                .points
                .iter()
                .map(|p| charts::DiffPoint {
                    t: p.t,
                    diff: p.diff,
                    lo: p.ci95[0],
                    hi: p.ci95[1],
                    significant: p.p_value.is_some_and(|v| v < 0.05),
                })
                .collect();
            let cells = c
                .points
                .iter()
                .map(|p| {
                    let (background, colour) = diverging(strength(p.p_value), p.diff >= 0.0);
                    let (_, arrow) = direction(p.diff);
                    let signed = |x: f64| {
                        if x > 0.0 {
                            format!("+{}", pct(x))
                        } else {
                            pct(x).replace('-', "−")
                        }
                    };
                    ThresholdCell {
                        background,
                        colour,
                        arrow,
                        p: p_text(p.p_value),
                        title: format!(
                            "t = {:.2}: {} − {} = {} points, 95% interval {} to {}",
                            p.t,
                            c.a,
                            c.b,
                            signed(p.diff),
                            signed(p.ci95[0]),
                            signed(p.ci95[1])
                        ),
                    }
                })
                .collect();
            CurvePairView {
                a: &c.a,
                b: &c.b,
                cases: c.cases,
                few_units: c.few_units,
                sentence: curve_pair_sentence(c),
                chart: charts::diff_curve_svg(&c.a, &c.b, &points),
                cells,
            }
        })
        .collect();
    Some(CurvePairsSection { thresholds, pairs })
}
