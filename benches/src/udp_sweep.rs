//! The UDP sweep: sender + receiver for each runtime x stream count x
//! throttling period, each point run several times interleaved, medians
//! written to CSV, drawn as three SVG figures (CPU, throughput, latency)
//! and printed as a table; and the syscall count of one point under
//! `strace -c -f` ([`run_syscalls`]).
//!
//! Sender and receiver are separate processes (this executable re-run as
//! `udp-sweep send ...` / `udp-sweep receive ...`, the same code as the
//! `udp-sender` / `udp-receiver` binaries), pinned to different CPUs so that a
//! receiver that falls behind cannot starve the sender. Runs are interleaved
//! (run 1 of every point, then run 2 of every point, ...) so that a noisy
//! minute on a shared machine hits every runtime alike.
//!
//! **Builds side by side** (`--builds base=PATH,...`): each Tempo receiver
//! also runs from another build's `udp-sweep` executable (built from another
//! checkout), labelled `NAME@LABEL`, in the same interleaved runs, against
//! the same sender and the same reference receivers (tokio, the mio loops)
//! of this build. A change to a hot path is measured this way: both builds
//! in one sweep, since runs an hour apart differ by more than the change.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::child_process::{read_row, start_receiver_then_sender, wait_bounded};
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
    /// The sender's sleep granularity: each stream's datagram goes out
    /// within this of its own phase (500 µs by default; 50 µs models real
    /// sources, whose packets arrive spread over the period).
    pub sender_quantum: Duration,
    /// Port of stream 0.
    pub base_port: u16,
    /// CPU for the sender and for the receiver (`None`: no pinning).
    pub cpus: Option<(usize, usize)>,
    /// Output directory.
    pub out_dir: PathBuf,
    /// File name prefix of the outputs (`udp` gives `udp.csv`, ...).
    pub prefix: String,
    /// Other builds' `udp-sweep` executables, `(label, path)`: every Tempo
    /// runtime is measured from each too (see the module docs).
    pub builds: Vec<(String, PathBuf)>,
}

/// One receiver the sweep measures: a runtime, run by this executable or by
/// another build's.
#[derive(Debug, Clone)]
pub struct SweepReceiver {
    /// What runs.
    pub runtime: ReceiverRuntime,
    /// `(label, executable)` of the other build; `None`: this executable.
    pub build: Option<(String, PathBuf)>,
}

impl SweepReceiver {
    /// The name results carry: the runtime's, with `@LABEL` for another
    /// build's.
    pub fn label(&self) -> String {
        match &self.build {
            None => self.runtime.name(),
            Some((label, _)) => format!("{}@{label}", self.runtime.name()),
        }
    }
}

/// Parses `--builds`: `LABEL=PATH` items, each path an existing file.
pub fn parse_builds(items: &[String]) -> Result<Vec<(String, PathBuf)>, String> {
    items
        .iter()
        .map(|item| {
            let (label, path) = item
                .split_once('=')
                .filter(|(label, path)| !label.is_empty() && !path.is_empty())
                .ok_or_else(|| {
                    format!("--builds item {item:?}: want LABEL=PATH to another build's udp-sweep")
                })?;
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(format!(
                    "--builds {label}: {} is not a file (build it with `cargo build --release \
                     -p tempo-benches --bin udp-sweep` in the other checkout)",
                    path.display()
                ));
            }
            Ok((label.to_string(), path))
        })
        .collect()
}

