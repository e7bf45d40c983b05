//! `--plot PATH.svg`: the scaling scenes drawn with plotters, frame time against N or size on
//! log-log axes, one line per implementation.

use std::path::Path;

use plotters::prelude::*;

use crate::results::{InstanceResult, SuiteResult, exponents};
use crate::scenes::SceneName;

/// Colours of the implementations, in the table's order.
const SERIES: [(&str, RGBColor); 12] = [
    ("gpu", RGBColor(214, 39, 40)),
    ("gpu-refit", RGBColor(255, 152, 150)),
    ("gpu-auto", RGBColor(140, 86, 75)),
    ("cpu-1", RGBColor(31, 119, 180)),
    ("cpu-rayon", RGBColor(44, 160, 44)),
    ("cpu-refit", RGBColor(152, 223, 138)),
    ("cpu-auto", RGBColor(188, 189, 34)),
    ("cpu-twins", RGBColor(23, 190, 207)),
    ("parry-1", RGBColor(148, 103, 189)),
    ("parry-rayon", RGBColor(255, 127, 14)),
    ("parry-refit-1", RGBColor(197, 176, 213)),
    ("parry-refit-rayon", RGBColor(255, 187, 120)),
];

/// A tick label: 3 significant digits, thousands as "k" and millions as "M".
fn short(v: f64) -> String {
    let (v, unit) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    let text =
        if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    format!("{text}{unit}")
}

/// One implementation's line: id, colour, points.
type Line<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

/// A plotters error as the `--plot` error.
fn err(e: impl std::fmt::Display) -> String {
    format!("--plot: {e}")
}

/// Draws every scaling scene of the run into one SVG, one chart under the other. Returns the
/// number of charts (0: nothing written).
pub fn draw(result: &SuiteResult, path: &Path) -> Result<usize, String> {
    let scenes: Vec<(SceneName, Vec<&InstanceResult>)> = SceneName::ALL
        .iter()
        .filter(|s| s.is_scaling())
        .map(|s| (*s, result.instances.iter().filter(|r| r.scene == *s && r.parameter.is_some()).collect()))
        .filter(|(_, v): &(SceneName, Vec<&InstanceResult>)| !v.is_empty())
        .collect();
    if scenes.is_empty() {
        return Ok(0);
    }
    let root = SVGBackend::new(path, (900, 520 * scenes.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((scenes.len(), 1));
    for ((scene, results), area) in scenes.iter().zip(&areas) {
        let lines: Vec<Line<'_>> = SERIES
            .iter()
            .map(|(id, colour)| {
                let pts = results
                    .iter()
                    .filter_map(|r| Some((r.parameter?, r.get(id)?.median_ms())))
                    .filter(|(x, y)| *x > 0.0 && *y > 0.0 && y.is_finite())
                    .collect::<Vec<_>>();
                (*id, *colour, pts)
            })
            .filter(|(_, _, p)| !p.is_empty())
            .collect();
        let all = lines.iter().flat_map(|l| l.2.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in all {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            continue;
        }
        let (x0, x1) = (x0 / 1.3, x1 * 1.3);
        let (y0, y1) = (y0 / 1.5, y1 * 1.5);
        let param = scene.parameter_name().unwrap_or("size");
        let fits = exponents(results);
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{}: median frame time against {param}", scene.name()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(if *scene == SceneName::ToriScaling { "tori (N)" } else { "triangles in all" })
            .y_desc("frame time (ms)")
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|x| short(*x))
            .y_label_formatter(&|y| short(*y))
            .draw()
            .map_err(err)?;
        for (id, colour, pts) in &lines {
            let fit = fits.iter().find(|(f, _)| f == id).and_then(|(_, e)| *e);
            let label = match fit {
                Some(e) => format!("{id} (exponent {e:.2})"),
                None => id.to_string(),
            };
            let c = *colour;
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(err)?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(scenes.len())
}
