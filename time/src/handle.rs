//! [`Handle`]: a reference to a timer driver, usable from any thread, and
//! the thread-local "current" handle that `sleep`, `Instant::now` and
//! friends read.
//!
//! A runtime with time enabled enters its handle ([`Handle::enter`]) on the
//! threads that run its tasks; free functions such as
//! [`sleep`](crate::sleep) then find the driver through
//! [`Handle::current`].

use std::fmt;
use std::time::Duration;

use tempo_park::scoped::ScopedGuard;

use crate::histogram::TimerErrorHistogram;
use crate::sync::Arc;
use crate::timers::Timers;
use crate::{Clock, Instant};

tempo_park::scoped_thread_local! {
    /// The timer handle entered on this thread (see `tempo_park::scoped`
    /// for the rules every "current" thread-local of the stack follows).
    static CURRENT: Handle
}

/// A handle to a timer [`Driver`](crate::Driver): creates timers on it from
/// any thread. Cheap to clone.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tempo_park::ParkThread;
/// use tempo_time::{Clock, Driver, Handle};
///
/// let driver = Driver::new(ParkThread::new(), Clock::paused());
/// let handle: Handle = driver.handle();
/// let _guard = handle.enter();
/// assert_eq!(Handle::current().now(), handle.now());
/// let _sleep = tempo_time::sleep(Duration::from_millis(5)); // finds the entered handle
/// ```
#[derive(Clone)]
pub struct Handle {
    timers: Arc<Timers>,
}

/// Restores the previously entered handle when dropped. Returned by
/// [`Handle::enter`]; guards must be dropped in the reverse order of their
/// creation (they are `!Send` to keep them on their thread).
#[must_use = "the handle is only current until the guard is dropped"]
pub struct EnterGuard {
    _scope: ScopedGuard<Handle>,
}

impl Handle {
    pub(crate) fn new(timers: Arc<Timers>) -> Handle {
        Handle { timers }
    }

    pub(crate) fn timers(&self) -> &Timers {
        &self.timers
    }

    /// The handle of the timer driver of the runtime this thread is in.
    ///
    /// # Panics
    ///
    /// If no timer handle is entered on this thread.
    #[track_caller]
    pub fn current() -> Handle {
        Handle::try_current().unwrap_or_else(|| {
            panic!(
                "there is no Tempo timer running: use a runtime built with enable_time() / \
                 enable_all() and call this from inside it (in a task or block_on), \
                 or enter a tempo_time::Handle"
            )
        })
    }

    /// The current handle, or `None` outside a runtime with time enabled.
    pub fn try_current() -> Option<Handle> {
        CURRENT.get()
    }

    /// Makes this handle the current one on this thread until the guard is
    /// dropped; nested guards restore the previous handle.
    pub fn enter(&self) -> EnterGuard {
        EnterGuard {
            _scope: CURRENT.enter(self.clone()),
        }
    }

    /// The clock this driver reads.
    pub fn clock(&self) -> &Clock {
        self.timers.clock()
    }

    /// The current time by this driver's clock.
    pub fn now(&self) -> Instant {
        self.timers.clock().now()
    }

    /// A snapshot of the errors of every timer fired so far.
    pub fn timer_error_histogram(&self) -> TimerErrorHistogram {
        self.timers.lock_state().histogram
    }

    /// Sets the firing window, like
    /// [`Driver::set_firing_window`](crate::Driver::set_firing_window), from
    /// a handle (the throttling scheduler narrows it while ticks overrun).
    /// A change applies to every nearest-tick timer at the next pass.
    pub fn set_firing_window(&self, window: Duration) {
        let ticks = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.timers.configure(|config| config.window_ticks = ticks);
    }

    /// Tells the driver how far apart its scheduler's fire passes are:
    /// the throttling scheduler's period `T` (zero, the default, for a
    /// scheduler that parks until the next timer). A never-early timer can
    /// be that late, so an [`Interval`](crate::Interval) that never fires
    /// early does not count such a tick as missed.
    pub fn set_pass_period(&self, period: Duration) {
        let ticks = u64::try_from(period.as_millis()).unwrap_or(u64::MAX);
        self.timers
            .configure(|config| config.pass_period_ticks = ticks);
    }

    /// Tells the driver that its next fire pass stands for the scheduler
    /// tick due at `grid`: that pass fires what is due by `grid + window`
    /// (and all that is due by its `now`) rather than by `now + window`, so
    /// that a tick that wakes up late covers the same window as an on-time
    /// one. Applies to the next pass only; a `grid` later than that pass's
    /// `now` counts as `now`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::{Park, ParkThread};
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    /// driver.set_firing_window(Duration::from_millis(10));
    /// let handle = driver.handle();
    /// let grid = handle.now();
    /// // A deadline 11 ms after the tick's grid instant: the next tick's.
    /// let deadline = grid + Duration::from_millis(11);
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(handle.clone(), deadline, false));
    /// assert!(sleep.poll().is_pending());
    /// // The tick wakes up 2 ms late: its window still ends at grid + 10 ms.
    /// handle.clock().advance(Duration::from_millis(2));
    /// handle.set_next_pass_grid(grid);
    /// driver.park_timeout(Duration::ZERO).unwrap();
    /// assert!(!sleep.is_woken());
    /// ```
    pub fn set_next_pass_grid(&self, grid: Instant) {
        self.timers.set_next_pass_grid(grid);
    }

    /// The end-of-tick pass: fires the timers registered during the current
    /// tick with a *given* deadline (`sleep_until`, `timeout_at`, `reset`,
    /// an interval's first or catch-up tick) inside the window its fire
    /// pass already processed. A scheduler with a firing window calls this
    /// once per tick after running its tasks; without the call they fire at
    /// the next pass. Returns how many fired; takes no lock when none.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    /// driver.set_firing_window(Duration::from_millis(10));
    /// let handle = driver.handle();
    /// handle.fire_due_timers(); // the tick's pass: processes now + 10 ms
    /// let deadline = handle.now() + Duration::from_millis(3);
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(handle.clone(), deadline, false));
    /// assert!(sleep.poll().is_pending()); // never in the registering poll
    /// assert_eq!(handle.fire_end_of_tick(), 1); // but in this tick
    /// assert!(sleep.poll().is_ready());
    /// ```
    pub fn fire_end_of_tick(&self) -> u64 {
        self.timers.fire_end_of_tick()
    }

    /// Number of timers fired so far.
    pub fn timers_fired(&self) -> u64 {
        self.timers.timers_fired()
    }

    /// Fires every timer due by the clock's current time (within the firing
    /// window), waking their tasks; returns how many fired. The driver does
    /// this on every park; [`advance`](crate::advance) calls it after moving
    /// a paused clock.
    ///
    /// # Panics
    ///
    /// If a timer's waker panics: every other waker is woken first, then
    /// the first panic is re-raised (see the driver's docs on wakers that
    /// panic).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let handle = driver.handle();
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(handle.clone(), handle.now() + Duration::from_millis(3), false));
    /// assert!(sleep.poll().is_pending());
    /// handle.clock().advance(Duration::from_millis(3));
    /// assert_eq!(handle.fire_due_timers(), 1); // without parking the driver
    /// assert!(sleep.poll().is_ready());
    /// ```
    pub fn fire_due_timers(&self) -> u64 {
        self.timers.fire(self.timers.clock().now())
    }
}

/// The clock time of the entered handle, if any.
pub(crate) fn clock_now() -> Option<Instant> {
    CURRENT.with(|handle| handle.map(Handle::now))
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("timers", &self.timers)
            .finish()
    }
}

impl fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}
