//! `udp-sweep`: the UDP receiver benchmark over runtimes x stream counts x
//! throttling periods, with medians, a CSV, three SVG figures and a
//! printed table. `udp-sweep --help` prints the usage ([`USAGE`]).
//!
//! `--quick` is a run of about half a minute (tempo-throttled:20, tokio,
//! mio-throttled:20; 100, 500 and 1,000 streams, one run, short window)
//! written under `results/quick/`: figures worth a look, and CI's check
//! that the pipeline works (it asserts nothing about timing). A full run without `--out` writes to a fresh
//! `results/runs/udp-<timestamp>/`, never over the committed results.
//! `udp-sweep syscalls ...` counts one point's syscalls under strace;
//! `udp-sweep send ...` and `udp-sweep receive ...` run the sender /
//! receiver (what the sweep starts as its child processes).

use std::process::ExitCode;
use std::time::Duration;

use tempo_benches::affinity::available_cpus;
use tempo_benches::alloc_count::CountingAllocator;
use tempo_benches::args::Args;
use tempo_benches::fd_limit::ensure_open_files_for;
use tempo_benches::out_dir::output_dir;
use tempo_benches::receivers::ReceiverRuntime;
use tempo_benches::udp_cli::{receiver_main, sender_main, DEFAULT_BASE_PORT};
use tempo_benches::udp_socket::check_port_range;
use tempo_benches::udp_sweep::{
    parse_builds, run_sweep, run_syscalls, summary_table, SweepConfig, DEFAULT_RUNTIMES,
};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// `udp-sweep --help`.
const USAGE: &str = "\
usage: udp-sweep [options]                 the sweep
       udp-sweep --quick [options]         a first look in about half a minute
       udp-sweep syscalls --runtime NAME [--streams 200] [options]
       udp-sweep receive|send ... [--help] one receiver / sender (what the sweep runs)

Runs a UDP sender and a receiver (child processes, pinned to CPUs 0 and 1)
for every runtime x stream count, --runs times interleaved, and writes the
medians (udp.csv), every run (udp-runs.csv), udp_cpu.svg,
udp_throughput.svg and udp_latency.svg (p50 and p99), then prints a table
of CPU, latency and loss.

  --runtimes A,B,...   tempo, tempo-throttled[:T], tokio, threads, mio-loop,
                       mio-throttled[:T] (default: these six), and
                       tempo-throttled-batch[:T], mio-throttled-mmsg[:T],
                       mio-throttled-lt[:T], mio-throttled-lt-streambuf[:T],
                       uring-throttled[-dense][:T], tempo-throttled-splitG:T,
                       tempo-throttled-uring[-dense]:T;
                       a throttled name without :T expands to every
                       --throttles value
  --streams N,...      stream counts (default 1000,2000,4000,8000; the
                       open-files limit is raised to fit, or the sweep says
                       how to)
  --throttles MS,...   throttling periods (default 5,10,20)
  --runs N             interleaved runs per point (default 3)
  --warmup-secs S      receiver warm-up (default 2)
  --window-secs S      receiver measured window (default 5)
  --interval-ms MS     per-stream interval (default 20)
  --size BYTES         datagram size (default 160)
  --burst              every stream sends at the start of the interval
  --sender-quantum-us US  the sender's granularity: each stream sends within
                       US of its own phase (default 500; 50 is the
                       realistic model of independent sources)
  --base-port P        port of stream 0 (default 20000)
  --out DIR            output directory (default: a fresh
                       benches/results/runs/udp-<UTC time>/, so that the
                       committed benches/results/ is only replaced on purpose,
                       with --out benches/results)
  --builds L=PATH,...  also run every Tempo receiver from another build's
                       udp-sweep executable (another checkout's
                       target/release/udp-sweep), labelled NAME@L, in the
                       same interleaved runs: before/after a change
  --quick              tempo-throttled:20, tokio, mio-throttled:20 x 100,
                       500, 1000 streams, 1 run, short window, into
                       benches/results/quick/
  -h, --help           this text

syscalls: runs one point, attaches `strace -c -f` to the receiver for its
measured window, and prints receive syscalls per datagram and epoll_wait
calls per tick; takes --runtime NAME (one, with :T if throttled), --streams
N (default 200), and the options above. Needs strace and the permission to
attach it (root, or kernel.yama.ptrace_scope = 0); strace slows the
receiver down, so keep the stream count modest.
";

