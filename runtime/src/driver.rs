//! [`Driver`]: the object-safe driver stack a scheduler parks on.
//! [`tempo_park::Park`] has associated types, so `Driver` erases them
//! (errors become `io::Error`s). [`Driver::build`] stacks, bottom up, the
//! I/O driver (or a host's driver around or in place of it, or a
//! [`ParkThread`]) and, with `enable_time`, the timer driver. The stack
//! talks to its I/O backend only through [`tempo_park::IoDriver`]; only
//! [`IoBackend::build`] names the concrete one. [`DriverHandles`] are what
//! the runtime enters so sockets and timers find their drivers.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tempo_park::{DriverStats, IoDriver, Park, ParkThread, Unpark};
use tempo_time::Clock;

/// [`Park`] without associated types, plus what the throttling scheduler
/// needs of the stack's base: a *look*, and whether its last dispatch
/// continues.
trait DynPark {
    /// `None` blocks until an event or unpark; `Some(ZERO)` polls once.
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Polls the base of the stack once, without blocking or firing
    /// timers: a tick's second look at the reactor.
    fn look(&mut self) -> io::Result<()>;
    /// [`IoDriver::dispatch_continues`] of the base; `false` for a base
    /// that is not an I/O driver.
    fn dispatch_continues(&mut self) -> bool;
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

/// Polls any [`Park`] driver once without blocking: the second look at a
/// base that is not an [`IoDriver`] (a host's driver, [`ParkThread`]).
fn poll_once<P>(park: &mut P) -> io::Result<()>
where
    P: Park,
    P::Error: std::error::Error + Send + Sync + 'static,
{
    park_any(park, Some(Duration::ZERO))
}

/// The second look of an I/O backend at the base of the stack.
fn io_look<B>(io: &mut B) -> io::Result<()>
where
    B: IoDriver,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    IoDriver::look(io).map_err(to_io_error)
}

/// What the stack asks of its base `B` besides parking: how a look polls
/// it, and whether its last dispatch continues.
struct BaseOps<B> {
    look: fn(&mut B) -> io::Result<()>,
    continues: fn(&B) -> bool,
}

impl<B> Clone for BaseOps<B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for BaseOps<B> {}

impl<B> BaseOps<B>
where
    B: Park,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    /// A base that is not an I/O driver (a host's driver, [`ParkThread`]):
    /// a look parks it with a zero timeout, a dispatch never continues.
    fn polled() -> BaseOps<B> {
        BaseOps {
            look: poll_once,
            continues: |_| false,
        }
    }
}

impl<B> BaseOps<B>
where
    B: IoDriver,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    /// An I/O backend, through its [`IoDriver`] contract.
    fn io() -> BaseOps<B> {
        BaseOps {
            look: io_look::<B>,
            continues: B::dispatch_continues,
        }
    }
}

/// A driver stack behind [`DynPark`]: its top `park`, how to reach its
/// base `B`, and what is asked of that base.
struct Erased<P, B> {
    park: P,
    base: fn(&mut P) -> &mut B,
    ops: BaseOps<B>,
}

impl<P, B> DynPark for Erased<P, B>
where
    P: Park,
    P::Error: std::error::Error + Send + Sync + 'static,
{
    fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        park_any(&mut self.park, timeout)
    }

    fn look(&mut self) -> io::Result<()> {
        (self.ops.look)((self.base)(&mut self.park))
    }

    fn dispatch_continues(&mut self) -> bool {
        (self.ops.continues)((self.base)(&mut self.park))
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

/// Tempo's I/O driver, as handed to a host's driver by
/// [`Builder::with_park_fn`](crate::runtime::Builder::with_park_fn).
pub use tempo_io::Driver as IoReactor;

/// The I/O backend the runtime builds at the bottom of its driver stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum IoBackend {
    /// Readiness-based: [`tempo_io::Driver`] (mio: epoll, kqueue).
    #[default]
    Readiness,
}

impl IoBackend {
    /// Builds the I/O driver with `config`'s events buffer, and the handle
    /// sockets find it by.
    pub(crate) fn build(self, config: &DriverConfig) -> io::Result<(IoReactor, tempo_io::Handle)> {
        match self {
            IoBackend::Readiness => {
                let driver = match config.io_events_capacity {
                    Some(capacity) => tempo_io::Driver::with_capacity(capacity)?,
                    None => tempo_io::Driver::new()?,
                };
                let handle = driver.handle();
                Ok((driver, handle))
            }
        }
    }
}

/// Builds the stack on a host's driver that replaces the I/O driver.
type MakeReplacing = Box<dyn FnOnce(&DriverConfig) -> Driver + Send>;

/// Builds the stack on a host's driver that wraps the given I/O driver.
type MakeWrapping<B = IoReactor> = Box<dyn FnOnce(B, &DriverConfig) -> Driver + Send>;

