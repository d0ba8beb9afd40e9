//! The report's plots as inline SVG: H(S|t) curves with bootstrap bands (plotters' SVG
//! backend), and dot-and-whisker interval charts (generated SVG). Okabe–Ito colours,
//! which stay distinct for the common colour-vision deficiencies. Every curve chart
//! carries its own legend, and a band is outlined in its assistant's colour (dashed)
//! so that two overlapping bands stay apart where their fills mix.

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
                    let mut poly: Vec<(f64, f64)> = c.band.iter().map(|b| (b.0, b.2)).collect();
                    poly.extend(c.band.iter().rev().map(|b| (b.0, b.1)));
                    let _ = chart
                        .draw_series(std::iter::once(Polygon::new(poly, col.mix(0.12).filled())));
                    for upper in [false, true] {
                        let edge = c.band.iter().map(|b| (b.0, if upper { b.2 } else { b.1 }));
                        let _ = chart.draw_series(DashedLineSeries::new(
                            edge,
                            5,
                            4,
                            col.mix(0.8).stroke_width(1),
                        ));
                    }
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
                let _ = chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .margin(10)
                    .legend_area_size(26)
                    .label_font(("sans-serif", 13))
                    .background_style(WHITE.mix(0.9))
                    .border_style(RGBColor(200, 200, 200))
                    .draw();
            }
        }
        let _ = root.present();
    }
    svg
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
                let _ = chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::LowerRight)
                    .margin(10)
                    .legend_area_size(26)
                    .label_font(("sans-serif", 13))
                    .background_style(WHITE.mix(0.9))
                    .border_style(RGBColor(200, 200, 200))
                    .draw();
            }
        }
        let _ = root.present();
    }
    svg
}
