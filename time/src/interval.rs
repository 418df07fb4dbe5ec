//! [`Interval`]: a stream of ticks at a fixed period, with tokio's
//! semantics: the first tick completes at `start`, each tick returns the
//! instant it was *scheduled* for, and [`MissedTickBehavior`] decides what
//! follows a late tick. A tick is *missed* only if later than the timer
//! policy's designed error plus 5 ms; the rules are in `docs/timers.md`
//! ("Intervals").

use std::future::{poll_fn, Future as _};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::timers::InWindow;
use crate::{Handle, Instant, Sleep};

/// Slack beyond the firing window before a tick counts as missed.
const MISSED_TICK_SLACK: Duration = Duration::from_millis(5);

/// What an [`Interval`] does after a tick that fired late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks back to back, keeping the schedule (default).
    #[default]
    Burst,
    /// Next tick a full period after the late one: the schedule shifts.
    Delay,
    /// Drop the missed ticks; fire at the next multiple of the period.
    Skip,
}

impl MissedTickBehavior {
    /// The next instant after a tick scheduled at `scheduled` came at `now`.
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

/// Ticks at a fixed period. Created by [`interval`], [`interval_at`] or [`interval_at_least`].
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{interval, Instant};
///
/// let start = Instant::now();
/// let mut every_20ms = interval(Duration::from_millis(20));
/// for n in 0..3 {
///     // The first tick completes at once; each returns its scheduled instant.
///     let scheduled = every_20ms.tick().await;
///     assert_eq!(scheduled - start, Duration::from_millis(20) * n);
/// }
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[derive(Debug)]
pub struct Interval {
    /// Boxed once so that `Interval` is `Unpin`; re-arming allocates nothing.
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

/// Like [`interval`], but no tick completes before its scheduled instant.
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
        // A first tick at or before now completes at once.
        let due = start <= handle.now();
        Interval {
            delay: Box::pin(Sleep::with_state(
                handle,
                start,
                at_least,
                InWindow::ThisTick,
                due,
            )),
            period,
            missed_tick_behavior: MissedTickBehavior::default(),
        }
    }

    /// Completes at the next tick; returns the instant it was scheduled for.
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
        let (window, tolerance) = self.window_and_tolerance();
        let next = if now > scheduled + tolerance {
            self.missed_tick_behavior
                .next_timeout(scheduled, now, self.period)
        } else {
            scheduled + self.period
        };
        // A late tick's successor catches up at this tick's end.
        let in_window = if now > scheduled + window {
            InWindow::ThisTick
        } else {
            InWindow::NextTick
        };
        self.delay.as_mut().reset_with(next, in_window);
        Poll::Ready(scheduled)
    }

    /// The firing window, and the lateness that is not a missed tick.
    fn window_and_tolerance(&self) -> (Duration, Duration) {
        let config = self.delay.handle().timers().config();
        let (window_ticks, never_early, pass_ticks) = (
            config.window_ticks,
            config.never_early,
            config.pass_period_ticks,
        );
        let window = Duration::from_millis(window_ticks);
        let spread = if self.delay.is_at_least() || never_early {
            (window * 2).max(Duration::from_millis(pass_ticks))
        } else {
            window
        };
        (window, MISSED_TICK_SLACK + spread)
    }

    /// Restarts the schedule: the next tick is one period from now.
    pub fn reset(&mut self) {
        let now = self.delay.handle().now();
        self.delay
            .as_mut()
            .reset_with(now + self.period, InWindow::NextTick);
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
