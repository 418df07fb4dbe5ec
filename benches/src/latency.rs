//! Latency histogram: log-linear buckets of microseconds, percentiles, max.
//!
//! One-way latency (send timestamp in the datagram to the moment the task got
//! it) spans from a few microseconds (a busy-polling loop) to tens of
//! milliseconds (a throttled loop, or a receiver that fell behind), so the
//! buckets are exact below 64 µs and then 32 per power of two (about 3 %
//! relative error), which keeps a histogram to a few KiB and recording to an
//! index computation and an increment: cheap enough to leave in the measured
//! hot path of every runtime alike. Values from 2^30 µs (about 18 minutes) up
//! land in the last bucket; the exact maximum is tracked separately.

/// Sub-buckets per power of two, as a power of two.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Values at or above `1 << MAX_BITS` µs share the last bucket.
const MAX_BITS: u32 = 30;
const BUCKETS: usize = (2 * SUB + (MAX_BITS as u64 - SUB_BITS as u64 - 1) * SUB) as usize;

/// A histogram of durations in microseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    max_us: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(us: u64) -> usize {
    let us = us.min((1u64 << MAX_BITS) - 1);
    if us < 2 * SUB {
        return us as usize;
    }
    let msb = 63 - us.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (us >> shift) - SUB;
    (2 * SUB + (shift as u64 - 1) * SUB + sub) as usize
}

/// The smallest value that falls into bucket `index`.
fn bucket_low(index: usize) -> u64 {
    let index = index as u64;
    if index < 2 * SUB {
        return index;
    }
    let shift = (index - 2 * SUB) / SUB + 1;
    let sub = (index - 2 * SUB) % SUB;
    (SUB + sub) << shift
}

/// The largest value that falls into bucket `index`.
fn bucket_high(index: usize) -> u64 {
    if index + 1 >= BUCKETS {
        return u64::MAX;
    }
    bucket_low(index + 1) - 1
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            total: 0,
            max_us: 0,
        }
    }

    /// Records one duration in microseconds.
    pub fn record_us(&mut self, us: u64) {
        self.counts[bucket_of(us)] += 1;
        self.total += 1;
        self.max_us = self.max_us.max(us);
    }

    /// Records one duration in nanoseconds (rounded down to microseconds).
    pub fn record_ns(&mut self, ns: u64) {
        self.record_us(ns / 1_000);
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest recorded value, exact (0 if empty).
    pub fn max_us(&self) -> u64 {
        self.max_us
    }

    /// Adds every value of `other` to `self`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max_us = self.max_us.max(other.max_us);
    }

    /// The value below or at which a fraction `q` (0.0..=1.0) of the recorded
    /// values lie, as the upper bound of its bucket (never above the exact
    /// maximum); 0 if empty.
    pub fn percentile_us(&self, q: f64) -> u64 {
        match self.rank_bucket(q) {
            Some(i) => bucket_high(i).min(self.max_us),
            None => 0,
        }
    }

    /// The value at rank `rank` (0-based, in ascending order), as the upper
    /// bound of its bucket; `None` if `rank >= count()`.
    pub fn value_at_rank_us(&self, rank: u64) -> Option<u64> {
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Some(bucket_high(i).min(self.max_us));
            }
        }
        None
    }

    fn rank_bucket(&self, q: f64) -> Option<usize> {
        if self.total == 0 {
            return None;
        }
        let q = q.clamp(0.0, 1.0);
        // Rank of the value (1-based): ceil(q * total), at least 1.
        let rank = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(i);
            }
        }
        Some(BUCKETS - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_contiguously() {
        for i in 0..BUCKETS - 1 {
            assert_eq!(bucket_high(i) + 1, bucket_low(i + 1), "bucket {i}");
            assert_eq!(bucket_of(bucket_low(i)), i);
            assert_eq!(bucket_of(bucket_high(i)), i);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn relative_error_is_small() {
        for v in [100u64, 1_000, 20_000, 123_456, 10_000_000] {
            let i = bucket_of(v);
            let width = bucket_high(i) - bucket_low(i) + 1;
            assert!(width * 32 <= v * 2, "bucket of {v} is {width} wide");
        }
    }

    #[test]
    fn percentiles_of_uniform_values() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000u64 {
            h.record_us(v);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.max_us(), 1000);
        let p50 = h.percentile_us(0.5);
        assert!((490..=520).contains(&p50), "p50 {p50}");
        let p99 = h.percentile_us(0.99);
        assert!((975..=1000).contains(&p99), "p99 {p99}");
        assert_eq!(h.percentile_us(1.0), 1000);
    }

    #[test]
    fn merge_adds_counts_and_keeps_max() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        a.record_ns(5_000);
        b.record_us(70_000);
        b.record_us(3);
        a.merge(&b);
        assert_eq!(a.count(), 3);
        assert_eq!(a.max_us(), 70_000);
        assert_eq!(a.percentile_us(0.0), 3);
        assert_eq!(a.value_at_rank_us(1), Some(5));
        assert_eq!(a.value_at_rank_us(3), None);
    }

    #[test]
    fn empty_histogram_reports_zero() {
        let h = LatencyHistogram::new();
        assert_eq!(h.percentile_us(0.99), 0);
        assert_eq!(h.max_us(), 0);
    }
}
