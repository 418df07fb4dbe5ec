//! The sink: receives a stream's buffers, records the interval between
//! two buffers (lateness against the push period), and gives each buffer
//! back to its pool.
//!
//! Statistics are kept by the sink task itself and published to its
//! group's [`SinkShared`] only when the measured window closes (or the
//! stream ends), so the hot path touches no shared lock; the one shared
//! write per buffer is the group's `delivered` counter, an uncontended
//! atomic of the sink's own context.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use std::future::Future;

use tokio::sync::mpsc;

use super::buffer::{Buffer, BufferPool};

/// The receiving end of a source-to-sink channel: tempo-media's
/// [`channel`](mod@tempo_media::channel) on Tempo, tokio's `mpsc` on tokio
/// (what a user of each writes), one sink for both.
pub trait BufferRx: Send {
    /// The next buffer, `None` once the source is gone.
    fn recv(&mut self) -> impl Future<Output = Option<Buffer>> + Send;
}

impl BufferRx for tempo_media::channel::Receiver<Buffer> {
    fn recv(&mut self) -> impl Future<Output = Option<Buffer>> + Send {
        tempo_media::channel::Receiver::recv(self)
    }
}

impl BufferRx for mpsc::Receiver<Buffer> {
    fn recv(&mut self) -> impl Future<Output = Option<Buffer>> + Send {
        mpsc::Receiver::recv(self)
    }
}

/// Interval statistics of one or more sinks, in milliseconds.
#[derive(Debug, Default, Clone)]
pub struct Lateness {
    /// Intervals recorded.
    pub n: u64,
    sum: f64,
    sum_sq: f64,
    /// Shortest interval.
    pub min: f64,
    /// Longest interval.
    pub max: f64,
    /// Intervals longer than the "late" threshold (period + T/2).
    pub late: u64,
}

impl Lateness {
    /// Records one interval; `late_after` is the threshold of [`Self::late`].
    pub fn record(&mut self, interval: Duration, late_after: Duration) {
        let ms = interval.as_secs_f64() * 1e3;
        if self.n == 0 {
            self.min = ms;
            self.max = ms;
        }
        self.n += 1;
        self.sum += ms;
        self.sum_sq += ms * ms;
        self.min = self.min.min(ms);
        self.max = self.max.max(ms);
        if interval > late_after {
            self.late += 1;
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Lateness) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.late += other.late;
    }

    /// Mean interval.
    pub fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }

    /// Standard deviation of the interval.
    pub fn stddev(&self) -> f64 {
        let mean = self.mean();
        (self.sum_sq / self.n.max(1) as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }
}

/// What the sinks of one group (one context) share with the benchmark.
#[derive(Debug, Default)]
pub struct SinkShared {
    /// Whether the window is open (set by the benchmark).
    pub measuring: AtomicBool,
    /// Buffers received by the group's sinks, window or not.
    pub delivered: AtomicU64,
    /// Intervals recorded inside the window, published when it closes.
    pub results: Mutex<Lateness>,
}

impl SinkShared {
    /// Buffers delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered.load(Relaxed)
    }
}

/// The sink task of one stream: runs until the source's sender is dropped.
/// `inspect` sees every buffer, with the time it arrived (CLOCK_MONOTONIC
/// nanoseconds, [`crate::clock::monotonic_ns`]), before it goes back to
/// `pool` (the UDP pipeline accounts the datagram's sequence number and
/// latency there). One clock read per buffer serves both.
pub async fn sink(
    mut rx: impl BufferRx,
    pool: BufferPool,
    late_after: Duration,
    shared: std::sync::Arc<SinkShared>,
    mut inspect: impl FnMut(&Buffer, u64) + Send,
) {
    let mut stats = Lateness::default();
    let mut last: Option<u64> = None;
    while let Some(buffer) = rx.recv().await {
        let now = crate::clock::monotonic_ns();
        shared.delivered.fetch_add(1, Relaxed);
        inspect(&buffer, now);
        pool.give_back(buffer);
        if shared.measuring.load(Relaxed) {
            if let Some(last) = last {
                stats.record(Duration::from_nanos(now.saturating_sub(last)), late_after);
            }
            last = Some(now);
        } else {
            last = None;
            if stats.n > 0 {
                shared.results.lock().unwrap().merge(&stats);
                stats = Lateness::default();
            }
        }
    }
    shared.results.lock().unwrap().merge(&stats);
}
