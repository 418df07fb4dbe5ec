//! The timer-driven runs of the `pipeline` benchmark: N streams of
//! [`timer`](super::timer) sources on G contexts against the same streams on
//! G tokio current-thread runtimes, in one process, interleaved.
//!
//! Process-wide counters (CPU, allocations, buffers delivered) are read at
//! the two ends of the window by the application thread, which sleeps in
//! between; per-context CPU and parked time come from the contexts
//! themselves.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tempo::context::Context;
use tempo_media::Task;

use super::buffer::{GroupPools, PoolScope};
use super::layout::Layout;
use super::results::run_row;
use super::sink::{Lateness, SinkShared};
use super::timer::{
    prepare_timer_stream, spawn_tokio_timer_stream, POOL_BUFFERS, TIMER_BUFFER_LEN,
};
use crate::alloc_count::{allocations, live_bytes};
use crate::median::median;
use crate::report::CsvRow;
use crate::rusage::{cpu_percent, process_cpu_time, thread_cpu_time};

/// One timer configuration.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Streams.
    pub streams: usize,
    /// Contexts / tokio runtimes.
    pub contexts: usize,
    /// The contexts' max throttling.
    pub throttle: Duration,
    /// Push period of every source.
    pub period: Duration,
    /// The measured window.
    pub window: Duration,
    /// Which streams share a buffer pool.
    pub pool: PoolScope,
    /// The order the streams are made in.
    pub layout: Layout,
}

impl Config {
    /// Streams of group `g` (context / tokio runtime): streams are dealt
    /// round-robin.
    pub fn streams_in_group(&self, g: usize) -> usize {
        super::streams_in_group(self.streams, self.contexts, g)
    }

    /// The buffer pools of group `g`.
    fn group_pools(&self, g: usize) -> GroupPools {
        GroupPools::new(
            self.pool,
            self.streams_in_group(g),
            POOL_BUFFERS,
            TIMER_BUFFER_LEN,
        )
    }

    /// Time before the window: long enough for every stream to push
    /// `WARMUP_BUFFERS` (80) buffers, so that each channel has allocated all
    /// the blocks it will ever use (tokio's bounded channel allocates a
    /// second block of 32 slots on its 33rd message and recycles them from
    /// then on): what is counted is the steady state.
    pub fn warmup(&self) -> Duration {
        (self.period * WARMUP_BUFFERS).max(Duration::from_millis(500))
    }
}

/// Buffers per stream before the window opens.
const WARMUP_BUFFERS: u32 = 80;

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

struct RunResult {
    cpu_total: f64,
    cpu_per_group: Vec<f64>,
    parked_pct: Vec<f64>,
    buffers_per_s: f64,
    lateness: Lateness,
    /// Allocations in the whole process over the window, per buffer.
    allocs_per_buffer: f64,
    /// Resident set growth per stream; meaningful in a process's first
    /// run only (later runs reuse what earlier ones freed).
    rss_per_stream: f64,
    /// Heap bytes held per stream once warm (every run alike).
    heap_per_stream: f64,
    /// pause, flush (start + stop), stop all; tempo only.
    control: Option<[Duration; 3]>,
    /// One request's acknowledgement: idle (all paused), busy (all running).
    ack_latency: Option<[Duration; 2]>,
}

/// What the measured window of a timer run saw, process-wide.
struct Window {
    wall: Duration,
    cpu_total: f64,
    buffers: u64,
    allocations: u64,
}

impl Window {
    fn allocs_per_buffer(&self) -> f64 {
        self.allocations as f64 / self.buffers.max(1) as f64
    }
}

/// Opens the sinks' window, sleeps `length`, closes it. Allocations are
/// read inside the CPU reading, buffers as delivered (window or not).
fn measure_window(groups: &[Arc<SinkShared>], length: Duration) -> Window {
    let delivered = || groups.iter().map(|g| g.delivered()).sum::<u64>();
    let (cpu0, buffers0) = (process_cpu_time(), delivered());
    let allocs0 = allocations();
    for g in groups {
        g.measuring.store(true, Relaxed);
    }
    let t0 = Instant::now();
    std::thread::sleep(length);
    for g in groups {
        g.measuring.store(false, Relaxed);
    }
    let wall = t0.elapsed();
    let allocations = allocations() - allocs0;
    let buffers = delivered() - buffers0;
    let cpu_total = cpu_percent(process_cpu_time() - cpu0, wall);
    Window {
        wall,
        cpu_total,
        buffers,
        allocations,
    }
}

