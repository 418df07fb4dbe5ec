//! [`IoDriver`]: what a runtime needs of its I/O backend besides parking
//! on it.
//!
//! # Why a trait here
//!
//! A runtime composes its driver stack from an I/O backend at the bottom
//! (and a timer driver, and a host's driver, above it). [`Park`] covers the
//! dispatch itself; a scheduler also needs to know how many events one
//! dispatch takes at most (a throttled tick that reached that many looks
//! again after running its tasks), to take that *second look*, and to tell
//! the backend it is throttled (so it applies its rule for throttled
//! datagram receivers). With these in one trait, the runtime talks to its
//! backend through the contract, not through one backend's concrete type:
//! Tempo's readiness reactor (`tempo_io::Driver`, mio) implements it, and
//! a completion backend (io_uring, IOCP) would implement the same four
//! operations and plug in under the same stack.

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
    /// throttled datagram receivers. `tempo_io::Driver`: the
    /// receive-ahead rule (one receive syscall per datagram). A backend
    /// without such a rule ignores it.
    fn set_throttled(&mut self, throttled: bool);

    /// Whether a throttled tick should take a second look after *any*
    /// dispatch that reported I/O, not only after a full one: a backend
    /// whose throttled datagram rule finds backlogs that way says so
    /// (`tempo_io::Driver` while its receive-ahead rule is on: its
    /// level-triggered datagram sockets are reported again by the look
    /// when a datagram is left). Default: `false`.
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