/// A host's driver, given to the builder: in place of the I/O driver
/// (`with_park`) or around it (`with_park_fn`).
pub(crate) enum HostPark {
    /// Replaces the I/O driver at the base of the stack.
    Replace(MakeReplacing),
    /// Wraps the built I/O driver in the host's driver.
    WrapIo(MakeWrapping),
}

impl HostPark {
    /// `with_park`: `park` replaces the I/O driver.
    pub(crate) fn replace<P>(park: P) -> HostPark
    where
        P: Park + Send + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        HostPark::Replace(Box::new(move |config| {
            Driver::with_base(park, config, BaseOps::polled())
        }))
    }

    /// `with_park_fn`: `make` wraps the I/O driver in the host's driver.
    pub(crate) fn wrap_io<F, P>(make: F) -> HostPark
    where
        F: FnOnce(IoReactor) -> P + Send + 'static,
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        HostPark::WrapIo(Box::new(move |io, config| {
            Driver::with_base(make(io), config, BaseOps::polled())
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
    /// Fire timers due by `now + firing_window` (throttling: `T/2`).
    pub(crate) firing_window: Duration,
    /// Every timer is never early (tokio's rule).
    pub(crate) never_early: bool,
    /// The spacing of the fire passes (`T`, or zero): how late a
    /// never-early timer can be.
    pub(crate) pass_period: Duration,
    /// Tell the I/O backend its scheduler throttles ([`IoDriver::set_throttled`]).
    pub(crate) throttled: bool,
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
    /// I/O events one dispatch must reach for a second look: the events
    /// capacity, or 1 when the driver looks for backlogs; `None` without
    /// an I/O driver.
    look_threshold: Option<u64>,
}

impl Driver {
    /// The stack for `config`, the host's driver if any at the bottom.
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
                _ => Driver::with_base(ParkThread::new(), config, BaseOps::polled()),
            });
        };
        let (io, io_handle) = backend.build(config)?;
        let wrap = match host {
            Some(HostPark::WrapIo(make)) => Some(make),
            _ => None,
        };
        let mut driver = Driver::on_io(io, config, wrap);
        driver.handles.io = Some(io_handle);
        Ok(driver)
    }

    /// The stack on the I/O backend `io`, through its [`IoDriver`]
    /// contract only; `wrap`: a host's driver around it.
    fn on_io<B>(mut io: B, config: &DriverConfig, wrap: Option<MakeWrapping<B>>) -> Driver
    where
        B: IoDriver + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        io.set_throttled(config.throttled);
        let look_threshold = if io.looks_for_backlogs() {
            1
        } else {
            io.events_capacity() as u64
        };
        let mut driver = match wrap {
            Some(make) => make(io, config),
            None => Driver::with_base(io, config, BaseOps::io()),
        };
        driver.look_threshold = Some(look_threshold);
        driver
    }

    /// The stack on top of `base`, which `ops` looks at.
    fn with_base<P>(base: P, config: &DriverConfig, ops: BaseOps<P>) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        if !config.enable_time {
            return Driver::new(base, ops);
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
        let mut driver = Driver::timed(time, ops);
        driver.handles.time = Some(time_handle);
        driver
    }

    /// A driver with no events: [`ParkThread`].
    #[cfg(all(test, not(loom)))]
    pub(crate) fn park_thread() -> Driver {
        Driver::new(ParkThread::new(), BaseOps::polled())
    }

    /// Wraps any [`Park`] driver as it is, which `ops` looks at.
    fn new<P>(park: P, ops: BaseOps<P>) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        let unpark: Arc<dyn Unpark> = Arc::new(park.unpark());
        let base: fn(&mut P) -> &mut P = |park| park;
        Driver::from_parts(Box::new(Erased { park, base, ops }), unpark)
    }

    /// The timer driver `time` over its base, which `ops` looks at.
    fn timed<P>(time: tempo_time::Driver<P>, ops: BaseOps<P>) -> Driver
    where
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        let unpark: Arc<dyn Unpark> = Arc::new(time.unpark());
        // The inner driver only: a look must not fire timers.
        let base: fn(&mut tempo_time::Driver<P>) -> &mut P = |time| time.inner_mut();
        Driver::from_parts(
            Box::new(Erased {
                park: time,
                base,
                ops,
            }),
            unpark,
        )
    }

    /// No second looks until `build` finds an I/O driver.
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

    /// Parks: `None` until an event or unpark, `Some(d)` at most `d`.
    pub(crate) fn park_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.park.park_timeout(timeout)
    }

    /// A second look: polls the base once, no timers.
    pub(crate) fn look(&mut self) -> io::Result<()> {
        self.park.look()
    }

    /// Whether the base's last dispatch continues
    /// ([`IoDriver::dispatch_continues`]).
    pub(crate) fn dispatch_continues(&mut self) -> bool {
        self.park.dispatch_continues()
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
        let mut d = Driver::new(Failing, BaseOps::polled());
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
