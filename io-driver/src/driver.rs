//! [`Driver`]: the reactor. It owns the `mio::Poll` and its `Events` buffer,
//! and implements [`tempo_park::Park`]: each `park*` waits in `epoll_wait`,
//! then dispatches the events to the registrations in one pass.
//!
//! # One dispatch pass, no allocation
//!
//! Under the registrations lock, each event's token is resolved (stale
//! tokens are dropped), its readiness is ORed into the registration, and the
//! wakers it concerns are *moved* into a buffer owned by the driver. The
//! lock is released before the wakers run, so a waker that drops a socket
//! (and so deregisters) cannot deadlock. The `Events` buffer, the waker
//! buffer are reused from park to park: after warm-up a park allocates
//! nothing.
//!
//! Each `park*` call is one *dispatch round*, numbered from 0
//! ([`Driver::dispatch_round`]).
//!
//! Each event wakes *every* waiter of the directions it concerns: the
//! `poll_*` slot and all async waiters (see `scheduled_io`).
//!
//! # A panicking waker
//!
//! A waker may be foreign (another executor's, a user's `Wake` impl) and
//! may panic. The driver then still wakes every other waker of the batch,
//! and re-raises the first panic afterwards: from `park*` for a dispatch,
//! from `drop` for shutdown (unless the thread is already unwinding). The
//! same holds when a socket's registration is dropped. No task is left
//! unwoken because another one's waker panicked.
//!
//! # Receive-ahead
//!
//! See [`Driver::set_recv_ahead`] and `recv_ahead`: the datagram rule of
//! DESIGN.md (one receive syscall per datagram).
//!
//! # What `stats` counts
//!
//! [`DriverStats::io_events`] grows by one per readiness event dispatched
//! to a live registration; the driver's own unpark wake-ups and stale
//! events count nothing. `timers_fired` stays zero.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use mio::{Events, Poll};
use tempo_park::{DriverStats, Park, Unpark};

use crate::ready::Ready;
use crate::recv_ahead::RecvAheadMode;
use crate::registration_set::{RegistrationSet, WAKER_TOKEN};
use crate::{wake_batch, Handle};

/// Default size of the `Events` buffer: events beyond it wait for the next
/// park (epoll returns them then; nothing is lost).
const DEFAULT_EVENTS: usize = 1024;

/// State shared by an I/O driver, its handles and its sockets'
/// registrations.
#[derive(Debug)]
pub(crate) struct IoDriverShared {
    pub(crate) registry: mio::Registry,
    pub(crate) waker: Arc<mio::Waker>,
    pub(crate) registrations: parking_lot::Mutex<RegistrationSet>,
    /// The receive-ahead rule's switch.
    pub(crate) recv_ahead_mode: RecvAheadMode,
    pub(crate) is_shutdown: AtomicBool,
}

/// The I/O reactor: a `mio::Poll`, its events buffer and the registrations
/// of every socket created with its [`Handle`].
///
/// Each `park*` wakes every task waiting on a socket that became ready
/// (any number per socket and direction).
///
/// # Panicking wakers
///
/// A waker the driver wakes may panic (a foreign executor's, a user's own
/// `Wake` impl). The driver still wakes **every other waker of the same
/// batch**, then re-raises the first panic: `park*` panics after the
/// dispatch is complete, and dropping the driver (which wakes every waiter
/// to the shutdown error) panics after all are woken, unless the thread is
/// already unwinding, when the payload is dropped rather than abort the
/// process. Dropping a socket follows the same rule for its own waiters.
/// No task is ever left unwoken because another task's waker panicked.
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
    poll: Poll,
    events: Events,
    shared: Arc<IoDriverShared>,
    /// Wakers taken during dispatch, woken after the lock is released.
    wakers: Vec<Waker>,
    /// Number of `park*` calls so far.
    dispatch_round: u64,
    /// Readiness events dispatched.
    io_events: u64,
}

/// The [`Unpark`] handle of a [`Driver`]: writes its eventfd
/// (`mio::Waker`). Cheap to clone.
#[derive(Debug, Clone)]
pub struct UnparkDriver {
    waker: Arc<mio::Waker>,
}

impl Unpark for UnparkDriver {
    fn unpark(&self) {
        // Fails only if the eventfd counter would overflow, which means it is
        // already signalled: the wake-up is not lost.
        let _ = self.waker.wake();
    }
}

