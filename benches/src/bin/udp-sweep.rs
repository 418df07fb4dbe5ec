//! `udp-sweep`: the UDP receiver benchmark over runtimes x stream counts x
//! throttling periods, with medians, a CSV and two SVG figures.
//!
//! ```text
//! udp-sweep [--quick] [--runtimes tokio,threads,mio-loop,mio-throttled,tempo,tempo-throttled]
//!           [--streams 500,1000,2000,4000] [--throttles 5,10,20] [--runs 3]
//!           [--warmup-secs 2] [--window-secs 5] [--interval-ms 20] [--size 160]
//!           [--burst] [--base-port 20000] [--out benches/results]
//! ```
//! `--quick` is a smoke run of a few seconds (tempo-throttled:20, tokio,
//! mio-throttled:20; 50 streams, one
//! run, short window) written under `results/quick/`; it checks that the
//! pipeline works and asserts nothing about timing. `udp-sweep send ...` and
//! `udp-sweep receive ...` run the sender / receiver (what the sweep starts
//! as its child processes).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tempo_benches::affinity::available_cpus;
use tempo_benches::alloc_count::CountingAllocator;
use tempo_benches::args::Args;
use tempo_benches::udp_cli::{receiver_main, sender_main, DEFAULT_BASE_PORT};
use tempo_benches::udp_sweep::{run_sweep, SweepConfig, DEFAULT_RUNTIMES};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn main() -> ExitCode {
    let mut args = Args::from_env();
    match args.subcommand().as_deref() {
        Some("receive") => receiver_main(args),
        Some("send") => sender_main(args),
        Some(other) => {
            eprintln!("udp-sweep: unknown subcommand `{other}` (receive, send, or none)");
            ExitCode::FAILURE
        }
        None => match sweep(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("udp-sweep: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn sweep(mut args: Args) -> Result<(), String> {
    let quick = args.flag("quick");
    let results = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    let default_runtimes: Vec<String> = if quick {
        ["tempo-throttled:20", "tokio", "mio-throttled:20"]
            .map(String::from)
            .to_vec()
    } else {
        DEFAULT_RUNTIMES.iter().map(|s| s.to_string()).collect()
    };
    let cfg = SweepConfig {
        runtimes: args.list("runtimes", default_runtimes)?,
        streams: args.list(
            "streams",
            if quick {
                vec![50]
            } else {
                vec![500, 1000, 2000, 4000]
            },
        )?,
        throttles_ms: args.list("throttles", vec![5.0, 10.0, 20.0])?,
        runs: args.value("runs", if quick { 1 } else { 3 })?,
        warmup: Duration::from_secs_f64(args.value("warmup-secs", if quick { 0.3 } else { 2.0 })?),
        window: Duration::from_secs_f64(args.value("window-secs", if quick { 1.0 } else { 5.0 })?),
        interval: Duration::from_secs_f64(args.value("interval-ms", 20.0f64)? / 1e3),
        size: args.value("size", tempo_benches::packet::DEFAULT_SIZE)?,
        burst: args.flag("burst"),
        base_port: args.value("base-port", DEFAULT_BASE_PORT)?,
        cpus: (available_cpus() >= 2).then_some((0, 1)),
        out_dir: match args.raw("out")? {
            Some(dir) => PathBuf::from(dir),
            None if quick => results.join("quick"),
            None => results,
        },
        prefix: "udp".into(),
    };
    args.finish()?;
    if cfg.cpus.is_none() {
        eprintln!("udp-sweep: only one CPU available: sender and receiver are not pinned apart");
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let written = run_sweep(&exe, &cfg)?;
    for path in written {
        eprintln!("udp-sweep: wrote {}", path.display());
    }
    Ok(())
}
