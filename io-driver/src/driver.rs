//! [`Driver`]: the reactor. It owns the `mio::Poll` and its `Events` buffer,
//! and implements [`tempo_park::Park`]: each `park*` waits in `epoll_wait`,
//! then dispatches the events to the registrations, every event that was
//! pending when it started.
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
//! # Every pending event in one park
//!
//! The `Events` buffer has a fixed capacity (1,024 by default). When a poll
//! fills it, more events may be pending, and a throttled tick polls the
//! driver once per period: leaving them to the next park would make every
//! socket beyond the first 1,024 wait one more tick (at 4,000 ready
//! sockets, two to three ticks). So a `park*` whose poll came back full
//! dispatches it, polls again with a zero timeout (a blocking park blocks
//! in its first poll only) and dispatches again, until a poll returns
//! fewer events than the capacity, or after `ceil((registered + 1) /
//! capacity)` polls, enough for every registration to be reported once.
//! epoll hands out the events a full buffer left behind before any that
//! arrived since, so that bound takes every event pending at the start
//! however busy the sockets are, and a storm of new readiness cannot keep
//! one park going. The wakers run once, after the last poll.
//!
//! Cost: the extra `epoll_wait` calls happen only when a buffer came back
//! full. With fewer ready sockets than the capacity (one event per socket
//! per tick, fewer than 1,024 sockets), a park is one `epoll_wait`, as it
//! was; with `n` ready sockets it is `ceil((n + 1) / capacity)`, against
//! which the alternative was that many parks (ticks) instead. Both
//! schedulers get it: the basic one parks after every `event_interval`
//! task polls, and waking all ready tasks at once only queues them in
//! arrival order (tokio dispatches one buffer per park; the difference is
//! fewer `epoll_wait` calls, not a different order of service).
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
//! See [`Driver::set_recv_ahead`] and `net/recv_ahead.rs`: the rule
//! that makes a throttled datagram receiver pay one receive syscall per
//! datagram.
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
use crate::registration_set::{RegistrationSet, WAKER_TOKEN};
use crate::socket_settings::SocketSettings;
use crate::{wake_batch, Handle};

/// Default size of the `Events` buffer: the events one `epoll_wait`
/// returns at most. A park that fills it polls again (see the module docs).
const DEFAULT_EVENTS: usize = 1024;

/// State shared by an I/O driver, its handles and its sockets'
/// registrations.
#[derive(Debug)]
pub(crate) struct IoDriverShared {
    pub(crate) registry: mio::Registry,
    pub(crate) waker: Arc<mio::Waker>,
    pub(crate) registrations: parking_lot::Mutex<RegistrationSet>,
    pub(crate) is_shutdown: AtomicBool,
}

/// The I/O reactor: a `mio::Poll`, its events buffer and the registrations
/// of every socket created with its [`Handle`].
///
/// Each `park*` wakes every task waiting on a socket that became ready
/// (any number per socket and direction): every socket whose readiness was
/// pending when the park started, however many there are (a full events
/// buffer is followed by further zero-timeout polls, see the module docs).
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
    /// What its sockets share besides the reactor (receive-ahead switch,
    /// resolver): handed to every [`Handle`], never read by the dispatch.
    settings: Arc<SocketSettings>,
    /// Wakers taken during dispatch, woken after the lock is released.
    wakers: Vec<Waker>,
    /// Number of `park*` calls so far.
    dispatch_round: u64,
    /// Readiness events dispatched.
    io_events: u64,
}

