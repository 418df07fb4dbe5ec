//! The UDP half of the `pipeline` benchmark: one receiver process per run
//! and runtime, fed by a sender process, pinned to different CPUs as in
//! the UDP sweep.
//!
//! Three receivers, interleaved: the tempo-media pipeline
//! ([`UdpPipeline::Media`]: a [`UdpSource`](super::udp::UdpSource) task per
//! socket and a sink per stream on G contexts), the same streams on G
//! tokio current-thread runtimes ([`UdpPipeline::Tokio`]), and the UDP
//! sweep's plain throttled receiver (`tempo-throttled:T`, run through
//! [`crate::udp_cli::receiver_main`], unchanged), which is the issue's
//! yardstick: the pipeline's CPU within 1.15x of it, with the same latency.
//! With G > 1 contexts, a fourth: that plain receiver on G runtimes, one
//! thread each (`tempo-throttled-splitG:T`), sharing the receiver's CPU as
//! the contexts do.
//! Each receiver runs in a fresh process because the per-datagram counters
//! ([`crate::recv_stats`]) are process-wide.

use std::io;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tempo::context::Context;

use super::buffer::{GroupPools, PoolScope};
use super::sink::{Lateness, SinkShared};
use super::timer::POOL_BUFFERS;
use super::udp::{prepare_udp_stream, spawn_tokio_udp_stream};
use crate::alloc_count::allocations;
use crate::args::Args;
use crate::child_process::{read_row, start_receiver_then_sender, wait_bounded};
use crate::controller::spawn_controller;
use crate::receivers::RECV_BUF_LEN;
use crate::recv_stats::collect;
use crate::report::CsvRow;
use crate::rusage::{cpu_percent, process_cpu_time};
use crate::udp_socket::{bind_streams, DEFAULT_RCVBUF};
use crate::window::MeasureWindow;

/// Which pipeline a `udp-receive` child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpPipeline {
    /// tempo-media elements on G contexts.
    Media,
    /// A socket loop and a sink task per stream on G tokio current-thread
    /// runtimes.
    Tokio,
}

impl UdpPipeline {
    fn name(self) -> &'static str {
        match self {
            UdpPipeline::Media => "media",
            UdpPipeline::Tokio => "tokio",
        }
    }

    fn parse(s: &str) -> Result<UdpPipeline, String> {
        match s {
            "media" => Ok(UdpPipeline::Media),
            "tokio" => Ok(UdpPipeline::Tokio),
            _ => Err(format!("--pipeline {s}: media or tokio")),
        }
    }
}

/// One UDP run's parameters.
#[derive(Debug, Clone, Copy)]
pub struct UdpConfig {
    /// Sockets / streams.
    pub streams: usize,
    /// Contexts / tokio runtimes.
    pub contexts: usize,
    /// The contexts' (and the plain receiver's) max throttling.
    pub throttle: Duration,
    /// The sender's per-stream interval.
    pub period: Duration,
    /// Port of stream 0.
    pub base_port: u16,
    /// Time before the window.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Which streams share a buffer pool.
    pub pool: PoolScope,
}

impl UdpConfig {
    /// The buffer pools of a group of `streams` streams.
    fn group_pools(&self, streams: usize) -> GroupPools {
        GroupPools::new(self.pool, streams, POOL_BUFFERS, RECV_BUF_LEN)
    }
}

/// `pipeline udp-receive --help`.
pub const UDP_RECEIVE_USAGE: &str = "\
usage: pipeline udp-receive --pipeline media|tokio [options]

One UDP pipeline receiver (what `pipeline --source udp` runs, once per run):
binds N sockets on 127.0.0.1 from base-port, runs a source task and a sink
per socket on G contexts (media) or G tokio current-thread runtimes
(tokio), and prints a CSV header and row after the window.

  --streams N          sockets (default 1000)
  --contexts G         contexts / runtimes (default 1)
  --throttle-ms T      the contexts' max throttling (default 20)
  --period-ms P        the sender's interval (default 20)
  --base-port P        port of stream 0 (default 20000)
  --warmup-secs S      not measured (default 2)
  --window-secs S      measured (default 5)
  --pool SCOPE         stream or context (default): which streams share a
                       buffer pool
  --cpu K              pin the process to CPU K
