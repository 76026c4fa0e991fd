//! SVG plots of coverage growth (plotters, SVG backend only).

use anyhow::Context;
use plotters::prelude::*;
use std::path::Path;

/// Plots one line per k (coverage fraction after each input) into an SVG file.
pub fn growth_svg(file: &Path, title: &str, series: &[Vec<f64>]) -> anyhow::Result<()> {
    let inputs = series.first().map_or(0, Vec::len).max(1);
    let root = SVGBackend::new(file, (800, 500)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("k-path coverage growth: {title}"),
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(1..inputs, 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("inputs")
            .y_desc("coverage")
            .draw()?;
        for (k, values) in series.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    values.iter().enumerate().map(|(i, &v)| (i + 1, v)),
                    color.stroke_width(2),
                ))?
                .label(format!("k = {}", k + 1))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("cannot plot to {}", file.display()))
}
