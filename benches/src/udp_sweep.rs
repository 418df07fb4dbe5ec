//! The UDP sweep: sender + receiver for each runtime x stream count x
//! throttling period, each point run several times interleaved, medians
//! written to CSV and drawn as two SVG figures.
//!
//! Sender and receiver are separate processes (this executable re-run as
//! `udp-sweep send ...` / `udp-sweep receive ...`, the same code as the
//! `udp-sender` / `udp-receiver` binaries), pinned to different CPUs so that a
//! receiver that falls behind cannot starve the sender. Runs are interleaved
//! (run 1 of every point, then run 2 of every point, ...) so that a noisy
//! minute on a shared machine hits every runtime alike.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::child_process::{read_row, wait_bounded};
use crate::median::median;
use crate::plot::{line_chart, Series};
use crate::receivers::ReceiverRuntime;
use crate::report::{write_csv, CsvRow};

/// Default runtimes, in the order they appear in the results.
pub const DEFAULT_RUNTIMES: &[&str] = &[
    "tempo",
    "tempo-throttled",
    "tokio",
    "threads",
    "mio-loop",
    "mio-throttled",
];

/// Everything the sweep varies and how it measures.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// Runtime names; a throttled name without `:T` expands to every throttle.
    pub runtimes: Vec<String>,
    /// Stream counts.
    pub streams: Vec<usize>,
    /// Throttling periods in ms for throttled runtimes without `:T`.
    pub throttles_ms: Vec<f64>,
    /// Runs per point.
    pub runs: usize,
    /// Receiver warm-up.
    pub warmup: Duration,
    /// Receiver measured window.
    pub window: Duration,
    /// Sender interval.
    pub interval: Duration,
    /// Datagram size.
    pub size: usize,
    /// Sender sends each interval at once.
    pub burst: bool,
    /// Port of stream 0.
    pub base_port: u16,
    /// CPU for the sender and for the receiver (`None`: no pinning).
    pub cpus: Option<(usize, usize)>,
    /// Output directory.
    pub out_dir: PathBuf,
    /// File name prefix of the outputs (`udp` gives `udp.csv`, ...).
    pub prefix: String,
}

/// One receiver + sender run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Runtime name as measured (canonical).
    pub runtime: String,
    /// Stream count.
    pub streams: usize,
    /// The receiver's row.
    pub receiver: CsvRow,
    /// The sender's row.
    pub sender: CsvRow,
}

/// Expands the configured names into the runtimes to measure.
pub fn expand_runtimes(cfg: &SweepConfig) -> Result<Vec<ReceiverRuntime>, String> {
    let mut out = Vec::new();
    for name in &cfg.runtimes {
        let names: Vec<String> = if name.ends_with("-throttled") {
            cfg.throttles_ms
                .iter()
                .map(|t| format!("{name}:{t}"))
                .collect()
        } else {
            vec![name.clone()]
        };
        for n in names {
            out.push(ReceiverRuntime::parse(&n).map_err(|e| e.to_string())?);
        }
    }
    Ok(out)
}

