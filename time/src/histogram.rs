//! [`TimerErrorHistogram`]: how early or late timers fired.

use std::fmt;

/// Number of buckets on each side (early, late).
pub const BUCKETS: usize = 32;

/// A histogram of timer errors, `fire time - deadline`, early and late
/// separately: bucket 0 counts errors below 1 µs, bucket `i >= 1` those in
/// `[2^(i-1), 2^i)` µs, the last one everything larger; on time is late 0.
///
/// # Examples
///
/// ```
/// use tempo_time::TimerErrorHistogram;
///
/// let mut errors = TimerErrorHistogram::default();
/// errors.record(-700); // 700 µs early
/// errors.record(3_000); // 3 ms late
/// let early_bucket = TimerErrorHistogram::bucket_of(700);
/// assert_eq!(TimerErrorHistogram::bucket_range(early_bucket), (512, 1024));
/// assert_eq!(errors.early()[early_bucket], 1);
/// assert_eq!(errors.count(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TimerErrorHistogram {
    early: [u64; BUCKETS],
    late: [u64; BUCKETS],
}

impl Default for TimerErrorHistogram {
    fn default() -> Self {
        TimerErrorHistogram {
            early: [0; BUCKETS],
            late: [0; BUCKETS],
        }
    }
}

impl TimerErrorHistogram {
    /// Records one error in microseconds: negative is early, `>= 0` late.
    pub fn record(&mut self, error_us: i64) {
        let magnitude = error_us.unsigned_abs();
        let bucket = Self::bucket_of(magnitude);
        if error_us < 0 {
            self.early[bucket] += 1;
        } else {
            self.late[bucket] += 1;
        }
    }

    /// The bucket an error of `magnitude_us` microseconds falls in.
    pub fn bucket_of(magnitude_us: u64) -> usize {
        let bits = (u64::BITS - magnitude_us.leading_zeros()) as usize;
        bits.min(BUCKETS - 1)
    }

    /// The range of magnitudes, in µs, bucket `i` counts: `[low, high)`
    /// (`high` is `u64::MAX` for the last bucket).
    pub fn bucket_range(i: usize) -> (u64, u64) {
        match i {
            0 => (0, 1),
            i if i >= BUCKETS - 1 => (1 << (BUCKETS - 2), u64::MAX),
            i => (1 << (i - 1), 1 << i),
        }
    }

    /// Counts of timers that fired early, by bucket.
    pub fn early(&self) -> &[u64; BUCKETS] {
        &self.early
    }

    /// Counts of timers that fired on time or late, by bucket.
    pub fn late(&self) -> &[u64; BUCKETS] {
        &self.late
    }

    /// Number of errors recorded.
    pub fn count(&self) -> u64 {
        self.early.iter().chain(self.late.iter()).sum()
    }

    /// What was recorded since `earlier` (an older snapshot of the same
    /// histogram).
    pub fn since(&self, earlier: &TimerErrorHistogram) -> TimerErrorHistogram {
        let mut out = *self;
        for i in 0..BUCKETS {
            out.early[i] = out.early[i].wrapping_sub(earlier.early[i]);
            out.late[i] = out.late[i].wrapping_sub(earlier.late[i]);
        }
        out
    }
}

impl fmt::Debug for TimerErrorHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for i in (0..BUCKETS).rev() {
            if self.early[i] != 0 {
                list.entry(
                    &format_args!("early<{}us", Self::bucket_range(i).1),
                    &self.early[i],
                );
            }
        }
        for i in 0..BUCKETS {
            if self.late[i] != 0 {
                list.entry(
                    &format_args!("late<{}us", Self::bucket_range(i).1),
                    &self.late[i],
                );
            }
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_log2_of_microseconds() {
        let mut h = TimerErrorHistogram::default();
        h.record(0);
        h.record(1);
        h.record(3);
        h.record(-1000);
        h.record(i64::MIN);
        assert_eq!(h.late()[0], 1);
        assert_eq!(h.late()[1], 1);
        assert_eq!(h.late()[2], 1);
        assert_eq!(h.early()[10], 1); // 1000 in [512, 1024)
        assert_eq!(h.early()[BUCKETS - 1], 1);
        assert_eq!(h.count(), 5);
        for i in 0..BUCKETS - 1 {
            let (lo, hi) = TimerErrorHistogram::bucket_range(i);
            assert_eq!(TimerErrorHistogram::bucket_of(lo), i);
            assert_eq!(TimerErrorHistogram::bucket_of(hi - 1), i);
        }
        let before = h;
        h.record(2);
        assert_eq!(h.since(&before).count(), 1);
    }
}
