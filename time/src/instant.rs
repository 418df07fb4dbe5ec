//! [`Instant`]: a [`std::time::Instant`] whose [`Instant::now`] reads the
//! entered runtime's (possibly paused) [`Clock`](crate::Clock). Arithmetic
//! saturates at [`Instant::FAR_FUTURE`], which the wheel treats as "never".

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A measurement of a monotonically nondecreasing clock, aware of Tempo's
/// paused clock. Opaque; compare instants and take their differences.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The longest offset saturating arithmetic adds: 100 years.
    pub const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

    /// The entered timer handle's clock's time, else the system's.
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
        // Should a century not fit, halve rather than panic.
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
