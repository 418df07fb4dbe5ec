//! [`Instant`]: a point in time that follows the paused clock.
//!
//! Tempo's instant wraps [`std::time::Instant`]. The difference is
//! [`Instant::now`]: inside a runtime with time enabled (a thread that
//! entered a timer [`Handle`](crate::Handle)) it reads that runtime's
//! [`Clock`](crate::Clock), which may be paused or shifted by
//! [`advance`](crate::advance); elsewhere it reads the system's monotonic
//! clock. Tests that pause time therefore see consistent `now()`s.
//!
//! Arithmetic saturates instead of panicking on overflow: `instant +
//! Duration::MAX` is "about a century from `instant`"
//! ([`Instant::FAR_FUTURE`]), which the timer wheel treats as "never".

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A measurement of a monotonically nondecreasing clock, aware of Tempo's
/// paused clock. Opaque; compare instants and take their differences.
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep, Instant};
///
/// // Inside a driver's context, `Instant::now` follows its (paused) clock.
/// let start = Instant::now();
/// sleep(Duration::from_secs(3600)).await;
/// assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The longest offset saturating arithmetic adds: 100 years. `instant +
    /// d` for any `d` at least this long equals `instant + FAR_FUTURE`, so
    /// addition stays monotonic and never overflows.
    pub const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

    /// The current time: the entered timer handle's clock if this thread is
    /// inside a runtime with time enabled, else the system's monotonic clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver, Instant};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let _guard = driver.handle().enter();
    /// let start = Instant::now();
    /// driver.clock().advance(Duration::from_secs(10));
    /// assert_eq!(Instant::now() - start, Duration::from_secs(10));
    /// ```
    pub fn now() -> Instant {
        crate::handle::clock_now().unwrap_or_else(|| Instant::from_std(std::time::Instant::now()))
    }

    /// Wraps a std instant.
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The std instant this wraps.
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_time::Instant;
    ///
    /// let a = Instant::now();
    /// let b = a + Duration::from_millis(3);
    /// assert_eq!(b.duration_since(a), Duration::from_millis(3));
    /// assert_eq!(a.duration_since(b), Duration::ZERO);
    /// ```
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time elapsed since `earlier`, or `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time elapsed since this instant, by [`Instant::now`]; zero if in the
    /// future.
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + duration`, or `None` if that is not representable.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_add(duration).map(Instant::from_std)
    }

    /// `self - duration`, or `None` if that is not representable.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_sub(duration).map(Instant::from_std)
    }

    /// `self + duration`, with `duration` capped at [`Instant::FAR_FUTURE`].
    pub fn saturating_add(&self, duration: Duration) -> Instant {
        let capped = duration.min(Instant::FAR_FUTURE);
        // A century fits in every platform's monotonic clock; should it not,
        // keep halving rather than panic.
        let mut offset = capped;
        loop {
            if let Some(t) = self.checked_add(offset) {
                return t;
            }
            offset /= 2;
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Saturating: see [`Instant::saturating_add`].
    fn add(self, rhs: Duration) -> Instant {
        self.saturating_add(rhs)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    ///
    /// If the result is not representable (before the clock's origin).
    fn sub(self, rhs: Duration) -> Instant {
        self.checked_sub(rhs)
            .expect("overflow when subtracting a duration from an Instant")
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// Saturating: zero if `rhs` is later.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(i: Instant) -> std::time::Instant {
        i.into_std()
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn addition_saturates_and_stays_monotonic() {
        let t = Instant::from_std(std::time::Instant::now());
        let max = t + Duration::MAX;
        assert_eq!(max, t + Instant::FAR_FUTURE);
        assert!(t + Duration::from_secs(3600) < max);
        assert_eq!(t + Instant::FAR_FUTURE * 2, max, "capped, not overflowed");
        assert_eq!(
            Some(max + Duration::MAX),
            t.checked_add(Instant::FAR_FUTURE * 2)
        );
        assert!(t.checked_add(Duration::MAX).is_none());
    }

    #[test]
    fn differences_saturate_at_zero() {
        let t = Instant::from_std(std::time::Instant::now());
        let later = t + Duration::from_millis(5);
        assert_eq!(later - t, Duration::from_millis(5));
        assert_eq!(t - later, Duration::ZERO);
        assert_eq!(t.checked_duration_since(later), None);
        assert_eq!(t.into_std() + Duration::from_millis(5), later.into_std());
    }
}
