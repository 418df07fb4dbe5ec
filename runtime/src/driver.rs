//! [`Driver`]: the object-safe driver a scheduler parks on.
//!
//! [`tempo_park::Park`] has associated types (its `Unpark` handle and its
//! `Error`), so it cannot be boxed as is. `Driver` erases them: the park
//! side becomes a `Box<dyn DynPark>` whose errors are `io::Error`s, the
//! unpark side an `Arc<dyn Unpark>` that remote spawns and wakes share.
//!
//! # The driver stack
//!
//! [`Driver::build`] composes the stack the builder asked for, bottom up:
//!
//! * the base: the I/O driver built by the [`IoBackend`] (with
//!   `enable_io`), the host's driver wrapping it
//!   ([`Builder::with_park_fn`](crate::runtime::Builder::with_park_fn)),
//!   the host's driver in its place
//!   ([`Builder::with_park`](crate::runtime::Builder::with_park)), or
//!   [`ParkThread`] (no events of its own);
//! * with `enable_time`, the timer driver [`tempo_time::Driver`] around the
//!   base, with the scheduler's firing window (`T/2` under a throttle of
//!   `T`, zero otherwise) and timer policy.
//!
//! # The I/O backend seam
//!
//! The schedulers only see the type-erased [`Driver`]. The I/O driver is
//! built in one place, [`IoBackend::build`], which also applies what the
//! scheduler needs of it (the receive-ahead rule of datagram sockets under throttling) and
//! hands back the handle sockets register with. A second backend (a
//! completion-based one, say) is a new [`IoBackend`] variant: nothing in
//! the schedulers changes, and a host's `with_park_fn` driver wraps
//! whichever backend was built.
//!
//! The stack keeps the handles of its layers ([`DriverHandles`]) so that the
//! runtime can *enter* them: that is how `tempo::net` sockets and
//! `tempo::time` timers find their drivers.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tempo_park::{DriverStats, Park, ParkThread, Unpark};
use tempo_time::Clock;

/// [`Park`] without associated types, plus the one extra operation the
/// throttling scheduler needs of the stack: a *look*.
trait DynPark {
    /// `None` blocks until an event or unpark; `Some(ZERO)` polls once.
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Polls the base of the stack (the I/O driver, or the host's driver
    /// around or in place of it) once, without blocking and without a
    /// timer fire pass: a tick's second look at the reactor (see
    /// `scheduler::throttle`), which must not fire timers a second time in
    /// the tick.
    fn look(&mut self) -> io::Result<()>;
    fn stats(&self) -> DriverStats;
}

/// Parks any [`Park`] driver, its error made an `io::Error`.
fn park_any<P>(park: &mut P, timeout: Option<Duration>) -> io::Result<()>
where
    P: Park,
    P::Error: std::error::Error + Send + Sync + 'static,
{
    let result = match timeout {
        None => Park::park(park),
        Some(d) => Park::park_timeout(park, d),
    };
    result.map_err(to_io_error)
}

/// A driver stack behind [`DynPark`]: the stack's top `park`, and how a
/// look polls its base (the top itself without the timer driver; the timer
/// driver's inner driver with it).
struct Erased<P> {
    park: P,
    look: fn(&mut P) -> io::Result<()>,
}

impl<P> DynPark for Erased<P>
where
    P: Park,
    P::Error: std::error::Error + Send + Sync + 'static,
{
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        park_any(&mut self.park, timeout)
    }

    fn look(&mut self) -> io::Result<()> {
        (self.look)(&mut self.park)
    }