/// The groups' lateness, merged.
fn merged(groups: &[Arc<SinkShared>]) -> Lateness {
    let mut total = Lateness::default();
    for g in groups {
        total.merge(&g.results.lock().unwrap());
    }
    total
}

fn run_tempo(cfg: Config, run: usize) -> RunResult {
    let (rss_before, heap_before) = (rss_bytes(), live_bytes());
    let contexts: Vec<Context> = (0..cfg.contexts)
        .map(|g| Context::acquire(&format!("pipeline-{run}-{g}"), cfg.throttle).unwrap())
        .collect();
    let groups: Vec<Arc<SinkShared>> = (0..cfg.contexts).map(|_| Arc::default()).collect();
    let pools: Vec<GroupPools> = (0..cfg.contexts).map(|g| cfg.group_pools(g)).collect();
    let late_after = cfg.period + cfg.throttle / 2;
    let timeout = Duration::from_secs(30);
    let tasks: Vec<Task> = cfg
        .layout
        .groups_in_order(cfg.streams, cfg.contexts)
        .into_iter()
        .map(|g| {
            prepare_timer_stream(
                &contexts[g],
                cfg.period,
                late_after,
                groups[g].clone(),
                &pools[g],
            )
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(task, prepared)| {
            prepared.wait(timeout).expect("prepare");
            task
        })
        .collect();
    let acks: Vec<_> = tasks.iter().map(|t| t.start()).collect();
    for ack in acks {
        ack.wait(timeout).expect("start");
    }
    std::thread::sleep(cfg.warmup());
    let rss_per_stream = rss_bytes().saturating_sub(rss_before) as f64 / cfg.streams as f64;
    let heap_per_stream = (live_bytes() - heap_before) as f64 / cfg.streams as f64;
    let thread_cpu: Vec<Duration> = contexts
        .iter()
        .map(|c| c.block_on(async { thread_cpu_time() }))
        .collect();
    let metrics_before: Vec<_> = contexts.iter().map(|c| c.handle().metrics()).collect();
    let window = measure_window(&groups, cfg.window);
    let (wall, cpu_total) = (window.wall, window.cpu_total);
    let cpu_per_group: Vec<f64> = contexts
        .iter()
        .zip(&thread_cpu)
        .map(|(c, before)| cpu_percent(c.block_on(async { thread_cpu_time() }) - *before, wall))
        .collect();
    let parked_pct: Vec<f64> = contexts
        .iter()
        .zip(&metrics_before)
        .map(|(c, before)| {
            let m = c.handle().metrics();
            let parked = (m.parked - before.parked).as_secs_f64();
            let busy = (m.busy - before.busy).as_secs_f64();
            100.0 * parked / (parked + busy).max(1e-9)
        })
        .collect();

    // Acknowledgement latency to a busy context: flush one task.
    let busy_ack = {
        let t = Instant::now();
        tasks[0].flush_start().wait(timeout).expect("flush");
        let d = t.elapsed();
        tasks[0].flush_stop().wait(timeout).expect("flush stop");
        d
    };

    let control_all = |f: &dyn Fn(&Task) -> tempo_media::Ack| {
        let t = Instant::now();
        let acks: Vec<_> = tasks.iter().map(f).collect();
        for ack in acks {
            ack.wait(timeout).expect("transition");
        }
        t.elapsed()
    };
    let pause = control_all(&|t| t.pause());
    // Idle contexts (every task paused): one request's acknowledgement.
    let idle_ack = {
        let t = Instant::now();
        tasks[0].start().wait(timeout).expect("start");
        let d = t.elapsed();
        tasks[0].pause().wait(timeout).expect("pause");
        d
    };
    let flush = control_all(&|t| t.flush_start()) + control_all(&|t| t.flush_stop());
    let stop = control_all(&|t| t.stop());
    for task in &tasks {
        task.unprepare().wait(timeout).expect("unprepare");
    }
    drop(tasks);
    // The sinks end when their sources are dropped; let them publish.
    for c in &contexts {
        c.block_on(async {});
    }
    RunResult {
        cpu_total,
        cpu_per_group,
        parked_pct,
        buffers_per_s: window.buffers as f64 / wall.as_secs_f64(),
        lateness: merged(&groups),
        allocs_per_buffer: window.allocs_per_buffer(),
        rss_per_stream,
        heap_per_stream,
        control: Some([pause, flush, stop]),
        ack_latency: Some([idle_ack, busy_ack]),
    }
}

fn run_tokio(cfg: Config) -> RunResult {
    let (rss_before, heap_before) = (rss_bytes(), live_bytes());
    let shared: Vec<Arc<SinkShared>> = (0..cfg.contexts).map(|_| Arc::default()).collect();
    let late_after = cfg.period + cfg.throttle / 2;
    let (stop_tx, _) = tokio::sync::broadcast::channel::<()>(1);
    let (cpu_tx, cpu_rx) = std::sync::mpsc::channel::<(usize, Duration)>();
    let (handle_tx, handle_rx) = std::sync::mpsc::channel::<(usize, tokio::runtime::Handle)>();
    let grouped = cfg.layout == Layout::Grouped;
    let groups: Vec<_> = (0..cfg.contexts)
        .map(|g| {
            let per_group = cfg.streams_in_group(g);
            // Only where the streams are made: unused pools would count in
            // the heap and RSS per stream.
            let pools = grouped.then(|| cfg.group_pools(g));
            let group = shared[g].clone();
            let mut stop = stop_tx.subscribe();
            let cpu_tx = cpu_tx.clone();
            let handle_tx = handle_tx.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let _ = handle_tx.send((g, rt.handle().clone()));
                rt.block_on(async move {
                    // Grouped: made here, on the runtime's own thread (see
                    // the layout module); interleaved: by the application
                    // thread, through the handle.
                    if let Some(pools) = &pools {
                        for _ in 0..per_group {
                            spawn_tokio_timer_stream(cfg.period, late_after, group.clone(), pools);
                        }
                    }
                    let start = thread_cpu_time();
                    let _ = cpu_tx.send((g, start));
                    let _ = stop.recv().await;
                    let _ = cpu_tx.send((g, thread_cpu_time() - start));
                });
            })
        })
        .collect();
    let mut handles: Vec<Option<tokio::runtime::Handle>> = vec![None; cfg.contexts];
    for _ in 0..cfg.contexts {
        let (g, handle) = handle_rx.recv().unwrap();
        handles[g] = Some(handle);
    }
    if !grouped {
        let pools: Vec<GroupPools> = (0..cfg.contexts).map(|g| cfg.group_pools(g)).collect();
        for g in cfg.layout.groups_in_order(cfg.streams, cfg.contexts) {
            let _runtime = handles[g]
                .as_ref()
                .expect("every runtime sent its handle")
                .enter();
            spawn_tokio_timer_stream(cfg.period, late_after, shared[g].clone(), &pools[g]);
        }
    }
    let mut starts = vec![Duration::ZERO; cfg.contexts];
    for _ in 0..cfg.contexts {
        let (g, d) = cpu_rx.recv().unwrap();
        starts[g] = d;
    }
    std::thread::sleep(cfg.warmup());
    let rss_per_stream = rss_bytes().saturating_sub(rss_before) as f64 / cfg.streams as f64;
    let heap_per_stream = (live_bytes() - heap_before) as f64 / cfg.streams as f64;
    let window = measure_window(&shared, cfg.window);
    let (wall, cpu_total) = (window.wall, window.cpu_total);
    let t0 = Instant::now() - wall;
    // Per-runtime CPU covers warm-up + window (the thread measures itself
    // from start to stop): reported scaled to the same wall time.
    let started_at = t0 - cfg.warmup();
    // The sinks publish on their first buffer after the window.
    std::thread::sleep(cfg.period * 3);
    let _ = stop_tx.send(());
    let mut cpu_per_group = vec![0.0; cfg.contexts];
    for _ in 0..cfg.contexts {
        let (g, d) = cpu_rx.recv().unwrap();
        cpu_per_group[g] = cpu_percent(d, started_at.elapsed());
    }
    for g in groups {
        g.join().unwrap();
    }
    RunResult {
        cpu_total,
        cpu_per_group,
        parked_pct: vec![],
        buffers_per_s: window.buffers as f64 / wall.as_secs_f64(),
        lateness: merged(&shared),
        allocs_per_buffer: window.allocs_per_buffer(),
        rss_per_stream,
        heap_per_stream,
        control: None,
        ack_latency: None,
    }
}

