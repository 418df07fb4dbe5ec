//! Tempo's timer driver: a hierarchical timing wheel that wraps any
//! [`Park`](tempo_park::Park) driver, and the timer futures that use it.
//! Names follow `tokio::time`, so code can switch by changing its imports.
//!
//! * [`Driver`] parks the driver under it until the next timer is due (or
//!   the caller's timeout), then fires every timer due by `now + window`.
//! * [`Handle`] reaches the driver from any thread; the runtime *enters* it
//!   so that [`sleep`], [`interval`], [`timeout`] and [`Instant::now`] find
//!   it.
//! * [`Clock`] is real or paused; with a paused clock an idle driver jumps
//!   to the next timer instead of waiting, so tests finish at once and
//!   deterministically.
//!
//! # Timer policies
//!
//! A scheduler that fires timers once per tick of period `T` sets a firing
//! window of `T/2` ([`Driver::set_firing_window`]): a timer then fires at
//! the tick *nearest* its deadline on the scheduler's grid
//! ([`Handle::set_next_pass_grid`]), error within `±T/2`. Timers made with
//! [`sleep_at_least`], [`Sleep::at_least`] or [`interval_at_least`] (or
//! every timer, with [`Driver::set_never_early`]) are *never early*: error
//! within `[0, T]`, tokio's rule. With a zero window both are the same.
//! A timer whose deadline is in the future never completes in the poll that
//! created it (see [`Sleep`]).
//!
//! # The examples
//!
//! This crate cannot depend on the runtime, so an example that awaits runs
//! its `async` block on a [`Driver`] over a
//! [`ParkThread`](tempo_park::ParkThread) with a paused clock (hidden
//! set-up lines, shown here). In an application the same body runs in a
//! task of a `tempo` runtime, through `tempo::time`.
//!
//! ```
//! use std::time::Duration;
//! use tempo_park::{Park, ParkThread};
//! use tempo_time::{Clock, Driver, Instant};
//!
//! let mut driver = Driver::new(ParkThread::new(), Clock::paused());
//! let _guard = driver.handle().enter();
//! let start = Instant::now();
//! let mut sleep = Box::pin(tempo_time::sleep(Duration::from_secs(3600)));
//! let waker = std::task::Waker::from(std::sync::Arc::new(NoopWaker));
//! let mut cx = std::task::Context::from_waker(&waker);
//! assert!(sleep.as_mut().poll(&mut cx).is_pending());
//! driver.park().unwrap(); // paused clock: jumps an hour ahead at once
//! assert!(sleep.is_elapsed());
//! assert_eq!(start.elapsed(), Duration::from_secs(3600));
//! # use std::future::Future;
//! # struct NoopWaker;
//! # impl std::task::Wake for NoopWaker { fn wake(self: std::sync::Arc<Self>) {} }
//! ```
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod clock;
mod driver;
mod entry;
pub mod error;
mod handle;
mod histogram;
mod instant;
mod interval;
mod list;
mod sleep;
mod sync;
mod timeout;
mod timers;
mod wheel;

pub use clock::Clock;
pub use driver::Driver;
pub use handle::{EnterGuard, Handle};
pub use histogram::{TimerErrorHistogram, BUCKETS as TIMER_ERROR_BUCKETS};
pub use instant::Instant;
pub use interval::{interval, interval_at, interval_at_least, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_at_least, sleep_until, Sleep};
pub use timeout::{timeout, timeout_at, Timeout};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Pauses the current runtime's clock (see [`Clock::pause`]).
///
/// # Panics
///
/// Outside a runtime with time enabled.
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::real()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::Instant;
///
/// tempo_time::pause();
/// let start = Instant::now();
/// tempo_time::advance(Duration::from_secs(5)).await;
/// assert_eq!(start.elapsed(), Duration::from_secs(5));
/// tempo_time::resume();
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[track_caller]
pub fn pause() {
    Handle::current().clock().pause();
}

/// Resumes the current runtime's clock (see [`Clock::resume`]).
///
/// # Panics
///
/// Outside a runtime with time enabled.
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::real()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use tempo_time::Handle;
///
/// tempo_time::pause();
/// assert!(Handle::current().clock().is_paused());
/// tempo_time::resume();
/// assert!(!Handle::current().clock().is_paused());
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[track_caller]
pub fn resume() {
    Handle::current().clock().resume();
}

/// Advances the current runtime's paused clock by `duration`, fires the
/// timers that became due, and yields once so that the tasks they woke run
/// before the caller continues.
///
/// # Panics
///
/// Outside a runtime with time enabled, or if the clock is not paused; or
/// if the waker of a timer it fires panics (after waking all the others).
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
/// let waiter = sleep(Duration::from_secs(60));
/// // Moves the clock a minute ahead at once.
/// tempo_time::advance(Duration::from_secs(60)).await;
/// assert_eq!(start.elapsed(), Duration::from_secs(60));
/// waiter.await; // its deadline has passed: completes on its first poll
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
pub async fn advance(duration: Duration) {
    let handle = Handle::current();
    handle.clock().advance(duration);
    handle.fire_due_timers();
    YieldOnce(false).await;
}

/// Returns `Pending` once (waking itself), then `Ready`.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