    fn stats(&self) -> DriverStats {
        self.park.stats()
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

/// The I/O backend the runtime builds at the bottom of its driver stack.
///
/// One variant today; see the module docs for what a second one touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum IoBackend {
    /// Readiness-based: [`tempo_io::Driver`] (mio: epoll, kqueue).
    #[default]
    Readiness,
}

impl IoBackend {
    /// Builds the I/O driver, configured for the scheduler of `config`, and
    /// the handle that sockets find it by.
    pub(crate) fn build(
        self,
        config: &DriverConfig,
    ) -> io::Result<(tempo_io::Driver, tempo_io::Handle)> {
        match self {
            IoBackend::Readiness => {
                let mut driver = match config.io_events_capacity {
                    Some(capacity) => tempo_io::Driver::with_capacity(capacity)?,
                    None => tempo_io::Driver::new()?,
                };
                driver.set_recv_ahead(config.recv_ahead);
                let handle = driver.handle();
                Ok((driver, handle))
            }
        }
    }
}

/// Builds the stack on a host's driver that replaces the I/O driver.
type MakeReplacing = Box<dyn FnOnce(&DriverConfig) -> Driver + Send>;

/// Builds the stack on a host's driver that wraps the given I/O driver.
type MakeWrapping = Box<dyn FnOnce(tempo_io::Driver, &DriverConfig) -> Driver + Send>;

/// A host's driver, given to the builder: in place of the I/O driver
/// (`with_park`) or around it (`with_park_fn`).
pub(crate) enum HostPark {
    /// Replaces the I/O driver at the base of the stack.
    Replace(MakeReplacing),
    /// Receives the built I/O driver and returns the stack on top of the
    /// host's driver that wraps it.
    WrapIo(MakeWrapping),
}

impl HostPark {
    /// `with_park`: `park` replaces the I/O driver.
    pub(crate) fn replace<P>(park: P) -> HostPark
    where
        P: Park + Send + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        HostPark::Replace(Box::new(move |config| Driver::with_base(park, config)))
    }

    /// `with_park_fn`: `make` wraps the I/O driver in the host's driver.
    pub(crate) fn wrap_io<F, P>(make: F) -> HostPark
    where
        F: FnOnce(tempo_io::Driver) -> P + Send + 'static,
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        HostPark::WrapIo(Box::new(move |io, config| {
            Driver::with_base(make(io), config)
        }))
    }

    /// Whether this host driver replaces the I/O driver.
    pub(crate) fn replaces_io(&self) -> bool {
        matches!(self, HostPark::Replace(_))
    }
}

impl fmt::Debug for HostPark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostPark::Replace(_) => "HostPark::Replace",
            HostPark::WrapIo(_) => "HostPark::WrapIo",
        })
    }
}

/// How the builder wants the driver stack.
#[derive(Debug, Clone)]
pub(crate) struct DriverConfig {
    /// The I/O backend, `None` without `enable_io`.
    pub(crate) io: Option<IoBackend>,
    pub(crate) enable_time: bool,
    pub(crate) start_paused: bool,
    /// Fire timers due by `now + firing_window` (nearest tick under
    /// throttling: `T/2`).
    pub(crate) firing_window: Duration,
    /// Every timer is never early (tokio's rule).
    pub(crate) never_early: bool,
    /// The spacing of the scheduler's fire passes (throttling: `T`; zero
    /// for the basic scheduler): how late a never-early timer can be.
    pub(crate) pass_period: Duration,
    /// Turn the I/O driver's receive-ahead rule on (throttling does): a
    /// datagram receive asks for two datagrams in one call, holds the
    /// second for the next receive, and knows the socket drained when only
    /// one came (see [`tempo_io::Driver::set_recv_ahead`]).
    pub(crate) recv_ahead: bool,
    /// The I/O driver's events buffer; `None`: its default.
    pub(crate) io_events_capacity: Option<usize>,
}

/// The handles of the driver stack's layers, entered while the runtime runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct DriverHandles {
    pub(crate) io: Option<tempo_io::Handle>,
    pub(crate) time: Option<tempo_time::Handle>,
}

impl DriverHandles {
    /// Enters the layers' handles on this thread until the guard drops.
    pub(crate) fn enter(&self) -> DriverEnterGuard {
        DriverEnterGuard {
            _io: self.io.as_ref().map(tempo_io::Handle::enter),
            _time: self.time.as_ref().map(tempo_time::Handle::enter),
        }
    }

    /// The timer driver's clock, if time is enabled.
    pub(crate) fn clock(&self) -> Option<&Clock> {
        self.time.as_ref().map(tempo_time::Handle::clock)
    }
}

/// Keeps the driver handles entered; restores the previous ones on drop.
#[derive(Debug)]
pub(crate) struct DriverEnterGuard {
    _io: Option<tempo_io::EnterGuard>,
    _time: Option<tempo_time::EnterGuard>,
}

