//! `N x (<source> ! fakesink)` in one process, as threadshare's
//! `ts-benchmark`, with `<source>` one of `tempoudpsrc`, threadshare's
//! `ts-udpsrc` (registered statically from crates.io), GStreamer's
//! `udpsrc`, `timer` (tasks on Tempo contexts pushing the same buffers
//! with no network: GStreamer's fixed part) and `timer-recv` (the timer
//! source plus a plain receive task per stream on the same contexts: the
//! bare receiver inside GStreamer's process), fed by Tempo's
//! `udp-sender` pinned to another CPU. Sources and fakesink settings are
//! interleaved within each run; see `--help` and `docs/gstreamer.md`.

mod sys;

use std::collections::BTreeMap;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;
use tempo_test_support::alloc::{allocations, CountingAllocator};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

const USAGE: &str = "\
usage: gst-benchmark [options]

N x (<source> ! fakesink) in one process, sources on G contexts, fed by
udp-sender (one DEFAULT_SIZE datagram per stream every interval) pinned to
--sender-cpu while this process runs on --cpu. Per (run, source, fakesink):
CPU per datagram over the window (getrusage of this process), loss (datagrams
missing from the sampled streams' sequence numbers), latency send->fakesink,
stamp delay (buffer timestamp - send time: the jitter the source's timestamps
add), Rust allocations per datagram. Rows as CSV on
stdout, then a summary (medians, ranges, ratios to ts-udpsrc) on stderr.

  --streams N          streams (default 1000)
  --contexts G         contexts the sources share (default 1)
  --context-wait MS    throttling period of every context (default 20)
  --sources LIST       of tempoudpsrc,ts-udpsrc,udpsrc,timer,timer-recv
                       (default all but timer-recv); timer-recv is timer plus
                       a task per stream receiving its datagrams as the bare
                       receiver does, on the timer's contexts
  --sinks LIST         of default,lean (default both): default is
                       ts-benchmark's fakesink (sync=false async=false
                       signal-handoffs=true, sender address on); lean has
                       no handoff signal and no sender address
  --runs R             interleaved runs (default 3)
  --warmup-secs S      not measured (default 2)
  --window-secs S      measured (default 5)
  --base-port P        port of stream 0 (default 20000)
  --sender PATH        udp-sender (default ../target/release/udp-sender)
  --bare-receiver PATH udp-receiver: adds Tempo's bare throttled receiver
                       (tempo-throttled:MS) to every run
  --cpu K              this process's CPU (default 1)
  --sender-cpu K       the sender's CPU (default 0)
  -h, --help           this text
";

const INTERVAL: Duration = Duration::from_millis(20);
const DATAGRAM: usize = 160;
/// In lean mode one stream in this many has a probe for latency and loss.
const LEAN_SAMPLE_EVERY: usize = 50;

struct Config {
    streams: usize,
    contexts: usize,
    wait: u32,
    sources: Vec<String>,
    sinks: Vec<String>,
    runs: usize,
    warmup: Duration,
    window: Duration,
    base_port: u16,
    sender: String,
    bare: Option<String>,
    cpu: usize,
    sender_cpu: usize,
}

