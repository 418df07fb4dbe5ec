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
//! buffer and the list of due deferred receives are reused from park to
//! park: after warm-up a park allocates nothing.
//!
//! Each `park*` call is one *dispatch round*, numbered from 0
//! ([`Driver::dispatch_round`]): the unit the deferred-receive rule counts
//! in.
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
//! # Deferred drain retry
//!
//! See [`Driver::set_defer_drain_retry`] and `deferred_recv`: the datagram
//! rule of DESIGN.md.
//!
//! # What `stats` counts
//!
//! [`DriverStats::io_events`] grows by one per readiness event dispatched
//! to a live registration and by one per deferred receive retried (see
//! `deferred_recv`); the driver's own unpark wake-ups and stale events
//! count nothing. `timers_fired` stays zero.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use mio::{Events, Poll, Token};
use tempo_park::{DriverStats, Park, Unpark};

use crate::deferred_recv::DeferredRecv;
use crate::ready::Ready;
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
    /// The deferred-receive rule's driver-wide state (dispatch round, queue).
    pub(crate) deferred_recv: DeferredRecv,
    pub(crate) is_shutdown: AtomicBool,
    /// Resolves host names for this driver's sockets (`net::Resolve`).
    pub(crate) resolver: crate::net::ResolverSlot,
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
    /// The sockets whose deferred receive is due in this round (swapped
    /// with the shared queue at each park).
    due_retries: Vec<Token>,
    /// Number of `park*` calls so far.
    dispatch_round: u64,
    /// Readiness events dispatched plus deferred receives retried.
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
            deferred_recv: DeferredRecv::new(),
            is_shutdown: AtomicBool::new(false),
            resolver: Default::default(),
        });
        Ok(Driver {
            poll,
            events: Events::with_capacity(events.max(1)),
            shared,
            wakers: Vec::new(),
            due_retries: Vec::new(),
            dispatch_round: 0,
            io_events: 0,
        })
    }

    /// A handle that registers sockets with this driver, from any thread.
    pub fn handle(&self) -> Handle {
        Handle::from_shared(self.shared.clone())
    }

    /// Turns the deferred drain retry on or off (default: off).
    ///
    /// When on, a datagram socket that received successfully during the
    /// current dispatch round (one per `park*` call, see
    /// [`dispatch_round`](Self::dispatch_round)) does not retry the receive
    /// syscall in the same round: its next receive returns `Pending`, and the
    /// driver wakes it at the start of the next `park*`, which then polls
    /// with a zero timeout instead of blocking. If that deferred retry finds
    /// data, the socket drains until `WouldBlock` for the rest of the round
    /// (there may be a backlog), so a datagram already queued is received at
    /// the next round at the latest, at any rate. Each deferred retry counts
    /// as one I/O event in [`Park::stats`]. At one datagram per socket
    /// per tick a receiver pays three `recvfrom` per two datagrams instead
    /// of four. It applies to `recv`/`recv_from` of
    /// [`UdpSocket`](crate::net::UdpSocket) and
    /// [`UnixDatagram`](crate::net::UnixDatagram) (the async and `poll_*`
    /// forms; `try_*` always attempts the syscall).
    ///
    /// A runtime built with `max_throttling` turns it on by itself, also
    /// under a host's `Park` built with `Builder::with_park_fn`.
    pub fn set_defer_drain_retry(&mut self, enabled: bool) {
        self.shared.deferred_recv.set_enabled(enabled);
    }

    /// Number of `park*` calls so far: the dispatch round the deferred
    /// drain retry counts in.
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
        let retries_due = self
            .shared
            .deferred_recv
            .begin_round(self.dispatch_round, &mut self.due_retries);
        let timeout = if retries_due {
            Some(Duration::ZERO)
        } else {
            timeout
        };

        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            // A signal: a spurious return, which the contract allows.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => self.events.clear(),
            Err(e) => return Err(e),
        }

        {
            let registrations = self.shared.registrations.lock();
            self.io_events += DeferredRecv::take_due_readers(
                &mut self.due_retries,
                &registrations,
                &mut self.wakers,
            );
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

/// The driver's pollable fd: its epoll (kqueue) instance.
///
/// It becomes readable when a registered socket has an event waiting for
/// the next `park*`, or when the driver was unparked (its waker is
/// registered in the same instance). A host with its own poll loop waits
/// for it there, then calls `park_timeout(Duration::ZERO)` (or, on a
/// runtime, `Runtime::turn(Duration::ZERO)`), which dispatches the events
/// and so makes the fd unreadable again. Timers are not in it: a host
/// that also runs `tempo-time` bounds its own wait by the next deadline.
///
/// ```
/// use std::os::fd::{AsFd, AsRawFd};
///
/// let driver = tempo_io::Driver::new()?;
/// assert!(driver.as_raw_fd() >= 0);
/// assert_eq!(driver.as_fd().as_raw_fd(), driver.as_raw_fd());
/// # Ok::<(), std::io::Error>(())
/// ```
impl std::os::fd::AsRawFd for Driver {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.poll)
    }
}

/// See [`AsRawFd`](#impl-AsRawFd-for-Driver).
impl std::os::fd::AsFd for Driver {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self.poll.registry())
    }
}
