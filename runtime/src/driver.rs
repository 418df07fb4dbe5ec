//! [`Driver`]: the object-safe driver a scheduler parks on.
//!
//! [`tempo_park::Park`] has associated types (its `Unpark` handle and its
//! `Error`), so it cannot be boxed as is. `Driver` erases them: the park
//! side becomes a `Box<dyn DynPark>` whose errors are `io::Error`s, the
//! unpark side an `Arc<dyn Unpark>` that remote spawns and wakes share.
//! Today the driver is [`ParkThread`] or the user's
//! [`Builder::with_park`](crate::runtime::Builder::with_park) driver; the
//! I/O and timer stack plugs in here too.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tempo_park::{DriverStats, Park, ParkThread, Unpark};

/// [`Park`] without associated types.
trait DynPark {
    /// `None` blocks until an event or unpark; `Some(ZERO)` polls once.
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    fn stats(&self) -> DriverStats;
}

impl<P> DynPark for P
where
    P: Park,
    P::Error: std::error::Error + Send + Sync + 'static,
{
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let result = match timeout {
            None => Park::park(self),
            Some(d) => Park::park_timeout(self, d),
        };
        result.map_err(to_io_error)
    }

    fn stats(&self) -> DriverStats {
        Park::stats(self)
    }
}

/// Keeps an `io::Error` as it is, wraps any other error.
fn to_io_error<E: std::error::Error + Send + Sync + 'static>(error: E) -> io::Error {
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    match boxed.downcast::<io::Error>() {
        Ok(io_error) => *io_error,
        Err(other) => io::Error::other(other),
    }
}

/// The driver under a scheduler: parked on the owning thread, unparked from
/// anywhere.
pub(crate) struct Driver {
    park: Box<dyn DynPark>,
    unpark: Arc<dyn Unpark>,
}

impl Driver {
    /// A driver with no events: [`ParkThread`].
    pub(crate) fn park_thread() -> Driver {
        Driver::new(ParkThread::new())
    }

    /// Wraps any [`Park`] driver.
    pub(crate) fn new<P>(park: P) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        let unpark: Arc<dyn Unpark> = Arc::new(park.unpark());
        Driver {
            park: Box::new(park),
            unpark,
        }
    }

    /// The handle that wakes this driver from any thread.
    pub(crate) fn unpark(&self) -> Arc<dyn Unpark> {
        self.unpark.clone()
    }

    /// Parks: `None` until an event or unpark, `Some(d)` for at most `d`
    /// (`Some(ZERO)` polls without blocking).
    pub(crate) fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.park.park_timeout(timeout)
    }

    /// The driver's cumulative counters.
    pub(crate) fn stats(&self) -> DriverStats {
        self.park.stats()
    }
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Failing;

    #[derive(Debug)]
    struct Boom;
    impl fmt::Display for Boom {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("boom")
        }
    }
    impl std::error::Error for Boom {}

    impl Park for Failing {
        type Unpark = <ParkThread as Park>::Unpark;
        type Error = Boom;
        fn unpark(&self) -> Self::Unpark {
            ParkThread::new().unpark()
        }
        fn park(&mut self) -> Result<(), Boom> {
            Err(Boom)
        }
        fn park_timeout(&mut self, _: Duration) -> Result<(), Boom> {
            Err(Boom)
        }
    }

    #[test]
    fn errors_become_io_errors() {
        let mut d = Driver::new(Failing);
        let e = d.park_timeout(Some(Duration::ZERO)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Other);
        assert_eq!(e.to_string(), "boom");
        assert_eq!(
            to_io_error(io::Error::from(io::ErrorKind::WouldBlock)).kind(),
            io::ErrorKind::WouldBlock
        );
    }

    #[test]
    fn park_thread_unpark_before_park() {
        let mut d = Driver::park_thread();
        d.unpark().unpark();
        d.park_timeout(None).unwrap();
        d.park_timeout(Some(Duration::ZERO)).unwrap();
        assert_eq!(d.stats(), DriverStats::default());
    }
}
