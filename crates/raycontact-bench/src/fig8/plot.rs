//! `fig8 --plot PATH.svg`: the tangential error against the number of sides, as the paper's
//! Figure 8, one line per force direction.

use std::path::Path;

use plotters::prelude::*;

use super::Row;

/// A line of the plot: its legend, colour and value.
type Series = (&'static str, RGBColor, fn(&Row) -> f64);

/// Draws the mean and worst |F_x| / F_y against n.
pub fn draw(rows: &[Row], path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n_max = rows.iter().map(|r| r.sides).max().unwrap_or(10) as f64;
    let y_max = rows.iter().map(|r| r.along_ray.max_percent).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("Hermann et al. 2008, Figure 8: |Fx| / Fy", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..n_max * 1.05, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart.configure_mesh().x_desc("sides").y_desc("percent").draw().map_err(|e| err(&e))?;
    let series: [Series; 4] = [
        ("along the ray, worst", RGBColor(214, 39, 40), |r| r.along_ray.max_percent),
        ("along the ray, mean", RGBColor(255, 127, 14), |r| r.along_ray.mean_percent),
        ("along the normal, worst", RGBColor(31, 119, 180), |r| r.along_normal.max_percent),
        ("along the normal, mean", RGBColor(44, 160, 44), |r| r.along_normal.mean_percent),
    ];
    for (name, colour, value) in series {
        let points: Vec<(f64, f64)> = rows.iter().map(|r| (r.sides as f64, value(r))).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2)));
        chart
            .draw_series(points.into_iter().map(|p| Circle::new(p, 3, colour.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
