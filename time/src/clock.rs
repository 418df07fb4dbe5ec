//! [`Clock`]: the source of "now" for a timer driver, real or paused. A
//! paused clock moves only on [`Clock::advance`] or when an idle driver
//! jumps it to its next timer; time spent paused stays as an offset after
//! [`Clock::resume`]. A clock never paused costs one relaxed atomic load on
//! top of `std::time::Instant::now()`.

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
/// assert_eq!(clock.now() - start, Duration::from_secs(3)); // exact
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

    /// Freezes the clock at its current time (no-op if paused).
    pub fn pause(&self) {
        let mut state = self.inner.state.lock();
        if !state.paused {
            state.base_virtual = state.now();
            state.paused = true;
            self.inner.shifted.store(true, Ordering::Release);
        }
    }

    /// Lets a paused clock run again from its virtual time (no-op if running).
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

    /// Moves a paused clock forward by `duration` (saturating), without
    /// firing timers ([`tempo_time::advance`](crate::advance) does both).
    ///
    /// # Panics
    ///
    /// If the clock is not paused.
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
