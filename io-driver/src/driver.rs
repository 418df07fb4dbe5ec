//! [`Driver`]: the readiness reactor (`readiness/`) and the settings its
//! sockets share (`socket_settings.rs`), composed; [`Park`] is the
//! reactor's (see `readiness/reactor.rs`).

use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tempo_park::{DriverStats, IoDriver, Park};

use crate::handle::Handle;
use crate::readiness::Reactor;
pub use crate::readiness::UnparkDriver;
use crate::socket_settings::SocketSettings;

/// Default size of the `Events` buffer (a park that fills it polls again).
const DEFAULT_EVENTS: usize = 1024;

/// The I/O driver: a readiness reactor (a `mio::Poll`, its events buffer
/// and the registrations of every socket made with its [`Handle`]) and the
/// settings those sockets share.
///
/// Each `park*` wakes every task waiting on a socket that was ready when
/// it started. A panicking waker does not stop the batch: every other
/// waker is woken, then the first panic is re-raised (dropped instead if
/// the thread is already unwinding).
///
/// ```
/// use std::time::Duration;
/// use tempo_park::Park;
///
/// let mut driver = tempo_io::Driver::new()?;
/// let handle = driver.handle();
/// handle.unpark();             // a wake-up before the park ...
/// driver.park()?;              // ... makes it return at once
/// driver.park_timeout(Duration::ZERO)?; // polls once, never blocks
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Driver {
    /// The readiness reactor: poll, events buffer, dispatch.
    reactor: Reactor,
    /// Its handle (the reactor's shared part and the socket settings).
    handle: Handle,
    /// Completions the turns of this driver's io_uring handed to ring
    /// receivers (see `completion/`).
    ring_completions: u64,
}

impl Driver {
    /// Creates a driver whose `Events` buffer holds 1,024 events.
    pub fn new() -> io::Result<Driver> {
        Driver::with_capacity(DEFAULT_EVENTS)
    }

    /// Creates a driver whose `Events` buffer holds `events` events (at
    /// least 1); a park that fills it polls again without blocking.
    pub fn with_capacity(events: usize) -> io::Result<Driver> {
        let reactor = Reactor::with_capacity(events)?;
        let handle = Handle::from_parts(reactor.shared(), SocketSettings::default());
        Ok(Driver {
            reactor,
            handle,
            ring_completions: 0,
        })
    }

    /// A handle that registers sockets with this driver, from any thread.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Number of `park*` calls so far (dispatch rounds).
    pub fn dispatch_round(&self) -> u64 {
        self.reactor.dispatch_round()
    }

    /// The events one poll takes at most (see
    /// [`with_capacity`](Self::with_capacity)).
    pub fn events_capacity(&self) -> usize {
        self.reactor.events_capacity()
    }

    /// One turn of both backends: the poll, bounded by what the
    /// io_uring's receivers need, then the ring's turn, whose completions
    /// count as I/O events.
    fn turn(&mut self, wait: Option<Duration>) -> io::Result<()> {
        let ring = self.handle.ring();
        self.reactor.turn(ring.wait_limit(wait))?;
        self.ring_completions += ring.turn()?;
        Ok(())
    }

    /// Number of sockets currently registered.
    pub fn registered(&self) -> usize {
        self.reactor.registered()
    }
}

impl Park for Driver {
    type Unpark = UnparkDriver;
    type Error = io::Error;

    fn unpark(&self) -> UnparkDriver {
        self.reactor.unpark()
    }

    fn park(&mut self) -> io::Result<()> {
        self.turn(None)
    }

    fn park_timeout(&mut self, duration: Duration) -> io::Result<()> {
        // mio rounds up to milliseconds and saturates huge values, so
        // Duration::MAX waits (practically) forever without overflow.
        self.turn(Some(duration))
    }

    fn stats(&self) -> DriverStats {
        let mut stats = self.reactor.stats();
        stats.io_events += self.ring_completions;
        stats
    }
}

/// Closes the driver's io_uring (its receivers' waits end in an error),
/// before the reactor wakes its sockets' waiters to the same end.
impl Drop for Driver {
    fn drop(&mut self) {
        self.handle.ring().driver_gone();
    }
}

/// The runtime's contract with its I/O backend. Throttling changes the
/// receive rule of datagram sockets made afterwards (`docs/networking.md`).
///
/// ```
/// use tempo_park::IoDriver;
///
/// let mut driver = tempo_io::Driver::with_capacity(64)?;
/// assert_eq!(IoDriver::events_capacity(&driver), 64);
/// driver.set_throttled(true); // a host loop that throttles itself
/// driver.look()?;             // dispatches what is ready, never blocks
/// # Ok::<(), std::io::Error>(())
/// ```
impl IoDriver for Driver {
    fn events_capacity(&self) -> usize {
        self.reactor.events_capacity()
    }

    fn set_throttled(&mut self, throttled: bool) {
        let settings = self.handle.settings();
        settings.throttled.store(throttled, Ordering::Relaxed);
    }

    /// While throttled: its level-triggered datagram sockets need a look
    /// to find their backlogs.
    fn looks_for_backlogs(&self) -> bool {
        let settings = self.handle.settings();
        settings.throttled.load(Ordering::Relaxed)
    }

    /// After an io_uring turn that ran a full chunk of the kernel's queued
    /// receives (`completion/recv_ring.rs`).
    fn dispatch_continues(&self) -> bool {
        self.handle.ring().continues()
    }
}

/// The driver's pollable fd (its epoll instance): readable when a
/// registered socket has an event or the driver was unparked. A host's
/// poll loop waits for it, then calls `park_timeout(Duration::ZERO)`.
/// Timers are not in it.
impl std::os::fd::AsRawFd for Driver {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.reactor)
    }
}

/// See [`AsRawFd`](#impl-AsRawFd-for-Driver).
impl std::os::fd::AsFd for Driver {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.reactor)
    }
}
