//! `timer-streams`: the timer-stream benchmark (threadshare's ts-standalone
//! analog) over runtimes x sink designs x stream counts.
//!
//! ```text
//! timer-streams [--quick] [--runtimes tempo,tempo-throttled,tokio] [--throttles 5,10,20]
//!               [--sinks sync-mutex,async-mutex,channel] [--streams 1000,2000,...,7000]
//!               [--period-ms 20] [--aligned] [--runs 3] [--warmup-secs 2] [--window-secs 5]
//!               [--out benches/results]
//! timer-streams point --runtime tokio --sink channel --streams 1000 [...] [--header]
//! ```
//! Each point runs in a child process (`timer-streams point ...`), runs are
//! interleaved, medians go to `timers.csv` and `timers_cpu.svg`: in
//! `--out DIR`, `results/quick/` for `--quick`, else a fresh
//! `results/runs/timers-<timestamp>/` (never over the committed results).
//! `--help` prints the usage ([`USAGE`]).

use std::process::{Command, ExitCode};
use std::time::Duration;

use tempo_benches::alloc_count::CountingAllocator;
use tempo_benches::args::Args;
use tempo_benches::child_process::run_for_row;
use tempo_benches::median::median;
use tempo_benches::out_dir::output_dir;
use tempo_benches::plot::{line_chart, Series};
use tempo_benches::report::{write_csv, CsvRow};
use tempo_benches::timer_streams::stream::SinkKind;
use tempo_benches::timer_streams::{run_point, TimerRuntime, TimerStreamsConfig};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// `timer-streams --help`.
const USAGE: &str = "\
usage: timer-streams [options]             the sweep
       timer-streams --quick               a smoke run of a few seconds
       timer-streams point --runtime NAME [options] [--header]   one point

S streams, each a task woken by a periodic timer that hands a small buffer
to its sink (sync-mutex, async-mutex or channel), per runtime x sink x
stream count, --runs times interleaved; medians go to timers.csv and
timers_cpu.svg.

  --runtimes A,B,...   tempo, tempo-throttled[:T], tokio (default: all three)
  --throttles MS,...   throttling periods for tempo-throttled (default 5,10,20)
  --sinks A,B,...      sync-mutex, async-mutex, channel (default: all three)
  --streams N,...      stream counts (default 1000,2000,...,7000)
  --period-ms MS       timer period (default 20)
  --aligned            every stream ticks at the same time (default: spread)
  --runs N             interleaved runs per point (default 3)
  --warmup-secs S      not measured (default 2)
  --window-secs S      measured (default 5)
  --out DIR            output directory (default: a fresh
                       benches/results/runs/timers-<UTC time>/; use
                       --out benches/results to replace the committed files)
  --quick              200 streams, T = 20 ms, 1 short run, into
                       benches/results/quick/
  -h, --help           this text

point: --runtime NAME (one; tempo-throttled:T), --sink KIND, --streams N,
--period-ms, --aligned, --warmup-secs, --window-secs, --header.
";

fn main() -> ExitCode {
    let mut args = Args::from_env();
    let result = match args.subcommand().as_deref() {
        Some("point") => point(args),
        Some(other) => Err(format!("unknown subcommand `{other}` (point, or none)")),
        None => sweep(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("timer-streams: {e}");
            ExitCode::FAILURE
        }
    }
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0))
}

fn point(mut args: Args) -> Result<(), String> {
    if args.help() {
        print!("{USAGE}");
        return Ok(());
    }
    let name: String = args.raw("runtime")?.ok_or("--runtime is required")?;
    let cfg = TimerStreamsConfig {
        runtime: TimerRuntime::parse(&name).map_err(|e| e.to_string())?,
        sink: SinkKind::parse(&args.value("sink", "channel".to_string())?)?,
        streams: args.value("streams", 1000usize)?,
        period: Duration::from_secs_f64(args.value("period-ms", 20.0f64)? / 1e3),
        aligned: args.flag("aligned"),
        warmup: secs(args.value("warmup-secs", 2.0f64)?),
        window: secs(args.value("window-secs", 5.0f64)?),
    };
    let header = args.flag("header");
    args.finish()?;
    let result = run_point(&cfg).map_err(|e| e.to_string())?;
    let row = result.to_row();
    if header {
        println!("{}", row.header());
    }
    println!("{}", row.values());
    eprintln!("timer-streams: {}", result.summary());
    Ok(())
}

/// Columns reported as medians.
const MEDIANS: &[&str] = &[
    "ticks",
    "buffers",
    "cpu_pct",
    "parked_pct",
    "cpu_us_per_buffer",
    "lat_p50_us",
    "lat_p99_us",
    "lat_max_us",
    "timer_err_p50_us",
    "timer_err_p99_us",
    "timer_err_p1_us",
    "allocs_per_buffer",
    "os_threads",
    "controller_late_ms",
];

