//! The UDP receiver benchmark: bind N sockets, run a receiver runtime over
//! them, and measure one window after a warm-up.
//!
//! A controller thread ([`crate::controller`]) reads the process-wide
//! counters at the two ends of the window, ordered so that its own work (parsing `/proc/net/udp`) falls
//! outside the CPU measurement: at the start it reads the thread count and
//! drops, then allocations, then CPU; at the end CPU first, then allocations, then drops.
//! Per-datagram counts come from the receive loops themselves
//! ([`crate::recv_stats`]). The controller is one extra, sleeping OS thread,
//! subtracted from the reported thread count.

use std::io;
use std::ops::Range;
use std::time::Duration;

use crate::alloc_count::allocations;
use crate::clock::monotonic_ns;
use crate::controller::spawn_controller;
use crate::os_threads::os_threads;
use crate::receivers::ReceiverRuntime;
use crate::recv_stats::{collect, RecvStats};
use crate::report::CsvRow;
use crate::rusage::{cpu_percent, process_cpu_time};
use crate::udp_drops::loopback_drops;
use crate::udp_socket::bind_streams;
use crate::window::MeasureWindow;

/// What to receive and how long to measure.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// The runtime under test.
    pub runtime: ReceiverRuntime,
    /// Number of sockets (streams).
    pub streams: usize,
    /// Port of stream 0; stream i is `base_port + i`.
    pub base_port: u16,
    /// Requested SO_RCVBUF per socket (0: kernel default).
    pub rcvbuf: usize,
    /// The sender's interval, to compute how many datagrams to expect.
    pub interval: Duration,
    /// Time before the window starts.
    pub warmup: Duration,
    /// Length of the measured window.
    pub window: Duration,
}

/// Process-wide counters read at one end of the window.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    at_ns: u64,
    cpu: Duration,
    allocations: u64,
    drops: u64,
}

fn snapshot_at_start(ports: Range<u16>) -> io::Result<Snapshot> {
    let drops = loopback_drops(ports)?;
    let allocations = allocations();
    let cpu = process_cpu_time();
    Ok(Snapshot {
        at_ns: monotonic_ns(),
        cpu,
        allocations,
        drops,
    })
}

fn snapshot_at_end(ports: Range<u16>) -> io::Result<Snapshot> {
    let at_ns = monotonic_ns();
    let cpu = process_cpu_time();
    let allocations = allocations();
    let drops = loopback_drops(ports)?;
    Ok(Snapshot {
        at_ns,
        cpu,
        allocations,
        drops,
    })
}

/// The outcome of one receiver run.
#[derive(Debug, Clone)]
pub struct ReceiverResult {
    /// The configuration measured.
    pub config: ReceiverConfig,
    /// Per-datagram counts over the window.
    pub stats: RecvStats,
    /// Wall time of the window as measured by the controller.
    pub wall: Duration,
    /// Process CPU over the window.
    pub cpu: Duration,
    /// Allocations over the window.
    pub allocations: u64,
    /// Kernel receive drops over the window (`/proc/net/udp`).
    pub kernel_drops: u64,
    /// OS threads of the receiver, controller excluded.
    pub os_threads: u64,
    /// How late the controller read the counters (scheduler delay): a
    /// result is only trustworthy if this is small against the window.
    pub controller_lateness: Duration,
}

impl ReceiverResult {
    /// Datagrams the sender was scheduled to send over the window.
    pub fn expected(&self) -> u64 {
        let per_stream = self.wall.as_secs_f64() / self.config.interval.as_secs_f64();
        (per_stream * self.config.streams as f64).round() as u64
    }

    /// Datagrams lost: the kernel's count, or the sequence gaps if larger
    /// (a gap the kernel did not count was lost before the socket).
    pub fn lost(&self) -> u64 {
        self.kernel_drops.max(self.stats.seq_gaps)
    }

    /// `lost / (received + lost)` in percent.
    pub fn loss_pct(&self) -> f64 {
        let total = self.stats.received + self.lost();
        if total == 0 {
            0.0
        } else {
            self.lost() as f64 * 100.0 / total as f64
        }
    }

    /// CPU microseconds per received datagram.
    pub fn cpu_us_per_packet(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.stats.received.max(1) as f64
    }

