//! [`Interval`]: a stream of ticks at a fixed period.
//!
//! Semantics follow tokio's: the first tick completes at `start`
//! (immediately for [`interval`]: that deadline is now, not in the future;
//! a later tick still in the future when scheduled completes at a later
//! fire pass, never in the poll that scheduled it, see
//! [`Sleep`](crate::Sleep)), each tick returns the instant it was
//! *scheduled* for, and [`MissedTickBehavior`] decides what happens after a
//! tick that fired late (the task was busy, or the thread was blocked).
//!
//! # Missed ticks and the firing window
//!
//! A tick counts as *missed* only if it completes later than its scheduled
//! instant by more than a tolerance: 5 ms (as tokio) plus the driver's
//! firing window, or twice the window for a never-early interval. Under a
//! throttling scheduler of period `T` (window `T/2`) a nearest-tick timer is
//! up to `T/2` early or late and a never-early one up to `T` late by design;
//! neither is a missed tick, so a `Delay` interval does not drift and a
//! `Skip` interval does not skip. A tick that completes *early* (within the
//! window) is never missed: the next one is scheduled a period after the
//! scheduled instant, not after the early completion.

use std::future::{poll_fn, Future as _};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::{Handle, Instant, Sleep};

/// Slack beyond the firing window before a tick counts as missed.
const MISSED_TICK_SLACK: Duration = Duration::from_millis(5);

/// What an [`Interval`] does after a tick that fired late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks back to back until caught up, then keep the
    /// original schedule (the default).
    #[default]
    Burst,
    /// Schedule the next tick a full period after the late one completed:
    /// the schedule shifts.
    Delay,
    /// Drop the missed ticks and fire at the next multiple of the period on
    /// the original schedule.
    Skip,
}

impl MissedTickBehavior {
    /// The next scheduled instant after a tick scheduled at `scheduled`
    /// completed (late) at `now`.
    fn next_timeout(self, scheduled: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            MissedTickBehavior::Burst => scheduled + period,
            MissedTickBehavior::Delay => now + period,
            MissedTickBehavior::Skip => {
                let late = now.saturating_duration_since(scheduled).as_nanos();
                let period_nanos = period.as_nanos();
                let into_period = u64::try_from(late % period_nanos).unwrap_or(0);
                now + (period - Duration::from_nanos(into_period))
            }
        }
    }
}

/// Ticks at a fixed period. Created by [`interval`], [`interval_at`] or
/// [`interval_at_least`].
#[derive(Debug)]
pub struct Interval {
    /// Boxed once at creation so that `Interval` is `Unpin`; re-arming it
    /// for each tick allocates nothing.
    delay: Pin<Box<Sleep>>,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

/// An interval whose first tick completes at once.
///
/// # Panics
///
/// If `period` is zero, or outside a runtime with time enabled.
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    let handle = Handle::current();
    let start = handle.now();
    Interval::new(handle, start, period, false)
}

/// An interval whose first tick completes at `start`.
///
/// # Panics
///
/// If `period` is zero, or outside a runtime with time enabled.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    Interval::new(Handle::current(), start, period, false)
}

/// Like [`interval`], but no tick completes before its scheduled instant,
/// even under a firing window (see [`sleep_at_least`](crate::sleep_at_least)).
///
/// # Panics
///
/// If `period` is zero, or outside a runtime with time enabled.
#[track_caller]
pub fn interval_at_least(period: Duration) -> Interval {
    let handle = Handle::current();
    let start = handle.now();
    Interval::new(handle, start, period, true)
}

impl Interval {
    /// An interval on a given timer handle; `at_least`: never early.
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    #[track_caller]
    pub fn new(handle: Handle, start: Instant, period: Duration, at_least: bool) -> Interval {
        assert!(!period.is_zero(), "an Interval's period must be non-zero");
        // One clock read per interval, so that a first tick at or before now
        // completes at once (see `Sleep` on past deadlines).
        let due = start <= handle.now();
        Interval {
            delay: Box::pin(Sleep::with_state(handle, start, at_least, due)),
            period,
            missed_tick_behavior: MissedTickBehavior::default(),
        }
    }

    /// Completes at the next scheduled tick; returns the instant it was
    /// scheduled for.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick; see [`Interval::tick`].
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.delay.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let scheduled = self.delay.deadline();
        let now = self.delay.handle().now();
        let next = if now > scheduled + self.tolerance() {
            self.missed_tick_behavior
                .next_timeout(scheduled, now, self.period)
        } else {
            scheduled + self.period
        };
        self.delay.as_mut().reset(next);
        Poll::Ready(scheduled)
    }

    /// Lateness that does not count as a missed tick.
    fn tolerance(&self) -> Duration {
        let window = Duration::from_millis(self.delay.handle().shared().lock_state().window_ticks);
        let spread = if self.delay.is_at_least() {
            window * 2
        } else {
            window
        };
        MISSED_TICK_SLACK + spread
    }

    /// Restarts the schedule: the next tick is one period from now.
    pub fn reset(&mut self) {
        let now = self.delay.handle().now();
        self.delay.as_mut().reset(now + self.period);
    }

    /// Restarts the schedule: the next tick completes at once.
    pub fn reset_immediately(&mut self) {
        let now = self.delay.handle().now();
        self.delay.as_mut().reset(now);
    }

    /// Restarts the schedule: the next tick is at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.delay.as_mut().reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What happens after a missed tick.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what happens after a missed tick.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }
}