";

/// The `udp-receive` child: runs `pipeline` over the streams and prints
/// one CSV header + row with the UDP sweep's receiver columns.
pub fn udp_receive_main(mut args: Args) -> Result<(), String> {
    if args.help() {
        print!("{UDP_RECEIVE_USAGE}");
        return Ok(());
    }
    let pipeline = UdpPipeline::parse(&args.raw("pipeline")?.unwrap_or_default())?;
    let cfg = UdpConfig {
        streams: args.value("streams", 1000usize)?,
        contexts: args.value("contexts", 1usize)?.max(1),
        throttle: Duration::from_millis(args.value("throttle-ms", 20)?),
        period: Duration::from_millis(args.value("period-ms", 20)?),
        base_port: args.value("base-port", crate::udp_cli::DEFAULT_BASE_PORT)?,
        warmup: Duration::from_secs_f64(args.value("warmup-secs", 2.0f64)?),
        window: Duration::from_secs_f64(args.value("window-secs", 5.0f64)?),
        pool: PoolScope::parse_option(args.raw("pool")?.as_deref())?,
    };
    let cpu: Option<usize> = args
        .value("cpu", usize::MAX)
        .map(|c| (c != usize::MAX).then_some(c))?;
    args.finish()?;
    if let Some(cpu) = cpu {
        crate::affinity::pin_current_thread_to(cpu).map_err(|e| format!("pin to {cpu}: {e}"))?;
    }
    crate::fd_limit::ensure_open_files_for(cfg.streams)?;
    let row = receive(pipeline, cfg).map_err(|e| e.to_string())?;
    println!("{}\n{}", row.header(), row.values());
    Ok(())
}

/// CPU, allocations at one end of the window.
#[derive(Clone, Copy)]
struct Snapshot {
    cpu: Duration,
    allocations: u64,
}

fn receive(pipeline: UdpPipeline, cfg: UdpConfig) -> io::Result<CsvRow> {
    let sockets = bind_streams(cfg.base_port, cfg.streams, DEFAULT_RCVBUF)?;
    let window = MeasureWindow::after_warmup(cfg.warmup, cfg.window);
    let groups: Vec<Arc<SinkShared>> = (0..cfg.contexts).map(|_| Arc::default()).collect();
    let (open, close) = (groups.clone(), groups.clone());
    let controller = spawn_controller(
        window,
        move || {
            for g in &open {
                g.measuring.store(true, Relaxed);
            }
            let allocations = allocations();
            Ok(Snapshot {
                cpu: process_cpu_time(),
                allocations,
            })
        },
        move || {
            let cpu = process_cpu_time();
            let allocations = allocations();
            for g in &close {
                g.measuring.store(false, Relaxed);
            }
            Ok(Snapshot { cpu, allocations })
        },
    )?;
    let late_after = cfg.period + cfg.throttle / 2;
    match pipeline {
        UdpPipeline::Media => run_media(cfg, sockets, window, late_after, &groups)?,
        UdpPipeline::Tokio => run_tokio(cfg, sockets, window, late_after, &groups)?,
    }
    let readings = controller
        .join()
        .map_err(|_| io::Error::other("controller panicked"))??;
    let wall = Duration::from_nanos(readings.wall_ns());
    let cpu = readings.end.cpu.saturating_sub(readings.start.cpu);
    let stats = collect();
    let mut lateness = Lateness::default();
    for g in &groups {
        lateness.merge(&g.results.lock().unwrap());
    }
    let received = stats.received.max(1) as f64;
    let mut row = CsvRow::new();
    row.push("runtime", pipeline.name())
        .push("streams", cfg.streams)
        .push("contexts", cfg.contexts)
        .push("received", stats.received)
        .push("seq_gaps", stats.seq_gaps)
        .push_f64("cpu_pct", cpu_percent(cpu, wall), 2)
        .push_f64("cpu_us_per_pkt", cpu.as_secs_f64() * 1e6 / received, 3)
        .push("lat_p50_us", stats.latency.percentile_us(0.5))
        .push("lat_p99_us", stats.latency.percentile_us(0.99))
        .push("lat_max_us", stats.latency.max_us())
        .push_f64(
            "allocs_per_pkt",
            (readings.end.allocations - readings.start.allocations) as f64 / received,
            4,
        )
        .push_f64("interval_max_ms", lateness.max, 2)
        .push("late", lateness.late);
    Ok(row)
}