fn print(name: &str, r: &RunResult) {
    let l = &r.lateness;
    let groups: Vec<String> = r.cpu_per_group.iter().map(|c| format!("{c:.1}")).collect();
    let parked: Vec<String> = r.parked_pct.iter().map(|c| format!("{c:.1}")).collect();
    println!(
        "{name:<6} cpu {:6.1}% (per group: {}) parked% [{}] buffers/s {:8.0} interval ms mean {:.3} sd {:.3} min {:.3} max {:.3} late {} allocs/buffer {:.4} heap/stream {:.0} B rss/stream {:.0} B",
        r.cpu_total,
        groups.join(" "),
        parked.join(" "),
        r.buffers_per_s,
        l.mean(),
        l.stddev(),
        l.min,
        l.max,
        l.late,
        r.allocs_per_buffer,
        r.heap_per_stream,
        r.rss_per_stream
    );
    if let Some([pause, flush, stop]) = r.control {
        println!(
            "       all tasks: pause {pause:?}, flush (start + stop) {flush:?}, stop {stop:?}"
        );
    }
    if let Some([idle, busy]) = r.ack_latency {
        println!("       one request's ack: idle context {idle:?}, busy context {busy:?}");
    }
}

/// `r` as a result row (see [`super::results`]); durations in ms, acks in µs.
fn result_row(name: &str, cfg: &Config, run: usize, r: &RunResult) -> CsvRow {
    let l = &r.lateness;
    let mut row = run_row(name, cfg.streams, cfg.contexts, run);
    row.push("pool", cfg.pool.name())
        .push("layout", cfg.layout.name())
        .push_f64("cpu_pct", r.cpu_total, 2)
        .push_f64("buffers_per_s", r.buffers_per_s, 0)
        .push_f64("interval_mean_ms", l.mean(), 3)
        .push_f64("interval_sd_ms", l.stddev(), 3)
        .push_f64("interval_min_ms", l.min, 3)
        .push_f64("interval_max_ms", l.max, 3)
        .push("late", l.late)
        .push_f64("allocs_per_buffer", r.allocs_per_buffer, 4)
        .push_f64("heap_per_stream_b", r.heap_per_stream, 0)
        .push_f64("rss_per_stream_b", r.rss_per_stream, 0);
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    let us = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e6);
    let [pause, flush, stop] = r
        .control
        .map_or(["-".into(), "-".into(), "-".into()], |c| c.map(ms));
    let [idle, busy] = r
        .ack_latency
        .map_or(["-".into(), "-".into()], |a| a.map(us));
    row.push("pause_all_ms", pause)
        .push("flush_all_ms", flush)
        .push("stop_all_ms", stop)
        .push("ack_idle_us", idle)
        .push("ack_busy_us", busy);
    row
}

