//! The [`Park`] and [`Unpark`] traits; see the crate docs for the contract.

use std::sync::Arc;
use std::time::Duration;

use crate::DriverStats;

/// A driver that can block the current thread until there is work, and do
/// that work before returning.
///
/// See the [crate documentation](crate) for the full contract an
/// implementation must uphold.
///
/// A driver stack's outer layer wraps the inner one and forwards to it, as
/// Tempo's timer driver wraps its I/O driver:
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

    /// Returns a handle that makes a current or future `park*` return.
    ///
    /// The handle can be cloned (by calling this again) and used from any
    /// thread, for as long as the caller likes.
    ///
    /// ```
    /// use tempo_park::{Park, ParkThread, Unpark};
    ///
    /// let mut driver = ParkThread::new();
    /// let handle = driver.unpark(); // Send + Sync + 'static
    /// std::thread::spawn(move || handle.unpark()).join().unwrap();
    /// driver.park().unwrap(); // returns at once: the unpark came first
    /// ```
    fn unpark(&self) -> Self::Unpark;

    /// Blocks until an event or an unpark, does the driver's work, returns.
    ///
    /// Returns at once if an unpark happened since the last `park*`.
    /// May return spuriously.
    fn park(&mut self) -> Result<(), Self::Error>;

    /// Like [`park`](Park::park), but blocks for at most `duration`.
    ///
    /// `Duration::ZERO` polls for events once and never blocks.
    /// `Duration::MAX` (or any duration too large to add to the current
    /// instant) behaves like [`park`](Park::park).
    fn park_timeout(&mut self, duration: Duration) -> Result<(), Self::Error>;

    /// Cumulative counters of what this driver (and the drivers it wraps) did.
    ///
    /// Must count every piece of work that may have woken a task (see
    /// [`DriverStats`] and rule 7 of the [contract](crate)). The default
    /// reports nothing, which is right for a driver that only blocks.
    fn stats(&self) -> DriverStats {
        DriverStats::default()
    }
}

/// Wakes a [`Park`] driver: makes a current `park*` return, or the next one
/// return at once.
///
/// ```
/// use std::sync::Arc;
/// use tempo_park::{Park, ParkThread, Unpark};
///
/// let mut driver = ParkThread::new();
/// // Type-erased, as a scheduler stores it.
/// let handle: Arc<dyn Unpark> = Arc::new(driver.unpark());
/// handle.unpark();
/// handle.unpark(); // several unparks before one park collapse into one
/// driver.park().unwrap();
/// ```
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
