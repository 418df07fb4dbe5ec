//! [`Reactor`]: the mio readiness reactor inside the public
//! [`Driver`](crate::Driver). It owns the `mio::Poll` and its `Events`
//! buffer: each dispatch round (one `park*` of the driver) waits in
//! `epoll_wait`, then dispatches the events to the registrations, every
//! event that was pending when it started.
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
//! ([`Driver::dispatch_round`](crate::Driver::dispatch_round)).
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
//! # What `stats` counts
//!
//! [`DriverStats::io_events`](tempo_park::DriverStats::io_events) grows by one per readiness event dispatched
//! to a live registration; the driver's own unpark wake-ups and stale
//! events count nothing. `timers_fired` stays zero.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use mio::{Events, Poll};
use tempo_park::{DriverStats, Unpark};

use super::registration_set::{RegistrationSet, WAKER_TOKEN};
use super::wake_batch;
use crate::ready::Ready;

/// The reactor's state shared with its handles and its sockets'
/// registrations: nothing of the socket layer (see `socket_settings.rs`).
#[derive(Debug)]
pub(crate) struct ReactorShared {
    pub(crate) registry: mio::Registry,
    pub(crate) waker: Arc<mio::Waker>,
    pub(crate) registrations: parking_lot::Mutex<RegistrationSet>,
    pub(crate) is_shutdown: AtomicBool,
}

/// The reactor: a `mio::Poll`, its events buffer, and the registrations
/// of every socket registered through its [`ReactorShared`]. The public
/// [`Driver`](crate::Driver) wraps it (its docs say what a park does).
#[derive(Debug)]
pub(crate) struct Reactor {
    poll: Poll,
    events: Events,
    shared: Arc<ReactorShared>,
    /// Wakers taken during dispatch, woken after the lock is released.
    wakers: Vec<Waker>,
    /// Number of `park*` calls so far.
    dispatch_round: u64,
    /// Readiness events dispatched.
    io_events: u64,
}

/// The [`Unpark`] handle of a [`Driver`](crate::Driver): writes its eventfd
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

impl Reactor {
    /// A reactor whose `Events` buffer holds `events` events (at least 1).
    pub(crate) fn with_capacity(events: usize) -> io::Result<Reactor> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER_TOKEN)?);
        let shared = Arc::new(ReactorShared {
            registry: poll.registry().try_clone()?,
            waker,
            registrations: parking_lot::Mutex::new(RegistrationSet::default()),
            is_shutdown: AtomicBool::new(false),
        });
        Ok(Reactor {
            poll,
            events: Events::with_capacity(events.max(1)),
            shared,
            wakers: Vec::new(),
            dispatch_round: 0,
            io_events: 0,
        })
    }

    /// A wake-up handle for its dispatch rounds, usable from any thread.
    pub(crate) fn unpark(&self) -> UnparkDriver {
        UnparkDriver {
            waker: self.shared.waker.clone(),
        }
    }

    /// Its counters, in the `Park` contract's form.
    pub(crate) fn stats(&self) -> DriverStats {
        DriverStats {
            io_events: self.io_events,
            timers_fired: 0,
        }
    }

    /// The state its handles and registrations share.
    pub(crate) fn shared(&self) -> Arc<ReactorShared> {
        self.shared.clone()
    }

    /// Number of dispatch rounds so far.
    pub(crate) fn dispatch_round(&self) -> u64 {
        self.dispatch_round
    }

    /// The events one poll takes at most.
    pub(crate) fn events_capacity(&self) -> usize {
        self.events.capacity()
    }

    /// Number of sockets currently registered.
    pub(crate) fn registered(&self) -> usize {
        self.shared.registrations.lock().len()
    }

    /// One dispatch round (one `park*` call): wait for events for at most
    /// `timeout`, dispatch them, then, while the buffer came back full, poll again with a zero timeout and
    /// dispatch again (at most [`drain_polls`] polls in all). The wakers run
    /// once, after the last poll.
    pub(crate) fn turn(&mut self, timeout: Option<Duration>) -> io::Result<()> {
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
            let round = self.dispatch_round;
            if io.dispatch(ready, round, &mut self.wakers) {
                self.io_events += 1;
            }
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

impl Drop for Reactor {
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

/// The poller's fd (the public `Driver`'s, see its `AsRawFd`).
impl std::os::fd::AsRawFd for Reactor {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.poll)
    }
}

impl std::os::fd::AsFd for Reactor {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self.poll.registry())
    }
}