fn run_media(
    cfg: UdpConfig,
    sockets: Vec<std::net::UdpSocket>,
    window: MeasureWindow,
    late_after: Duration,
    groups: &[Arc<SinkShared>],
) -> io::Result<()> {
    let contexts: Vec<Context> = (0..cfg.contexts)
        .map(|g| Context::acquire(&format!("udp-pipeline-{g}"), cfg.throttle))
        .collect::<io::Result<_>>()?;
    let timeout = Duration::from_secs(30);
    let failed = |e: tempo_media::TransitionError| io::Error::other(e.to_string());
    let pools: Vec<GroupPools> = (0..cfg.contexts)
        .map(|g| cfg.group_pools(super::streams_in_group(cfg.streams, cfg.contexts, g)))
        .collect();
    let mut tasks = Vec::with_capacity(cfg.streams);
    let mut acks = Vec::with_capacity(cfg.streams);
    // Socket `i` goes to context `i % G`, as with tokio, but the streams
    // are made one context's after the other's: made round-robin from
    // this thread, two contexts' objects alternate in memory and each
    // context's tick walks twice the address range (`layout.rs`); tokio's
    // runtimes, and the split plain receiver's, make their own streams on
    // their own threads, each in its own arena.
    let mut per_group: Vec<Vec<(u32, std::net::UdpSocket)>> =
        (0..cfg.contexts).map(|_| Vec::new()).collect();
    for (i, socket) in sockets.into_iter().enumerate() {
        per_group[i % cfg.contexts].push((i as u32, socket));
    }
    for (g, group) in per_group.into_iter().enumerate() {
        for (i, socket) in group {
            let (task, ack) = prepare_udp_stream(
                &contexts[g],
                i,
                socket,
                window,
                late_after,
                groups[g].clone(),
                &pools[g],
            );
            tasks.push(task);
            acks.push(ack);
        }
    }
    for ack in acks {
        ack.wait(timeout).map_err(failed)?;
    }
    let acks: Vec<_> = tasks.iter().map(|t| t.start()).collect();
    for ack in acks {
        ack.wait(timeout).map_err(failed)?;
    }
    // A few periods past the window before the lifecycle requests, as the
    // tokio side does: each request allocates its acknowledgement, and
    // stopping 1,000 tasks the moment the window ends raced the
    // controller's closing snapshot (one allocation per stream counted
    // into the window in some runs).
    std::thread::sleep(window.remaining() + cfg.period * 3);
    let acks: Vec<_> = tasks.iter().map(|t| t.stop()).collect();
    for ack in acks {
        ack.wait(timeout).map_err(failed)?;
    }
    let acks: Vec<_> = tasks.iter().map(|t| t.unprepare()).collect();
    for ack in acks {
        ack.wait(timeout).map_err(failed)?;
    }
    drop(tasks);
    // The sinks end with their sources and publish: one turn each.
    for c in &contexts {
        c.block_on(async {});
    }
    Ok(())
}

