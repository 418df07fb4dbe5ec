//! [`Interval`]: a stream of ticks at a fixed period, with tokio's
//! semantics: the first tick completes at `start` (at once for
//! [`interval`]), each tick returns the instant it was *scheduled* for, and
//! [`MissedTickBehavior`] decides what follows a late tick.
//!
//! A tick is *missed* only if it completes later than scheduled by more
//! than a tolerance: 5 ms (as tokio) plus the firing window for a
//! nearest-tick interval, plus the pass period `T` (or twice the window) for
//! a never-early one. A throttled timer's designed error (`±T/2`, or up to
//! `T` late) is thus never a missed tick, and an early tick schedules the
//! next one a period after its scheduled instant.
//!
//! After a tick late by more than the window, the next scheduled instant
//! may lie inside the window the last pass processed: it fires at that
//! tick's end-of-tick pass, so the schedule catches up at once. After an
//! on-time tick such an instant waits for the next pass, so a loop over a
//! short interval costs one poll per tick.

use std::future::{poll_fn, Future as _};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::timers::InWindow;
use crate::{Handle, Instant, Sleep};

/// Slack beyond the firing window before a tick counts as missed.
const MISSED_TICK_SLACK: Duration = Duration::from_millis(5);

/// What an [`Interval`] does after a tick that fired late.
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{interval, MissedTickBehavior};
///
/// let mut ticks = interval(Duration::from_millis(10));
/// assert_eq!(ticks.missed_tick_behavior(), MissedTickBehavior::Burst);
/// // After a late tick, drop the missed ones instead of bursting through them.
/// ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
/// ticks.tick().await;
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
/// let mut ticks = interval(Duration::from_millis(20));
/// ticks.tick().await; // at once
/// ticks.tick().await; // 20 ms later
/// ticks.tick().await; // 40 ms later
/// assert!(start.elapsed() >= Duration::from_millis(40));
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{interval_at, Instant};
///
/// let start = Instant::now() + Duration::from_millis(50);
/// let mut ticks = interval_at(start, Duration::from_millis(20));
/// assert_eq!(ticks.tick().await, start);
/// assert_eq!(ticks.tick().await, start + Duration::from_millis(20));
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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
/// use tempo_time::{interval_at_least, Instant};
///
/// // Under a 10 ms firing window, no tick completes before its instant.
/// let mut ticks = interval_at_least(Duration::from_millis(20));
/// for _ in 0..3 {
///     let scheduled = ticks.tick().await;
///     assert!(Instant::now() >= scheduled);
/// }
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
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

    /// Completes at the next scheduled tick; returns the instant it was
    /// scheduled for.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::time::Duration;
    /// use tempo_time::{interval, Instant};
    ///
    /// let mut ticks = interval(Duration::from_millis(5));
    /// let first = ticks.tick().await;
    /// let second = ticks.tick().await;
    /// assert_eq!(second - first, Duration::from_millis(5));
    /// assert!(Instant::now() >= second);
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick; see [`Interval::tick`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::future::poll_fn;
    /// use std::time::Duration;
    /// use tempo_time::interval;
    ///
    /// let mut ticks = interval(Duration::from_millis(5));
    /// let first = poll_fn(|cx| ticks.poll_tick(cx)).await;
    /// let second = poll_fn(|cx| ticks.poll_tick(cx)).await;
    /// assert_eq!(second - first, Duration::from_millis(5));
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
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
        // A late tick's successor catches up at this tick's end; an on-time
        // tick's waits for the next pass (see the module docs).
        let in_window = if now > scheduled + window {
            InWindow::ThisTick
        } else {
            InWindow::NextTick
        };
        self.delay.as_mut().reset_with(next, in_window);
        Poll::Ready(scheduled)
    }

    /// The firing window, and the lateness that does not count as a missed
    /// tick (see the module docs).
    fn window_and_tolerance(&self) -> (Duration, Duration) {
        // Read without the wheel lock: the re-arm that follows takes it.
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::time::Duration;
    /// use tempo_time::{interval, Instant};
    ///
    /// let mut ticks = interval(Duration::from_millis(10));
    /// ticks.tick().await;
    /// ticks.reset();
    /// let start = Instant::now();
    /// ticks.tick().await;
    /// assert!(start.elapsed() >= Duration::from_millis(10));
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
    pub fn reset(&mut self) {
        let now = self.delay.handle().now();
        // Measured from the clock: like `sleep(period)`.
        self.delay
            .as_mut()
            .reset_with(now + self.period, InWindow::NextTick);
    }

    /// Restarts the schedule: the next tick completes at once.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::time::Duration;
    /// use tempo_time::{interval, Instant};
    ///
    /// let mut ticks = interval(Duration::from_secs(60));
    /// ticks.tick().await;
    /// ticks.reset_immediately();
    /// let start = Instant::now();
    /// ticks.tick().await; // does not wait a minute
    /// assert_eq!(start.elapsed(), Duration::ZERO);
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
    pub fn reset_immediately(&mut self) {
        let now = self.delay.handle().now();
        self.delay.as_mut().reset(now);
    }

    /// Restarts the schedule: the next tick is at `deadline`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
    /// # let mut task = tokio_test::task::spawn(async {
    /// use std::time::Duration;
    /// use tempo_time::{interval, Instant};
    ///
    /// let mut ticks = interval(Duration::from_secs(60));
    /// ticks.tick().await;
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// ticks.reset_at(soon);
    /// assert_eq!(ticks.tick().await, soon);
    /// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
    /// ```
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
