//! Line charts as SVG (plotters), for the sweep's two figures: CPU load vs
//! stream count per runtime, and received throughput vs stream count (where
//! each runtime starts losing datagrams).

use std::path::Path;

use plotters::prelude::*;

/// One named line: `(x, y)` points in ascending x.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// A reference (a goal, the sent rate): drawn dashed, without markers.
    pub reference: bool,
}

/// Draws `series` into an SVG file at `path`.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (1.0f64, 1.0f64);
    for &(x, y) in all {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    // Headroom above the data for the legend (upper left), one row per series.
    let headroom = 1.1 + 0.06 * series.len() as f64;
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max * headroom)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let drawn = if s.reference {
            let dashes =
                DashedLineSeries::new(s.points.iter().copied(), 8, 6, color.stroke_width(2));
            chart.draw_series(dashes)
        } else {
            chart.draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
        };
        let legend_width = if s.reference { 1 } else { 2 };
        drawn
            .map_err(|e| err(&e))?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(legend_width))
            });
        if !s.reference {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_the_legend() {
        let dir = std::env::temp_dir().join(format!("tempo-benches-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.svg");
        let series = [
            Series {
                label: "tokio".into(),
                points: vec![(500.0, 10.0), (1000.0, 20.0)],
                reference: false,
            },
            Series {
                label: "expected".into(),
                points: vec![(500.0, 25_000.0), (1000.0, 50_000.0)],
                reference: true,
            },
        ];
        line_chart(&path, "t", "streams", "cpu %", &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("tokio"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
