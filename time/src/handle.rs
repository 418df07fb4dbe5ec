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
use crate::shared::Shared;
use crate::sync::Arc;
use crate::{Clock, Instant};

tempo_park::scoped_thread_local! {
    /// The timer handle entered on this thread (see `tempo_park::scoped`
    /// for the rules every "current" thread-local of the stack follows).
    static CURRENT: Handle
}

/// A handle to a timer [`Driver`](crate::Driver): creates timers on it from
/// any thread. Cheap to clone.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

/// Restores the previously entered handle when dropped. Returned by
/// [`Handle::enter`]; guards must be dropped in the reverse order of their
/// creation (they are `!Send` to keep them on their thread).
#[must_use = "the handle is only current until the guard is dropped"]
pub struct EnterGuard {
    _scope: ScopedGuard<Handle>,
}

impl Handle {
    pub(crate) fn new(shared: Arc<Shared>) -> Handle {
        Handle { shared }
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
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
        self.shared.clock()
    }

    /// The current time by this driver's clock.
    pub fn now(&self) -> Instant {
        self.shared.clock().now()
    }

    /// A snapshot of the errors of every timer fired so far.
    pub fn timer_error_histogram(&self) -> TimerErrorHistogram {
        self.shared.lock_state().histogram
    }

    /// Sets the firing window, like
    /// [`Driver::set_firing_window`](crate::Driver::set_firing_window), from
    /// a handle: the throttling scheduler narrows the window to half the
    /// real spacing of its ticks while they run back to back (overruns), so
    /// that nearest-tick timers do not fire early when the next tick is
    /// near. Nearest-tick timers read the window at each fire pass, so a
    /// change applies to every timer at once; never-early timers stay
    /// within `[0, T]`.
    pub fn set_firing_window(&self, window: Duration) {
        let ticks = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.shared.configure(|state| state.window_ticks = ticks);
    }

    /// Number of timers fired so far.
    pub fn timers_fired(&self) -> u64 {
        self.shared.timers_fired()
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
    pub fn fire_due_timers(&self) -> u64 {
        self.shared.fire(self.shared.clock().now())
    }
}

/// The clock time of the entered handle, if any.
pub(crate) fn clock_now() -> Option<Instant> {
    CURRENT.with(|handle| handle.map(Handle::now))
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("shared", &self.shared)
            .finish()
    }
}

impl fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}
