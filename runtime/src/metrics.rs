//! Runtime metrics: the scheduler counts in plain `Cell`s on its thread
//! ([`LocalCounters`]) and publishes them with relaxed stores once per
//! iteration into [`SharedCounters`]: nothing per poll or event, and a
//! snapshot is at most one iteration old.

use std::cell::Cell;
use std::time::Duration;

use tempo_time::TimerErrorHistogram;

use crate::sync::{AtomicU64, Ordering::Relaxed};

/// A snapshot of a runtime's cumulative counters (subtract two with
/// [`since`](Self::since) to measure an interval).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeMetrics {
    /// Scheduler iterations: ticks, or the basic loop's run-then-park rounds.
    pub ticks: u64,
    /// Overrun ticks: the next started at once (throttling only).
    pub overruns: u64,
    /// Time the thread spent running (tasks, driver polls, bookkeeping).
    pub busy: Duration,
    /// Time the thread spent parked in the driver or sleeping between ticks.
    pub parked: Duration,
    /// Task polls.
    pub tasks_polled: u64,
    /// I/O events the driver dispatched.
    pub io_events: u64,
    /// Timers fired.
    pub timers_fired: u64,
    /// Driver unparks: remote spawns, wakes or `Handle::unpark` calls that
    /// woke the thread while idle in the driver (as
    /// [`Handle::unpark_count`](crate::runtime::Handle::unpark_count)).
    pub unparks: u64,
    /// Every fired timer's error (`fire time - deadline`) in log2 buckets of
    /// microseconds; `None` without timers.
    pub timer_error: Option<TimerErrorHistogram>,
    /// Blocking pool threads alive now. A gauge: [`since`](Self::since) keeps
    /// the current value.
    pub blocking_threads: usize,
    /// Of [`blocking_threads`](Self::blocking_threads), those idle now. A gauge.
    pub idle_blocking_threads: usize,
    /// Blocking closures queued now, waiting for a pool thread. A gauge.
    pub blocking_queue_depth: usize,
}

impl RuntimeMetrics {
    /// The share of time the thread was parked: `parked / (parked + busy)`,
    /// about `1 - CPU load` of the thread; `1.0` before any measurement.
    pub fn parked_ratio(&self) -> f64 {
        let total = self.parked + self.busy;
        if total.is_zero() {
            1.0
        } else {
            self.parked.as_secs_f64() / total.as_secs_f64()
        }
    }

    /// The counters accumulated since `earlier`, a previous snapshot of the
    /// same runtime.
    pub fn since(&self, earlier: &RuntimeMetrics) -> RuntimeMetrics {
        RuntimeMetrics {
            ticks: self.ticks.wrapping_sub(earlier.ticks),
            overruns: self.overruns.wrapping_sub(earlier.overruns),
            busy: self.busy.saturating_sub(earlier.busy),
            parked: self.parked.saturating_sub(earlier.parked),
            tasks_polled: self.tasks_polled.wrapping_sub(earlier.tasks_polled),
            io_events: self.io_events.wrapping_sub(earlier.io_events),
            timers_fired: self.timers_fired.wrapping_sub(earlier.timers_fired),
            unparks: self.unparks.wrapping_sub(earlier.unparks),
            timer_error: match (&self.timer_error, &earlier.timer_error) {
                (Some(now), Some(then)) => Some(now.since(then)),
                (now, _) => *now,
            },
            blocking_threads: self.blocking_threads,
            idle_blocking_threads: self.idle_blocking_threads,
            blocking_queue_depth: self.blocking_queue_depth,
        }
    }
}

/// The published counters, readable from any thread.
#[derive(Debug)]
pub(crate) struct SharedCounters {
    ticks: AtomicU64,
    overruns: AtomicU64,
    busy_ns: AtomicU64,
    parked_ns: AtomicU64,
    tasks_polled: AtomicU64,
    io_events: AtomicU64,
    timers_fired: AtomicU64,
}

