//! The pipeline's result files: every run as a CSV row, the medians per
//! runtime and stream count, and two figures drawn like the UDP sweep's.
//!
//! A run of `pipeline` may cover several stream counts (`--streams
//! 1000,2000,5000`); the figures then show how each runtime's CPU and its
//! lateness (timer source: the longest inter-buffer interval; UDP source:
//! the 99th percentile of one-way latency) grow with the count. Files are
//! named after the source, so a timer run and a UDP run can share one
//! directory (`results/quick/` in CI):
//!
//! * `pipeline_<source>_runs.csv`: one row per run and runtime;
//! * `pipeline_<source>.csv`: medians per runtime and stream count;
//! * `pipeline_<source>_cpu.svg`: CPU % vs streams;
//! * `pipeline_<source>_lateness.svg`: the lateness column vs streams, with
//!   the goal's bound as a reference line.

use std::path::{Path, PathBuf};

use crate::median::median;
use crate::plot::{line_chart, Series};
use crate::report::{write_csv, CsvRow};

/// What a source's lateness figure plots, and its bound.
#[derive(Debug, Clone, Copy)]
pub struct LatenessAxis {
    /// The column (of every run's row) plotted.
    pub column: &'static str,
    /// The y axis label.
    pub label: &'static str,
    /// A reference line (the goal), in the column's unit.
    pub bound: Option<(&'static str, f64)>,
}

/// The columns every run row has, before its source-specific ones:
/// `runtime`, `streams`, `contexts`, `run`.
pub const KEY_COLUMNS: [&str; 4] = ["runtime", "streams", "contexts", "run"];

/// A run row that starts with [`KEY_COLUMNS`].
pub fn run_row(runtime: &str, streams: usize, contexts: usize, run: usize) -> CsvRow {
    let mut row = CsvRow::new();
    row.push("runtime", runtime)
        .push("streams", streams)
        .push("contexts", contexts)
        .push("run", run);
    row
}

/// Medians of every numeric column per `(runtime, streams)`, in the order
/// the pairs first appear; `runs` counts the rows behind each.
pub fn medians(runs: &[CsvRow]) -> Vec<CsvRow> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in runs {
        let key = (
            r.get("runtime").unwrap_or("?").to_string(),
            r.get("streams").unwrap_or("?").to_string(),
        );
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.iter()
        .map(|(runtime, streams)| {
            let of_key: Vec<&CsvRow> = runs
                .iter()
                .filter(|r| r.get("runtime") == Some(runtime) && r.get("streams") == Some(streams))
                .collect();
            let mut row = CsvRow::new();
            row.push("runtime", runtime)
                .push("streams", streams)
                .push("contexts", of_key[0].get("contexts").unwrap_or("?"))
                .push("runs", of_key.len());
            for name in of_key[0].names().filter(|n| !KEY_COLUMNS.contains(n)) {
                let values: Vec<f64> = of_key.iter().filter_map(|r| r.get_f64(name)).collect();
                match median(&values) {
                    Some(m) => row.push_f64(name, m, 4),
                    None => row.push(name, "-"),
                };
            }
            row
        })
        .collect()
}

/// `column` against `streams`, one line per runtime of `rows`.
fn series(rows: &[CsvRow], column: &str) -> Vec<Series> {
    let mut runtimes: Vec<&str> = Vec::new();
    for r in rows {
        let rt = r.get("runtime").unwrap_or("?");
        if !runtimes.contains(&rt) {
            runtimes.push(rt);
        }
    }
    runtimes
        .into_iter()
        .map(|rt| {
            let mut points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.get("runtime") == Some(rt))
                .filter_map(|r| Some((r.get_f64("streams")?, r.get_f64(column)?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: rt.to_string(),
                points,
                reference: false,
            }
        })
        .collect()
}

/// Writes the run rows, their medians and the two figures of `source`
/// into `dir` (created if needed); returns the files written.
pub fn write_results(
    dir: &Path,
    source: &str,
    runs: &[CsvRow],
    lateness: LatenessAxis,
) -> Result<Vec<PathBuf>, String> {
    if runs.is_empty() {
        return Err("no run produced a result".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let file = |suffix: &str| dir.join(format!("pipeline_{source}{suffix}"));
    let (runs_csv, csv) = (file("_runs.csv"), file(".csv"));
    write_csv(&runs_csv, runs)?;
    let medians = medians(runs);
    write_csv(&csv, &medians)?;

    let cpu_svg = file("_cpu.svg");
    line_chart(
        &cpu_svg,
        &format!("Pipeline ({source} source): CPU vs streams (median of runs)"),
        "streams",
        "CPU, % of one core (whole process)",
        &series(&medians, "cpu_pct"),
    )?;
    let lateness_svg = file("_lateness.svg");
    let mut lines = series(&medians, lateness.column);
    if let Some((label, bound)) = lateness.bound {
        let xs = medians.iter().filter_map(|r| r.get_f64("streams"));
        let (lo, hi) = xs.fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        lines.push(Series {
            label: label.to_string(),
            points: vec![(lo.min(hi), bound), (hi, bound)],
            reference: true,
        });
    }
    line_chart(
        &lateness_svg,
        &format!("Pipeline ({source} source): {} vs streams", lateness.label),
        "streams",
        lateness.label,
        &lines,
    )?;
    Ok(vec![runs_csv, csv, cpu_svg, lateness_svg])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(runtime: &str, streams: usize, run: usize, cpu: f64) -> CsvRow {
        let mut r = run_row(runtime, streams, 2, run);
        r.push_f64("cpu_pct", cpu, 1).push("note", "x");
        r
    }

    #[test]
    fn medians_are_per_runtime_and_stream_count() {
        let runs = [
            row("tempo", 1000, 0, 10.0),
            row("tokio", 1000, 0, 20.0),
            row("tempo", 1000, 1, 12.0),
            row("tempo", 1000, 2, 11.0),
            row("tempo", 2000, 0, 30.0),
        ];
        let m = medians(&runs);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].get("runtime"), Some("tempo"));
        assert_eq!(m[0].get("runs"), Some("3"));
        assert_eq!(m[0].get_f64("cpu_pct"), Some(11.0));
        assert_eq!(m[1].get("runtime"), Some("tokio"));
        assert_eq!(m[2].get_f64("streams"), Some(2000.0));
        // A column that is not a number has no median.
        assert_eq!(m[0].get("note"), Some("-"));
    }

    #[test]
    fn writes_both_tables_and_both_figures() {
        let dir =
            std::env::temp_dir().join(format!("tempo-pipeline-results-{}", std::process::id()));
        let runs = [row("tempo", 1000, 0, 10.0), row("tempo", 2000, 0, 19.0)];
        let axis = LatenessAxis {
            column: "cpu_pct",
            label: "CPU again",
            bound: Some(("bound", 15.0)),
        };
        let files = write_results(&dir, "timer", &runs, axis).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "pipeline_timer_runs.csv",
                "pipeline_timer.csv",
                "pipeline_timer_cpu.svg",
                "pipeline_timer_lateness.svg"
            ]
        );
        let medians_csv = std::fs::read_to_string(&files[1]).unwrap();
        assert_eq!(medians_csv.lines().count(), 3, "{medians_csv}");
        assert!(std::fs::read_to_string(&files[3])
            .unwrap()
            .contains("bound"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_runs_is_an_error_not_an_empty_file() {
        let dir = std::env::temp_dir().join("tempo-pipeline-results-none");
        let axis = LatenessAxis {
            column: "x",
            label: "x",
            bound: None,
        };
        assert!(write_results(&dir, "udp", &[], axis).is_err());
    }
}
