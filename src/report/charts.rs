//! The report's plots as inline SVG: H(S|t) curves with bootstrap bands (plotters' SVG
//! backend), and dot-and-whisker interval charts (generated SVG). Okabe–Ito colours,
//! which stay distinct for the common colour-vision deficiencies. Every curve chart
//! carries its own legend, and a band is outlined in its assistant's colour (dashed)
//! so that two overlapping bands stay apart where their fills mix.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// Okabe–Ito: distinguishable with protanopia, deuteranopia and tritanopia.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

fn rgb(hex: &str) -> RGBColor {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

/// One assistant's curve: its name, (t, H) points and an optional (t, lo, hi) band.
pub struct Curve<'a> {
    pub name: &'a str,
    pub points: &'a [(f64, f64)],
    pub band: &'a [(f64, f64, f64)],
}

/// H(S|t) against t, one line per assistant (in `PALETTE` order) over its band, with a
/// legend of the assistants that have points.
pub fn curves_svg(curves: &[Curve], y_desc: &str) -> String {
    let mut svg = String::new();
    let ymax = curves
        .iter()
        .flat_map(|c| {
            c.points
                .iter()
                .map(|p| p.1)
                .chain(c.band.iter().map(|b| b.2))
        })
        .filter(|y| y.is_finite())
        .fold(0.05f64, f64::max)
        * 1.08;
    {
        let root = SVGBackend::with_string(&mut svg, (720, 400)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..1f64, 0f64..ymax.min(1.0));
        if let Ok(mut chart) = chart {
            let _ = chart
                .configure_mesh()
                .x_desc("threshold t: the least c_help a developer accepts")
                .y_desc(y_desc)
                .x_label_formatter(&|x| format!("{x:.1}"))
                .y_label_formatter(&|y| format!("{:.0}%", y * 100.0))
                .light_line_style(RGBColor(238, 238, 238))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .draw();
            let mut labelled = false;
            for (i, c) in curves.iter().enumerate() {
                let col = rgb(colour(i));
                if !c.band.is_empty() {
                    draw_band(&mut chart, c.band, col, 0.12, None);
                }
                let pts: Vec<(f64, f64)> = c
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.1.is_finite())
                    .collect();
                let shown = !pts.is_empty();
                labelled |= shown;
                if let Ok(series) = chart.draw_series(LineSeries::new(pts, col.stroke_width(2)))
                    && shown
                {
                    series.label(c.name).legend(move |(x, y)| {
                        Rectangle::new([(x, y - 3), (x + 18, y + 3)], col.filled())
                    });
                }
            }
            if labelled {
                legend(&mut chart, SeriesLabelPosition::UpperRight);
            }
        }
        let _ = root.present();
    }
    svg
}

/// A chart's legend box, where `at` says, in the report's one style.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) {
    let _ = chart
        .configure_series_labels()
        .position(at)
        .margin(10)
        .legend_area_size(26)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(200, 200, 200))
        .draw();
}

/// A band of (t, lo, hi) points filled in `col` at `fill` and outlined in it, dashed, so
/// that two overlapping bands stay apart where their fills mix; `label` names it in the
/// legend.
fn draw_band<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    band: &[(f64, f64, f64)],
    col: RGBColor,
    fill: f64,
    label: Option<&str>,
) {
    let mut poly: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
    poly.extend(band.iter().rev().map(|b| (b.0, b.1)));
    if let Ok(s) = chart.draw_series(std::iter::once(Polygon::new(poly, col.mix(fill).filled())))
        && let Some(label) = label
    {
        s.label(label).legend(move |(x, y)| {
            Rectangle::new([(x, y - 5), (x + 18, y + 5)], col.mix(fill).filled())
        });
    }
    for upper in [false, true] {
        let edge = band.iter().map(|b| (b.0, if upper { b.2 } else { b.1 }));
        let _ = chart.draw_series(DashedLineSeries::new(
            edge,
            5,
            4,
            col.mix(0.8).stroke_width(1),
        ));
    }
}

/// Nice tick step for a range.
fn tick_step(max: f64) -> f64 {
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(mag * 10.0)
}

fn tick_label(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if (r - r.round()).abs() < 1e-9 {
        format!("{:.0}", r)
    } else {
        format!("{r:.1}")
    }
}

