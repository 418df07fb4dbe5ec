//! The [`Park`] and [`Unpark`] traits; see the crate docs for the contract.

use std::sync::Arc;
use std::time::Duration;

use crate::DriverStats;

/// A driver that can block the current thread until there is work, and do
/// that work before returning; the contract is in the [crate docs](crate).
/// A driver stack's outer layer forwards to the inner one:
///
/// ```
/// use std::time::Duration;
/// use tempo_park::{DriverStats, Park, ParkThread};
///
/// /// Counts its parks; everything else is the inner driver's.
/// struct Counting<P> {
///     inner: P,
///     parks: u64,
/// }
///
/// impl<P: Park> Park for Counting<P> {
///     type Unpark = P::Unpark;
///     type Error = P::Error;
///
///     fn unpark(&self) -> P::Unpark {
///         self.inner.unpark()
///     }
///     fn park(&mut self) -> Result<(), P::Error> {
///         self.parks += 1;
///         self.inner.park()
///     }
///     fn park_timeout(&mut self, d: Duration) -> Result<(), P::Error> {
///         self.parks += 1;
///         self.inner.park_timeout(d)
///     }
///     fn stats(&self) -> DriverStats {
///         self.inner.stats() // plus this layer's own counts, if it had any
///     }
/// }
///
/// let mut driver = Counting { inner: ParkThread::new(), parks: 0 };
/// driver.park_timeout(Duration::ZERO).unwrap();
/// assert_eq!(driver.parks, 1);
/// ```
pub trait Park {
    /// The handle that wakes this driver from another thread.
    type Unpark: Unpark;

    /// The error a park can fail with (an I/O error for a reactor,
    /// [`std::convert::Infallible`] for drivers that cannot fail).
    type Error;

    /// A handle that makes a current or future `park*` return, usable from
    /// any thread for as long as the caller likes.
    fn unpark(&self) -> Self::Unpark;

    /// Blocks until an event or an unpark, does the driver's work, returns.
    /// Returns at once if an unpark happened since the last `park*`; may
    /// return spuriously.
    fn park(&mut self) -> Result<(), Self::Error>;

    /// Like [`park`](Park::park), for at most `duration`. `ZERO` polls once
    /// and never blocks; a duration too large for an instant never times out.
    fn park_timeout(&mut self, duration: Duration) -> Result<(), Self::Error>;

    /// Cumulative counters of what this driver (and those it wraps) did:
    /// rule 7 of the [contract](crate). The default reports nothing.
    fn stats(&self) -> DriverStats {
        DriverStats::default()
    }
}

/// Wakes a [`Park`] driver: makes a current `park*` return, or the next one
/// return at once.
pub trait Unpark: Send + Sync + 'static {
    /// Wakes the driver. Idempotent until the driver parks again.
    fn unpark(&self);
}

impl<T: Unpark + ?Sized> Unpark for Box<T> {
    fn unpark(&self) {
        (**self).unpark()
    }
}

impl<T: Unpark + ?Sized> Unpark for Arc<T> {
    fn unpark(&self) {
        (**self).unpark()
    }
}

impl<P: Park + ?Sized> Park for Box<P> {
    type Unpark = P::Unpark;
    type Error = P::Error;

    fn unpark(&self) -> Self::Unpark {
        (**self).unpark()
    }
    fn park(&mut self) -> Result<(), Self::Error> {
        (**self).park()
    }
    fn park_timeout(&mut self, duration: Duration) -> Result<(), Self::Error> {
        (**self).park_timeout(duration)
    }
    fn stats(&self) -> DriverStats {
        (**self).stats()
    }
}
