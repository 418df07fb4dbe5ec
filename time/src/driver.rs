//! [`Driver`]: the timer driver, a [`Park`] that wraps another one. A park
//! waits on the inner driver until the next timer is due minus the firing
//! window (or the caller's timeout; `park_timeout(ZERO)` never blocks),
//! then fires every timer due.
//!
//! With a **paused clock** the driver does not block while a timer or a
//! timeout is pending: it polls the inner driver once and, if that had no
//! event (its [`DriverStats`] did not move), advances the clock to the wake
//! tick and fires. An [`Unpark`](tempo_park::Unpark) is not an event.
//!
//! Dropping the driver shuts down and wakes every registered timer, whose
//! next poll panics. A panicking waker strands no other timer.

use std::fmt;
use std::time::Duration;

use tempo_park::{DriverStats, Park};

use crate::handle::Handle;
use crate::histogram::TimerErrorHistogram;
use crate::sync::Arc;
use crate::timers::Timers;
use crate::{Clock, Instant};

/// The timer driver: a hierarchical timing wheel on top of any [`Park`]
/// driver.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tempo_park::{Park, ParkThread};
/// use tempo_time::{Clock, Driver};
///
/// let mut driver = Driver::new(ParkThread::new(), Clock::real());
/// let _guard = driver.handle().enter();
/// let mut sleep = tokio_test::task::spawn(tempo_time::sleep(Duration::from_millis(2)));
/// assert!(sleep.poll().is_pending());
/// for _ in 0..1000 {
///     if sleep.is_woken() {
///         break;
///     }
///     driver.park().unwrap(); // blocks until the timer is due, then fires it
/// }
/// assert!(sleep.poll().is_ready());
/// ```
pub struct Driver<P: Park> {
    park: P,
    handle: Handle,
}

impl<P: Park> Driver<P> {
    /// A timer driver that parks `park` and reads `clock`.
    pub fn new(park: P, clock: Clock) -> Driver<P> {
        let timers = Timers::new(Box::new(park.unpark()), clock);
        Driver {
            park,
            handle: Handle::new(Arc::new(timers)),
        }
    }

    /// A handle that creates timers on this driver from any thread.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// The clock this driver reads.
    pub fn clock(&self) -> &Clock {
        self.handle.clock()
    }

    /// The wrapped driver.
    pub fn inner(&self) -> &P {
        &self.park
    }

    /// The wrapped driver, mutably.
    pub fn inner_mut(&mut self) -> &mut P {
        &mut self.park
    }

    /// Fire, on each park, every timer due by `now + window` (whole
    /// milliseconds; default zero). Never-early timers ignore it. Set it
    /// before creating timers: one registered under a larger window may
    /// still fire up to that window early.
    pub fn set_firing_window(&mut self, window: Duration) {
        self.handle.set_firing_window(window);
    }

    /// The firing window, in whole milliseconds.
    pub fn firing_window(&self) -> Duration {
        Duration::from_millis(self.handle.timers().config().window_ticks)
    }

    /// Make every timer never early, as if created with `sleep_at_least`
    /// (`Builder::timer_policy(TimerPolicy::NeverEarly)`).
    pub fn set_never_early(&mut self, never_early: bool) {
        self.handle
            .timers()
            .configure(|config| config.never_early = never_early);
    }

    /// A snapshot of the error of every timer fired so far.
    pub fn timer_error_histogram(&self) -> TimerErrorHistogram {
        self.handle.timer_error_histogram()
    }

    /// When the driver would wake for its next timer, or `None` if none.
    pub fn next_wake(&self) -> Option<Instant> {
        let timers = self.handle.timers();
        let state = timers.lock_state();
        let window_ticks = timers.config().window_ticks;
        state
            .wheel
            .next_expiration_tick()
            .map(|t| timers.tick_instant(t.saturating_sub(window_ticks)))
    }

    fn park_internal(&mut self, timeout: Option<Duration>) -> Result<(), P::Error> {
        let timers = self.handle.timers();
        let clock = timers.clock();
        if timeout == Some(Duration::ZERO) {
            self.park.park_timeout(Duration::ZERO)?;
            timers.fire(clock.now());
            return Ok(());
        }
        // A timeout too long to represent means "no timeout".
        let timeout = timeout.filter(|d| *d < Instant::FAR_FUTURE);
        if clock.is_paused() {
            return self.park_paused(timeout);
        }
        let now = clock.now();
        let cap_tick = timeout.map(|d| timers.deadline_tick(now + d));
        let wake_tick = timers.prepare_park(cap_tick);
        let until_wake = wake_tick.map(|t| timers.tick_instant(t).saturating_duration_since(now));
        let result = match min_option(until_wake, timeout) {
            Some(d) => self.park.park_timeout(d),
            None => self.park.park(),
        };
        timers.unparked();
        result?;
        timers.fire(clock.now());
        Ok(())
    }

    /// Paused clock: without an inner event, advance to the next wake tick
    /// (or the timeout) and fire, repeating over cascades (once per level
    /// at most); with no timer and no timeout, park for real.
    fn park_paused(&mut self, timeout: Option<Duration>) -> Result<(), P::Error> {
        let timers = self.handle.timers();
        let clock = timers.clock();
        let limit = timeout.map(|d| clock.now() + d);
        for _ in 0..=crate::wheel::LEVELS {
            let now = clock.now();
            let cap_tick = limit.map(|l| timers.deadline_tick(l));
            let wake = timers
                .prepare_park(cap_tick)
                .map(|t| timers.tick_instant(t));
            let Some(target) = min_option(wake, limit) else {
                // Nothing will be due: wait for an event or an unpark (no
                // zero-timeout poll first: it would consume an unpark).
                let result = self.park.park();
                timers.unparked();
                result?;
                break;
            };
            timers.unparked();
            let before = self.park.stats();
            self.park.park_timeout(Duration::ZERO)?;
            if self.park.stats() != before {
                break;
            }
            if target > now {
                clock.advance(target - now);
            }
            let fired = timers.fire(clock.now());
            if fired > 0 || limit.is_some_and(|l| clock.now() >= l) {
                return Ok(());
            }
        }
        timers.fire(clock.now());
        Ok(())
    }
}

fn min_option<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl<P: Park> Park for Driver<P> {
    type Unpark = P::Unpark;
    type Error = P::Error;

    fn unpark(&self) -> P::Unpark {
        self.park.unpark()
    }

    /// Parks until the next timer (minus the window) or an event, then fires.
    fn park(&mut self) -> Result<(), P::Error> {
        self.park_internal(None)
    }

    /// Like [`park`](Park::park), for at most `duration` (`ZERO` never blocks).
    fn park_timeout(&mut self, duration: Duration) -> Result<(), P::Error> {
        self.park_internal(Some(duration))
    }

    /// The inner driver's counters plus `timers_fired`.
    fn stats(&self) -> DriverStats {
        self.park.stats()
            + DriverStats {
                io_events: 0,
                timers_fired: self.handle.timers_fired(),
            }
    }
}

impl<P: Park> Drop for Driver<P> {
    fn drop(&mut self) {
        self.handle.timers().shutdown();
    }
}

impl<P: Park + fmt::Debug> fmt::Debug for Driver<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("park", &self.park)
            .field("handle", &self.handle)
            .finish()
    }
}
