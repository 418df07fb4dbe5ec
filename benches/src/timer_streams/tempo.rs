//! The timer-stream benchmark on Tempo, with `tempo::time::interval_at` as
//! the source timer; the same sources and sinks as the tokio run.
//!
//! `tempo` is the basic scheduler, `tempo-throttled:T` the throttling
//! scheduler. Parked time comes from the runtime's own metrics, read at the
//! two ends of the window.

use std::io;
use std::time::Duration;

use crate::clock::monotonic_ns;

use super::stream::{stream_tasks, Ticker};
use super::Load;

/// Tempo's `Interval`, reporting deadlines on CLOCK_MONOTONIC.
struct TempoTicker {
    interval: tempo::time::Interval,
    /// A Tempo instant and the same moment in CLOCK_MONOTONIC nanoseconds.
    base: (tempo::time::Instant, u64),
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

/// Runs `load` on a Tempo runtime (throttled with period `throttle` if
/// given) until its window ends; returns the parked percentage over the
/// window from the runtime's metrics.
pub fn run(load: Load, throttle: Option<Duration>) -> io::Result<f64> {
    let rt = crate::tempo_runtime::build(throttle)?;
    let handle = rt.handle().clone();
    let window = load.window;
    let parked_ratio = rt.block_on(async move {
        let base = (tempo::time::Instant::now(), monotonic_ns());
        let start = base.0 + Duration::from_millis(1);
        for i in 0..load.streams {
            let ticker = TempoTicker {
                interval: tempo::time::interval_at(start + load.offset(i), load.period),
                base,
            };
            let tasks = stream_tasks(load.kind, ticker, window);
            tempo::spawn(tasks.source);
            if let Some(sink) = tasks.sink {
                tempo::spawn(sink);
            }
        }
        tempo::time::sleep_until(window_instant(window.start_ns, base)).await;
        let at_start = handle.metrics();
        tempo::time::sleep_until(window_instant(window.end_ns, base)).await;
        handle.metrics().since(&at_start).parked_ratio()
    });
    drop(rt);
    Ok(parked_ratio * 100.0)
}

/// The Tempo instant of a CLOCK_MONOTONIC time, given a matching pair.
fn window_instant(at_ns: u64, base: (tempo::time::Instant, u64)) -> tempo::time::Instant {
    let (base_instant, base_ns) = base;
    if at_ns >= base_ns {
        base_instant + Duration::from_nanos(at_ns - base_ns)
    } else {
        base_instant - Duration::from_nanos(base_ns - at_ns)
    }
}