/// The [`Unpark`] handle of a [`Driver`]: writes its eventfd
/// (`mio::Waker`). Cheap to clone, and usable from any thread.
///
/// ```
/// use tempo_park::{Park, Unpark};
///
/// let mut driver = tempo_io::Driver::new()?;
/// let unpark = driver.unpark();
/// std::thread::spawn(move || unpark.unpark()).join().unwrap();
/// driver.park()?; // returns: the wake-up was not lost
/// # Ok::<(), std::io::Error>(())
/// ```
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
    /// Creates a driver whose `Events` buffer holds 1,024 events.
    pub fn new() -> io::Result<Driver> {
        Driver::with_capacity(DEFAULT_EVENTS)
    }

    /// Creates a driver whose `Events` buffer holds `events` events (at
    /// least 1): one poll takes that many at most. A park whose poll fills
    /// the buffer polls again without blocking, so every socket ready when
    /// the park started is still dispatched by that park; a small buffer
    /// costs more `epoll_wait` calls, not more parks.
    ///
    /// ```
    /// use tempo_park::Park;
    ///
    /// let mut driver = tempo_io::Driver::with_capacity(64)?;
    /// driver.park_timeout(std::time::Duration::ZERO)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn with_capacity(events: usize) -> io::Result<Driver> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER_TOKEN)?);
        let shared = Arc::new(IoDriverShared {
            registry: poll.registry().try_clone()?,
            waker,
            registrations: parking_lot::Mutex::new(RegistrationSet::default()),
            is_shutdown: AtomicBool::new(false),
        });
        Ok(Driver {
            poll,
            events: Events::with_capacity(events.max(1)),
            shared,
            settings: Arc::default(),
            wakers: Vec::new(),
            dispatch_round: 0,
            io_events: 0,
        })
    }

    /// A handle that registers sockets with this driver, from any thread.
    pub fn handle(&self) -> Handle {
        Handle::from_parts(self.shared.clone(), self.settings.clone())
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
    ///
    /// ```
    /// let mut driver = tempo_io::Driver::new()?;
    /// driver.set_recv_ahead(true); // a host loop that throttles itself
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_recv_ahead(&mut self, enabled: bool) {
        self.settings.recv_ahead.set_enabled(enabled);
    }

    /// Number of `park*` calls so far (dispatch rounds).
    pub fn dispatch_round(&self) -> u64 {
        self.dispatch_round
    }

    /// The events one poll takes at most (see
    /// [`with_capacity`](Self::with_capacity)).
    ///
    /// ```
    /// assert_eq!(tempo_io::Driver::new()?.events_capacity(), 1024);
    /// assert_eq!(tempo_io::Driver::with_capacity(64)?.events_capacity(), 64);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn events_capacity(&self) -> usize {
        self.events.capacity()
    }

    /// Number of sockets currently registered.
    pub fn registered(&self) -> usize {
        self.shared.registrations.lock().len()
    }

    /// One dispatch round (one `park*` call): wait for events for at most
    /// `timeout`, dispatch them, then, while the buffer came back full, poll again with a zero timeout and
    /// dispatch again (at most [`drain_polls`] polls in all). The wakers run
    /// once, after the last poll.
    fn turn(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.dispatch_round = self.dispatch_round.wrapping_add(1);

        let capacity = self.events.capacity();
        let mut outcome = self.poll_events(timeout);
        let (mut returned, registered) = self.dispatch_events();
        let max_polls = drain_polls(registered, capacity);
        let mut polls = 1;
        while outcome.is_ok() && returned >= capacity && polls < max_polls {
            outcome = self.poll_events(Some(Duration::ZERO));
            returned = self.dispatch_events().0;
            polls += 1;
        }
        // What was dispatched is woken even if a poll failed.
        wake_batch::reraise(wake_batch::wake_all(self.wakers.drain(..)));
        outcome
    }

    /// One `epoll_wait` (or the platform's equivalent) into `self.events`.
    /// On an error the buffer is left empty; a signal is a spurious
    /// return, which the contract allows, not an error.
    fn poll_events(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.events.clear();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(())
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Dispatches the events of the last poll into `self.wakers`. Returns
    /// how many events the poll returned (all tokens, for the full-buffer
    /// test) and how many sockets are registered.
    fn dispatch_events(&mut self) -> (usize, usize) {
        let registrations = self.shared.registrations.lock();
        let mut returned = 0;
        for event in self.events.iter() {
            returned += 1;
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
        (returned, registrations.len())
    }
}

/// The most polls one `park*` makes: enough to take every event that was
/// pending when it started, and no more.
///
/// Each registration (and the driver's own waker) is reported at most once
/// per poll, and the kernel hands the events a full buffer left behind out
/// first at the next poll, before any readiness that arrived since (epoll:
/// the unreported part of its ready list goes back to the list's head). So
/// `registered + 1` pending events take `ceil((registered + 1) / capacity)`
/// polls, however busy the sockets are: a storm of new readiness can make
/// the last of these polls full again, but not one more. Below `capacity`
/// registrations this is 1: one `epoll_wait` per park, as before.
fn drain_polls(registered: usize, capacity: usize) -> usize {
    (registered + 1).div_ceil(capacity.max(1)).max(1)
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