/// The receivers of a sweep: every runtime from this executable, and every
/// Tempo runtime from each other build too.
pub fn sweep_receivers(cfg: &SweepConfig) -> Result<Vec<SweepReceiver>, String> {
    let mut out = Vec::new();
    for runtime in expand_runtimes(cfg)? {
        let tempo = runtime.name().starts_with("tempo");
        out.push(SweepReceiver {
            runtime,
            build: None,
        });
        if tempo {
            out.extend(cfg.builds.iter().map(|build| SweepReceiver {
                runtime,
                build: Some(build.clone()),
            }));
        }
    }
    Ok(out)
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
        // `tempo-throttled`, `tempo-throttled-batch`, `mio-throttled`: no `:T`
        // means every throttling period of the sweep.
        let names: Vec<String> = if name.contains("-throttled") && !name.contains(':') {
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
    run_point_traced(exe, exe, cfg, runtime, streams, None)
}

/// [`run_point`]; with `trace`, `strace -c -f` attaches to the receiver
/// when its warm-up ends (so that it counts the measured window, not the
/// sockets' set-up) and writes its summary to that file when the receiver
/// exits.
/// `receiver_exe` runs the receiver (another build's, or `exe`).
fn run_point_traced(
    exe: &Path,
    receiver_exe: &Path,
    cfg: &SweepConfig,
    runtime: &ReceiverRuntime,
    streams: usize,
    trace: Option<&Path>,
) -> Result<RunResult, String> {
    let interval_ms = format!("{}", cfg.interval.as_secs_f64() * 1e3);
    let mut recv = Command::new(receiver_exe);
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
        .args(["--quantum-us", &cfg.sender_quantum.as_micros().to_string()])
        .arg("--header");
    if cfg.burst {
        send.arg("--burst");
    }
    if let Some((send_cpu, recv_cpu)) = cfg.cpus {
        send.args(["--cpu", &send_cpu.to_string()]);
        recv.args(["--cpu", &recv_cpu.to_string()]);
    }
    let (mut receiver, mut sender) =
        start_receiver_then_sender(&mut recv, &mut send, Stdio::piped())?;
    let limit = send_for + Duration::from_secs(30);
    let mut tracer = None;
    if let Some(file) = trace {
        // The receiver's window starts `warmup` after its sockets are
        // bound, which takes a moment: attach a little after that.
        std::thread::sleep(cfg.warmup.saturating_sub(Duration::from_millis(50)));
        let attached = Command::new("strace")
            .args(["-c", "-f", "-o"])
            .arg(file)
            .args(["-p", &receiver.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        match attached {
            Ok(child) => tracer = Some(child),
            Err(e) => eprintln!("udp-sweep: start strace: {e}"),
        }
    }
    let receiver_row = read_row(&mut receiver, "receiver");
    let receiver_done = wait_bounded(&mut receiver, limit, "receiver");
    let sender_row = read_row(&mut sender, "sender");
    let sender_done = wait_bounded(&mut sender, limit, "sender");
    if let Some(mut tracer) = tracer {
        // strace detaches and writes its summary when the receiver exits.
        wait_bounded(&mut tracer, Duration::from_secs(30), "strace")?;
    }
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
pub fn summarize(results: &[RunResult], names: &[String], streams: &[usize]) -> Vec<CsvRow> {
    let mut rows = Vec::new();
    for name in names {
        for &n in streams {
            let runs: Vec<&RunResult> = results
                .iter()
                .filter(|r| r.runtime == *name && r.streams == n)
                .collect();
            if runs.is_empty() {
                continue;
            }
            // `tempo-throttled:20@base`: the period is between ':' and '@'.
            let runtime = name.split_once('@').map_or(name.as_str(), |(r, _)| r);
            let throttle = runtime.split_once(':').map_or("0", |(_, t)| t);
            let mut row = CsvRow::new();
            row.push("runtime", name)
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
            let cpu: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.receiver.get_f64("cpu_us_per_pkt"))
                .collect();
            let (low, high) = cpu
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            row.push_f64("cpu_us_per_pkt_min", low, 3)
                .push_f64("cpu_us_per_pkt_max", high, 3);
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

/// A legend entry that reads without the README: the runtime's name and
/// what it is.
fn legend(runtime: &str) -> String {
    let (name, build) = runtime
        .split_once('@')
        .map_or((runtime, None), |(n, b)| (n, Some(b)));
    let (family, period) = name
        .split_once(':')
        .map_or((name, None), |(f, p)| (f, Some(p)));
    let what = match family {
        "tokio" => "tokio current-thread runtime".to_string(),
        "tokio-threadbuf" => "tokio, one buffer per thread".to_string(),
        "threads" => "a blocking thread per socket".to_string(),
        "mio-loop" => "hand-written epoll loop, no runtime".to_string(),
        "tempo" => "Tempo, basic scheduler".to_string(),
        f if f.starts_with("mio-throttled") => {
            "hand-written throttled epoll loop: the floor, Tempo's goal".to_string()
        }
        f if f.starts_with("tempo-throttled") => "Tempo, throttling scheduler".to_string(),
        _ => String::new(),
    };
    let mut label = name.to_string();
    if !what.is_empty() {
        label.push_str(" (");
        label.push_str(&what);
        if let Some(p) = period {
            label.push_str(&format!(", T = {p} ms"));
        }
        label.push(')');
    }
    if let Some(b) = build {
        label.push_str(&format!(" [build {b}]"));
    }
    label
}

/// A horizontal reference line across the sweep's stream counts.
fn level(cfg: &SweepConfig, label: String, y: f64) -> Series {
    let most = cfg.streams.iter().copied().max().unwrap_or(1) as f64;
    Series {
        label,
        points: vec![(0.0, y), (most, y)],
        reference: true,
    }
}

/// Draws the three figures (CPU, throughput, latency) from the summary
/// rows, each with its reference drawn dashed (the hand-written loop is
/// the CPU floor, the sent rate the throughput goal, `0.6 T` the latency
/// goal of a throttled runtime); returns the paths written.
pub fn draw_plots(cfg: &SweepConfig, rows: &[CsvRow]) -> Result<Vec<PathBuf>, String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        let n = r.get("runtime").unwrap_or("?").to_string();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    // One runtime's (streams, column / div) points.
    let points = |n: &str, col: &str, div: f64| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.get("runtime") == Some(n))
            .filter_map(|r| Some((r.get_f64("streams")?, r.get_f64(col)? / div)))
            .collect()
    };
    let series_of = |col: &str| -> Vec<Series> {
        names
            .iter()
            .map(|n| Series {
                label: legend(n),
                points: points(n, col, 1.0),
                reference: false,
            })
            .collect()
    };
    let cpu_path = cfg.out_dir.join(format!("{}_cpu.svg", cfg.prefix));
    line_chart(
        &cpu_path,
        "UDP receiver: CPU load vs streams (median of runs; lower is better)",
        "streams (one datagram per stream per interval)",
        "receiver CPU, % of one core",
        &series_of("cpu_pct"),
    )?;
    let mut thr = series_of("rate_pps");
    let expected_per_stream = 1.0 / cfg.interval.as_secs_f64();
    thr.push(Series {
        label: "sent: every datagram received (goal)".into(),
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
        "UDP receiver: received datagrams/s vs streams (below the dashed line: loss)",
        "streams (one datagram per stream per interval)",
        "received datagrams / s",
        &thr,
    )?;
    let mut lat = Vec::new();
    for n in &names {
        for (col, what) in [("lat_p50_us", "p50"), ("lat_p99_us", "p99")] {
            lat.push(Series {
                label: format!("{what}: {}", legend(n)),
                points: points(n, col, 1e3),
                reference: false,
            });
        }
    }
    let mut periods: Vec<&str> = names
        .iter()
        .filter(|n| n.starts_with("tempo-throttled"))
        .filter_map(|n| {
            n.split_once('@')
                .map_or(n.as_str(), |(r, _)| r)
                .split_once(':')
        })
        .map(|(_, p)| p)
        .collect();
    periods.sort();
    periods.dedup();
    for p in periods {
        if let Ok(t) = p.parse::<f64>() {
            let goal = format!(
                "goal: Tempo's p50 <= 0.6 T = {:.0} ms (T = {p} ms)",
                0.6 * t
            );
            lat.push(level(cfg, goal, 0.6 * t));
        }
    }
    let lat_path = cfg.out_dir.join(format!("{}_latency.svg", cfg.prefix));
    line_chart(
        &lat_path,
        "UDP receiver: one-way latency p50 and p99 vs streams (median of runs)",
        "streams (one datagram per stream per interval)",
        "one-way latency, ms",
        &lat,
    )?;
    Ok(vec![cpu_path, thr_path, lat_path])
}

/// The summary rows as a text table, one line per runtime x streams: what
/// the sweep prints when it is done (CPU next to latency and loss).
/// The hand-written loop a runtime's CPU is compared with: `mio-throttled`
/// at the same period for a throttled runtime, `mio-loop` for the others.
fn reference_loop(runtime: &str) -> String {
    let runtime = runtime.split_once('@').map_or(runtime, |(r, _)| r);
    match runtime.split_once(':') {
        Some((_, period)) => format!("mio-throttled:{period}"),
        None => "mio-loop".to_string(),
    }
}

/// The rows as a table: medians, the range of CPU per datagram over the
/// runs, and its ratio to the hand-written loop of the same period in the
/// same sweep (`x loop`, when that loop was measured).
pub fn summary_table(rows: &[CsvRow]) -> String {
    let mut out = format!(
        "{:<26} {:>7} {:>7} {:>10} {:>13} {:>7} {:>9} {:>9} {:>7} {:>14}\n",
        "runtime",
        "streams",
        "cpu %",
        "cpu us/pkt",
        "range",
        "x loop",
        "p50 ms",
        "p99 ms",
        "loss %",
        "sender-limited"
    );
    let num = |r: &CsvRow, col: &str, scale: f64, decimals: usize| {
        r.get_f64(col)
            .map_or("-".to_string(), |v| format!("{:.decimals$}", v * scale))
    };
    for r in rows {
        let runtime = r.get("runtime").unwrap_or("?");
        let reference = reference_loop(runtime);
        let ratio = rows
            .iter()
            .find(|l| l.get("runtime") == Some(&reference) && l.get("streams") == r.get("streams"))
            .and_then(|l| l.get_f64("cpu_us_per_pkt"))
            .zip(r.get_f64("cpu_us_per_pkt"))
            .map_or("-".to_string(), |(l, v)| format!("{:.2}", v / l));
        out.push_str(&format!(
            "{:<26} {:>7} {:>7} {:>10} {:>13} {:>7} {:>9} {:>9} {:>7} {:>14}\n",
            runtime,
            r.get("streams").unwrap_or("?"),
            num(r, "cpu_pct", 1.0, 1),
            num(r, "cpu_us_per_pkt", 1.0, 2),
            format!(
                "{}-{}",
                num(r, "cpu_us_per_pkt_min", 1.0, 2),
                num(r, "cpu_us_per_pkt_max", 1.0, 2)
            ),
            ratio,
            num(r, "lat_p50_us", 1e-3, 2),
            num(r, "lat_p99_us", 1e-3, 2),
            num(r, "loss_pct", 1.0, 2),
            format!(
                "{} of {}",
                r.get("sender_limited_runs").unwrap_or("?"),
                r.get("runs").unwrap_or("?")
            ),
        ));
    }
    out
}

/// What a sweep produced.
#[derive(Debug, Clone)]
pub struct SweepOutput {
    /// One row per runtime x streams (the medians, as in the CSV).
    pub rows: Vec<CsvRow>,
    /// The files written.
    pub written: Vec<PathBuf>,
}

/// Runs the whole sweep; progress on stderr.
pub fn run_sweep(exe: &Path, cfg: &SweepConfig) -> Result<SweepOutput, String> {
    let receivers = sweep_receivers(cfg)?;
    if receivers.is_empty() {
        return Err("no runtime to measure".into());
    }
    std::fs::create_dir_all(&cfg.out_dir)
        .map_err(|e| format!("create {}: {e}", cfg.out_dir.display()))?;
    let total = cfg.runs * cfg.streams.len() * receivers.len();
    let mut results = Vec::with_capacity(total);
    let mut raw = Vec::with_capacity(total);
    let mut done = 0;
    for run in 0..cfg.runs {
        for &n in &cfg.streams {
            for receiver in &receivers {
                done += 1;
                let label = receiver.label();
                eprintln!(
                    "udp-sweep: [{done}/{total}] run {} of {}: {label} x {n} streams",
                    run + 1,
                    cfg.runs,
                );
                let receiver_exe = receiver.build.as_ref().map_or(exe, |(_, path)| path);
                let point = run_point_traced(exe, receiver_exe, cfg, &receiver.runtime, n, None);
                match point {
                    Ok(mut r) => {
                        r.runtime = label;
                        let mut row = CsvRow::new();
                        row.push("run", run + 1);
                        for name in r.receiver.names() {
                            // Another build's receiver reports its runtime's
                            // name: the row carries the build's label.
                            let value = match name {
                                "runtime" => Some(r.runtime.as_str()),
                                _ => r.receiver.get(name),
                            };
                            row.push(name, value.unwrap_or(""));
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
    let names: Vec<String> = receivers.iter().map(SweepReceiver::label).collect();
    let rows = summarize(&results, &names, &cfg.streams);
    if rows.is_empty() {
        return Err("every point failed".into());
    }
    let csv = cfg.out_dir.join(format!("{}.csv", cfg.prefix));
    write_csv(&csv, &rows)?;
    let runs_csv = cfg.out_dir.join(format!("{}-runs.csv", cfg.prefix));
    write_csv(&runs_csv, &raw)?;
    let mut written = vec![csv, runs_csv];
    written.extend(draw_plots(cfg, &rows)?);
    Ok(SweepOutput { rows, written })
}

/// Receive-family syscalls: what "receive syscalls per datagram" counts.
pub const RECV_SYSCALLS: &[&str] = &["recvfrom", "recvmsg", "recvmmsg", "recv"];

/// One line of `strace -c`'s table: a syscall, its calls and its errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallCount {
    /// Syscall name.
    pub name: String,
    /// Calls made.
    pub calls: u64,
    /// Calls that returned an error (for a receive: mostly `EAGAIN`, an
    /// empty socket).
    pub errors: u64,
}

/// Parses the summary table `strace -c` writes (`% time seconds
/// usecs/call calls errors syscall`, the errors column empty when zero).
pub fn parse_strace_summary(text: &str) -> Vec<SyscallCount> {
    text.lines()
        .filter_map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            if !(5..=6).contains(&t.len()) || t[0].parse::<f64>().is_err() {
                return None;
            }
            let name = t[t.len() - 1];
            if name == "total" {
                return None;
            }
            Some(SyscallCount {
                name: name.to_string(),
                calls: t[3].parse().ok()?,
                errors: if t.len() == 6 { t[4].parse().ok()? } else { 0 },
            })
        })
        .collect()
}

/// The syscalls of one receiver run, per datagram and per tick.
#[derive(Debug, Clone)]
pub struct SyscallReport {
    /// Runtime name.
    pub runtime: String,
    /// Streams.
    pub streams: usize,
    /// Datagrams the receiver got in its measured window.
    pub received: u64,
    /// Receive-family calls ([`RECV_SYSCALLS`]).
    pub recv_calls: u64,
    /// Receive calls that returned an error (`EAGAIN`: nothing to read).
    pub recv_errors: u64,
    /// `epoll_wait` (and `epoll_pwait`) calls.
    pub epoll_waits: u64,
    /// Throttling periods in the measured time, for a throttled runtime.
    pub nominal_ticks: Option<f64>,
    /// Every syscall counted, for the record.
    pub all: Vec<SyscallCount>,
}

impl std::fmt::Display for SyscallReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let per = |n: u64, d: f64| if d > 0.0 { n as f64 / d } else { f64::NAN };
        writeln!(
            f,
            "{} x {} streams: {} datagrams received",
            self.runtime, self.streams, self.received
        )?;
        writeln!(
            f,
            "  receive syscalls: {} ({} returned an error such as EAGAIN) = {:.3} per datagram",
            self.recv_calls,
            self.recv_errors,
            per(self.recv_calls, self.received as f64)
        )?;
        match self.nominal_ticks {
            Some(ticks) => writeln!(
                f,
                "  epoll_wait: {} = {:.2} per tick ({:.0} ticks of the throttling period)",
                self.epoll_waits,
                per(self.epoll_waits, ticks),
                ticks
            ),
            None => writeln!(
                f,
                "  epoll_wait: {} = {:.3} per datagram (unthrottled: no tick)",
                self.epoll_waits,
                per(self.epoll_waits, self.received as f64)
            ),
        }
    }
}

/// Runs one point with `strace -c -f` attached to the receiver for its
/// measured window (attached when the warm-up ends), and counts its
/// receive syscalls per datagram received in the window and `epoll_wait`
/// calls per tick. strace slows every syscall down: use a modest stream
/// count (a few hundred), where the receiver stays far from saturation,
/// and check that the receiver's summary shows no loss. Attaching needs
/// ptrace permission (root, or `kernel.yama.ptrace_scope` = 0).
pub fn run_syscalls(
    exe: &Path,
    cfg: &SweepConfig,
    runtime: &ReceiverRuntime,
    streams: usize,
) -> Result<SyscallReport, String> {
    let strace_ok = Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !strace_ok {
        return Err(
            "strace is not installed (or does not run) on this machine: \
                    install it (e.g. `apt-get install strace`) to count syscalls; \
                    nothing was measured"
                .into(),
        );
    }
    std::fs::create_dir_all(&cfg.out_dir)
        .map_err(|e| format!("create {}: {e}", cfg.out_dir.display()))?;
    let trace = cfg.out_dir.join(format!(
        "{}-strace-{}-{streams}.txt",
        cfg.prefix,
        runtime.name().replace(':', "_")
    ));
    let _ = std::fs::remove_file(&trace);
    let run = run_point_traced(exe, exe, cfg, runtime, streams, Some(&trace))?;
    let text = std::fs::read_to_string(&trace)
        .map_err(|e| format!("read strace output {}: {e}", trace.display()))?;
    let all = parse_strace_summary(&text);
    let sum = |names: &[&str], f: fn(&SyscallCount) -> u64| -> u64 {
        all.iter()
            .filter(|c| names.contains(&c.name.as_str()))
            .map(f)
            .sum()
    };
    let nominal_ticks = runtime
        .period()
        .filter(|t| !t.is_zero())
        .map(|t| cfg.window.as_secs_f64() / t.as_secs_f64());
    Ok(SyscallReport {
        runtime: runtime.name(),
        streams,
        received: run.receiver.get_f64("received").unwrap_or(0.0) as u64,
        recv_calls: sum(RECV_SYSCALLS, |c| c.calls),
        recv_errors: sum(RECV_SYSCALLS, |c| c.errors),
        epoll_waits: sum(&["epoll_wait", "epoll_pwait", "epoll_pwait2"], |c| c.calls),
        nominal_ticks,
        all,
    })
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
            sender_quantum: Duration::from_micros(500),
            builds: Vec::new(),
        }
    }

    #[test]
    fn throttled_names_expand_to_every_throttle() {
        let rts = expand_runtimes(&cfg(&[
            "tempo",
            "tempo-throttled",
            "mio-throttled:10",
            "tempo-throttled-batch",
        ]))
        .unwrap();
        let names: Vec<String> = rts.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "tempo",
                "tempo-throttled:5",
                "tempo-throttled:20",
                "mio-throttled:10",
                "tempo-throttled-batch:5",
                "tempo-throttled-batch:20"
            ]
        );
        assert!(expand_runtimes(&cfg(&["nope"])).is_err());
    }

    #[test]
    fn strace_summary_is_parsed_with_and_without_errors() {
        let text = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 62.10    0.120000          12     10000      3333 recvfrom
 30.00    0.060000         240       250           epoll_wait
  7.90    0.015000           5      3000           read
------ ----------- ----------- --------- --------- ----------------
100.00    0.195000          14     13250      3333 total
";
        let counts = parse_strace_summary(text);
        assert_eq!(
            counts,
            [
                SyscallCount {
                    name: "recvfrom".into(),
                    calls: 10000,
                    errors: 3333
                },
                SyscallCount {
                    name: "epoll_wait".into(),
                    calls: 250,
                    errors: 0
                },
                SyscallCount {
                    name: "read".into(),
                    calls: 3000,
                    errors: 0
                },
            ]
        );
    }

    #[test]
    fn the_printed_table_has_cpu_latency_and_loss() {
        let mut row = CsvRow::new();
        row.push("runtime", "tempo-throttled:20")
            .push("streams", 8000)
            .push("runs", 3)
            .push("loss_pct", 0.25)
            .push("cpu_pct", 55.5)
            .push("cpu_us_per_pkt", 1.384)
            .push("lat_p50_us", 11007)
            .push("lat_p99_us", 21503)
            .push("sender_limited_runs", 1)
            .push("cpu_us_per_pkt_min", 1.301)
            .push("cpu_us_per_pkt_max", 1.452);
        let mut hand_written = CsvRow::new();
        hand_written
            .push("runtime", "mio-throttled:20")
            .push("streams", 8000)
            .push("cpu_us_per_pkt", 1.153);
        let table = summary_table(&[row, hand_written]);
        let mut lines = table.lines();
        let header = lines.next().unwrap();
        for col in [
            "cpu %",
            "cpu us/pkt",
            "range",
            "x loop",
            "p50 ms",
            "p99 ms",
            "loss %",
        ] {
            assert!(header.contains(col), "{header}");
        }
        let line = lines.next().unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "tempo-throttled:20",
                "8000",
                "55.5",
                "1.38",
                "1.30-1.45",
                "1.20",
                "11.01",
                "21.50",
                "0.25",
                "1",
                "of",
                "3"
            ]
        );
    }

    #[test]
    fn plots_draw_the_floor_and_the_goals_with_legends_that_say_what_a_line_is() {
        let dir = std::env::temp_dir().join(format!("tempo-sweep-plots-{}", std::process::id()));
        let mut c = cfg(&["tempo-throttled:20", "mio-throttled:20"]);
        c.out_dir = dir.clone();
        std::fs::create_dir_all(&dir).unwrap();
        let mut rows = Vec::new();
        for runtime in ["tempo-throttled:20", "mio-throttled:20"] {
            for streams in c.streams.clone() {
                let mut row = CsvRow::new();
                row.push("runtime", runtime)
                    .push("streams", streams)
                    .push("cpu_pct", streams as f64 / 10.0)
                    .push("rate_pps", streams * 50)
                    .push("lat_p50_us", 9_000)
                    .push("lat_p99_us", 19_000);
                rows.push(row);
            }
        }
        let written = draw_plots(&c, &rows).unwrap();
        let read = |name: &str| {
            let path = dir.join(name);
            assert!(written.contains(&path), "{name} not written");
            std::fs::read_to_string(path).unwrap()
        };
        let cpu = read("t_cpu.svg");
        assert!(cpu.contains("mio-throttled:20 (hand-written throttled epoll loop: the floor"));
        assert!(cpu.contains("tempo-throttled:20 (Tempo, throttling scheduler, T = 20 ms)"));
        let latency = read("t_latency.svg");
        assert!(latency.contains("p99: tempo-throttled:20"));
        // SVG escapes the apostrophe and the `<`.
        assert!(latency.contains("goal: Tempo&apos;s p50 &lt;= 0.6 T = 12 ms"));
        let throughput = read("t_throughput.svg");
        assert!(throughput.contains("sent: every datagram received (goal)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn legends_name_the_build_of_a_before_after_sweep() {
        assert_eq!(
            legend("tempo-throttled:20@base"),
            "tempo-throttled:20 (Tempo, throttling scheduler, T = 20 ms) [build base]"
        );
        assert_eq!(legend("tokio"), "tokio (tokio current-thread runtime)");
        assert_eq!(legend("something-new"), "something-new");
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
        let rows = summarize(&results, &["tokio".to_string()], &[10, 20]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get_f64("cpu_pct"), Some(12.0));
        assert_eq!(rows[0].get("runs"), Some("3"));
        assert_eq!(rows[0].get("sender_limited_runs"), Some("1"));
        assert_eq!(rows[0].get("throttle_ms"), Some("0"));
    }

    #[test]
    fn other_builds_measure_the_tempo_runtimes_under_their_label() {
        let exe = std::env::current_exe().unwrap();
        let builds = parse_builds(&[format!("base={}", exe.display())]).unwrap();
        assert_eq!(builds[0].0, "base");
        assert!(parse_builds(&["base".into()]).is_err());
        assert!(parse_builds(&["base=/no/such/udp-sweep".into()]).is_err());
        let receivers: Vec<SweepReceiver> = [ReceiverRuntime::Tokio]
            .into_iter()
            .chain(ReceiverRuntime::parse("tempo-throttled:20"))
            .flat_map(|runtime| {
                let tempo = runtime.name().starts_with("tempo");
                let other = tempo.then(|| SweepReceiver {
                    runtime,
                    build: Some(builds[0].clone()),
                });
                std::iter::once(SweepReceiver {
                    runtime,
                    build: None,
                })
                .chain(other)
            })
            .collect();
        let labels: Vec<String> = receivers.iter().map(SweepReceiver::label).collect();
        assert_eq!(
            labels,
            ["tokio", "tempo-throttled:20", "tempo-throttled:20@base"]
        );
        let result = |runtime: &str| RunResult {
            runtime: runtime.into(),
            streams: 10,
            receiver: CsvRow::new(),
            sender: CsvRow::new(),
        };
        let rows = summarize(
            &[
                result("tempo-throttled:20"),
                result("tempo-throttled:20@base"),
            ],
            &labels,
            &[10],
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].get("runtime"), Some("tempo-throttled:20@base"));
        assert_eq!(rows[1].get("throttle_ms"), Some("20"));
    }
}
