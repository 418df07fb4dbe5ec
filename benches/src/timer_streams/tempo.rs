//! The timer-stream benchmark on Tempo, with `tempo_time::interval_at` as
//! the source timer; the same sources and sinks as the tokio run.
//!
//! `tempo` is the basic scheduler; `tempo-throttled:T` joins once the
//! throttling scheduler exists. Parked time is estimated as wall - CPU, as
//! for tokio, until the runtime publishes its own parked-time metric.

use std::io;
use std::time::Duration;

use crate::clock::monotonic_ns;
use crate::tempo_runtime::TempoRuntime;
use crate::window::MeasureWindow;

use super::stream::{stream_tasks, SinkKind, Ticker};

/// Tempo's `Interval`, reporting deadlines on CLOCK_MONOTONIC.
struct TempoTicker {
    interval: tempo_time::Interval,
    /// A Tempo instant and the same moment in CLOCK_MONOTONIC nanoseconds.
    base: (tempo_time::Instant, u64),
}

impl Ticker for TempoTicker {
    async fn tick(&mut self) -> u64 {
        let deadline = self.interval.tick().await;
        let (base_instant, base_ns) = self.base;
        if deadline >= base_instant {
            base_ns + (deadline - base_instant).as_nanos() as u64
        } else {
            base_ns - (base_instant - deadline).as_nanos() as u64
        }
    }
}

/// Runs `streams` streams with period `period` until `window` ends (stream
/// `i` first ticks at `i * period / streams`, or all together if `aligned`).
pub fn run(
    kind: SinkKind,
    streams: usize,
    period: Duration,
    aligned: bool,
    window: MeasureWindow,
) -> io::Result<()> {
    let rt = TempoRuntime::new()?;
    let clock_now = rt.time().now();
    let base = (clock_now, monotonic_ns());
    rt.block_on(async move {
        let start = base.0 + Duration::from_millis(1);
        for i in 0..streams {
            let offset = if aligned {
                Duration::ZERO
            } else {
                period.mul_f64(i as f64 / streams as f64)
            };
            let ticker = TempoTicker {
                interval: tempo_time::interval_at(start + offset, period),
                base,
            };
            let tasks = stream_tasks(kind, ticker, window);
            tempo::spawn(tasks.source);
            if let Some(sink) = tasks.sink {
                tempo::spawn(sink);
            }
        }
        tempo_time::sleep_until(window.end_instant().into()).await;
    });
    drop(rt);
    Ok(())
}