fn parse_args() -> Result<Option<Config>, String> {
    let mut map = BTreeMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        let key = arg
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {arg}"))?;
        let value = args
            .next()
            .ok_or_else(|| format!("--{key} needs a value"))?;
        map.insert(key.to_owned(), value);
    }
    fn take<T: std::str::FromStr>(
        map: &mut BTreeMap<String, String>,
        key: &str,
        default: T,
    ) -> Result<T, String> {
        match map.remove(key) {
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{key} {v}: not a valid value")),
            None => Ok(default),
        }
    }
    let list = |s: String| s.split(',').map(str::to_owned).collect::<Vec<_>>();
    let secs = |s: f64| Duration::from_secs_f64(s);
    let cfg = Config {
        streams: take(&mut map, "streams", 1000)?,
        contexts: take(&mut map, "contexts", 1)?,
        wait: take(&mut map, "context-wait", 20)?,
        sources: list(take(
            &mut map,
            "sources",
            "tempoudpsrc,ts-udpsrc,udpsrc,timer".to_owned(),
        )?),
        sinks: list(take(&mut map, "sinks", "default,lean".to_owned())?),
        runs: take(&mut map, "runs", 3)?,
        warmup: secs(take(&mut map, "warmup-secs", 2.0)?),
        window: secs(take(&mut map, "window-secs", 5.0)?),
        base_port: take(&mut map, "base-port", 20000)?,
        sender: take(
            &mut map,
            "sender",
            "../target/release/udp-sender".to_owned(),
        )?,
        bare: map.remove("bare-receiver"),
        cpu: take(&mut map, "cpu", 1)?,
        sender_cpu: take(&mut map, "sender-cpu", 0)?,
    };
    if let Some(key) = map.keys().next() {
        return Err(format!("unknown option --{key}"));
    }
    for s in &cfg.sources {
        if !["tempoudpsrc", "ts-udpsrc", "udpsrc", "timer", "timer-recv"].contains(&s.as_str()) {
            return Err(format!("unknown source {s}"));
        }
    }
    for s in &cfg.sinks {
        if !["default", "lean"].contains(&s.as_str()) {
            return Err(format!("unknown fakesink setting {s}"));
        }
    }
    if cfg.contexts == 0 || cfg.streams == 0 || cfg.runs == 0 {
        return Err("--streams, --contexts and --runs must be at least 1".into());
    }
    Ok(Some(cfg))
}

/// Latency and stamp delay samples taken during the window, and the
/// sampled streams' sequence gaps.
#[derive(Default)]
struct Recorder {
    on: AtomicBool,
    base_time: AtomicU64,
    samples: Mutex<Vec<(u64, i64)>>,
    /// Datagrams of the sampled streams rendered in the window.
    seen: AtomicU64,
    /// Sequence numbers the sampled streams skipped in the window.
    gaps: AtomicU64,
}

/// The sequence number a sampled stream's next datagram should carry
/// (`u64::MAX` before its first), followed from the warm-up on so that the
/// window counts only the gaps inside it. One sink's buffers come one at
/// a time, so relaxed loads and stores suffice.
struct NextSeq(AtomicU64);

impl Default for NextSeq {
    fn default() -> Self {
        NextSeq(AtomicU64::new(u64::MAX))
    }
}

impl Recorder {
    fn record(&self, next: &NextSeq, buffer: &gst::BufferRef) {
        let Ok(map) = buffer.map_readable() else {
            return;
        };
        if map.len() < 16 {
            return;
        }
        let seq = u64::from_le_bytes(map[0..8].try_into().unwrap());
        let expected = next.0.load(Ordering::Relaxed);
        if expected == u64::MAX || seq >= expected {
            next.0.store(seq + 1, Ordering::Relaxed);
        }
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        self.seen.fetch_add(1, Ordering::Relaxed);
        if expected != u64::MAX && seq > expected {
            self.gaps.fetch_add(seq - expected, Ordering::Relaxed);
        }
        let now = sys::monotonic_ns();
        let sent = u64::from_le_bytes(map[8..16].try_into().unwrap());
        let latency_us = now.saturating_sub(sent) / 1000;
        let base = self.base_time.load(Ordering::Relaxed);
        let stamp_us = buffer.pts().or(buffer.dts()).map_or(i64::MIN, |t| {
            (t.nseconds() + base) as i64 / 1000 - sent as i64 / 1000
        });
        self.samples.lock().unwrap().push((latency_us, stamp_us));
    }
}

/// One measurement.
struct Row {
    run: usize,
    source: String,
    sink: String,
    datagrams: u64,
    cpu_pct: f64,
    cpu_us: f64,
    loss_pct: f64,
    lat_p50: u64,
    lat_p99: u64,
    stamp_p50: i64,
    stamp_p99: i64,
    allocs: f64,
}

