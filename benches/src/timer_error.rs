//! Signed timer error: how early (negative) or late (positive) a timer fired.
//!
//! tokio never fires a timer early, so its error is a latency; a throttling
//! scheduler fires each timer at the tick closest to its deadline, so its
//! error is spread around zero (within +-T/2). Percentiles must therefore be
//! taken over signed values: this keeps one [`LatencyHistogram`] of
//! magnitudes per sign and ranks the early side in reverse.

use crate::latency::LatencyHistogram;

/// A histogram of signed durations in microseconds.
#[derive(Clone, Debug, Default)]
pub struct TimerErrorHistogram {
    early: LatencyHistogram,
    late: LatencyHistogram,
    sum_ns: i128,
}

impl TimerErrorHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a timer that fired at `fired_ns` for a deadline `deadline_ns`
    /// (both on the same clock).
    pub fn record(&mut self, deadline_ns: u64, fired_ns: u64) {
        if fired_ns >= deadline_ns {
            self.late.record_ns(fired_ns - deadline_ns);
        } else {
            self.early.record_ns(deadline_ns - fired_ns);
        }
        self.sum_ns += fired_ns as i128 - deadline_ns as i128;
    }

    /// Number of recorded timers.
    pub fn count(&self) -> u64 {
        self.early.count() + self.late.count()
    }

    /// Mean signed error in microseconds (0 if empty).
    pub fn mean_us(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_ns as f64 / n as f64 / 1_000.0,
        }
    }

    /// Adds every value of `other` to `self`.
    pub fn merge(&mut self, other: &TimerErrorHistogram) {
        self.early.merge(&other.early);
        self.late.merge(&other.late);
        self.sum_ns += other.sum_ns;
    }

    /// Signed percentile in microseconds (bucket precision); 0 if empty.
    pub fn percentile_us(&self, q: f64) -> i64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = (((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1)) - 1;
        let early = self.early.count();
        if rank < early {
            // Early values in ascending signed order are the magnitudes in
            // descending order.
            let magnitude = self.early.value_at_rank_us(early - 1 - rank).unwrap_or(0);
            -(magnitude as i64)
        } else {
            self.late.value_at_rank_us(rank - early).unwrap_or(0) as i64
        }
    }

    /// The largest magnitude of error, early or late, in microseconds.
    pub fn max_abs_us(&self) -> u64 {
        self.early.max_us().max(self.late.max_us())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_percentiles_order_early_before_late() {
        let mut h = TimerErrorHistogram::new();
        let base = 1_000_000_000u64;
        // Errors -10 ms, -1 ms, +2 ms, +30 ms.
        h.record(base, base - 10_000_000);
        h.record(base, base - 1_000_000);
        h.record(base, base + 2_000_000);
        h.record(base, base + 30_000_000);
        assert_eq!(h.count(), 4);
        let p0 = h.percentile_us(0.0);
        assert!((-10_400..=-9_600).contains(&p0), "p0 {p0}");
        let p50 = h.percentile_us(0.5);
        assert!((-1_040..=-960).contains(&p50), "p50 {p50}");
        let p75 = h.percentile_us(0.75);
        assert!((1_900..=2_100).contains(&p75), "p75 {p75}");
        assert_eq!(h.percentile_us(1.0), 30_000);
        assert_eq!(h.max_abs_us(), 30_000);
        assert!((h.mean_us() - 5_250.0).abs() < 1.0);
    }

    #[test]
    fn merge_combines_both_sides() {
        let mut a = TimerErrorHistogram::new();
        let mut b = TimerErrorHistogram::new();
        a.record(100_000, 50_000);
        b.record(100_000, 150_000);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.mean_us(), 0.0);
    }
}
