//! [`Flavor`]: which scheduler a runtime runs, decided once by the builder.
//! The timer driver's, I/O driver's and scheduler's settings are all
//! derived here from the one value, so no two layers can disagree.

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
    /// The throttling period, zero for basic: also the spacing of the
    /// timer fire passes.
    pub(crate) fn period(&self) -> Duration {
        match self {
            Flavor::Basic => Duration::ZERO,
            Flavor::Throttle(throttle) => throttle.period,
        }
    }

    /// The timer driver's firing window (zero for the basic scheduler).
    pub(crate) fn firing_window(&self) -> Duration {
        match self {
            Flavor::Basic => Duration::ZERO,
            Flavor::Throttle(throttle) => throttle.firing_window,
        }
    }

    /// Whether the I/O driver is told it is throttled (one `recvfrom` per
    /// datagram readiness report).
    pub(crate) fn throttles_io(&self) -> bool {
        matches!(self, Flavor::Throttle(_))
    }

    /// The I/O driver's events buffer unless the builder sets one (`None`:
    /// the driver's 1,024). A throttled tick takes every socket ready
    /// during the period in one poll: [`THROTTLED_IO_EVENTS`].
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