fn run_tokio(
    cfg: UdpConfig,
    sockets: Vec<std::net::UdpSocket>,
    window: MeasureWindow,
    late_after: Duration,
    groups: &[Arc<SinkShared>],
) -> io::Result<()> {
    let mut per_group: Vec<Vec<(u32, std::net::UdpSocket)>> =
        (0..cfg.contexts).map(|_| Vec::new()).collect();
    for (i, socket) in sockets.into_iter().enumerate() {
        per_group[i % cfg.contexts].push((i as u32, socket));
    }
    let threads: Vec<_> = per_group
        .into_iter()
        .zip(groups.iter().cloned())
        .map(|(sockets, shared)| {
            let period = cfg.period;
            let pools = cfg.group_pools(sockets.len());
            std::thread::spawn(move || -> io::Result<()> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    for (i, socket) in sockets {
                        spawn_tokio_udp_stream(
                            i,
                            socket,
                            window,
                            late_after,
                            shared.clone(),
                            &pools,
                        )?;
                    }
                    tokio::time::sleep(window.remaining()).await;
                    // A sink publishes its figures on its first buffer
                    // after the window (the streams never end by
                    // themselves): a few periods more, outside the window.
                    tokio::time::sleep(period * 3).await;
                    Ok::<(), io::Error>(())
                })?;
                // Dropping the runtime ends the loops.
                drop(rt);
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join()
            .map_err(|_| io::Error::other("tokio group panicked"))??;
    }
    Ok(())
}

