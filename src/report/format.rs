//! How the report writes a number: a share as a percentage, a p-value, a value for a
//! `data-value` attribute, an interval cut to what its figure can be. Shared by the
//! page, the markdown and the ranking section.

/// A share as a percentage with one decimal ("–" when undefined).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", 100.0 * x)
    } else {
        "–".into()
    }
}

/// A number for a `data-value` attribute (empty when undefined).
pub(super) fn num_attr(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// A p-value to three places, or "n/a" when there is none.
pub fn p_text(p: Option<f64>) -> String {
    p.map_or("n/a".to_string(), |v| format!("{v:.3}"))
}

/// What the page and the markdown say under a table of intervals.
pub(super) const INTERVALS_NOTE: &str = "Intervals are written [low, high]: the 95% \
interval (value ± q·sd) cut to what the figure can be, 0 to 100% for a share and from 0 \
for a mean of counts, so no interval reaches below 0.";

/// The 95% interval `value ± half` of a share, cut to 0..1, as "[lo, hi]" in percent
/// ("–" when undefined).
pub(super) fn share_interval(value: f64, half: f64) -> String {
    match cut(value, half, 1.0) {
        Some((lo, hi)) => format!("[{}, {}]", pct(lo), pct(hi)),
        None => "–".into(),
    }
}

/// A share and its interval in one cell: "7.6 [3.4, 11.8]".
pub(super) fn share_with_interval(value: f64, half: f64) -> String {
    format!("{} {}", pct(value), share_interval(value, half))
}

/// A mean that cannot be negative (requests per line, MRR) and its 95% interval cut at 0
/// (and at `max`), to `places` decimals: "1.25 [0.80, 1.70]".
pub(super) fn mean_with_interval(value: f64, half: f64, max: f64, places: usize) -> String {
    match cut(value, half, max) {
        Some((lo, hi)) => format!("{value:.places$} [{lo:.places$}, {hi:.places$}]"),
        None if value.is_finite() => format!("{value:.places$}"),
        None => "–".into(),
    }
}

/// `value ± half` cut to `0..=max`; none when either is undefined.
fn cut(value: f64, half: f64, max: f64) -> Option<(f64, f64)> {
    (value.is_finite() && half.is_finite()).then(|| {
        (
            (value - half).clamp(0.0, max),
            (value + half).clamp(0.0, max),
        )
    })
}

pub(super) use crate::score::table::count;

/// Which way a difference goes, in a word and an arrow: ("higher", "▲"), ("lower", "▼")
/// or ("level", "=").
pub(super) fn direction(diff: f64) -> (&'static str, &'static str) {
    if diff > 0.0 {
        ("higher", "▲")
    } else if diff < 0.0 {
        ("lower", "▼")
    } else {
        ("level", "=")
    }
}

/// How strongly a p-value speaks, 0..1 on a log scale: 0 at p = 1, 1 at p ≤ 0.001
/// (0.43 at 0.05, 0.67 at 0.01); none without a p-value.
pub(super) fn strength(p: Option<f64>) -> f64 {
    match p {
        Some(v) if v.is_finite() && v > 0.0 => (-v.log10() / 3.0).clamp(0.0, 1.0),
        Some(0.0) => 1.0,
        _ => 0.0,
    }
}

/// A diverging colour (ColorBrewer PRGn, apart from the assistants' colours): from
/// white towards green when the row's assistant is ahead, towards purple when behind,
/// as deep as `x` (0..1); and a readable text colour on it.
pub(super) fn diverging(x: f64, ahead: bool) -> (String, &'static str) {
    let to = if ahead {
        (27.0, 120.0, 55.0)
    } else {
        (118.0, 42.0, 131.0)
    };
    let lerp = |b: f64| (250.0 + (b - 250.0) * x).round() as u8;
    (
        format!("rgb({},{},{})", lerp(to.0), lerp(to.1), lerp(to.2)),
        if x > 0.55 { "#fff" } else { "#000" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_cut_to_the_figures_range() {
        assert_eq!(share_interval(0.048, 0.054), "[0.0, 10.2]");
        assert_eq!(share_interval(0.97, 0.05), "[92.0, 100.0]");
        assert_eq!(share_interval(0.5, 0.1), "[40.0, 60.0]");
        assert_eq!(share_interval(f64::NAN, 0.1), "–");
        assert_eq!(share_with_interval(0.076, 0.042), "7.6 [3.4, 11.8]");
        assert_eq!(
            mean_with_interval(0.5, 0.75, f64::INFINITY, 2),
            "0.50 [0.00, 1.25]"
        );
        assert_eq!(count(1, "repository"), "1 repository");
        assert_eq!(count(13, "repository"), "13 repositories");
        assert_eq!(count(0, "file"), "0 files");
    }
}
