//! [`Clock`]: the source of "now" for a timer driver, real or paused.
//!
//! A real clock reads the system's monotonic clock. A paused clock is frozen:
//! time moves only when [`Clock::advance`] is called, or when the driver
//! *auto-advances* it (see [`Driver`](crate::Driver)): a driver asked to
//! block with nothing to do but wait for a timer jumps the clock to that
//! timer instead, so tests of long timeouts finish at once and always
//! observe the same sequence of events.
//!
//! A clock can be paused and resumed at will. Time it spent paused, plus
//! every advance, stays as an offset after [`Clock::resume`]: a resumed
//! clock runs at real speed from where the virtual time was.
//!
//! A clock that was never paused costs one relaxed atomic load on top of
//! `std::time::Instant::now()`.

use std::fmt;
use std::time::Duration;

use crate::sync::{Arc, AtomicBool, Mutex, Ordering};
use crate::Instant;

/// The time source of a timer driver: real, or paused (virtual). Cheap to
/// clone; clones share the same time.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tempo_time::Clock;
///
/// let clock = Clock::paused();
/// let start = clock.now();
/// clock.advance(Duration::from_secs(3));
/// assert_eq!(clock.now() - start, Duration::from_secs(3)); // exact: no real time passes
/// let shared = clock.clone(); // clones share the same time
/// assert_eq!(shared.now(), clock.now());
/// ```
#[derive(Clone)]
pub struct Clock {
    inner: Arc<ClockInner>,
}

struct ClockInner {
    /// Set on the first `pause`: from then on `now` takes the lock.
    shifted: AtomicBool,
    state: Mutex<ClockState>,
}

struct ClockState {
    paused: bool,
    /// Virtual time at `base_real` (running) or the frozen time (paused).
    base_virtual: std::time::Instant,
    /// Real time at which `base_virtual` was taken, while running.
    base_real: std::time::Instant,
}

impl Clock {
    /// A clock that follows the system's monotonic clock.
    pub fn real() -> Clock {
        let now = std::time::Instant::now();
        Clock {
            inner: Arc::new(ClockInner {
                shifted: AtomicBool::new(false),
                state: Mutex::new(ClockState {
                    paused: false,
                    base_virtual: now,
                    base_real: now,
                }),
            }),
        }
    }

    /// A clock that starts paused at the current time.
    pub fn paused() -> Clock {
        let clock = Clock::real();
        clock.pause();
        clock
    }

    /// The clock's current time.
    pub fn now(&self) -> Instant {
        if !self.inner.shifted.load(Ordering::Acquire) {
            return Instant::from_std(std::time::Instant::now());
        }
        let state = self.inner.state.lock();
        Instant::from_std(state.now())
    }

    /// Freezes the clock at its current time. Pausing a paused clock does
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tempo_time::Clock;
    ///
    /// let clock = Clock::real();
    /// clock.pause();
    /// assert!(clock.is_paused());
    /// let frozen = clock.now();
    /// assert_eq!(clock.now(), frozen);
    /// ```
    pub fn pause(&self) {
        let mut state = self.inner.state.lock();
        if !state.paused {
            state.base_virtual = state.now();
            state.paused = true;
            self.inner.shifted.store(true, Ordering::Release);
        }
    }

    /// Lets a paused clock run again at real speed from its virtual time.
    /// Resuming a running clock does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_time::Clock;
    ///
    /// let clock = Clock::paused();
    /// let start = clock.now();
    /// clock.advance(Duration::from_secs(60));
    /// clock.resume();
    /// // Running again, from the virtual time: the advance is kept.
    /// assert!(clock.now() - start >= Duration::from_secs(60));
    /// ```
    pub fn resume(&self) {
        let mut state = self.inner.state.lock();
        if state.paused {
            state.base_real = std::time::Instant::now();
            state.paused = false;
        }
    }

    /// Whether the clock is paused.
    pub fn is_paused(&self) -> bool {
        self.inner.shifted.load(Ordering::Acquire) && self.inner.state.lock().paused
    }

    /// Moves a paused clock forward by `duration` (saturating like
    /// [`Instant`] arithmetic). Timers are not fired by this call: the
    /// driver fires them on its next park, or use
    /// [`tempo_time::advance`](crate::advance) which does both.
    ///
    /// # Panics
    ///
    /// If the clock is not paused.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_time::Clock;
    ///
    /// let clock = Clock::paused();
    /// let start = clock.now();
    /// clock.advance(Duration::from_millis(500));
    /// assert_eq!(clock.now() - start, Duration::from_millis(500));
    /// ```
    pub fn advance(&self, duration: Duration) {
        let mut state = self.inner.state.lock();
        assert!(
            state.paused,
            "Clock::advance on a running clock: pause it first (Clock::pause, tempo_time::pause, or Builder::start_paused)"
        );
        state.base_virtual = Instant::from_std(state.base_virtual)
            .saturating_add(duration)
            .into_std();
    }
}

impl ClockState {
    fn now(&self) -> std::time::Instant {
        if self.paused {
            self.base_virtual
        } else {
            self.base_virtual + std::time::Instant::now().saturating_duration_since(self.base_real)
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clock")
            .field("paused", &self.is_paused())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn paused_clock_moves_only_when_advanced() {
        let clock = Clock::paused();
        assert!(clock.is_paused());
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(Duration::from_secs(3600));
        assert_eq!(clock.now() - t0, Duration::from_secs(3600));
    }

    #[test]
    fn resume_keeps_the_virtual_offset() {
        let clock = Clock::paused();
        let t0 = clock.now();
        clock.advance(Duration::from_secs(10));
        clock.resume();
        assert!(!clock.is_paused());
        assert!(clock.now() - t0 >= Duration::from_secs(10));
        clock.pause();
        let frozen = clock.now();
        assert_eq!(clock.now(), frozen);
    }

    #[test]
    #[should_panic(expected = "pause it first")]
    fn advancing_a_running_clock_panics() {
        Clock::real().advance(Duration::from_millis(1));
    }

    #[test]
    fn real_clock_follows_std() {
        let clock = Clock::real();
        let before = std::time::Instant::now();
        let now = clock.now().into_std();
        assert!(now >= before);
    }
}
