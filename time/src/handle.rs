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
///
/// # Examples
///
/// ```
/// use tempo_park::ParkThread;
/// use tempo_time::{Clock, Driver, Handle};
///
/// let driver = Driver::new(ParkThread::new(), Clock::paused());
/// assert!(Handle::try_current().is_none());
/// {
///     let _guard = driver.handle().enter();
///     assert!(Handle::try_current().is_some());
/// }
/// assert!(Handle::try_current().is_none(), "the guard restored the previous state");
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver, Handle};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let _guard = driver.handle().enter();
    /// let handle = Handle::current();
    /// assert!(handle.clock().is_paused());
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use tempo_time::Handle;
    ///
    /// // Outside a runtime (no handle entered): `None` instead of a panic.
    /// assert!(Handle::try_current().is_none());
    /// ```
    pub fn try_current() -> Option<Handle> {
        CURRENT.get()
    }

    /// Makes this handle the current one on this thread until the guard is
    /// dropped; nested guards restore the previous handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver, Handle};
    ///
    /// let outer = Driver::new(ParkThread::new(), Clock::paused());
    /// let inner = Driver::new(ParkThread::new(), Clock::real());
    /// let _outer_guard = outer.handle().enter();
    /// {
    ///     let _inner_guard = inner.handle().enter();
    ///     assert!(!Handle::current().clock().is_paused());
    /// }
    /// assert!(Handle::current().clock().is_paused());
    /// ```
    pub fn enter(&self) -> EnterGuard {
        EnterGuard {
            _scope: CURRENT.enter(self.clone()),
        }
    }

    /// The clock this driver reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::real());
    /// let handle = driver.handle();
    /// handle.clock().pause();
    /// assert!(driver.clock().is_paused(), "one clock, shared");
    /// ```
    pub fn clock(&self) -> &Clock {
        self.timers.clock()
    }

    /// The current time by this driver's clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let handle = driver.handle();
    /// let t0 = handle.now();
    /// handle.clock().advance(Duration::from_secs(2));
    /// assert_eq!(handle.now() - t0, Duration::from_secs(2));
    /// ```
    pub fn now(&self) -> Instant {
        self.timers.clock().now()
    }

    /// A snapshot of the errors of every timer fired so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::{Park, ParkThread};
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let handle = driver.handle();
    /// let before = handle.timer_error_histogram();
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(handle.clone(), handle.now() + Duration::from_millis(3), false));
    /// assert!(sleep.poll().is_pending());
    /// driver.park().unwrap();
    /// assert_eq!(handle.timer_error_histogram().since(&before).count(), 1);
    /// ```
    pub fn timer_error_histogram(&self) -> TimerErrorHistogram {
        self.timers.lock_state().histogram
    }

    /// Sets the firing window, like
    /// [`Driver::set_firing_window`](crate::Driver::set_firing_window), from
    /// a handle: the throttling scheduler narrows the window to half the
    /// real spacing of its ticks while they run back to back (overruns), so
    /// that nearest-tick timers do not fire early when the next tick is
    /// near. Nearest-tick timers read the window at each fire pass, so a
    /// change applies to every timer at once; never-early timers stay
    /// within `[0, T]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// driver.handle().set_firing_window(Duration::from_millis(5));
    /// assert_eq!(driver.firing_window(), Duration::from_millis(5));
    /// ```
    pub fn set_firing_window(&self, window: Duration) {
        let ticks = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.timers.configure(|config| config.window_ticks = ticks);
    }

    /// Tells the driver how far apart its scheduler's fire passes are:
    /// the throttling scheduler's period `T` (zero, the default, for a
    /// scheduler that parks until the next timer). A never-early timer can
    /// be that late, so an [`Interval`](crate::Interval) that never fires
    /// early does not count such a tick as missed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::ParkThread;
    /// use tempo_time::{Clock, Driver};
    ///
    /// let driver = Driver::new(ParkThread::new(), Clock::paused());
    /// driver.handle().set_pass_period(Duration::from_millis(20));
    /// ```
    pub fn set_pass_period(&self, period: Duration) {
        let ticks = u64::try_from(period.as_millis()).unwrap_or(u64::MAX);
        self.timers
            .configure(|config| config.pass_period_ticks = ticks);
    }

    /// Tells the driver that its next fire pass stands for the scheduler
    /// tick due at `grid` on a fixed grid: that pass fires what is due by
    /// `grid + window` (and everything already due by its `now`) rather
    /// than by `now + window`. The throttling scheduler calls this before
    /// each tick's pass with the tick's grid instant, so that a tick that
    /// wakes up late (OS jitter, a long previous tick) covers the same
    /// window as an on-time one: consecutive ticks' windows tile the time
    /// axis one period apart, and a stream whose deadlines lie near the
    /// boundary between two ticks fires on the same side of it every time.
    /// Applies to the next pass only (an idle park, or
    /// [`advance`](crate::advance), measures from `now`); a `grid` later
    /// than that pass's `now` counts as `now`.
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

    /// The end-of-tick pass: fires the timers that registered during the
    /// current tick with a deadline inside the window its fire pass already
    /// processed, and that were given that deadline rather than measuring it
    /// from the clock (`sleep_until`, `timeout_at`, `reset`, an interval's
    /// first tick or its catch-up after a late tick). Their nearest tick is
    /// the current one; they never complete in the poll that registered
    /// them. A scheduler with a firing window calls this once per tick,
    /// after running its tasks, then runs the tasks it woke; without the
    /// call they fire at the next fire pass. Returns how many fired; takes
    /// no lock when there are none.
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
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::{Park, ParkThread};
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let handle = driver.handle();
    /// assert_eq!(handle.timers_fired(), 0);
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(handle.clone(), handle.now() + Duration::from_millis(3), false));
    /// assert!(sleep.poll().is_pending());
    /// driver.park().unwrap();
    /// assert_eq!(handle.timers_fired(), 1);
    /// ```
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