/// `runs` interleaved runs of both runtimes; prints each and the median
/// CPU ratio; returns one row per run and runtime (for the result files).
pub fn timer_main(cfg: Config, runs: usize) -> Vec<CsvRow> {
    println!(
        "{} streams on {} contexts, T = {:?}, period {:?}, window {:?}, buffer pool per {}, streams made {}, {runs} run(s)",
        cfg.streams,
        cfg.contexts,
        cfg.throttle,
        cfg.period,
        cfg.window,
        cfg.pool.name(),
        cfg.layout.name()
    );
    let mut ratios = Vec::new();
    let mut rows = Vec::new();
    for run in 0..runs {
        // Interleaved: alternate which runtime goes first.
        let (tempo, tokio) = if run % 2 == 0 {
            let t = run_tempo(cfg, run);
            (t, run_tokio(cfg))
        } else {
            let k = run_tokio(cfg);
            (run_tempo(cfg, run), k)
        };
        print("tempo", &tempo);
        print("tokio", &tokio);
        rows.push(result_row("tempo", &cfg, run, &tempo));
        rows.push(result_row("tokio", &cfg, run, &tokio));
        let ratio = tempo.cpu_total / tokio.cpu_total.max(1e-9);
        println!("       run {run}: CPU tempo / tokio = {ratio:.2}");
        ratios.push(ratio);
    }
    if let Some(m) = median(&ratios) {
        println!("median CPU ratio tempo / tokio over {runs} run(s): {m:.2}");
    }
    rows
}