fn percentile<T: Copy + Ord>(v: &mut [T], p: f64) -> Option<T> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[((v.len() - 1) as f64 * p).round() as usize])
}

fn fakesink(sink: &str, rec: &Arc<Recorder>, i: usize) -> gst::Element {
    let lean = sink == "lean";
    let e = gst::ElementFactory::make("fakesink")
        .property("sync", false)
        .property("async", false)
        .property("signal-handoffs", !lean)
        .build()
        .unwrap();
    if !lean {
        let (rec, next) = (rec.clone(), NextSeq::default());
        e.connect("handoff", false, move |values| {
            if let Ok(buffer) = values[1].get::<gst::Buffer>() {
                rec.record(&next, &buffer);
            }
            None
        });
    } else if i.is_multiple_of(LEAN_SAMPLE_EVERY) {
        let (rec, next) = (rec.clone(), NextSeq::default());
        e.static_pad("sink")
            .unwrap()
            .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
                if let Some(buffer) = info.buffer() {
                    rec.record(&next, buffer);
                }
                gst::PadProbeReturn::Ok
            });
    }
    e
}

fn network_source(cfg: &Config, source: &str, sink: &str, i: usize) -> gst::Element {
    let lean = sink == "lean";
    let port = i32::from(cfg.base_port) + i as i32;
    let context = format!("bench-{}", i % cfg.contexts);
    let mut b = gst::ElementFactory::make(source)
        .property("port", port)
        .property("retrieve-sender-address", !lean);
    if source != "udpsrc" {
        b = b
            .property("context", &context)
            .property("context-wait", cfg.wait);
    }
    b.build().unwrap()
}

/// The timer source's streams: a Tempo task per stream pushing a pooled
/// buffer every interval on a standalone pad linked to its fakesink (one
/// pool per context, as `tempoudpsrc`'s per context thread), with
/// the sender address the network sources attach where the sink expects
/// one (one premade address per stream, as a source reusing its sender's).
/// With `receive`, each stream also has a task on its context receiving
/// the sender's datagrams into a buffer of its own, as the bare receiver's
/// tasks do.
struct Timers {
    stop: Arc<AtomicBool>,
    contexts: Vec<tempo::context::Context>,
    joins: Vec<(usize, tempo::task::JoinHandle<()>)>,
    receivers: Vec<(usize, tempo::task::JoinHandle<()>)>,
}