impl Driver {
    /// Creates a driver with room for 1,024 events per park.
    pub fn new() -> io::Result<Driver> {
        Driver::with_capacity(DEFAULT_EVENTS)
    }

    /// Creates a driver whose `Events` buffer holds `events` events (at
    /// least 1); more ready sockets than that are dispatched by the next park.
    pub fn with_capacity(events: usize) -> io::Result<Driver> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER_TOKEN)?);
        let shared = Arc::new(IoDriverShared {
            registry: poll.registry().try_clone()?,
            waker,
            registrations: parking_lot::Mutex::new(RegistrationSet::default()),
            recv_ahead_mode: RecvAheadMode::new(),
            is_shutdown: AtomicBool::new(false),
        });
        Ok(Driver {
            poll,
            events: Events::with_capacity(events.max(1)),
            shared,
            wakers: Vec::new(),
            dispatch_round: 0,
            io_events: 0,
        })
    }

    /// A handle that registers sockets with this driver, from any thread.
    pub fn handle(&self) -> Handle {
        Handle::from_shared(self.shared.clone())
    }

    /// Turns the receive-ahead rule on or off (default: off).
    ///
    /// When on, a `recv` / `recv_from` (async or `poll_*`) of a
    /// [`UdpSocket`](crate::net::UdpSocket) or
    /// [`UnixDatagram`](crate::net::UnixDatagram) that has no datagram held
    /// makes one `recvmmsg` asking for two datagrams: if one arrives, the
    /// socket is known drained and the next receive waits for the next
    /// readiness event without a syscall; if two arrive, the second is held
    /// and returned by the next receive without a syscall. At one datagram
    /// per socket per tick a receive loop pays one receive syscall per
    /// datagram instead of two, and a backlog drains in the same tick. The
    /// cost is one receive buffer per socket (see the `net` module docs).
    ///
    /// A runtime built with `max_throttling` turns it on by itself, also
    /// under a host's `Park` built with `Builder::with_park_fn`.
    pub fn set_recv_ahead(&mut self, enabled: bool) {
        self.shared.recv_ahead_mode.set_enabled(enabled);
    }

    /// The former name of [`set_recv_ahead`](Self::set_recv_ahead) (its
    /// rule replaced the deferred drain retry), kept so that existing
    /// callers build.
    pub fn set_defer_drain_retry(&mut self, enabled: bool) {
        self.set_recv_ahead(enabled);
    }

    /// Number of `park*` calls so far (dispatch rounds).
    pub fn dispatch_round(&self) -> u64 {
        self.dispatch_round
    }

    /// The former name of [`dispatch_round`](Self::dispatch_round), kept so
    /// that existing callers build.
    pub fn tick(&self) -> u64 {
        self.dispatch_round()
    }

    /// Number of sockets currently registered.
    pub fn registered(&self) -> usize {
        self.shared.registrations.lock().len()
    }

    fn turn(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.dispatch_round = self.dispatch_round.wrapping_add(1);

        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            // A signal: a spurious return, which the contract allows.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => self.events.clear(),
            Err(e) => return Err(e),
        }

        {
            let registrations = self.shared.registrations.lock();
            for event in self.events.iter() {
                let token = event.token();
                if token == WAKER_TOKEN {
                    continue;
                }
                let Some(io) = registrations.get(token) else {
                    continue; // stale: the slot was freed or reused
                };
                let ready = Ready::from_event(event);
                io.set_readiness(ready);
                io.take_wakers(ready, &mut self.wakers);
                self.io_events += 1;
            }
        }
        wake_batch::reraise(wake_batch::wake_all(self.wakers.drain(..)));
        Ok(())
    }
}

impl Park for Driver {
    type Unpark = UnparkDriver;
    type Error = io::Error;

    fn unpark(&self) -> UnparkDriver {
        UnparkDriver {
            waker: self.shared.waker.clone(),
        }
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
        DriverStats {
            io_events: self.io_events,
            timers_fired: 0,
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.shared.is_shutdown.store(true, SeqCst);
        {
            let registrations = self.shared.registrations.lock();
            for io in registrations.iter() {
                io.shutdown();
                io.take_all_wakers(&mut self.wakers);
            }
        }
        wake_batch::reraise_in_drop(wake_batch::wake_all(self.wakers.drain(..)));
    }
}