fn sweep(mut args: Args) -> Result<(), String> {
    if args.help() {
        print!("{USAGE}");
        return Ok(());
    }
    let quick = args.flag("quick");
    let runtimes: Vec<String> = args.list(
        "runtimes",
        ["tempo", "tempo-throttled", "tokio"]
            .map(String::from)
            .to_vec(),
    )?;
    let throttles: Vec<f64> = args.list(
        "throttles",
        if quick {
            vec![20.0]
        } else {
            vec![5.0, 10.0, 20.0]
        },
    )?;
    let sinks: Vec<String> = args.list(
        "sinks",
        SinkKind::ALL.map(|k| k.name().to_string()).to_vec(),
    )?;
    let streams: Vec<usize> = args.list(
        "streams",
        if quick {
            vec![200]
        } else {
            (1..=7).map(|k| k * 1000).collect()
        },
    )?;
    let period_ms: f64 = args.value("period-ms", 20.0)?;
    let aligned = args.flag("aligned");
    let runs: usize = args.value("runs", if quick { 1 } else { 3 })?;
    let warmup: f64 = args.value("warmup-secs", if quick { 0.3 } else { 2.0 })?;
    let window: f64 = args.value("window-secs", if quick { 0.7 } else { 5.0 })?;
    let out_dir = output_dir(args.raw("out")?, quick, "timers");
    args.finish()?;
    for s in &sinks {
        SinkKind::parse(s)?;
    }

    let mut names = Vec::new();
    for r in &runtimes {
        let expanded: Vec<String> = if r.ends_with("-throttled") {
            throttles.iter().map(|t| format!("{r}:{t}")).collect()
        } else {
            vec![r.clone()]
        };
        for n in expanded {
            names.push(TimerRuntime::parse(&n).map_err(|e| e.to_string())?.name());
        }
    }
    if names.is_empty() {
        return Err("no runtime to measure".into());
    }
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("create {}: {e}", out_dir.display()))?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let total = runs * streams.len() * names.len() * sinks.len();
    let mut done = 0;
    let mut results: Vec<CsvRow> = Vec::new();
    for run in 0..runs {
        for &n in &streams {
            for rt in &names {
                for sink in &sinks {
                    done += 1;
                    eprintln!(
                        "timer-streams: [{done}/{total}] run {}: {rt} {sink} x {n}",
                        run + 1
                    );
                    let mut cmd = Command::new(&exe);
                    cmd.arg("point")
                        .args(["--runtime", rt, "--sink", sink])
                        .args(["--streams", &n.to_string()])
                        .args(["--period-ms", &period_ms.to_string()])
                        .args(["--warmup-secs", &warmup.to_string()])
                        .args(["--window-secs", &window.to_string()])
                        .arg("--header");
                    if aligned {
                        cmd.arg("--aligned");
                    }
                    let limit = secs(warmup + window + 60.0);
                    match run_for_row(&mut cmd, limit, "timer-streams point") {
                        Ok(row) => results.push(row),
                        Err(e) => eprintln!("timer-streams: point failed: {e}"),
                    }
                }
            }
        }
    }
    let mut rows = Vec::new();
    for rt in &names {
        for sink in &sinks {
            for &n in &streams {
                let n_str = n.to_string();
                let runs: Vec<&CsvRow> = results
                    .iter()
                    .filter(|r| {
                        r.get("runtime") == Some(rt)
                            && r.get("sink") == Some(sink)
                            && r.get("streams") == Some(&n_str)
                    })
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let mut row = CsvRow::new();
                row.push("runtime", rt)
                    .push("sink", sink)
                    .push("streams", n)
                    .push("period_ms", period_ms)
                    .push("aligned", aligned)
                    .push("runs", runs.len());
                for col in MEDIANS {
                    let v: Vec<f64> = runs.iter().filter_map(|r| r.get_f64(col)).collect();
                    let decimals = if col.ends_with("_pct") || col.contains("_per_") {
                        3
                    } else {
                        0
                    };
                    row.push_f64(col, median(&v).unwrap_or(f64::NAN), decimals);
                }
                rows.push(row);
            }
        }
    }
    if rows.is_empty() {
        return Err("every point failed".into());
    }
    let csv = out_dir.join("timers.csv");
    write_csv(&csv, &rows)?;
    let series: Vec<Series> = names
        .iter()
        .flat_map(|rt| sinks.iter().map(move |s| (rt, s)))
        .map(|(rt, s)| Series {
            label: format!("{rt} {s}"),
            points: rows
                .iter()
                .filter(|r| r.get("runtime") == Some(rt) && r.get("sink") == Some(s))
                .filter_map(|r| Some((r.get_f64("streams")?, r.get_f64("cpu_pct")?)))
                .collect(),
            reference: false,
        })
        .collect();
    let svg = out_dir.join("timers_cpu.svg");
    line_chart(
        &svg,
        "Timer streams: CPU load vs streams (median of runs)",
        "streams",
        "CPU, % of one core",
        &series,
    )?;
    eprintln!("timer-streams: wrote {}", csv.display());
    eprintln!("timer-streams: wrote {}", svg.display());
    Ok(())
}
