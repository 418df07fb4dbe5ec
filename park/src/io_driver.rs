//! [`IoDriver`]: what a runtime needs of its I/O backend besides parking on
//! it: the events one dispatch takes at most, whether a dispatch stopped
//! part-way, the tick's *second look*, and whether the scheduler throttles
//! (`docs/schedulers-and-ticks.md`).

use std::time::Duration;

use crate::Park;

/// An I/O backend a runtime can put at the bottom of its driver stack;
/// dispatching is [`Park`]'s contract (forwarding example on [`Park`]).
pub trait IoDriver: Park {
    /// The most events one dispatch takes; a dispatch that reports this
    /// many may have left some, so a throttled tick takes a
    /// [second look](IoDriver::look).
    fn events_capacity(&self) -> usize;

    /// Tells the backend whether its scheduler throttles, for its rule on
    /// throttled datagram receivers, if it has one.
    fn set_throttled(&mut self, throttled: bool);

    /// Whether a throttled tick should take a second look after *any*
    /// dispatch that reported I/O, not only after a full one (default:
    /// `false`).
    fn looks_for_backlogs(&self) -> bool {
        false
    }

    /// Whether the last dispatch stopped part-way, by the backend's own
    /// bound, through what was ready when it began, so that the tasks of
    /// the earliest events run before the rest is dispatched: a throttled
    /// tick then looks again once those tasks ran, beyond its limit on
    /// second looks, until a dispatch completes or the tick has worked a
    /// period (default: `false`).
    fn dispatch_continues(&self) -> bool {
        false
    }

    /// A second look within one tick: dispatches what is ready now without
    /// blocking. By default a `park_timeout(Duration::ZERO)`.
    fn look(&mut self) -> Result<(), Self::Error> {
        self.park_timeout(Duration::ZERO)
    }
}
