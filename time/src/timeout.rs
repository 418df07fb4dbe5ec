//! [`Timeout`]: a future with a deadline.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tempo_park::coop;

use crate::error::Elapsed;
use crate::timers::InWindow;
use crate::{Handle, Instant, Sleep};

/// A future that completes with the inner future's output, or with
/// [`Elapsed`] if the deadline passes first. Created by [`timeout`] or
/// [`timeout_at`]. Always **never early**, whatever the firing window.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Timeout<F> {
    // Both fields are structurally pinned: see `project`.
    value: F,
    delay: Sleep,
}

/// Runs `future` for at most `duration`.
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
/// use tempo_time::{sleep, timeout};
///
/// let fast = timeout(Duration::from_millis(50), async { 42 }).await;
/// assert_eq!(fast, Ok(42));
///
/// let slow = timeout(Duration::from_millis(50), sleep(Duration::from_secs(1))).await;
/// assert!(slow.is_err(), "gave up after 50 ms");
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[track_caller]
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    let handle = Handle::current();
    let deadline = handle.now() + duration;
    Timeout {
        value: future,
        delay: Sleep::with_state(
            handle,
            deadline,
            true,
            InWindow::NextTick,
            duration.is_zero(),
        ),
    }
}

/// Runs `future` until `deadline` at most.
///
/// # Panics
///
/// Outside a runtime with time enabled (see [`Handle::current`]).
#[track_caller]
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        value: future,
        delay: Sleep::new(Handle::current(), deadline, true),
    }
}

impl<F> Timeout<F> {
    /// The inner future.
    pub fn get_ref(&self) -> &F {
        &self.value
    }

    /// The inner future, mutably.
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.value
    }

    /// Consumes the timeout, returning the inner future.
    pub fn into_inner(self) -> F {
        self.value
    }

    /// The deadline.
    pub fn deadline(&self) -> Instant {
        self.delay.deadline()
    }

    /// Projects the pinned `Timeout` onto its two fields.
    fn project(self: Pin<&mut Self>) -> (Pin<&mut F>, Pin<&mut Sleep>) {
        // SAFETY: both fields are structurally pinned: `Timeout` has no `Drop`
        // impl and no manual `Unpin` impl (it is `!Unpin` through `Sleep`),
        // and hands out `&mut` to them only through this projection; the two
        // `&mut` borrow disjoint fields.
        unsafe {
            let this = self.get_unchecked_mut();
            (
                Pin::new_unchecked(&mut this.value),
                Pin::new_unchecked(&mut this.delay),
            )
        }
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (value, delay) = self.project();
        let had_budget = coop::has_budget_remaining();
        // The inner future first: a future that is ready at the deadline wins.
        if let Poll::Ready(output) = value.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        // Check the deadline even if the inner future spent the last of the
        // budget, or a future that always exhausts it would never time out.
        let poll_delay = || delay.poll(cx).map(|()| Err(Elapsed::new()));
        if had_budget && !coop::has_budget_remaining() {
            coop::with_unconstrained(poll_delay)
        } else {
            poll_delay()
        }
    }
}