/// A dot-and-whisker chart: each row a name, a value and an interval, in percent.
pub fn intervals_svg(title: &str, rows: &[(String, f64, f64, f64)]) -> String {
    let (w, row_h, left, top) = (460.0, 30.0, 170.0, 34.0);
    let h = top + row_h * rows.len() as f64 + 40.0;
    let max = rows
        .iter()
        .map(|r| r.3.max(r.1))
        .filter(|v| v.is_finite())
        .fold(0.01f64, f64::max)
        .min(1.0);
    let step = tick_step(max);
    let xmax = (max / step).ceil() * step;
    let x = |v: f64| left + (w - left - 20.0) * (v / xmax).clamp(0.0, 1.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">",
        super::esc(title)
    );
    s.push_str(&format!("<text x=\"{left}\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\" font-weight=\"bold\">{}</text>", super::esc(title)));
    let axis_y = top + row_h * rows.len() as f64;
    let mut t = 0.0;
    while t <= xmax + 1e-9 {
        let xx = x(t);
        s.push_str(&format!(
            "<line x1=\"{xx:.1}\" y1=\"{top}\" x2=\"{xx:.1}\" y2=\"{axis_y}\" stroke=\"#eee\"/><text x=\"{xx:.1}\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\">{}%</text>",
            axis_y + 16.0,
            tick_label(t * 100.0)
        ));
        t += step;
    }
    for (i, (name, v, lo, hi)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64 + row_h / 2.0;
        let col = colour(i);
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"13\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + 4.0,
            super::esc(name)
        ));
        if lo.is_finite() && hi.is_finite() {
            s.push_str(&format!(
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{col}\" stroke-width=\"2\"/>",
                x(*lo),
                x(*hi)
            ));
        }
        if v.is_finite() {
            s.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{col}\"/>",
                x(*v)
            ));
        }
    }
    s.push_str("</svg>");
    s
}

/// One assistant's autocorrelation by distance bin: (r, pairs) per bin.
pub struct LagSeries<'a> {
    pub name: &'a str,
    pub points: Vec<(Option<f64>, u64)>,
}

/// Correlation against distance: one column per bin (`bins`, its labels), per
/// assistant a dot (hollow with fewer than [`crate::score::design::FEW_PAIRS`] pairs)
/// joined by a line, its pair count under the axis; y from −1 to 1 with 0 marked; a
/// legend.
pub fn lags_svg(bins: &[String], series: &[LagSeries]) -> String {
    let few = crate::score::design::FEW_PAIRS;
    let (left, top, col_w, plot_h) = (60.0, 40.0, 90.0, 200.0);
    let w = left + col_w * bins.len() as f64 + 20.0;
    let counts_top = top + plot_h + 36.0;
    let h = counts_top + 16.0 * series.len() as f64 + 40.0;
    let y = |r: f64| top + plot_h * (1.0 - r.clamp(-1.0, 1.0)) / 2.0;
    let x = |i: usize, k: usize| {
        let spread = 10.0 * (k as f64 - (series.len() as f64 - 1.0) / 2.0);
        left + col_w * (i as f64 + 0.5) + spread
    };
    let title = "Correlation of two cases of one file by their distance in lines";
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{title}\" font-family=\"sans-serif\">"
    );
    s.push_str(&format!(
        "<text x=\"{left}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{title}</text>"
    ));
    for t in [-1.0, -0.5, 0.0, 0.5, 1.0] {
        let yy = y(t);
        let stroke = if t == 0.0 { "#999" } else { "#eee" };
        s.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{stroke}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{t}</text>",
            w - 20.0,
            left - 6.0,
            yy + 4.0
        ));
    }
    s.push_str(&format!(
        "<text transform=\"translate(16,{:.1}) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">correlation r</text>",
        top + plot_h / 2.0
    ));
    for (i, b) in bins.iter().enumerate() {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            left + col_w * (i as f64 + 0.5),
            top + plot_h + 16.0,
            super::esc(b)
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">distance in lines (pairs of cases under each bin)</text>",
        left + col_w * bins.len() as f64 / 2.0,
        top + plot_h + 32.0
    ));
    if !series.is_empty() {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">pairs</text>",
            left - 6.0,
            counts_top + 10.0
        ));
    }
    for (k, sr) in series.iter().enumerate() {
        let col = colour(k);
        let pts: Vec<(usize, f64)> = (sr.points.iter().enumerate())
            .filter_map(|(i, (r, _))| r.map(|r| (i, r)))
            .collect();
        if pts.len() > 1 {
            let path: Vec<String> = pts
                .iter()
                .map(|(i, r)| format!("{:.1},{:.1}", x(*i, k), y(*r)))
                .collect();
            s.push_str(&format!(
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{col}\" stroke-width=\"1.5\"/>",
                path.join(" ")
            ));
        }
        for (i, (r, pairs)) in sr.points.iter().enumerate() {
            if let Some(r) = r {
                let fill = if *pairs < few { "white" } else { col };
                s.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4.5\" fill=\"{fill}\" stroke=\"{col}\" stroke-width=\"2\"/>",
                    x(i, k),
                    y(*r)
                ));
            }
            s.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{col}\" text-anchor=\"middle\">{pairs}</text>",
                left + col_w * (i as f64 + 0.5),
                counts_top + 16.0 * k as f64 + 10.0
            ));
        }
        // Legend, under the counts.
        let ly = counts_top + 16.0 * series.len() as f64 + 14.0;
        let lx = left + 190.0 * k as f64;
        s.push_str(&format!(
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"18\" height=\"6\" fill=\"{col}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            ly - 3.0,
            lx + 24.0,
            ly + 4.0,
            super::esc(sr.name)
        ));
    }
    s.push_str(&format!(
        "<text x=\"{left}\" y=\"{:.1}\" font-size=\"11\" fill=\"#555\">hollow dot: fewer than {few} pairs</text>",
        h - 6.0
    ));
    s.push_str("</svg>");
    s
}

