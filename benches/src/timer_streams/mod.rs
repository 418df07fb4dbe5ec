//! The timer-stream benchmark (threadshare's `ts-standalone` analog): S
//! streams, each a source task woken by a periodic timer that hands a small
//! buffer to its sink. It measures what a timer-heavy, I/O-free load costs a
//! runtime: CPU (and its complement, the time parked), timer error, and the
//! latency from buffer creation to sink for each hand-off design.
//!
//! Adding a runtime is one module with a `run(kind, streams, period,
//! aligned, window)` function, one [`TimerRuntime`] variant, one line in
//! [`TimerRuntime::parse`] and one arm in [`TimerRuntime::run`].

use std::io;
use std::time::Duration;

use crate::alloc_count::allocations;
use crate::controller::spawn_controller;
use crate::os_threads::os_threads;
use crate::report::CsvRow;
pub use crate::runtime_name::RuntimeNameError;
use crate::runtime_name::{fmt_ms, parse_period};
use crate::rusage::{cpu_percent, process_cpu_time};
use crate::window::MeasureWindow;

pub mod stats;
pub mod stream;
pub mod tempo;
pub mod tokio_current_thread;

use stats::{collect, TimerStreamStats};
use stream::SinkKind;

/// Every runtime name `timer-streams` knows of.
pub const RUNTIME_NAMES: &[&str] = &["tempo", "tempo-throttled:T", "tokio"];

/// A runtime for the timer-stream benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerRuntime {
    /// Tempo's basic scheduler with `tempo::time::interval_at`.
    Tempo,
    /// Tempo's throttling scheduler with this period.
    TempoThrottled(Duration),
    /// tokio current_thread with `tokio::time::interval_at`.
    Tokio,
}

impl TimerRuntime {
    /// Parses `tokio`, `tempo` or `tempo-throttled:T`.
    pub fn parse(name: &str) -> Result<TimerRuntime, RuntimeNameError> {
        match name.split_once(':') {
            None if name == "tokio" => Ok(TimerRuntime::Tokio),
            None if name == "tempo" => Ok(TimerRuntime::Tempo),
            Some(("tempo-throttled", p)) => {
                Ok(TimerRuntime::TempoThrottled(parse_period(name, p)?))
            }
            _ => Err(RuntimeNameError::Unknown {
                name: name.to_string(),
                known: RUNTIME_NAMES,
            }),
        }
    }

    /// The canonical name.
    pub fn name(&self) -> String {
        match self {
            TimerRuntime::Tempo => "tempo".into(),
            TimerRuntime::TempoThrottled(p) => format!("tempo-throttled:{}", fmt_ms(*p)),
            TimerRuntime::Tokio => "tokio".into(),
        }
    }

    /// Runs the streams until `window` ends. Returns the percentage of the
    /// window the runtime spent parked if the runtime measures it itself
    /// (Tempo's metrics); `None` means it is estimated as wall - CPU.
    pub fn run(
        &self,
        kind: SinkKind,
        streams: usize,
        period: Duration,
        aligned: bool,
        window: MeasureWindow,
    ) -> io::Result<Option<f64>> {
        let load = Load {
            kind,
            streams,
            period,
            aligned,
            window,
        };
        match *self {
            TimerRuntime::Tempo => self::tempo::run(load, None).map(Some),
            TimerRuntime::TempoThrottled(t) => self::tempo::run(load, Some(t)).map(Some),
            TimerRuntime::Tokio => tokio_current_thread::run(load).map(|()| None),
        }
    }
}

/// What every runtime runs: `streams` streams of period `period` handing
/// buffers to sinks of design `kind`, until `window` ends.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Hand-off design.
    pub kind: SinkKind,
    /// Number of streams.
    pub streams: usize,
    /// Timer period of every source.
    pub period: Duration,
    /// All streams tick together instead of spread evenly over the period.
    pub aligned: bool,
    /// The measured window; everything stops at its end.
    pub window: MeasureWindow,
}