fn start_timers(
    cfg: &Config,
    pipeline: &gst::Pipeline,
    sinks: &[gst::Element],
    sink_kind: &str,
    receive: bool,
) -> Timers {
    let contexts: Vec<_> = (0..cfg.contexts)
        .map(|g| {
            let wait = Duration::from_millis(cfg.wait.into());
            tempo::context::Context::acquire(&format!("bench-timer-{g}"), wait).unwrap()
        })
        .collect();
    let pools: Vec<_> = (0..cfg.contexts)
        .map(|_| {
            let pool = gst::BufferPool::new();
            let mut config = pool.config();
            config.set_params(None, DATAGRAM as u32, 0, 0);
            pool.set_config(config).unwrap();
            pool.set_active(true).unwrap();
            pool
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let clock = pipeline.clock().expect("a playing pipeline has a clock");
    let base_time = pipeline.base_time().unwrap();
    let mut joins = Vec::new();
    for (i, sink) in sinks.iter().enumerate() {
        let pad = gst::Pad::builder(gst::PadDirection::Src)
            .name(format!("timer-{i}"))
            .build();
        pad.set_active(true).unwrap();
        pad.link(&sink.static_pad("sink").unwrap()).unwrap();
        let g = i % cfg.contexts;
        let pool = pools[g].clone();
        let (stop, clock) = (stop.clone(), clock.clone());
        let sender = (sink_kind != "lean").then(|| {
            let port = 40_000 + (i % 20_000) as u16;
            gst_net::gio::InetSocketAddress::from(std::net::SocketAddr::from((
                [127, 0, 0, 1],
                port,
            )))
        });
        let offset = INTERVAL * i as u32 / sinks.len() as u32;
        let join = contexts[g].spawn(async move {
            let start = tempo::time::Instant::now() + offset;
            let mut ticks = tempo::time::interval_at(start, INTERVAL);
            pad.push_event(gst::event::StreamStart::new(&format!("timer-{i}")));
            pad.push_event(gst::event::Segment::new(&gst::FormattedSegment::<
                gst::ClockTime,
            >::new()));
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                ticks.tick().await;
                let mut buffer = pool.acquire_buffer(None).unwrap();
                {
                    let b = buffer.get_mut().unwrap();
                    {
                        let mut map = b.map_writable().unwrap();
                        map[0..8].copy_from_slice(&seq.to_le_bytes());
                        map[8..16].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
                        map[16..20].copy_from_slice(&(i as u32).to_le_bytes());
                    }
                    let ts = clock.time().saturating_sub(base_time);
                    b.set_pts(ts);
                    b.set_dts(ts);
                    if let Some(sender) = &sender {
                        gst_net::NetAddressMeta::add(b, sender);
                    }
                }
                seq += 1;
                if pad.push(buffer).is_err() {
                    break;
                }
            }
        });
        joins.push((g, join));
    }
    let mut receivers = Vec::new();
    if receive {
        for i in 0..sinks.len() {
            let port = cfg.base_port + i as u16;
            let socket = std::net::UdpSocket::bind(("0.0.0.0", port)).unwrap();
            socket.set_nonblocking(true).unwrap();
            let g = i % cfg.contexts;
            let join = contexts[g].spawn(async move {
                let socket = tempo::net::UdpSocket::from_std(socket).unwrap();
                let mut buf = vec![0u8; 2048];
                let mut last = 0u64;
                while let Ok((n, _)) = socket.recv_from(&mut buf).await {
                    if n >= 8 {
                        last = u64::from_le_bytes(buf[0..8].try_into().unwrap());
                    }
                    std::hint::black_box(last);
                }
            });
            receivers.push((g, join));
        }
    }
    Timers {
        stop,
        contexts,
        joins,
        receivers,
    }
}

impl Timers {
    fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        for (g, join) in self.joins {
            let _ = self.contexts[g].block_on(join);
        }
        for (g, join) in self.receivers {
            join.abort();
            let _ = self.contexts[g].block_on(join);
        }
    }
}

fn rendered(sinks: &[gst::Element]) -> u64 {
    sinks
        .iter()
        .map(|s| {
            let stats: gst::Structure = s.property("stats");
            stats.get::<u64>("rendered").unwrap_or(0)
        })
        .sum()
}

