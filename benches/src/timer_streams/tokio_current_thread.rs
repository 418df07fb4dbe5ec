//! The timer-stream benchmark on tokio's current_thread runtime, with
//! `tokio::time::interval_at` as the source timer.

use std::io;
use std::time::Duration;

use crate::clock::monotonic_ns;

use super::stream::{stream_tasks, Ticker};
use super::Load;

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

/// Runs `load` on a current_thread runtime until its window ends.
pub fn run(load: Load) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let base = (tokio::time::Instant::now(), monotonic_ns());
        let start = base.0 + Duration::from_millis(1);
        for i in 0..load.streams {
            let ticker = TokioTicker {
                interval: tokio::time::interval_at(start + load.offset(i), load.period),
                base,
            };
            let tasks = stream_tasks(load.kind, ticker, load.window);
            tokio::spawn(tasks.source);
            if let Some(sink) = tasks.sink {
                tokio::spawn(sink);
            }
        }
        tokio::time::sleep_until(load.window.end_instant().into()).await;
    });
    drop(rt);
    Ok(())
}
