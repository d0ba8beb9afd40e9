//! The report's "Design" section (how many lines are enough): per assistant the
//! intraclass correlations, the design effect, the effective number of cases and the
//! integral-help interval width now and projected at other sampling rates; a chart of
//! the autocorrelation by distance in lines with its pair counts; the sentence saying
//! whether the sample resolves the differences seen. Figures from
//! [`crate::score::design`].

use super::charts;
use super::format::pct;
use crate::score::Summary;
use crate::score::design::{BINS, FEW_PAIRS};

pub(super) struct DesignSection<'a> {
    pub unit: &'static str,
    pub rates: Vec<String>,
    pub rows: Vec<DesignRow<'a>>,
    pub bins: Vec<String>,
    pub lags: Vec<LagRow<'a>>,
    pub chart: String,
    pub sentence: &'a str,
    pub pairs: Vec<&'a str>,
}

pub(super) struct DesignRow<'a> {
    pub name: &'a str,
    pub cases: u64,
    pub files: u64,
    pub repositories: u64,
    pub icc_file: String,
    pub icc_repo: String,
    pub deff: String,
    pub n_eff: String,
    /// Interval widths in points: now, then at each projected rate.
    pub width: String,
    pub projected: Vec<String>,
}

pub(super) struct LagRow<'a> {
    pub name: &'a str,
    /// "0.12 (24)", "– (0)"; rough ones marked.
    pub cells: Vec<String>,
}

fn fixed(v: Option<f64>, places: usize) -> String {
    v.filter(|x| x.is_finite())
        .map_or("n/a".to_string(), |x| format!("{x:.places$}"))
}

fn points(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), pct)
}

pub(super) fn design_section(s: &Summary) -> Option<DesignSection<'_>> {
    let d = s.design.as_ref()?;
    let rates = d
        .assistants
        .values()
        .next()
        .map(|a| {
            a.integral_help
                .projected
                .iter()
                .map(|p| format!("{}×", p.rate))
                .collect()
        })
        .unwrap_or_default();
    let rows = d
        .assistants
        .iter()
        .map(|(name, a)| {
            let m = &a.integral_help;
            DesignRow {
                name,
                cases: a.cases,
                files: a.files,
                repositories: a.repositories,
                icc_file: fixed(m.icc_file, 3),
                icc_repo: fixed(m.icc_repo, 3),
                deff: fixed(m.deff, 2),
                n_eff: fixed(m.n_eff, 0),
                width: points(m.width),
                projected: m.projected.iter().map(|p| points(p.width)).collect(),
            }
        })
        .collect();
    let lags = d
        .assistants
        .iter()
        .map(|(name, a)| LagRow {
            name,
            cells: a
                .autocorrelation
                .iter()
                .map(|l| {
                    let rough = if l.pairs > 0 && l.pairs < FEW_PAIRS {
                        "*"
                    } else {
                        ""
                    };
                    format!("{} ({}){rough}", fixed(l.r, 2), l.pairs)
                })
                .collect(),
        })
        .collect();
    let series: Vec<charts::LagSeries> = d
        .assistants
        .iter()
        .map(|(name, a)| charts::LagSeries {
            name,
            points: a.autocorrelation.iter().map(|l| (l.r, l.pairs)).collect(),
        })
        .collect();
    let bins: Vec<String> = BINS.iter().map(|(a, b)| format!("{a}–{b}")).collect();
    Some(DesignSection {
        unit: d.unit,
        rates,
        rows,
        chart: charts::lags_svg(&bins, &series),
        bins,
        lags,
        sentence: &d.sentence,
        pairs: d.pairs.iter().map(|p| p.sentence.as_str()).collect(),
    })
}
