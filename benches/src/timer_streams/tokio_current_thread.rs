//! The timer-stream benchmark on tokio's current_thread runtime, with
//! `tokio::time::interval_at` as the source timer.

use std::io;
use std::time::Duration;

use crate::clock::monotonic_ns;
use crate::window::MeasureWindow;

use super::stream::{stream_tasks, SinkKind, Ticker};

/// tokio's `Interval`, reporting deadlines on CLOCK_MONOTONIC.
struct TokioTicker {
    interval: tokio::time::Interval,
    /// A tokio instant and the same moment in CLOCK_MONOTONIC nanoseconds.
    base: (tokio::time::Instant, u64),
}

impl Ticker for TokioTicker {
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

/// Runs `streams` streams with period `period` until `window` ends. Stream
/// `i`'s first tick is at `i * period / streams` (spread evenly) or, with
/// `aligned`, every stream ticks at the same instants.
pub fn run(
    kind: SinkKind,
    streams: usize,
    period: Duration,
    aligned: bool,
    window: MeasureWindow,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let base = (tokio::time::Instant::now(), monotonic_ns());
        let start = base.0 + Duration::from_millis(1);
        for i in 0..streams {
            let offset = if aligned {
                Duration::ZERO
            } else {
                period.mul_f64(i as f64 / streams as f64)
            };
            let ticker = TokioTicker {
                interval: tokio::time::interval_at(start + offset, period),
                base,
            };
            let tasks = stream_tasks(kind, ticker, window);
            tokio::spawn(tasks.source);
            if let Some(sink) = tasks.sink {
                tokio::spawn(sink);
            }
        }
        tokio::time::sleep_until(window.end_instant().into()).await;
    });
    drop(rt);
    Ok(())
}