fn secs_arg(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Runs one receiver + sender pair and returns both rows.
pub fn run_point(
    exe: &Path,
    cfg: &SweepConfig,
    runtime: &ReceiverRuntime,
    streams: usize,
) -> Result<RunResult, String> {
    let interval_ms = format!("{}", cfg.interval.as_secs_f64() * 1e3);
    let mut recv = Command::new(exe);
    recv.arg("receive")
        .args(["--runtime", &runtime.name()])
        .args(["--streams", &streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--interval-ms", &interval_ms])
        .args(["--warmup-secs", &secs_arg(cfg.warmup)])
        .args(["--window-secs", &secs_arg(cfg.window)])
        .arg("--header");
    let mut send = Command::new(exe);
    // The sender outlives the receiver's window by a margin.
    let send_for = cfg.warmup + cfg.window + Duration::from_millis(500);
    send.arg("send")
        .args(["--streams", &streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--interval-ms", &interval_ms])
        .args(["--size", &cfg.size.to_string()])
        .args(["--secs", &secs_arg(send_for)])
        .arg("--header");
    if cfg.burst {
        send.arg("--burst");
    }
    if let Some((send_cpu, recv_cpu)) = cfg.cpus {
        send.args(["--cpu", &send_cpu.to_string()]);
        recv.args(["--cpu", &recv_cpu.to_string()]);
    }
    let mut receiver = recv
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start receiver: {e}"))?;
    // Let the receiver bind its sockets before datagrams arrive; anything
    // earlier falls in the warm-up anyway.
    std::thread::sleep(Duration::from_millis(100));
    let mut sender = match send.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn() {
        Ok(s) => s,
        Err(e) => {
            let _ = receiver.kill();
            let _ = receiver.wait();
            return Err(format!("start sender: {e}"));
        }
    };
    let limit = send_for + Duration::from_secs(30);
    let receiver_row = read_row(&mut receiver, "receiver");
    let receiver_done = wait_bounded(&mut receiver, limit, "receiver");
    let sender_row = read_row(&mut sender, "sender");
    let sender_done = wait_bounded(&mut sender, limit, "sender");
    receiver_done?;
    sender_done?;
    Ok(RunResult {
        runtime: runtime.name(),
        streams,
        receiver: receiver_row?,
        sender: sender_row?,
    })
}

/// Receiver columns reported as medians, in output order.
const RECEIVER_MEDIANS: &[&str] = &[
    "expected",
    "received",
    "kernel_drops",
    "seq_gaps",
    "loss_pct",
    "rate_pps",
    "cpu_pct",
    "cpu_us_per_pkt",
    "lat_p50_us",
    "lat_p99_us",
    "lat_max_us",
    "allocs_per_pkt",
    "os_threads",
    "controller_late_ms",
];

/// Sender columns reported as medians, renamed with a `sender_` prefix.
const SENDER_MEDIANS: &[&str] = &["rate_pps", "max_lag_us", "cpu_pct"];

/// One output row per (runtime, streams): medians over its runs.
pub fn summarize(
    results: &[RunResult],
    runtimes: &[ReceiverRuntime],
    streams: &[usize],
) -> Vec<CsvRow> {
    let mut rows = Vec::new();
    for rt in runtimes {
        let name = rt.name();
        for &n in streams {
            let runs: Vec<&RunResult> = results
                .iter()
                .filter(|r| r.runtime == name && r.streams == n)
                .collect();
            if runs.is_empty() {
                continue;
            }
            let throttle = name.split_once(':').map_or("0", |(_, t)| t);
            let mut row = CsvRow::new();
            row.push("runtime", &name)
                .push("throttle_ms", throttle)
                .push("streams", n)
                .push("runs", runs.len());
            for col in RECEIVER_MEDIANS {
                let v: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.receiver.get_f64(col))
                    .collect();
                let decimals = if col.ends_with("_pct") || col.ends_with("_pkt") {
                    3
                } else {
                    0
                };
                row.push_f64(col, median(&v).unwrap_or(f64::NAN), decimals);
            }
            for col in SENDER_MEDIANS {
                let v: Vec<f64> = runs.iter().filter_map(|r| r.sender.get_f64(col)).collect();
                row.push_f64(&format!("sender_{col}"), median(&v).unwrap_or(f64::NAN), 0);
            }
            let behind = runs
                .iter()
                .filter(|r| r.sender.get("fell_behind") == Some("true"))
                .count();
            row.push("sender_limited_runs", behind);
            rows.push(row);
        }
    }
    rows
}

/// Draws the two figures from the summary rows; returns the paths written.
pub fn draw_plots(cfg: &SweepConfig, rows: &[CsvRow]) -> Result<Vec<PathBuf>, String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        let n = r.get("runtime").unwrap_or("?").to_string();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let series_of = |col: &str| -> Vec<Series> {
        names
            .iter()
            .map(|n| Series {
                label: n.clone(),
                points: rows
                    .iter()
                    .filter(|r| r.get("runtime") == Some(n.as_str()))
                    .filter_map(|r| Some((r.get_f64("streams")?, r.get_f64(col)?)))
                    .collect(),
                reference: false,
            })
            .collect()
    };
    let cpu_path = cfg.out_dir.join(format!("{}_cpu.svg", cfg.prefix));
    line_chart(
        &cpu_path,
        "UDP receiver: CPU load vs streams (median of runs)",
        "streams",
        "receiver CPU, % of one core",
        &series_of("cpu_pct"),
    )?;
    let mut thr = series_of("rate_pps");
    let expected_per_stream = 1.0 / cfg.interval.as_secs_f64();
    thr.push(Series {
        label: "sent (no loss)".into(),
        points: cfg
            .streams
            .iter()
            .map(|&n| (n as f64, n as f64 * expected_per_stream))
            .collect(),
        reference: true,
    });
    let thr_path = cfg.out_dir.join(format!("{}_throughput.svg", cfg.prefix));
    line_chart(
        &thr_path,
        "UDP receiver: received datagrams/s vs streams (median of runs)",
        "streams",
        "received datagrams / s",
        &thr,
    )?;
    Ok(vec![cpu_path, thr_path])
}

/// Runs the whole sweep; progress on stderr. Returns the files written.
pub fn run_sweep(exe: &Path, cfg: &SweepConfig) -> Result<Vec<PathBuf>, String> {
    let runtimes = expand_runtimes(cfg)?;
    if runtimes.is_empty() {
        return Err("no runtime to measure".into());
    }
    std::fs::create_dir_all(&cfg.out_dir)
        .map_err(|e| format!("create {}: {e}", cfg.out_dir.display()))?;
    let total = cfg.runs * cfg.streams.len() * runtimes.len();
    let mut results = Vec::with_capacity(total);
    let mut raw = Vec::with_capacity(total);
    let mut done = 0;
    for run in 0..cfg.runs {
        for &n in &cfg.streams {
            for rt in &runtimes {
                done += 1;
                eprintln!(
                    "udp-sweep: [{done}/{total}] run {} of {}: {} x {} streams",
                    run + 1,
                    cfg.runs,
                    rt.name(),
                    n
                );
                match run_point(exe, cfg, rt, n) {
                    Ok(r) => {
                        let mut row = CsvRow::new();
                        row.push("run", run + 1);
                        for name in r.receiver.names() {
                            row.push(name, r.receiver.get(name).unwrap_or(""));
                        }
                        for name in r.sender.names().filter(|c| *c != "streams") {
                            row.push(&format!("sender_{name}"), r.sender.get(name).unwrap_or(""));
                        }
                        raw.push(row);
                        results.push(r);
                    }
                    Err(e) => eprintln!("udp-sweep: point failed: {e}"),
                }
            }
        }
    }
    let rows = summarize(&results, &runtimes, &cfg.streams);
    if rows.is_empty() {
        return Err("every point failed".into());
    }
    let csv = cfg.out_dir.join(format!("{}.csv", cfg.prefix));
    write_csv(&csv, &rows)?;
    let runs_csv = cfg.out_dir.join(format!("{}-runs.csv", cfg.prefix));
    write_csv(&runs_csv, &raw)?;
    let mut written = vec![csv, runs_csv];
    written.extend(draw_plots(cfg, &rows)?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(runtimes: &[&str]) -> SweepConfig {
        SweepConfig {
            runtimes: runtimes.iter().map(|s| s.to_string()).collect(),
            streams: vec![10, 20],
            throttles_ms: vec![5.0, 20.0],
            runs: 1,
            warmup: Duration::ZERO,
            window: Duration::ZERO,
            interval: Duration::from_millis(20),
            size: 160,
            burst: false,
            base_port: 20000,
            cpus: None,
            out_dir: PathBuf::from("."),
            prefix: "t".into(),
        }
    }

    #[test]
    fn throttled_names_expand_to_every_throttle() {
        let rts = expand_runtimes(&cfg(&["tempo", "tempo-throttled", "mio-throttled:10"])).unwrap();
        let names: Vec<String> = rts.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "tempo",
                "tempo-throttled:5",
                "tempo-throttled:20",
                "mio-throttled:10"
            ]
        );
        assert!(expand_runtimes(&cfg(&["nope"])).is_err());
    }

    #[test]
    fn summary_takes_medians_per_point() {
        let row = |cpu: f64, behind: bool| {
            let mut rx = CsvRow::new();
            rx.push("cpu_pct", cpu).push("rate_pps", 500);
            let mut tx = CsvRow::new();
            tx.push("rate_pps", 500).push("fell_behind", behind);
            RunResult {
                runtime: "tokio".into(),
                streams: 10,
                receiver: rx,
                sender: tx,
            }
        };
        let results = [row(10.0, false), row(30.0, true), row(12.0, false)];
        let rows = summarize(&results, &[ReceiverRuntime::Tokio], &[10, 20]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get_f64("cpu_pct"), Some(12.0));
        assert_eq!(rows[0].get("runs"), Some("3"));
        assert_eq!(rows[0].get("sender_limited_runs"), Some("1"));
        assert_eq!(rows[0].get("throttle_ms"), Some("0"));
    }
}
