//! How the report writes a number: a share as a percentage, a p-value, a value for a
//! `data-value` attribute. Shared by the page, the markdown and the ranking section.

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