/// The driver under a scheduler: parked on the owning thread, unparked from
/// anywhere.
pub(crate) struct Driver {
    park: Box<dyn DynPark>,
    unpark: Arc<dyn Unpark>,
    handles: DriverHandles,
    /// I/O events one dispatch must reach for the throttling scheduler to
    /// take a second look after running the tick's tasks: the I/O driver's
    /// events capacity. `None` without an I/O driver in the stack (no
    /// second looks).
    look_threshold: Option<u64>,
}

impl Driver {
    /// The stack for `config`: at the bottom the I/O driver (wrapped in the
    /// host's driver for [`HostPark::WrapIo`]), the host's driver
    /// ([`HostPark::Replace`]) or a [`ParkThread`]; the timer driver on
    /// top if enabled.
    pub(crate) fn build(config: &DriverConfig, host: Option<HostPark>) -> io::Result<Driver> {
        // `WrapIo` needs an I/O driver to wrap, even without `enable_io`.
        let backend = match &host {
            Some(HostPark::WrapIo(_)) => Some(config.io.unwrap_or_default()),
            Some(HostPark::Replace(_)) => None,
            None => config.io,
        };
        let Some(backend) = backend else {
            return Ok(match host {
                Some(HostPark::Replace(make)) => make(config),
                _ => Driver::with_base(ParkThread::new(), config),
            });
        };
        let (io, io_handle) = backend.build(config)?;
        let events_capacity = io.events_capacity() as u64;
        let mut driver = match host {
            Some(HostPark::WrapIo(make)) => make(io, config),
            _ => Driver::with_base(io, config),
        };
        driver.handles.io = Some(io_handle);
        driver.look_threshold = Some(events_capacity);
        Ok(driver)
    }

    /// The stack for `config` on top of `base` (the user's driver, the I/O
    /// driver, or a [`ParkThread`]).
    fn with_base<P>(base: P, config: &DriverConfig) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        if !config.enable_time {
            return Driver::new(base);
        }
        let clock = if config.start_paused {
            Clock::paused()
        } else {
            Clock::real()
        };
        let mut time = tempo_time::Driver::new(base, clock);
        time.set_firing_window(config.firing_window);
        time.set_never_early(config.never_early);
        let time_handle = time.handle();
        time_handle.set_pass_period(config.pass_period);
        let mut driver = Driver::timed(time);
        driver.handles.time = Some(time_handle);
        driver
    }

    /// A driver with no events: [`ParkThread`].
    #[cfg(all(test, not(loom)))]
    pub(crate) fn park_thread() -> Driver {
        Driver::new(ParkThread::new())
    }

    /// Wraps any [`Park`] driver as it is.
    fn new<P>(park: P) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        let unpark: Arc<dyn Unpark> = Arc::new(park.unpark());
        let look = |park: &mut P| park_any(park, Some(Duration::ZERO));
        Driver::from_parts(Box::new(Erased { park, look }), unpark)
    }

    /// The timer driver `time` over its base.
    fn timed<P>(time: tempo_time::Driver<P>) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        let unpark: Arc<dyn Unpark> = Arc::new(time.unpark());
        // The inner driver only: a look must not fire timers.
        let look =
            |time: &mut tempo_time::Driver<P>| park_any(time.inner_mut(), Some(Duration::ZERO));
        Driver::from_parts(Box::new(Erased { park: time, look }), unpark)
    }

    /// No second looks until [`build`](Self::build) finds an I/O driver in
    /// the stack.
    fn from_parts(park: Box<dyn DynPark>, unpark: Arc<dyn Unpark>) -> Driver {
        Driver {
            park,
            unpark,
            handles: DriverHandles::default(),
            look_threshold: None,
        }
    }

    /// The handles of the stack's layers.
    pub(crate) fn handles(&self) -> &DriverHandles {
        &self.handles
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

    /// A second look: polls the base of the stack once, without blocking
    /// and without a timer fire pass.
    pub(crate) fn look(&mut self) -> io::Result<()> {
        self.park.look()
    }

    /// See the `look_threshold` field.
    pub(crate) fn look_threshold(&self) -> Option<u64> {
        self.look_threshold
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
