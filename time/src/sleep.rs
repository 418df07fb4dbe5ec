//! [`Sleep`]: a future that completes at a deadline.
//!
//! A `Sleep` owns its timer entry (pinned inside it), so creating, polling,
//! resetting and dropping it allocate nothing; it registers with the wheel
//! on its first poll. `Duration::MAX` saturates to about a century
//! ([`Instant::FAR_FUTURE`]) and never fires in practice.
//!
//! # Deadlines that have already passed, and the ones that have not
//!
//! * `sleep(Duration::ZERO)` (and `sleep_at_least`, `timeout` with a zero
//!   duration) completes on its first poll without touching the wheel.
//! * A deadline at or before the driver's last fire pass (its `now`)
//!   completes on the first poll, or at once on a reset (the waiting task
//!   is woken).
//! * A deadline in the future **never completes in the poll that created
//!   it**, even inside a throttling scheduler's firing window (`now + T/2`,
//!   which the last pass already processed): it completes at the next fire
//!   pass, the nearest tick after the one that created it. So
//!   `loop { sleep(d).await }` costs at most one poll per tick, whatever
//!   `d`, instead of spinning until the window moves.
//! * A deadline after the last pass but already in the past by the time it
//!   registers completes at the driver's next fire pass too: the next turn
//!   of the scheduler (whose park does not block, since the timer is due).
//!   Registration reads no clock, which keeps an insert + cancel pair
//!   cheap; tokio behaves the same.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tempo_park::coop;

use crate::entry::TimerEntry;
use crate::{Handle, Instant};

/// A future that completes at [`deadline`](Sleep::deadline). Created by
/// [`sleep`], [`sleep_until`], [`sleep_at_least`] or [`Sleep::at_least`].
///
/// A default `Sleep` follows the driver's firing window (nearest tick under
/// a throttling scheduler: error within `±T/2`); an *at-least* `Sleep` never
/// completes before its deadline (error within `[0, T]`, tokio's rule).
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    // Structurally pinned: see the projection in `entry.rs`.
    pub(crate) entry: TimerEntry,
}

/// Waits until `duration` has elapsed (by the current runtime's clock).
///
/// # Panics
///
/// Outside a runtime with time enabled (see [`Handle::current`]).
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let handle = Handle::current();
    let deadline = handle.now() + duration;
    Sleep::with_state(handle, deadline, false, duration.is_zero())
}

/// Waits until `deadline`.
///
/// # Panics
///
/// Outside a runtime with time enabled (see [`Handle::current`]).
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(Handle::current(), deadline, false)
}

/// Waits until `duration` has elapsed, and never completes earlier, even
/// under a firing window: the timer fires at the first fire pass at or after
/// its deadline.
///
/// # Panics
///
/// Outside a runtime with time enabled (see [`Handle::current`]).
#[track_caller]
pub fn sleep_at_least(duration: Duration) -> Sleep {
    let handle = Handle::current();
    let deadline = handle.now() + duration;
    Sleep::with_state(handle, deadline, true, duration.is_zero())
}

impl Sleep {
    /// A sleep on a given timer handle (for code that holds a handle rather
    /// than running inside the runtime). `at_least`: never early.
    pub fn new(handle: Handle, deadline: Instant, at_least: bool) -> Sleep {
        Sleep::with_state(handle, deadline, at_least, false)
    }

    /// `elapsed`: the caller knows the deadline has passed already.
    pub(crate) fn with_state(
        handle: Handle,
        deadline: Instant,
        at_least: bool,
        elapsed: bool,
    ) -> Sleep {
        Sleep {
            entry: TimerEntry::new(handle, deadline, at_least, elapsed),
        }
    }

    /// Waits until `deadline`, and never completes earlier.
    ///
    /// # Panics
    ///
    /// Outside a runtime with time enabled (see [`Handle::current`]).
    #[track_caller]
    pub fn at_least(deadline: Instant) -> Sleep {
        Sleep::new(Handle::current(), deadline, true)
    }

    /// The instant at which the sleep completes.
    pub fn deadline(&self) -> Instant {
        self.entry.deadline()
    }

    /// Whether the sleep is never early.
    pub fn is_at_least(&self) -> bool {
        self.entry.is_at_least()
    }

    /// Whether the timer fired (the next poll completes).
    pub fn is_elapsed(&self) -> bool {
        self.entry.is_elapsed()
    }

    /// The timer handle the sleep is registered with.
    pub fn handle(&self) -> &Handle {
        self.entry.handle()
    }

    /// Moves the deadline (earlier or later, even after completion): the
    /// sleep is pending again until `deadline`. Re-arms in O(1) and without
    /// allocating; a task already waiting on the sleep keeps waiting (and is
    /// woken at once if `deadline` has already passed).
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.entry_pin().reset(deadline);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A timer that fires spends a unit of the task's cooperative budget
        // (tempo_park::coop), so a loop over elapsed timers yields too.
        let progress = ready!(coop::poll_proceed(cx));
        ready!(self.entry_pin().poll_elapsed(cx));
        progress.made_progress();
        Poll::Ready(())
    }
}
