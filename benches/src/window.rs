//! The measured window: `[start, end)` on CLOCK_MONOTONIC.
//!
//! Start-up (binding thousands of sockets, spawning tasks, the first timer
//! alignments) is not steady state, so every benchmark warms up first and
//! then measures over a fixed window. Per-event statistics count an event if
//! its own timestamp falls in the window; process-wide counters (CPU,
//! allocations, kernel drops) are read at its two ends.

use std::time::Duration;

use crate::clock::monotonic_ns;

/// A `[start_ns, end_ns)` interval on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasureWindow {
    /// First nanosecond of the window.
    pub start_ns: u64,
    /// First nanosecond after the window.
    pub end_ns: u64,
}

/// Where a timestamp falls relative to a [`MeasureWindow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the window: warm-up, not counted.
    WarmUp,
    /// Inside the window: counted.
    Measured,
    /// After the window: the loop should stop.
    Done,
}

impl MeasureWindow {
    /// The window that starts `warmup` from now and lasts `length`.
    pub fn after_warmup(warmup: Duration, length: Duration) -> MeasureWindow {
        let start_ns = monotonic_ns() + warmup.as_nanos() as u64;
        MeasureWindow {
            start_ns,
            end_ns: start_ns + length.as_nanos() as u64,
        }
    }

    /// Where `now_ns` falls.
    pub fn phase(&self, now_ns: u64) -> Phase {
        if now_ns < self.start_ns {
            Phase::WarmUp
        } else if now_ns < self.end_ns {
            Phase::Measured
        } else {
            Phase::Done
        }
    }

    /// The window's length.
    pub fn length(&self) -> Duration {
        Duration::from_nanos(self.end_ns - self.start_ns)
    }

    /// Time from now until the end of the window (zero if it is over).
    pub fn remaining(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(monotonic_ns()))
    }

    /// The end of the window as a `std::time::Instant` (same clock on Linux).
    pub fn end_instant(&self) -> std::time::Instant {
        std::time::Instant::now() + self.remaining()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_in_order() {
        let w = MeasureWindow {
            start_ns: 100,
            end_ns: 200,
        };
        assert_eq!(w.phase(99), Phase::WarmUp);
        assert_eq!(w.phase(100), Phase::Measured);
        assert_eq!(w.phase(199), Phase::Measured);
        assert_eq!(w.phase(200), Phase::Done);
        assert_eq!(w.length(), Duration::from_nanos(100));
        assert_eq!(w.remaining(), Duration::ZERO);
    }

    #[test]
    fn window_after_warmup_is_in_the_future() {
        let w = MeasureWindow::after_warmup(Duration::from_secs(10), Duration::from_secs(1));
        assert_eq!(w.phase(monotonic_ns()), Phase::WarmUp);
        assert_eq!(w.length(), Duration::from_secs(1));
    }
}
