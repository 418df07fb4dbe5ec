//! `pipeline`: N streams as tempo-media elements on G contexts, in the
//! spirit of GStreamer's ts-standalone, against the same streams on tokio's
//! current-thread runtime (one runtime per group).
//!
//! Each stream is a source element (a `tempo_media::Task`) that pushes a
//! pooled buffer to a sink task on the same context through a bounded
//! channel; the sink records the inter-buffer interval and gives the buffer
//! back. The elements are in `tempo_benches::pipeline`.
//!
//! * `--source timer` (default): a buffer every `--period-ms`, no network.
//!   A run reports CPU % per context and in total, parked %, buffers per
//!   second, allocations per buffer (process-wide, over the window), the
//!   interval's mean / stddev / min / max and how many buffers came later
//!   than period + T/2, heap bytes and RSS per stream, the wall time to pause, flush
//!   (start + stop) and stop all N tasks from the application thread, and
//!   the acknowledgement latency of one request to an idle and to a busy
//!   context. The tokio baseline runs a task per stream
//!   (`tokio::time::interval` + channel + sink task).
//! * `--source udp`: a task per socket receiving the benchmark's own
//!   sender's datagrams, against the UDP sweep's plain throttled receiver
//!   and a tokio socket loop per stream; each receiver in a process of its
//!   own, pinned like the sweep's (see `tempo_benches::pipeline::udp_run`).
//!
//! Every run is written as CSV, with the medians and two figures (CPU and
//! lateness vs streams, for a list of stream counts), like the UDP sweep's:
//! see `tempo_benches::pipeline::results`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tempo_benches::alloc_count::CountingAllocator;
use tempo_benches::args::Args;
use tempo_benches::out_dir::output_dir;
use tempo_benches::pipeline::buffer::PoolScope;
use tempo_benches::pipeline::layout::Layout;
use tempo_benches::pipeline::results::{write_results, LatenessAxis};
use tempo_benches::pipeline::timer_run::{timer_main, Config};
use tempo_benches::pipeline::udp_run::{udp_main, udp_receive_main, UdpConfig};
use tempo_benches::udp_cli::{receiver_main, sender_main};

/// Port of the UDP pipeline's stream 0: above the UDP sweep's ports (from
/// 20000, up to 8000 streams) so that both can run on one machine, below
/// the ephemeral range (32768..).
const UDP_BASE_PORT: u16 = 29_000;

/// Counts allocations: the "allocations per buffer" column.
#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

const USAGE: &str = "\
pipeline: N streams as tempo-media elements on G contexts, against the same
streams on tokio current-thread runtimes.

