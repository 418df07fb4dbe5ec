//! Per-thread statistics of the timer-stream benchmark, merged after the
//! window (the same scheme as [`crate::recv_stats`]: no contention while
//! recording, one registry to merge from).

use crate::latency::LatencyHistogram;
use crate::timer_error::TimerErrorHistogram;

/// What the sources and sinks counted over the measured window.
#[derive(Debug, Clone, Default)]
pub struct TimerStreamStats {
    /// Timer ticks of all sources inside the window.
    pub ticks: u64,
    /// Buffers that reached their sink inside the window.
    pub buffers: u64,
    /// Buffers missing between consecutive ones of a sink.
    pub gaps: u64,
    /// Buffer creation (at the tick) to sink.
    pub latency: LatencyHistogram,
    /// Tick time minus the tick's deadline.
    pub timer_error: TimerErrorHistogram,
}

impl TimerStreamStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &TimerStreamStats) {
        self.ticks += other.ticks;
        self.buffers += other.buffers;
        self.gaps += other.gaps;
        self.latency.merge(&other.latency);
        self.timer_error.merge(&other.timer_error);
    }
}

crate::per_thread_stats!(TimerStreamStats);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_stats_are_collected() {
        let before = collect().ticks;
        with_thread_stats(|s| s.ticks += 2);
        std::thread::spawn(|| with_thread_stats(|s| s.ticks += 3))
            .join()
            .unwrap();
        assert!(collect().ticks >= before + 5);
    }
}