/// The scheduler thread's running counters.
#[derive(Debug, Default)]
pub(crate) struct LocalCounters {
    pub(crate) ticks: Cell<u64>,
    pub(crate) overruns: Cell<u64>,
    pub(crate) busy_ns: Cell<u64>,
    pub(crate) parked_ns: Cell<u64>,
    pub(crate) tasks_polled: Cell<u64>,
    pub(crate) io_events: Cell<u64>,
    pub(crate) timers_fired: Cell<u64>,
}

fn add(cell: &Cell<u64>, n: u64) {
    cell.set(cell.get().wrapping_add(n));
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl LocalCounters {
    /// Records one finished iteration that took `elapsed` in all, `parked`
    /// of it parked or sleeping.
    pub(crate) fn iteration(&self, elapsed: Duration, parked: Duration) {
        add(&self.ticks, 1);
        add(&self.parked_ns, nanos(parked));
        add(&self.busy_ns, nanos(elapsed.saturating_sub(parked)));
    }

    /// Records task polls and driver work.
    pub(crate) fn work(&self, polled: u64, io_events: u64, timers_fired: u64) {
        add(&self.tasks_polled, polled);
        add(&self.io_events, io_events);
        add(&self.timers_fired, timers_fired);
    }

    /// Records an overrun.
    pub(crate) fn overrun(&self) {
        add(&self.overruns, 1);
    }

    /// Publishes every counter (relaxed stores: a reader sees each one at
    /// most an iteration old).
    pub(crate) fn publish(&self, to: &SharedCounters) {
        to.ticks.store(self.ticks.get(), Relaxed);
        to.overruns.store(self.overruns.get(), Relaxed);
        to.busy_ns.store(self.busy_ns.get(), Relaxed);
        to.parked_ns.store(self.parked_ns.get(), Relaxed);
        to.tasks_polled.store(self.tasks_polled.get(), Relaxed);
        to.io_events.store(self.io_events.get(), Relaxed);
        to.timers_fired.store(self.timers_fired.get(), Relaxed);
    }
}

impl SharedCounters {
    pub(crate) fn new() -> SharedCounters {
        SharedCounters {
            ticks: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            parked_ns: AtomicU64::new(0),
            tasks_polled: AtomicU64::new(0),
            io_events: AtomicU64::new(0),
            timers_fired: AtomicU64::new(0),
        }
    }

    /// A snapshot; `unparks` and the timer histogram come from elsewhere.
    pub(crate) fn snapshot(
        &self,
        unparks: u64,
        timer_error: Option<TimerErrorHistogram>,
    ) -> RuntimeMetrics {
        RuntimeMetrics {
            ticks: self.ticks.load(Relaxed),
            overruns: self.overruns.load(Relaxed),
            busy: Duration::from_nanos(self.busy_ns.load(Relaxed)),
            parked: Duration::from_nanos(self.parked_ns.load(Relaxed)),
            tasks_polled: self.tasks_polled.load(Relaxed),
            io_events: self.io_events.load(Relaxed),
            timers_fired: self.timers_fired.load(Relaxed),
            unparks,
            timer_error,
            // The blocking pool's gauges are read by the caller.
            ..RuntimeMetrics::default()
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn publish_and_snapshot() {
        let local = LocalCounters::default();
        let shared = SharedCounters::new();
        local.iteration(Duration::from_millis(20), Duration::from_millis(15));
        local.work(3, 2, 1);
        local.overrun();
        local.publish(&shared);
        let m = shared.snapshot(7, None);
        assert_eq!(m.ticks, 1);
        assert_eq!(m.overruns, 1);
        assert_eq!(m.busy, Duration::from_millis(5));
        assert_eq!(m.parked, Duration::from_millis(15));
        assert_eq!(
            (m.tasks_polled, m.io_events, m.timers_fired, m.unparks),
            (3, 2, 1, 7)
        );
        assert!((m.parked_ratio() - 0.75).abs() < 1e-9);
        let later = RuntimeMetrics {
            ticks: 5,
            ..m.clone()
        };
        assert_eq!(later.since(&m).ticks, 4);
        assert_eq!(RuntimeMetrics::default().parked_ratio(), 1.0);
    }
}
