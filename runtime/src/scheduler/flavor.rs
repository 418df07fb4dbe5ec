//! [`Flavor`]: which scheduler a runtime runs, decided once by the builder.
//!
//! "Throttling on or off" has consequences in three layers: the timer
//! driver (its firing window and the spacing of its fire passes), the I/O
//! driver (its throttled datagram receive rule, the default events
//! buffer) and the scheduler
//! (which loop runs, with which period and tick budget). Each of them is
//! derived here from the one [`Flavor`] value, so that no layer decides it
//! again from the raw settings and no two can disagree.
//!
//! This file is a leaf: plain values, no scheduler state. The core reads
//! the value (for [`Handle::max_throttling`](crate::runtime::Handle::max_throttling)),
//! [`scheduler`](super) turns it into the loop that runs, and the
//! throttling loop takes its [`ThrottleConfig`].

use std::time::Duration;

/// Which scheduler runs, with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// The basic scheduler: run ready tasks, park until an event.
    Basic,
    /// The throttling scheduler: one tick per period.
    Throttle(ThrottleConfig),
}

/// The throttling settings: the one place the period `T` and the firing
/// window are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThrottleConfig {
    /// The period `T`.
    pub(crate) period: Duration,
    /// The timer driver's firing window between regular ticks (`T/2` for
    /// nearest-tick timers, zero for never-early ones).
    pub(crate) firing_window: Duration,
    /// Task polls per tick at most.
    pub(crate) tick_budget: u32,
}

impl Flavor {
    /// The throttling period, zero for the basic scheduler: also the
    /// spacing of the timer driver's fire passes (how late a never-early
    /// timer can be).
    pub(crate) fn period(&self) -> Duration {
        match self {
            Flavor::Basic => Duration::ZERO,
            Flavor::Throttle(throttle) => throttle.period,
        }
    }

    /// The timer driver's firing window: timers due by `now + window` fire
    /// (zero for the basic scheduler, which fires on the deadline).
    pub(crate) fn firing_window(&self) -> Duration {
        match self {
            Flavor::Basic => Duration::ZERO,
            Flavor::Throttle(throttle) => throttle.firing_window,
        }
    }

    /// Whether the I/O driver is told it is throttled (its datagram
    /// sockets then take one `recvfrom` per readiness report, saving the
    /// empty `recvfrom` of every socket at every tick).
    pub(crate) fn throttles_io(&self) -> bool {
        matches!(self, Flavor::Throttle(_))
    }

    /// The I/O driver's events buffer unless the builder sets one (`None`:
    /// the driver's default, 1,024, tokio's). Under throttling a tick takes
    /// every socket that became ready during the period, and a fuller
    /// buffer saves the extra `epoll_wait` (in which the level-triggered
    /// sockets not yet served would come back): [`THROTTLED_IO_EVENTS`]
    /// takes up to 4,096 ready sockets in one poll, for 48 KiB of buffer.
    pub(crate) fn io_events_capacity(&self) -> Option<usize> {
        match self {
            Flavor::Basic => None,
            Flavor::Throttle(_) => Some(THROTTLED_IO_EVENTS),
        }
    }
}

/// The throttling scheduler's default events buffer (see
/// [`Flavor::io_events_capacity`]).
pub(crate) const THROTTLED_IO_EVENTS: usize = 4096;