/// One UDP run: a sender child and a receiver child (`receiver_args` after
/// the executable), returns the receiver's row.
fn run_pair(
    cfg: &UdpConfig,
    receiver_args: &[String],
    cpus: Option<(usize, usize)>,
) -> Result<CsvRow, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let ms = |d: Duration| format!("{}", d.as_secs_f64() * 1e3);
    let secs = |d: Duration| format!("{}", d.as_secs_f64());
    let mut recv = Command::new(&exe);
    recv.args(receiver_args)
        .args(["--streams", &cfg.streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--warmup-secs", &secs(cfg.warmup)])
        .args(["--window-secs", &secs(cfg.window)]);
    let send_for = cfg.warmup + cfg.window + Duration::from_millis(500);
    let mut send = Command::new(&exe);
    send.arg("send")
        .args(["--streams", &cfg.streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--interval-ms", &ms(cfg.period)])
        .args(["--secs", &secs(send_for)]);
    if let Some((send_cpu, recv_cpu)) = cpus {
        send.args(["--cpu", &send_cpu.to_string()]);
        recv.args(["--cpu", &recv_cpu.to_string()]);
    }
    let (mut receiver, mut sender) =
        start_receiver_then_sender(&mut recv, &mut send, Stdio::null())?;
    let limit = send_for + Duration::from_secs(30);
    let row = read_row(&mut receiver, "receiver");
    let receiver_done = wait_bounded(&mut receiver, limit, "receiver");
    let sender_done = wait_bounded(&mut sender, limit, "sender");
    receiver_done?;
    sender_done?;
    row
}

/// The columns of a UDP run row after [`KEY_COLUMNS`](super::results::KEY_COLUMNS),
/// the same for the three receivers.
const RESULT_COLUMNS: [&str; 8] = [
    "cpu_pct",
    "cpu_us_per_pkt",
    "received",
    "seq_gaps",
    "lat_p50_us",
    "lat_p99_us",
    "lat_max_us",
    "allocs_per_pkt",
];

/// The three receivers of one UDP configuration, `runs` times interleaved
/// (the order rotates each run); prints every row and the medians of the
/// pipeline's CPU against the plain throttled receiver's and tokio's, and
/// returns one row per run and receiver (for the result files).
pub fn udp_main(cfg: UdpConfig, runs: usize) -> Result<Vec<CsvRow>, String> {
    let cpus = (crate::affinity::available_cpus() >= 2).then_some((1, 0));
    let throttle_ms = cfg.throttle.as_millis().to_string();
    let pipeline = |name: &str| -> Vec<String> {
        [
            "udp-receive",
            "--pipeline",
            name,
            "--contexts",
            &cfg.contexts.to_string(),
            "--throttle-ms",
            &throttle_ms,
            "--period-ms",
            &cfg.period.as_millis().to_string(),
            "--pool",
            cfg.pool.name(),
        ]
        .map(String::from)
        .to_vec()
    };
    let plain = |runtime: String| -> Vec<String> {
        [
            "receive".to_string(),
            "--runtime".to_string(),
            runtime,
            "--interval-ms".to_string(),
            cfg.period.as_millis().to_string(),
            "--header".to_string(),
        ]
        .to_vec()
    };
    // With G > 1 contexts, also the plain receiver on G runtimes, one
    // thread each (its threads share the receiver's CPU as the contexts
    // do): the yardstick that separates what the elements cost from what
    // G threads on one core cost.
    let mut receivers = vec![
        pipeline("media"),
        plain(format!("tempo-throttled:{throttle_ms}")),
        pipeline("tokio"),
    ];
    let split = format!("tempo-throttled-split{}:{throttle_ms}", cfg.contexts);
    if cfg.contexts > 1 {
        receivers.push(plain(split.clone()));
    }
    println!(
        "UDP: {} streams on {} context(s), T = {:?}, period {:?}, window {:?}, {runs} run(s), cpus {cpus:?} (sender, receiver)",
        cfg.streams, cfg.contexts, cfg.throttle, cfg.period, cfg.window
    );
    let columns = [
        "cpu_pct",
        "lat_p50_us",
        "lat_p99_us",
        "lat_max_us",
        "allocs_per_pkt",
    ];
    let mut vs_plain = Vec::new();
    let mut vs_tokio = Vec::new();
    let mut vs_split = Vec::new();
    let mut results = Vec::new();
    let count = receivers.len();
    for run in 0..runs {
        let mut rows: Vec<Option<CsvRow>> = vec![None; count];
        for k in 0..count {
            let which = (run + k) % count;
            let row = run_pair(&cfg, &receivers[which], cpus)?;
            let name = row.get("runtime").unwrap_or("?").to_string();
            let figures: Vec<String> = columns
                .iter()
                .map(|c| format!("{c} {}", row.get(c).unwrap_or("-")))
                .collect();
            println!(
                "  run {run} {name:<18} received {} gaps {} {}{}",
                row.get("received").unwrap_or("-"),
                row.get("seq_gaps").unwrap_or("-"),
                figures.join(" "),
                row.get("interval_max_ms")
                    .map(|m| format!(
                        " interval max {m} ms late {}",
                        row.get("late").unwrap_or("-")
                    ))
                    .unwrap_or_default()
            );
            let mut result = super::results::run_row(&name, cfg.streams, cfg.contexts, run);
            for c in RESULT_COLUMNS {
                result.push(c, row.get(c).unwrap_or("-"));
            }
            results.push(result);
            rows[which] = Some(row);
        }
        let cpu = |i: usize| {
            rows[i]
                .as_ref()
                .and_then(|r| r.get_f64("cpu_pct"))
                .unwrap_or(0.0)
        };
        vs_plain.push(cpu(0) / cpu(1).max(1e-9));
        vs_tokio.push(cpu(0) / cpu(2).max(1e-9));
        if count > 3 {
            vs_split.push(cpu(0) / cpu(3).max(1e-9));
        }
    }
    let m = |v: &[f64]| crate::median::median(v).unwrap_or(f64::NAN);
    println!(
        "  median CPU media / tempo-throttled:{throttle_ms} = {:.2} (goal <= 1.15), media / tokio = {:.2}",
        m(&vs_plain),
        m(&vs_tokio)
    );
    if !vs_split.is_empty() {
        println!(
            "  median CPU media / {split} (the plain receiver on the same threads) = {:.2}",
            m(&vs_split)
        );
    }
    Ok(results)
}
