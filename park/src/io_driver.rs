//! [`IoDriver`]: what a runtime needs of its I/O backend besides parking
//! on it ([`Park`] is the dispatch): the events one dispatch takes at
//! most, the tick's *second look*, and whether the scheduler throttles.
//! The runtime talks to its backend through this contract only;
//! `tempo_io::Driver` (`tempo::runtime::IoReactor`) implements it.

use std::time::Duration;

use crate::Park;

/// An I/O backend a runtime can put at the bottom of its driver stack.
///
/// Dispatching is [`Park`]'s contract (see the crate docs): a `park*`
/// waits for events, wakes what they concern, and returns; a
/// `park_timeout(Duration::ZERO)` dispatches every event pending when it
/// starts without blocking.
///
/// ```
/// use std::time::Duration;
/// use tempo_park::{DriverStats, IoDriver, Park, ParkThread};
///
/// /// A backend with no events, for a test: its dispatch is ParkThread's.
/// struct NoEvents(ParkThread);
///
/// impl Park for NoEvents {
///     type Unpark = <ParkThread as Park>::Unpark;
///     type Error = std::convert::Infallible;
///     fn unpark(&self) -> Self::Unpark {
///         self.0.unpark()
///     }
///     fn park(&mut self) -> Result<(), Self::Error> {
///         self.0.park()
///     }
///     fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
///         self.0.park_timeout(d)
///     }
/// }
///
/// impl IoDriver for NoEvents {
///     fn events_capacity(&self) -> usize {
///         1
///     }
///     fn set_throttled(&mut self, _throttled: bool) {} // no datagram rule
/// }
///
/// let mut backend = NoEvents(ParkThread::new());
/// backend.set_throttled(true);
/// backend.look().unwrap(); // the provided second look: a zero-timeout park
/// assert_eq!(backend.stats(), DriverStats::default());
/// ```
pub trait IoDriver: Park {
    /// The most events one dispatch (one poll) takes. A dispatch that
    /// reports this many [`io_events`](crate::DriverStats::io_events) may
    /// have left some pending: the throttling scheduler then takes a
    /// [second look](IoDriver::look) after running the tick's tasks.
    fn events_capacity(&self) -> usize;

    /// Tells the backend whether its scheduler throttles (polls it once
    /// per period), so that it applies, or stops applying, its rule for
    /// throttled datagram receivers (`tempo_io::Driver`: one `recvfrom` per
    /// level-triggered report). A backend without such a rule ignores it.
    fn set_throttled(&mut self, throttled: bool);

    /// Whether a throttled tick should take a second look after *any*
    /// dispatch that reported I/O, not only after a full one: a backend
    /// whose throttled datagram rule finds backlogs that way says so
    /// (`tempo_io::Driver` while throttled: the look reports a
    /// level-triggered socket again when a datagram is left). Default:
    /// `false`.
    fn looks_for_backlogs(&self) -> bool {
        false
    }

    /// A second look within one tick: dispatches what is ready now,
    /// without blocking (and, as the bottom of the stack, without any
    /// timer pass of a driver above it). By default a
    /// `park_timeout(Duration::ZERO)`; a backend with a cheaper way to
    /// collect what has already completed may override it.
    fn look(&mut self) -> Result<(), Self::Error> {
        self.park_timeout(Duration::ZERO)
    }
}
