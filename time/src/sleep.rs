//! [`Sleep`]: a future that completes at a deadline.
//!
//! A `Sleep` owns its timer entry (pinned inside it), so creating, polling,
//! resetting and dropping it allocate nothing; it registers with the wheel
//! on its first poll, without reading the clock (as tokio). `Duration::MAX`
//! saturates to about a century ([`Instant::FAR_FUTURE`]).
//!
//! * A zero duration completes on the first poll without touching the
//!   wheel; so does a deadline at or before the driver's last fire pass
//!   (or, on a reset, the waiting task is woken).
//! * A deadline in the future **never completes in the poll that created
//!   it**. Inside the window a throttled tick already fired, a deadline
//!   *given* ([`sleep_until`], [`Sleep::new`], [`Sleep::reset`]) completes
//!   at the tick's end-of-tick pass, one *measured from now* ([`sleep`],
//!   [`sleep_at_least`]) at the next pass: `loop { sleep(d).await }` costs
//!   at most one poll per tick, whatever `d`.
//! * A deadline after the last pass but past by the time it registers
//!   completes at the driver's next fire pass (whose park does not block).

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tempo_park::coop;

use crate::entry::TimerEntry;
use crate::timers::InWindow;
use crate::{Handle, Instant};

/// A future that completes at [`deadline`](Sleep::deadline). Created by
/// [`sleep`], [`sleep_until`], [`sleep_at_least`] or [`Sleep::at_least`].
///
/// A default `Sleep` follows the driver's firing window (nearest tick under
/// a throttling scheduler: error within `±T/2`); an *at-least* `Sleep` never
/// completes before its deadline (error within `[0, T]`, tokio's rule).
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep, Instant};
///
/// // A `Sleep` is `!Unpin`: pin it to poll it by reference, e.g. to move its
/// // deadline without allocating a new timer.
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
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep, Instant};
///
/// let start = Instant::now();
/// sleep(Duration::from_millis(100)).await;
/// assert!(start.elapsed() >= Duration::from_millis(100));
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep_until, Instant};
///
/// let deadline = Instant::now() + Duration::from_millis(250);
/// sleep_until(deadline).await;
/// assert!(Instant::now() >= deadline);
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread};
/// # let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused());
/// # driver.set_firing_window(std::time::Duration::from_millis(10));
/// # let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{sleep_at_least, Instant};
///
/// // Even with a 10 ms firing window (a throttling scheduler of 20 ms), an
/// // at-least sleep never completes before its deadline.
/// let start = Instant::now();
/// sleep_at_least(Duration::from_millis(15)).await;
/// assert!(start.elapsed() >= Duration::from_millis(15));
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
    /// A sleep on a given timer handle (for code that holds a handle rather
    /// than running inside the runtime). `at_least`: never early.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo_park::{Park, ParkThread};
    /// use tempo_time::{Clock, Driver, Sleep};
    ///
    /// // No handle entered on this thread: the sleep names its driver.
    /// let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    /// let deadline = driver.clock().now() + Duration::from_millis(5);
    /// let mut sleep = tokio_test::task::spawn(Sleep::new(driver.handle(), deadline, false));
    /// assert!(sleep.poll().is_pending());
    /// driver.park().unwrap(); // the paused clock jumps to the deadline
    /// assert!(sleep.is_woken());
    /// assert!(sleep.poll().is_ready());
    /// ```
    pub fn new(handle: Handle, deadline: Instant, at_least: bool) -> Sleep {
        Sleep::with_state(handle, deadline, at_least, InWindow::ThisTick, false)
    }

    /// `in_window`: where the deadline fires if it falls inside the window
    /// the driver's last pass processed (see [`InWindow`]); `elapsed`: the
    /// caller knows the deadline has passed already.
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

    /// Moves the deadline with an explicit [`InWindow`] rule (an
    /// interval's re-arm); see [`Sleep::reset`].
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

    /// Moves the deadline (earlier or later, even after completion): the
    /// sleep is pending again until `deadline`. Re-arms in O(1) and without
    /// allocating; a task already waiting on the sleep keeps waiting (and is
    /// woken at once if `deadline` has already passed).
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::time::Duration;
    /// use tempo_time::{sleep, Instant};
    ///
    /// let mut delay = std::pin::pin!(sleep(Duration::from_millis(5)));
    /// delay.as_mut().await;
    /// // Re-arm the same timer: no allocation.
    /// let later = Instant::now() + Duration::from_millis(20);
    /// delay.as_mut().reset(later);
    /// assert!(!delay.is_elapsed());
    /// delay.as_mut().await;
    /// assert!(Instant::now() >= later);
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
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
        // A timer that fires spends a unit of the task's cooperative budget
        // (tempo_park::coop), so a loop over elapsed timers yields too.
        let progress = ready!(coop::poll_proceed(cx));
        ready!(self.entry_pin().poll_elapsed(cx));
        progress.made_progress();
        Poll::Ready(())
    }
}