impl Load {
    /// Offset of stream `i`'s first tick from the common start.
    pub fn offset(&self, i: usize) -> Duration {
        if self.aligned {
            Duration::ZERO
        } else {
            self.period.mul_f64(i as f64 / self.streams as f64)
        }
    }
}

/// One point of the benchmark.
#[derive(Debug, Clone)]
pub struct TimerStreamsConfig {
    /// Runtime under test.
    pub runtime: TimerRuntime,
    /// Hand-off design.
    pub sink: SinkKind,
    /// Number of streams.
    pub streams: usize,
    /// Timer period of every source.
    pub period: Duration,
    /// All streams tick at the same instants instead of spread evenly.
    pub aligned: bool,
    /// Time before the window.
    pub warmup: Duration,
    /// Measured window.
    pub window: Duration,
}

/// What one point measured.
#[derive(Debug, Clone)]
pub struct TimerStreamsResult {
    /// The point.
    pub config: TimerStreamsConfig,
    /// Counts from sources and sinks.
    pub stats: TimerStreamStats,
    /// Window wall time.
    pub wall: Duration,
    /// Process CPU over the window.
    pub cpu: Duration,
    /// Allocations over the window.
    pub allocations: u64,
    /// OS threads, the controller excluded.
    pub os_threads: u64,
    /// Parked time in percent of the window as the runtime measured it.
    pub reported_parked_pct: Option<f64>,
    /// How late the controller read the counters (see [`crate::controller`]).
    pub controller_lateness: Duration,
}

impl TimerStreamsResult {
    /// CPU in percent of one core.
    pub fn cpu_pct(&self) -> f64 {
        cpu_percent(self.cpu, self.wall)
    }

    /// Time parked in percent: as reported by the runtime, or wall - CPU.
    pub fn parked_pct(&self) -> f64 {
        self.reported_parked_pct
            .unwrap_or_else(|| (100.0 - self.cpu_pct()).max(0.0))
    }

    /// Ticks the schedule called for over the window.
    pub fn expected(&self) -> u64 {
        (self.wall.as_secs_f64() / self.config.period.as_secs_f64() * self.config.streams as f64)
            .round() as u64
    }

    /// The result as one CSV row.
    pub fn to_row(&self) -> CsvRow {
        let s = &self.stats;
        let mut row = CsvRow::new();
        row.push("runtime", self.config.runtime.name())
            .push("sink", self.config.sink.name())
            .push("streams", self.config.streams)
            .push_f64("period_ms", self.config.period.as_secs_f64() * 1e3, 3)
            .push("aligned", self.config.aligned)
            .push_f64("window_s", self.wall.as_secs_f64(), 3)
            .push("expected", self.expected())
            .push("ticks", s.ticks)
            .push("buffers", s.buffers)
            .push("gaps", s.gaps)
            .push_f64("cpu_pct", self.cpu_pct(), 2)
            .push_f64("parked_pct", self.parked_pct(), 2)
            .push(
                "parked_from",
                if self.reported_parked_pct.is_some() {
                    "runtime"
                } else {
                    "wall-cpu"
                },
            )
            .push_f64(
                "cpu_us_per_buffer",
                self.cpu.as_secs_f64() * 1e6 / s.buffers.max(1) as f64,
                3,
            )
            .push("lat_p50_us", s.latency.percentile_us(0.5))
            .push("lat_p99_us", s.latency.percentile_us(0.99))
            .push("lat_max_us", s.latency.max_us())
            .push("timer_err_p50_us", s.timer_error.percentile_us(0.5))
            .push("timer_err_p99_us", s.timer_error.percentile_us(0.99))
            .push("timer_err_p1_us", s.timer_error.percentile_us(0.01))
            .push_f64("timer_err_mean_us", s.timer_error.mean_us(), 1)
            .push_f64(
                "allocs_per_buffer",
                self.allocations as f64 / s.buffers.max(1) as f64,
                4,
            )
            .push("os_threads", self.os_threads)
            .push("controller_late_ms", self.controller_lateness.as_millis());
        row
    }

