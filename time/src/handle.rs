//! [`Handle`]: a reference to a timer driver, usable from any thread, and
//! the thread-local "current" handle that [`sleep`](crate::sleep) and
//! [`Instant::now`] find through [`Handle::current`].

use std::fmt;
use std::time::Duration;

use tempo_park::scoped::ScopedGuard;

use crate::histogram::TimerErrorHistogram;
use crate::sync::Arc;
use crate::timers::Timers;
use crate::{Clock, Instant};

tempo_park::scoped_thread_local! {
    /// The timer handle entered on this thread (rules: `tempo_park::scoped`).
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

/// Restores the previously entered handle when dropped; drop guards in
/// reverse order of creation (`!Send`).
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

    /// The handle entered on this thread.
    ///
    /// # Panics
    ///
    /// If none is entered.
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

    /// Makes this handle the current one until the guard is dropped.
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

    /// [`Driver::set_firing_window`](crate::Driver::set_firing_window) from
    /// a handle; applies to every nearest-tick timer at the next pass.
    pub fn set_firing_window(&self, window: Duration) {
        let ticks = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.timers.configure(|config| config.window_ticks = ticks);
    }

    /// Tells the driver its scheduler's pass period (default zero), which
    /// a never-early [`Interval`](crate::Interval) tolerates as lateness.
    pub fn set_pass_period(&self, period: Duration) {
        let ticks = u64::try_from(period.as_millis()).unwrap_or(u64::MAX);
        self.timers
            .configure(|config| config.pass_period_ticks = ticks);
    }

    /// The next fire pass stands for the scheduler tick due at `grid`: it
    /// fires what is due by `grid + window` (and by its `now`).
    pub fn set_next_pass_grid(&self, grid: Instant) {
        self.timers.set_next_pass_grid(grid);
    }

    /// The end-of-tick pass, which a scheduler with a firing window runs
    /// after its tasks (`docs/timers.md`); returns how many timers fired.
    pub fn fire_end_of_tick(&self) -> u64 {
        self.timers.fire_end_of_tick()
    }

    /// Number of timers fired so far.
    pub fn timers_fired(&self) -> u64 {
        self.timers.timers_fired()
    }

    /// Fires every timer due by now (within the firing window), waking
    /// their tasks; returns how many fired.
    ///
    /// # Panics
    ///
    /// If a timer's waker panics, after waking all the others.
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
