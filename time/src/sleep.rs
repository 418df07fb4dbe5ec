//! [`Sleep`]: a future that completes at a deadline. It owns its pinned
//! timer entry, so creating, polling, resetting and dropping it allocate
//! nothing; it registers on its first poll without reading the clock.
//!
//! A deadline already passed completes on the first poll; one in the future
//! **never completes in the poll that created it** (`docs/timers.md`).

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tempo_park::coop;

use crate::entry::TimerEntry;
use crate::timers::InWindow;
use crate::{Handle, Instant};

/// A future that completes at [`deadline`](Sleep::deadline) (nearest tick
/// under a firing window, or never early if *at least*).
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep, Instant};
///
/// // `!Unpin`: pin it to poll it by reference and move its deadline.
/// let mut delay = std::pin::pin!(sleep(Duration::from_secs(3600)));
/// assert!(!delay.is_at_least());
/// let sooner = Instant::now() + Duration::from_millis(10);
/// delay.as_mut().reset(sooner);
/// assert_eq!(delay.deadline(), sooner);
/// delay.as_mut().await;
/// assert!(delay.is_elapsed());
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    // Structurally pinned: see `entry_pin`.
    entry: TimerEntry,
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
    Sleep::with_state(
        handle,
        deadline,
        false,
        InWindow::NextTick,
        duration.is_zero(),
    )
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
/// under a firing window.
///
/// # Panics
///
/// Outside a runtime with time enabled (see [`Handle::current`]).
#[track_caller]
pub fn sleep_at_least(duration: Duration) -> Sleep {
    let handle = Handle::current();
    let deadline = handle.now() + duration;
    Sleep::with_state(
        handle,
        deadline,
        true,
        InWindow::NextTick,
        duration.is_zero(),
    )
}

impl Sleep {
    /// A sleep on a given timer handle; `at_least`: never early.
    pub fn new(handle: Handle, deadline: Instant, at_least: bool) -> Sleep {
        Sleep::with_state(handle, deadline, at_least, InWindow::ThisTick, false)
    }

    /// `elapsed`: the caller knows the deadline has passed.
    pub(crate) fn with_state(
        handle: Handle,
        deadline: Instant,
        at_least: bool,
        in_window: InWindow,
        elapsed: bool,
    ) -> Sleep {
        Sleep {
            entry: TimerEntry::new(handle, deadline, at_least, in_window, elapsed),
        }
    }

    /// [`Sleep::reset`] with an explicit [`InWindow`] rule.
    pub(crate) fn reset_with(self: Pin<&mut Self>, deadline: Instant, in_window: InWindow) {
        self.entry_pin().reset(deadline, in_window);
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

    /// Moves the deadline, even after completion: pending again until
    /// `deadline`. O(1), no allocation; a waiting task keeps waiting (woken
    /// at once if `deadline` has passed).
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.entry_pin().reset(deadline, InWindow::ThisTick);
    }

    /// Projects the pinned `Sleep` onto its entry.
    fn entry_pin(self: Pin<&mut Self>) -> Pin<&mut TimerEntry> {
        // SAFETY: `entry` is structurally pinned: `Sleep` has no `Drop` impl
        // and no manual `Unpin` impl (it is `!Unpin` through the entry), and
        // hands out `&mut` to `entry` only through this projection.
        unsafe { self.map_unchecked_mut(|s| &mut s.entry) }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Firing spends cooperative budget, so a loop over timers yields.
        let progress = ready!(coop::poll_proceed(cx));
        ready!(self.entry_pin().poll_elapsed(cx));
        progress.made_progress();
        Poll::Ready(())
    }
}