/// One threshold of a paired difference curve: D(t), its 95% band, and whether p < 0.05.
pub struct DiffPoint {
    pub t: f64,
    pub diff: f64,
    pub lo: f64,
    pub hi: f64,
    pub significant: bool,
}

/// The paired difference `a − b` of two H(S|t) curves against t, in points, over its
/// band (outlined, dashed), with a zero line, and dots where the difference is
/// significant; a legend names the line, the band and the dots.
pub fn diff_curve_svg(a: &str, b: &str, points: &[DiffPoint]) -> String {
    let mut svg = String::new();
    let m = points
        .iter()
        .flat_map(|p| [p.diff, p.lo, p.hi])
        .filter(|y| y.is_finite())
        .fold(0.01f64, |m, y| m.max(y.abs()))
        * 1.1;
    let m = m.min(1.0);
    {
        let root = SVGBackend::with_string(&mut svg, (720, 340)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..1f64, -m..m);
        if let Ok(mut chart) = chart {
            let _ = chart
                .configure_mesh()
                .x_desc("threshold t: the least c_help a developer accepts")
                .y_desc(format!("{a} − {b} (points)"))
                .x_label_formatter(&|x| format!("{x:.1}"))
                .y_label_formatter(&|y| {
                    let v = (y * 100.0).round();
                    if v == 0.0 {
                        "0".to_string()
                    } else {
                        format!("{v:+.0}")
                    }
                })
                .light_line_style(RGBColor(238, 238, 238))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .draw();
            let _ = chart.draw_series(LineSeries::new(
                [(0.0, 0.0), (1.0, 0.0)],
                RGBColor(120, 120, 120).stroke_width(1),
            ));
            let col = rgb(colour(0));
            let band: Vec<(f64, f64, f64)> = points
                .iter()
                .filter(|p| p.lo.is_finite() && p.hi.is_finite())
                .map(|p| (p.t, p.lo, p.hi))
                .collect();
            if !band.is_empty() {
                draw_band(&mut chart, &band, col, 0.15, Some("95% band"));
            }
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.diff.is_finite())
                .map(|p| (p.t, p.diff))
                .collect();
            if let Ok(s) = chart.draw_series(LineSeries::new(line, col.stroke_width(2))) {
                s.label(format!("{a} − {b}")).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 2), (x + 18, y + 2)], col.filled())
                });
            }
            let dark = rgb("#D55E00");
            if let Ok(s) = chart.draw_series(
                points
                    .iter()
                    .filter(|p| p.significant && p.diff.is_finite())
                    .map(|p| Circle::new((p.t, p.diff), 4, dark.filled())),
            ) {
                s.label("p < 0.05")
                    .legend(move |(x, y)| Circle::new((x + 9, y), 4, dark.filled()));
            }
            legend(&mut chart, SeriesLabelPosition::UpperRight);
        }
        let _ = root.present();
    }
    svg
}

/// One line per assistant (in `PALETTE` order) against a logarithmic x from 1 to
/// `xmax`, with axis descriptions and a legend: found@k against k, and the mean place
/// found against the list's length (issue 45). `share` formats y as a percentage.
pub fn log_x_svg(
    curves: &[(&str, Vec<(f64, f64)>)],
    x_desc: &str,
    y_desc: &str,
    share: bool,
) -> String {
    let mut svg = String::new();
    let pts = || {
        curves
            .iter()
            .flat_map(|c| c.1.iter())
            .filter(|p| p.1.is_finite())
    };
    let xmax = pts().map(|p| p.0).fold(2.0f64, f64::max);
    let ymax = if share {
        1.0
    } else {
        pts().map(|p| p.1).fold(1.0f64, f64::max) * 1.08
    };
    {
        let root = SVGBackend::with_string(&mut svg, (720, 400)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d((1f64..xmax).log_scale(), 0f64..ymax);
        if let Ok(mut chart) = chart {
            let _ = chart
                .configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| {
                    if share {
                        format!("{:.0}%", y * 100.0)
                    } else {
                        format!("{y:.0}")
                    }
                })
                .light_line_style(RGBColor(238, 238, 238))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .draw();
            let mut labelled = false;
            for (i, (name, points)) in curves.iter().enumerate() {
                let col = rgb(colour(i));
                let pts: Vec<(f64, f64)> =
                    points.iter().copied().filter(|p| p.1.is_finite()).collect();
                let shown = !pts.is_empty();
                labelled |= shown;
                let dots = pts.clone();
                if let Ok(series) = chart.draw_series(LineSeries::new(pts, col.stroke_width(2)))
                    && shown
                {
                    let name = name.to_string();
                    series.label(name).legend(move |(x, y)| {
                        Rectangle::new([(x, y - 3), (x + 18, y + 3)], col.filled())
                    });
                }
                if !share {
                    let _ = chart
                        .draw_series(dots.into_iter().map(|p| Circle::new(p, 3, col.filled())));
                }
            }
            if labelled {
                legend(&mut chart, SeriesLabelPosition::LowerRight);
            }
        }
        let _ = root.present();
    }
    svg
}