Usage: pipeline [options]
       pipeline send|receive|udp-receive ...   one UDP process (what
                                               --source udp runs)
  --source KIND      timer (default): a buffer every period, no network;
                     udp: a task per socket fed by a sender process on
                     127.0.0.1 (pinned to CPU 1, receivers to CPU 0), also
                     run against the UDP sweep's tempo-throttled:T receiver
  --streams N,...    stream counts (default 1000); each count is a point
                     of the figures, its runs interleaved
  --contexts G       contexts / tokio runtimes (default 2)
  --throttle-ms T    the contexts' max_throttling (default 20)
  --period-ms P      push period of every source (default 20)
  --seconds S        measured window per run (default 5)
  --runs R           interleaved runs of each runtime (default 1); medians
  --pool SCOPE       which streams share a buffer pool: context (default;
                     a sink's returned buffer is the next one a source of
                     its context takes, hot in cache) or stream (a pool
                     per stream); the same for Tempo and tokio
  --layout ORDER     timer: the order the streams are made in, which
                     lays out their memory: grouped (default; one
                     context's streams after the other's, as the tokio
                     runtimes' own threads make theirs) or interleaved
                     (round-robin from the application thread, tokio's
                     through each runtime's handle). UDP: always
                     grouped
  --base-port P      UDP: port of stream 0 (default 29000)
  --out DIR          where the result files go (default: a fresh
                     benches/results/runs/pipeline-<source>-<UTC time>/;
                     --quick: benches/results/quick/)
  --quick            1 s windows, 200 streams (CI)
  -h, --help         this text

Allocations per buffer are counted process-wide over the window, after a
warm-up of 80 periods (every channel has allocated its blocks by then).

Files: pipeline_<source>_runs.csv (every run), pipeline_<source>.csv
(medians per runtime and stream count), pipeline_<source>_cpu.svg and
pipeline_<source>_lateness.svg (timer: longest inter-buffer interval, with
period + T; UDP: p99 latency, with 1.1 T + 1 ms).";

fn main() -> ExitCode {
    let mut args = Args::from_env();
    match args.subcommand().as_deref() {
        None => {}
        Some("send") => return sender_main(args),
        Some("receive") => return receiver_main(args),
        Some("udp-receive") => {
            return match udp_receive_main(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("pipeline udp-receive: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(other) => {
            eprintln!("pipeline: unknown subcommand `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if args.help() {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match Options::parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pipeline: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(files) => {
            for f in files {
                eprintln!("pipeline: wrote {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pipeline: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The command line of a measuring run.
struct Options {
    source: Source,
    /// Everything but the stream count, which `stream_counts` gives.
    cfg: Config,
    stream_counts: Vec<usize>,
    runs: usize,
    base_port: u16,
    out_dir: PathBuf,
}

impl Options {
    fn parse(mut args: Args) -> Result<Options, String> {
        let quick = args.flag("quick");
        let source = match args.raw("source")?.as_deref() {
            None | Some("timer") => Source::Timer,
            Some("udp") => Source::Udp,
            Some(other) => return Err(format!("--source {other}: timer or udp")),
        };
        let stream_counts = args.list("streams", vec![if quick { 200 } else { 1000 }])?;
        if stream_counts.is_empty() || stream_counts.contains(&0) {
            return Err("--streams: one or more counts, each at least 1".into());
        }
        let cfg = Config {
            streams: stream_counts[0],
            contexts: args.value("contexts", 2usize)?.max(1),
            throttle: Duration::from_millis(args.value("throttle-ms", 20)?),
            period: Duration::from_millis(args.value("period-ms", 20)?),
            window: Duration::from_secs(args.value("seconds", if quick { 1 } else { 5 })?),
            pool: PoolScope::parse_option(args.raw("pool")?.as_deref())?,
            layout: Layout::parse_option(args.raw("layout")?.as_deref())?,
        };
        if matches!(source, Source::Udp) && cfg.layout != Layout::default() {
            return Err("--layout: the timer source's option (see --help)".into());
        }
        let runs = args.value("runs", 1usize)?.max(1);
        let base_port = args.value("base-port", UDP_BASE_PORT)?;
        let out = args.raw("out")?;
        args.finish()?;
        let out_dir = output_dir(out, quick, &format!("pipeline-{}", source.name()));
        Ok(Options {
            source,
            cfg,
            stream_counts,
            runs,
            base_port,
            out_dir,
        })
    }
}

/// Every stream count's runs, then the result files; returns their paths.
fn run(o: &Options) -> Result<Vec<PathBuf>, String> {
    let mut rows = Vec::new();
    for &streams in &o.stream_counts {
        let cfg = Config { streams, ..o.cfg };
        match o.source {
            Source::Timer => rows.extend(timer_main(cfg, o.runs)),
            Source::Udp => {
                let udp = UdpConfig {
                    streams,
                    contexts: cfg.contexts,
                    throttle: cfg.throttle,
                    period: cfg.period,
                    base_port: o.base_port,
                    warmup: cfg.warmup(),
                    window: cfg.window,
                    pool: cfg.pool,
                };
                rows.extend(udp_main(udp, o.runs)?);
            }
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let axis = match o.source {
        Source::Timer => LatenessAxis {
            column: "interval_max_ms",
            label: "longest interval between buffers, ms",
            bound: Some(("period + T (goal)", ms(o.cfg.period + o.cfg.throttle))),
        },
        Source::Udp => LatenessAxis {
            column: "lat_p99_us",
            label: "one-way latency p99, us",
            bound: Some(("1.1 T + 1 ms", (1.1 * ms(o.cfg.throttle) + 1.0) * 1e3)),
        },
    };
    write_results(&o.out_dir, o.source.name(), &rows, axis)
}

/// Which source the streams have.
#[derive(Clone, Copy)]
enum Source {
    Timer,
    Udp,
}

impl Source {
    /// Its name in `--source` and in the result files.
    fn name(self) -> &'static str {
        match self {
            Source::Timer => "timer",
            Source::Udp => "udp",
        }
    }
}