fn start_sender(cfg: &Config, secs: f64) -> Result<Child, String> {
    Command::new(&cfg.sender)
        .args(["--streams", &cfg.streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--size", &DATAGRAM.to_string()])
        .args(["--interval-ms", &INTERVAL.as_millis().to_string()])
        .args(["--secs", &format!("{secs:.1}")])
        .args(["--cpu", &cfg.sender_cpu.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            format!(
                "{}: {e} (build it: cargo build --release -p tempo-benches)",
                cfg.sender
            )
        })
}

fn measure(cfg: &Config, run: usize, source: &str, sink: &str) -> Result<Row, String> {
    let pipeline = gst::Pipeline::new();
    let rec = Arc::new(Recorder::default());
    let mut sinks = Vec::with_capacity(cfg.streams);
    for i in 0..cfg.streams {
        let s = fakesink(sink, &rec, i);
        pipeline.add(&s).unwrap();
        if !source.starts_with("timer") {
            let src = network_source(cfg, source, sink, i);
            pipeline.add(&src).unwrap();
            src.link(&s).unwrap();
        }
        sinks.push(s);
    }
    pipeline
        .set_state(gst::State::Playing)
        .map_err(|e| format!("{source}: {e:?}"))?;
    let _ = pipeline.state(gst::ClockTime::from_seconds(10));
    rec.base_time
        .store(pipeline.base_time().unwrap().nseconds(), Ordering::Relaxed);
    let timers = source
        .starts_with("timer")
        .then(|| start_timers(cfg, &pipeline, &sinks, sink, source == "timer-recv"));
    let total = (cfg.warmup + cfg.window).as_secs_f64() + 1.0;
    let mut sender = match source {
        "timer" => None,
        _ => Some(start_sender(cfg, total)?),
    };
    std::thread::sleep(cfg.warmup);
    // Room for every sample of the window, so that recording allocates
    // nothing the allocation count would see.
    let room = 2 * cfg.streams * cfg.window.as_millis() as usize / INTERVAL.as_millis() as usize;
    rec.samples.lock().unwrap().reserve(room);
    let (n0, cpu0, a0, t0) = (
        rendered(&sinks),
        sys::process_cpu(),
        allocations(),
        Instant::now(),
    );
    rec.on.store(true, Ordering::Relaxed);
    std::thread::sleep(cfg.window);
    rec.on.store(false, Ordering::Relaxed);
    let (n1, cpu1, a1, wall) = (
        rendered(&sinks),
        sys::process_cpu(),
        allocations(),
        t0.elapsed(),
    );
    if let Some(sender) = sender.as_mut() {
        let _ = sender.wait();
    }
    if let Some(timers) = timers {
        timers.finish();
    }
    pipeline.set_state(gst::State::Null).unwrap();
    let datagrams = n1 - n0;
    let cpu = cpu1 - cpu0;
    let (seen, gaps) = (
        rec.seen.load(Ordering::Relaxed),
        rec.gaps.load(Ordering::Relaxed),
    );
    let mut samples = std::mem::take(&mut *rec.samples.lock().unwrap());
    let mut lat: Vec<u64> = samples.iter().map(|s| s.0).collect();
    let mut stamp: Vec<i64> = samples
        .drain(..)
        .map(|s| s.1)
        .filter(|&s| s != i64::MIN)
        .collect();
    Ok(Row {
        run,
        source: source.to_owned(),
        sink: sink.to_owned(),
        datagrams,
        cpu_pct: 100.0 * cpu.as_secs_f64() / wall.as_secs_f64(),
        cpu_us: cpu.as_secs_f64() * 1e6 / datagrams.max(1) as f64,
        loss_pct: 100.0 * gaps as f64 / (seen + gaps).max(1) as f64,
        lat_p50: percentile(&mut lat, 0.5).unwrap_or(0),
        lat_p99: percentile(&mut lat, 0.99).unwrap_or(0),
        stamp_p50: percentile(&mut stamp, 0.5).unwrap_or(0),
        stamp_p99: percentile(&mut stamp, 0.99).unwrap_or(0),
        allocs: (a1 - a0) as f64 / datagrams.max(1) as f64,
    })
}

/// Tempo's bare throttled receiver (udp-receiver) in its own process,
/// fed the same way.
fn measure_bare(cfg: &Config, run: usize, receiver: &str) -> Result<Row, String> {
    // G contexts: G throttled runtimes on G threads, sockets dealt round-robin.
    let runtime = match cfg.contexts {
        1 => format!("tempo-throttled:{}", cfg.wait),
        g => format!("tempo-throttled-split{g}:{}", cfg.wait),
    };
    let mut rx = Command::new(receiver)
        .args(["--runtime", &runtime])
        .args(["--streams", &cfg.streams.to_string()])
        .args(["--base-port", &cfg.base_port.to_string()])
        .args(["--warmup-secs", &cfg.warmup.as_secs_f64().to_string()])
        .args(["--window-secs", &cfg.window.as_secs_f64().to_string()])
        .args(["--cpu", &cfg.cpu.to_string(), "--header"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{receiver}: {e}"))?;
    // The receiver binds its sockets first.
    std::thread::sleep(Duration::from_millis(500));
    let mut sender = start_sender(cfg, (cfg.warmup + cfg.window).as_secs_f64() + 2.0)?;
    let out = std::mem::take(&mut rx.stdout);
    let text = std::io::read_to_string(out.unwrap()).map_err(|e| e.to_string())?;
    let _ = rx.wait();
    let _ = sender.wait();
    let mut lines = text.lines();
    let (header, values) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    let col: BTreeMap<&str, &str> = header.split(',').zip(values.split(',')).collect();
    let f = |k: &str| {
        col.get(k)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    Ok(Row {
        run,
        source: format!("bare {runtime}"),
        sink: "-".into(),
        datagrams: f("received") as u64,
        cpu_pct: f("cpu_pct"),
        cpu_us: f("cpu_us_per_pkt"),
        loss_pct: f("loss_pct"),
        lat_p50: f("lat_p50_us") as u64,
        lat_p99: f("lat_p99_us") as u64,
        stamp_p50: 0,
        stamp_p99: 0,
        allocs: f("allocs_per_pkt"),
    })
}

const CSV_HEADER: &str = "run,source,fakesink,streams,contexts,context_wait_ms,datagrams,\
cpu_pct,cpu_us_per_dgram,loss_pct,lat_p50_us,lat_p99_us,stamp_delay_p50_us,stamp_delay_p99_us,\
rust_allocs_per_dgram";

fn csv(cfg: &Config, r: &Row) -> String {
    format!(
        "{},{},{},{},{},{},{},{:.2},{:.3},{:.3},{},{},{},{},{:.3}",
        r.run,
        r.source,
        r.sink,
        cfg.streams,
        cfg.contexts,
        cfg.wait,
        r.datagrams,
        r.cpu_pct,
        r.cpu_us,
        r.loss_pct,
        r.lat_p50,
        r.lat_p99,
        r.stamp_p50,
        r.stamp_p99,
        r.allocs
    )
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let m = v[v.len() / 2];
    (m, v[0], v[v.len() - 1])
}

fn summary(cfg: &Config, rows: &[Row]) {
    eprintln!(
        "\n{} streams, {} context(s), context-wait {} ms, {} run(s); median [min-max]:\n",
        cfg.streams, cfg.contexts, cfg.wait, cfg.runs
    );
    eprintln!("| source | fakesink | CPU µs/datagram | CPU % | loss % | latency p50/p99 µs | stamp delay p50/p99 µs | Rust allocs/datagram |");
    eprintln!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.source.clone(), r.sink.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (source, sink) in &keys {
        let sel: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.source == source && &r.sink == sink)
            .collect();
        let m = |f: &dyn Fn(&Row) -> f64| median(sel.iter().map(|r| f(r)).collect());
        let (cpu, lo, hi) = m(&|r| r.cpu_us);
        eprintln!(
            "| {source} | {sink} | {cpu:.2} [{lo:.2}-{hi:.2}] | {:.1} | {:.2} | {:.0}/{:.0} | {:.0}/{:.0} | {:.2} |",
            m(&|r| r.cpu_pct).0,
            m(&|r| r.loss_pct).0,
            m(&|r| r.lat_p50 as f64).0,
            m(&|r| r.lat_p99 as f64).0,
            m(&|r| r.stamp_p50 as f64).0,
            m(&|r| r.stamp_p99 as f64).0,
            m(&|r| r.allocs).0,
        );
    }
    // Ratios within each run, then their median.
    for sink in &cfg.sinks {
        let ratio_of = |source: &str| {
            let ratios: Vec<f64> = (0..cfg.runs)
                .filter_map(|run| {
                    let cpu = |s: &str| {
                        rows.iter()
                            .find(|r| r.run == run && r.source == s && &r.sink == sink)
                            .map(|r| r.cpu_us)
                    };
                    Some(cpu(source)? / cpu("ts-udpsrc")?)
                })
                .collect();
            (!ratios.is_empty()).then(|| median(ratios))
        };
        if let Some((m, lo, hi)) = ratio_of("tempoudpsrc") {
            eprintln!("\ntempoudpsrc / ts-udpsrc CPU per datagram, fakesink {sink}: {m:.2}x [{lo:.2}-{hi:.2}]");
        }
    }
    // The element's own share: tempoudpsrc minus the timer-fed pipeline,
    // against the bare receiver, per run; and the same for the bare
    // receive inside GStreamer's process (timer-recv).
    for source in ["tempoudpsrc", "timer-recv"] {
        for sink in &cfg.sinks {
            let shares: Vec<f64> = (0..cfg.runs)
                .filter_map(|run| {
                    let cpu = |s: &str, k: &str| {
                        rows.iter()
                            .find(|r| r.run == run && r.source == s && r.sink == k)
                            .map(|r| r.cpu_us)
                    };
                    let bare = rows
                        .iter()
                        .find(|r| r.run == run && r.source.starts_with("bare"))?;
                    let own = cpu(source, sink)? - cpu("timer", sink)?;
                    Some(own / bare.cpu_us)
                })
                .collect();
            if !shares.is_empty() {
                let (m, lo, hi) = median(shares);
                eprintln!(
                    "({source} - timer) / bare receiver, fakesink {sink}: {m:.2}x [{lo:.2}-{hi:.2}]"
                );
            }
        }
    }
}

fn main() -> ExitCode {
    let cfg = match parse_args() {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("gst-benchmark: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = sys::pin_to(cfg.cpu) {
        eprintln!("gst-benchmark: cannot pin to CPU {}: {e}", cfg.cpu);
    }
    match sys::raise_open_files() {
        Ok(limit) if limit < 4 * cfg.streams as u64 + 256 => eprintln!(
            "gst-benchmark: open files limited to {limit}: raise the hard limit (ulimit -Hn) \
             for {} streams",
            cfg.streams
        ),
        Ok(_) => {}
        Err(e) => eprintln!("gst-benchmark: cannot raise the open-files limit: {e}"),
    }
    gst::init().unwrap();
    gsttempo::plugin_register_static().unwrap();
    gstthreadshare::plugin_register_static().unwrap();
    println!("{CSV_HEADER}");
    let mut rows = Vec::new();
    for run in 0..cfg.runs {
        for sink in &cfg.sinks {
            for source in &cfg.sources {
                match measure(&cfg, run, source, sink) {
                    Ok(row) => {
                        println!("{}", csv(&cfg, &row));
                        rows.push(row);
                    }
                    Err(e) => {
                        eprintln!("gst-benchmark: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
        if let Some(receiver) = &cfg.bare {
            match measure_bare(&cfg, run, receiver) {
                Ok(row) => {
                    println!("{}", csv(&cfg, &row));
                    rows.push(row);
                }
                Err(e) => eprintln!("gst-benchmark: bare receiver: {e}"),
            }
        }
    }
    summary(&cfg, &rows);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(seq: u64) -> gst::Buffer {
        let mut bytes = vec![0u8; DATAGRAM];
        bytes[0..8].copy_from_slice(&seq.to_le_bytes());
        bytes[8..16].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
        gst::Buffer::from_slice(bytes)
    }

    #[test]
    fn loss_counts_the_sequence_numbers_a_stream_skipped_in_the_window() {
        gst::init().unwrap();
        let rec = Recorder::default();
        let next = NextSeq::default();
        // Warm-up: followed, not counted (its own gap included).
        for seq in [5, 6, 8] {
            rec.record(&next, &datagram(seq));
        }
        rec.on.store(true, Ordering::Relaxed);
        // 9 and 10 arrive, 11 and 12 are lost, 13 arrives, 10 comes again late.
        for seq in [9, 10, 13, 10] {
            rec.record(&next, &datagram(seq));
        }
        assert_eq!(rec.gaps.load(Ordering::Relaxed), 2);
        assert_eq!(rec.seen.load(Ordering::Relaxed), 4);
        rec.on.store(false, Ordering::Relaxed);
        rec.record(&next, &datagram(20));
        assert_eq!(rec.gaps.load(Ordering::Relaxed), 2, "after the window");
    }
}
