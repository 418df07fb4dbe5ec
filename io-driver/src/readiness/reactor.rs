//! [`Reactor`]: the mio readiness reactor inside the public
//! [`Driver`](crate::Driver). Each dispatch round (one `park*`) waits in
//! `epoll_wait` and dispatches every event that was pending when it
//! started.
//!
//! Under the registrations lock, each event's token is resolved (stale
//! tokens are dropped), its readiness ORed into the registration, and the
//! wakers it concerns *moved* into a buffer the driver reuses; they run
//! after the lock is released, so a waker that drops a socket cannot
//! deadlock, and a park allocates nothing after warm-up.
//!
//! A poll that fills the `Events` buffer may have left events pending: the
//! park polls again with a zero timeout, at most [`drain_polls`] times, so
//! a throttled tick serves every ready socket, not only the first
//! `capacity`. A panicking waker does not stop the batch: the others are
//! woken, then the first panic is re-raised (see `wake_batch`).
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
        // Room for a waker per socket: a poll that reports every socket at
        // once does not grow the buffer; it grows as sockets are added.
        if self.wakers.capacity() < registrations.len() {
            let more = registrations.len() - self.wakers.len();
            self.wakers.reserve(more);
        }
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
/// Each registration (and the driver's waker) is reported at most once per
/// poll, and epoll hands out the events a full buffer left behind before
/// any that arrived since: `registered + 1` pending events take
/// `ceil((registered + 1) / capacity)` polls, however busy the sockets are.
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