    /// The timer promise of the runtime, read against the measured error:
    /// under `max_throttling(T)` a timer fires at the tick nearest its
    /// deadline, error within `±T/2` and mean about zero; the others fire
    /// at their deadline, never early. `kept`: nothing fired earlier than
    /// the promise allows (p1, with 1 ms of slack) and the mean is within
    /// `T/10` of zero (nearest tick) or under 2 ms (never early). A late
    /// p99 alone is the machine's wake-up latency (a loaded machine shows
    /// it on every runtime) and is printed, not judged; a late *mean* is
    /// the runtime's doing.
    pub fn timer_promise(&self) -> String {
        let error = &self.stats.timer_error;
        let (p1, p99, mean) = (
            error.percentile_us(0.01),
            error.percentile_us(0.99),
            error.mean_us(),
        );
        let (kept, promise) = match self.config.runtime {
            TimerRuntime::TempoThrottled(t) => {
                let half = (t.as_micros() / 2) as i64;
                (
                    p1 >= -half - 1_000 && mean.abs() <= half as f64 / 5.0,
                    format!("nearest tick, +-{half} us, mean about 0"),
                )
            }
            TimerRuntime::Tempo | TimerRuntime::Tokio => {
                (p1 >= -1_000 && mean <= 2_000.0, "never early".to_string())
            }
        };
        format!(
            "timer promise ({promise}): p1 {p1} us, p99 {p99} us, mean {mean:.0} us: {}",
            if kept { "kept" } else { "BROKEN" }
        )
    }

    /// A human-readable summary.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "{} {} x{}: {} ticks / {} expected, {} buffers, cpu {:.1}% (parked {:.1}%), \
             latency p50 {} us p99 {} us, timer error p50 {} us p99 {} us (mean {:.0} us), \
             {:.3} allocs/buffer, {} OS threads; {}",
            self.config.runtime.name(),
            self.config.sink.name(),
            self.config.streams,
            s.ticks,
            self.expected(),
            s.buffers,
            self.cpu_pct(),
            self.parked_pct(),
            s.latency.percentile_us(0.5),
            s.latency.percentile_us(0.99),
            s.timer_error.percentile_us(0.5),
            s.timer_error.percentile_us(0.99),
            s.timer_error.mean_us(),
            self.allocations as f64 / s.buffers.max(1) as f64,
            self.os_threads,
            self.timer_promise(),
        )
    }
}

/// Runs one point in this process and measures it (a controller thread reads
/// CPU and allocations at the window's ends, as in the UDP receiver).
pub fn run_point(cfg: &TimerStreamsConfig) -> io::Result<TimerStreamsResult> {
    let window = MeasureWindow::after_warmup(cfg.warmup, cfg.window);
    let controller = spawn_controller(
        window,
        || -> io::Result<(u64, u64, std::time::Duration)> {
            let threads = os_threads()?;
            let a0 = allocations();
            Ok((threads, a0, process_cpu_time()))
        },
        || -> io::Result<(std::time::Duration, u64)> { Ok((process_cpu_time(), allocations())) },
    )?;
    let ran = cfg
        .runtime
        .run(cfg.sink, cfg.streams, cfg.period, cfg.aligned, window);
    let measured = controller
        .join()
        .map_err(|_| io::Error::other("controller thread panicked"))?;
    let reported_parked_pct = ran?;
    let r = measured?;
    let ((threads, a0, c0), (c1, a1)) = (r.start, r.end);
    Ok(TimerStreamsResult {
        config: cfg.clone(),
        stats: collect(),
        wall: Duration::from_nanos(r.wall_ns()),
        cpu: c1.saturating_sub(c0),
        allocations: a1 - a0,
        os_threads: threads.saturating_sub(1),
        reported_parked_pct,
        controller_lateness: Duration::from_nanos(r.max_lateness_ns),
    })
}