    /// The result as one CSV row.
    pub fn to_row(&self) -> CsvRow {
        let s = &self.stats;
        let mut row = CsvRow::new();
        row.push("runtime", self.config.runtime.name())
            .push("streams", self.config.streams)
            .push_f64("interval_ms", self.config.interval.as_secs_f64() * 1e3, 3)
            .push_f64("window_s", self.wall.as_secs_f64(), 3)
            .push("expected", self.expected())
            .push("received", s.received)
            .push("kernel_drops", self.kernel_drops)
            .push("seq_gaps", s.seq_gaps)
            .push_f64("loss_pct", self.loss_pct(), 3)
            .push_f64(
                "rate_pps",
                s.received as f64 / self.wall.as_secs_f64().max(1e-9),
                0,
            )
            .push_f64("cpu_pct", cpu_percent(self.cpu, self.wall), 2)
            .push_f64("cpu_us_per_pkt", self.cpu_us_per_packet(), 3)
            .push("lat_p50_us", s.latency.percentile_us(0.5))
            .push("lat_p99_us", s.latency.percentile_us(0.99))
            .push("lat_max_us", s.latency.max_us())
            .push_f64(
                "allocs_per_pkt",
                self.allocations as f64 / s.received.max(1) as f64,
                4,
            )
            .push("os_threads", self.os_threads)
            .push("controller_late_ms", self.controller_lateness.as_millis())
            .push("out_of_order", s.out_of_order)
            .push("malformed", s.malformed)
            .push("errors", s.errors);
        row
    }

    /// A human-readable summary.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "{} x{}: received {}/{} expected, loss {:.3}% (kernel drops {}, seq gaps {}), \
             cpu {:.1}% = {:.2} us/pkt, latency p50 {} us p90 {} us p95 {} us p99 {} us max {} us, \
             {:.3} allocs/pkt ({} in the window), {} OS threads",
            self.config.runtime.name(),
            self.config.streams,
            s.received,
            self.expected(),
            self.loss_pct(),
            self.kernel_drops,
            s.seq_gaps,
            cpu_percent(self.cpu, self.wall),
            self.cpu_us_per_packet(),
            s.latency.percentile_us(0.5),
            s.latency.percentile_us(0.9),
            s.latency.percentile_us(0.95),
            s.latency.percentile_us(0.99),
            s.latency.max_us(),
            self.allocations as f64 / s.received.max(1) as f64,
            self.allocations,
            self.os_threads,
        ) + &self.lateness_warning()
    }

    /// A warning if the counters were read late, else nothing.
    pub fn lateness_warning(&self) -> String {
        if self.controller_lateness * 20 > self.config.window {
            format!(
                " -- WARNING: counters read {:?} late (receiver thread overload): this row is unreliable",
                self.controller_lateness
            )
        } else {
            String::new()
        }
    }
}

/// Binds the sockets, runs the runtime until the window is over, and
/// returns what was measured.
pub fn run_receiver(cfg: &ReceiverConfig) -> io::Result<ReceiverResult> {
    let sockets = bind_streams(cfg.base_port, cfg.streams, cfg.rcvbuf)?;
    let ports = cfg.base_port..cfg.base_port + cfg.streams as u16;
    let window = MeasureWindow::after_warmup(cfg.warmup, cfg.window);
    let (ports_start, ports_end) = (ports.clone(), ports);
    let controller = spawn_controller(
        window,
        move || -> io::Result<(Snapshot, u64)> {
            // Threads are counted at steady state, before loops start ending
            // with the window.
            let threads = os_threads()?;
            Ok((snapshot_at_start(ports_start)?, threads))
        },
        move || snapshot_at_end(ports_end),
    )?;
    let ran = cfg.runtime.run(sockets, window);
    let measured = controller
        .join()
        .map_err(|_| io::Error::other("controller thread panicked"))?;
    ran?;
    let readings = measured?;
    let ((start, threads), end) = (readings.start, readings.end);
    Ok(ReceiverResult {
        config: cfg.clone(),
        stats: collect(),
        wall: Duration::from_nanos(end.at_ns.saturating_sub(start.at_ns)),
        controller_lateness: Duration::from_nanos(readings.max_lateness_ns),
        cpu: end.cpu.saturating_sub(start.cpu),
        allocations: end.allocations - start.allocations,
        kernel_drops: end.drops.saturating_sub(start.drops),
        os_threads: threads.saturating_sub(1),
    })
}