fn main() -> ExitCode {
    let mut args = Args::from_env();
    let result = match args.subcommand().as_deref() {
        Some("receive") => return receiver_main(args),
        Some("send") => return sender_main(args),
        Some("syscalls") => syscalls(args),
        Some(other) => Err(format!(
            "unknown subcommand `{other}` (receive, send, syscalls, or none; see --help)"
        )),
        None => sweep(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("udp-sweep: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The options shared by the sweep and `syscalls`, with the sweep's
/// defaults (`quick`: the smoke run's).
fn config(
    args: &mut Args,
    quick: bool,
    streams_default: Vec<usize>,
) -> Result<SweepConfig, String> {
    let default_runtimes: Vec<String> = if quick {
        ["tempo-throttled:20", "tokio", "mio-throttled:20"]
            .map(String::from)
            .to_vec()
    } else {
        DEFAULT_RUNTIMES.iter().map(|s| s.to_string()).collect()
    };
    Ok(SweepConfig {
        runtimes: args.list("runtimes", default_runtimes)?,
        streams: args.list("streams", streams_default)?,
        throttles_ms: args.list("throttles", vec![5.0, 10.0, 20.0])?,
        runs: args.value("runs", if quick { 1 } else { 3 })?,
        warmup: Duration::from_secs_f64(args.value("warmup-secs", if quick { 0.3 } else { 2.0 })?),
        window: Duration::from_secs_f64(args.value("window-secs", if quick { 1.0 } else { 5.0 })?),
        interval: Duration::from_secs_f64(args.value("interval-ms", 20.0f64)? / 1e3),
        size: args.value("size", tempo_benches::packet::DEFAULT_SIZE)?,
        burst: args.flag("burst"),
        sender_quantum: Duration::from_micros(args.value("sender-quantum-us", 500u64)?),
        base_port: args.value("base-port", DEFAULT_BASE_PORT)?,
        cpus: (available_cpus() >= 2).then_some((0, 1)),
        out_dir: output_dir(args.raw("out")?, quick, "udp"),
        prefix: "udp".into(),
        builds: parse_builds(&args.list("builds", Vec::<String>::new())?)?,
    })
}

fn check_limits(cfg: &SweepConfig) -> Result<(), String> {
    if cfg.cpus.is_none() {
        eprintln!("udp-sweep: only one CPU available: sender and receiver are not pinned apart");
    }
    // The receivers raise their own limit; checking here first stops a
    // sweep before its first run instead of failing its largest points.
    let most = cfg.streams.iter().copied().max().unwrap_or(0);
    ensure_open_files_for(most)?;
    check_port_range(cfg.base_port, most)
        .map_err(|e| format!("--base-port with {most} streams: {e}"))
}

fn sweep(mut args: Args) -> Result<(), String> {
    if args.help() {
        print!("{USAGE}");
        return Ok(());
    }
    let quick = args.flag("quick");
    let streams = if quick {
        vec![100, 500, 1000]
    } else {
        vec![1000, 2000, 4000, 8000]
    };
    let cfg = config(&mut args, quick, streams)?;
    args.finish()?;
    check_limits(&cfg)?;
    eprintln!("udp-sweep: writing to {}", cfg.out_dir.display());
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let output = run_sweep(&exe, &cfg)?;
    print!("{}", summary_table(&output.rows));
    for path in output.written {
        eprintln!("udp-sweep: wrote {}", path.display());
    }
    Ok(())
}

fn syscalls(mut args: Args) -> Result<(), String> {
    if args.help() {
        print!("{USAGE}");
        return Ok(());
    }
    let name = args
        .raw("runtime")?
        .ok_or("syscalls needs --runtime NAME (for instance tempo-throttled:20)")?;
    let runtime = ReceiverRuntime::parse(&name).map_err(|e| e.to_string())?;
    let mut cfg = config(&mut args, false, vec![200])?;
    args.finish()?;
    let [streams] = cfg.streams[..] else {
        return Err("syscalls measures one point: give one --streams value".into());
    };
    cfg.runtimes = vec![runtime.name()];
    check_limits(&cfg)?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let report = run_syscalls(&exe, &cfg, &runtime, streams)?;
    print!("{report}");
    Ok(())
}
