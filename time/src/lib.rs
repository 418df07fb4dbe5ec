//! Tempo's timer driver: a hierarchical timing wheel that wraps any
//! [`Park`](tempo_park::Park) driver, and the timer futures that use it,
//! named as in `tokio::time`; the timer policies are in `docs/timers.md`.
//! The examples run on a [`Driver`] over a
//! [`ParkThread`](tempo_park::ParkThread) with a paused clock (set-up lines
//! hidden elsewhere, shown here); in an application the body runs in a task.
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
#[track_caller]
pub fn pause() {
    Handle::current().clock().pause();
}

/// Resumes the current runtime's clock (see [`Clock::resume`]).
///
/// # Panics
///
/// Outside a runtime with time enabled.
#[track_caller]
pub fn resume() {
    Handle::current().clock().resume();
}

/// Advances the current runtime's paused clock by `duration`, fires the
/// timers that became due, and yields once so that their tasks run.
///
/// # Panics
///
/// Outside a runtime with time enabled, or if the clock is not paused; or
/// if the waker of a timer it fires panics (after waking all the others).
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
