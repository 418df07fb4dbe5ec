//! [`Registration`]: one socket's entry in the driver, and the operation
//! loop every net type uses.
//!
//! # The operation loop
//!
//! An operation first *tries the syscall* (data already queued never goes
//! through the waker path). Only on `WouldBlock` does it clear the readiness
//! it saw before the syscall (checked against the registration's event
//! sequence number, see
//! [`ScheduledIo`](super::scheduled_io)) and register its waker; if an event
//! arrived meanwhile, it retries at once.
//!
//! Each operation comes in two forms over one loop: the `poll_*` form
//! (`poll_io`) leaves its waker in the direction's single
//! `poll_*` slot, the async form (`io`, `ready`) in a waiter
//! entry of its own that lives as long as its future, so any number of
//! async operations may wait on one socket and every one is woken.
//!
//! Before all that, an operation asks the task's [cooperative
//! budget](tempo_park::coop) for a unit; when the budget is spent it wakes
//! the task and returns `Pending` *without the syscall*, so a flooded socket
//! cannot keep one task running forever and an exhausted budget adds no
//! syscall. A completed operation keeps its unit spent; one that ends up
//! `Pending` gives it back. `try_io` never consults the budget.
//!
//! The readiness waits (`poll_ready`, `ready`, `ready_for`) do no I/O, so
//! they ask for the unit only once they find the socket ready, whatever
//! made it ready: an event from the reactor, or readiness the socket has
//! of its own, which its caller reports with the `*_or` forms
//! (`ready_now`: a datagram socket's held datagram, see
//! `net/datagram.rs`). A wait that is not ready stores its waker and
//! returns `Pending` having touched no budget (the unit it would take
//! comes back anyway); a ready one with the budget spent wakes the task
//! and returns `Pending` (its readiness stays, for the next poll). So no
//! net type's method can return ready without spending a unit (a loop of
//! `readable()` on a socket with a held datagram yields like any other).
//!
//! An operation that learns more than `WouldBlock` tells (a datagram
//! receive that found the socket drained) takes the readiness it started
//! from ([`poll_io_seen`](Registration::poll_io_seen) and its forms) and
//! [clears](Registration::clear_readiness) it itself.
//!
//! Such an operation can also tell, from the readiness alone, that it
//! would return `WouldBlock` without a syscall (a datagram socket found
//! drained at the current event, see `net/recv_ahead.rs`): its `skips`
//! test. A poll for which `skips` holds waits at once, before the budget:
//! it stores its waker, re-checks the readiness, and returns `Pending` if
//! no event came, having spent nothing, run no operation and made no error
//! value (under receive-ahead, the second receive of every datagram). If
//! the re-check finds the socket ready, or shut down, the poll goes on
//! through the loop above as if `skips` had not held.

use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use mio::event::Source;
use mio::Token;
use tempo_park::coop;

use crate::ready::{Direction, Interest, Ready};

use super::reactor::ReactorShared;
use super::scheduled_io::{LevelInterest, ReadyEvent, ScheduledIo, Waiter};
use super::wake_batch;

/// After this many "WouldBlock, yet ready again" rounds in one poll, an
/// operation yields (wakes itself and returns `Pending`) rather than spin.
const MAX_RETRIES: usize = 32;

/// A socket's registration with a driver. Dropping it removes the slot and
/// wakes any waiter, which then gets an error (every waiter, even if one
/// waker panics; the first panic is re-raised afterwards).
#[derive(Debug)]
pub(crate) struct Registration {
    reactor: Arc<ReactorShared>,
    token: Token,
    pub(crate) io: Arc<ScheduledIo>,
}

impl Registration {
    /// Registers `source` for read and write readiness (edge-triggered).
    pub(crate) fn new(
        source: &mut impl Source,
        reactor: Arc<ReactorShared>,
    ) -> io::Result<Registration> {
        let (token, io) = reactor.registrations.lock().insert()?;
        let registration = Registration { reactor, token, io };
        registration.reactor.registry.register(
            source,
            token,
            mio::Interest::READABLE | mio::Interest::WRITABLE,
        )?;
        // On error, `registration` is dropped here and frees the slot.
        Ok(registration)
    }

    /// Makes the registration level-triggered for reading (see
    /// `scheduled_io`'s "Level-triggered registrations"): `interest`
    /// gets the poller's fd and the registration's token and returns how
    /// to change the registration's interest.
    pub(crate) fn make_level_triggered(
        &self,
        interest: impl FnOnce(std::os::fd::RawFd, usize) -> Box<dyn LevelInterest>,
    ) -> io::Result<()> {
        let epoll = std::os::fd::AsRawFd::as_raw_fd(&self.reactor.registry);
        self.io.make_level_triggered(interest(epoll, self.token.0))
    }

    /// Makes a level-triggered registration edge-triggered again, read
    /// and write, for good (see `ScheduledIo::make_edge_triggered`).
    pub(crate) fn make_edge_triggered(&self) -> io::Result<()> {
        self.io.make_edge_triggered()
    }

    /// Removes `source` from the poller (for `into_std` and drop). A
    /// level-triggered interest is forgotten first, so that no interest
    /// change reaches the fd once it left the poller.
    pub(crate) fn deregister(&self, source: &mut impl Source) -> io::Result<()> {
        self.io.end_level();
        self.reactor.registry.deregister(source)
    }

    /// The reactor it is registered with.
    pub(crate) fn reactor(&self) -> &Arc<ReactorShared> {
        &self.reactor
    }

    /// Polls for readiness in `direction` without doing I/O (`poll_*`
    /// form: the waker goes to the direction's one `poll_*` slot).
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<()>> {
        self.poll_ready_or(cx, direction, || false)
    }

    /// [`poll_ready`](Self::poll_ready), ready without an event too when
    /// `ready_now` says so (the budget is asked once ready: see the
    /// module docs).
    pub(crate) fn poll_ready_or(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        ready_now: impl Fn() -> bool,
    ) -> Poll<io::Result<()>> {
        if !ready_now() {
            ready!(self.io.poll_ready(cx, direction))?;
        }
        spend_unit(cx)
    }

    /// Waits for readiness in `direction` without doing I/O (async form:
    /// the future has its own waiter entry).
    pub(crate) async fn ready(&self, direction: Direction) -> io::Result<()> {
        self.ready_or(direction, || false).await
    }

    /// [`ready`](Self::ready), ready without an event too when `ready_now`
    /// says so (checked on every poll, after the budget).
    pub(crate) async fn ready_or(
        &self,
        direction: Direction,
        ready_now: impl Fn() -> bool,
    ) -> io::Result<()> {
        let mut waiter = Waiter::new(&self.io, direction);
        poll_fn(|cx| {
            if !ready_now() {
                ready!(waiter.poll_ready(cx))?;
            }
            spend_unit(cx)
        })
        .await
    }

    /// Waits until the socket is ready for any part of `interest`, without
    /// doing I/O, and returns the readiness states `interest` covers (async
    /// form: one waiter entry per direction of interest, so a socket ready
    /// in either direction completes it).
    pub(crate) async fn ready_for(&self, interest: Interest) -> io::Result<Ready> {
        self.ready_for_or(interest, || false).await
    }

    /// [`ready_for`](Self::ready_for), readable without an event too when
    /// `readable_now` says so.
    pub(crate) async fn ready_for_or(
        &self,
        interest: Interest,
        readable_now: impl Fn() -> bool,
    ) -> io::Result<Ready> {
        let mut read = interest
            .is_readable()
            .then(|| Waiter::new(&self.io, Direction::Read));
        let mut write = interest
            .is_writable()
            .then(|| Waiter::new(&self.io, Direction::Write));
        poll_fn(|cx| {
            if interest.is_readable() && readable_now() {
                ready!(spend_unit(cx))?;
                let ready = self.io.snapshot().ready() | Ready::READABLE;
                return Poll::Ready(Ok(ready & interest.mask()));
            }
            for waiter in [read.as_mut(), write.as_mut()].into_iter().flatten() {
                if let Poll::Ready(result) = waiter.poll_ready(cx) {
                    let event = result?;
                    ready!(spend_unit(cx))?;
                    return Poll::Ready(Ok(event.ready() & interest.mask()));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Runs `op` until it succeeds, fails, or returns `WouldBlock` with no
    /// readiness left (then `Pending`, waker stored in the `poll_*` slot of
    /// `direction`: the last `poll_*` caller is the one woken).
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io_as(cx, &mut Wait::Poll(direction), op)
    }

    /// [`poll_io`](Self::poll_io) as a future with its own waiter entry:
    /// the async methods, any number of which may wait at once.
    pub(crate) async fn io<R>(
        &self,
        direction: Direction,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        let mut wait = Wait::Waiter(Waiter::new(&self.io, direction));
        poll_fn(|cx| self.poll_io_as(cx, &mut wait, &mut op)).await
    }

    /// The operation loop shared by the `poll_*` and async forms.
    fn poll_io_as<R>(
        &self,
        cx: &mut Context<'_>,
        wait: &mut Wait<'_>,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_op(cx, wait, |_| op())
    }

    /// [`poll_io`](Self::poll_io) whose `op` gets the readiness seen before
    /// it (to [clear](Self::clear_readiness) it when it learns the socket
    /// is drained).
    ///
    /// `skips(seen)`: `op` would return `WouldBlock` without a syscall
    /// from the readiness `seen` (see the module docs).
    pub(crate) fn poll_io_seen<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        skips: impl Fn(ReadyEvent) -> bool,
        op: impl FnMut(ReadyEvent) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_op_skipping(cx, &mut Wait::Poll(direction), skips, op)
    }

    /// [`poll_io_seen`](Self::poll_io_seen) as a future with its own
    /// waiter entry (see [`IoSeen`]).
    pub(crate) fn io_seen<R, S, O>(&self, direction: Direction, skips: S, op: O) -> IoSeen<'_, S, O>
    where
        S: Fn(ReadyEvent) -> bool,
        O: FnMut(ReadyEvent) -> io::Result<R>,
    {
        IoSeen {
            registration: self,
            wait: Wait::Waiter(Waiter::new(&self.io, direction)),
            skips,
            op,
        }
    }

    /// Clears the readiness of `direction` seen in `seen`, unless an event
    /// arrived since: the next readiness wait (and operation) waits for a
    /// new event.
    pub(crate) fn clear_readiness(&self, seen: ReadyEvent, direction: Direction) {
        self.io.clear_readiness(seen, direction);
    }

    /// The operation loop after the wait `skips` announces (see the module
    /// docs): `Pending` at once when `skips` holds and no event came.
    fn poll_op_skipping<R>(
        &self,
        cx: &mut Context<'_>,
        wait: &mut Wait<'_>,
        skips: impl Fn(ReadyEvent) -> bool,
        op: impl FnMut(ReadyEvent) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        if skips(self.io.snapshot()) && wait.poll_ready(&self.io, cx).is_pending() {
            return Poll::Pending;
        }
        self.poll_op(cx, wait, op)
    }

    /// The operation loop. `op` gets the readiness seen before it.
    fn poll_op<R>(
        &self,
        cx: &mut Context<'_>,
        wait: &mut Wait<'_>,
        mut op: impl FnMut(ReadyEvent) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let direction = wait.direction();
        // Before the syscall: an exhausted budget costs none.
        let progress = ready!(coop::poll_proceed(cx));
        for _ in 0..MAX_RETRIES {
            let seen = self.io.snapshot();
            match op(seen) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.io.clear_readiness(seen, direction);
                    match wait.poll_ready(&self.io, cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(e)) => {
                            progress.made_progress();
                            return Poll::Ready(Err(e));
                        }
                        Poll::Ready(Ok(_)) => continue, // a new event: retry
                    }
                }
                result => {
                    progress.made_progress();
                    return Poll::Ready(result);
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// A non-blocking attempt: always makes the syscall; on `WouldBlock`
    /// clears the readiness it saw, so that `readable()`/`writable()` wait
    /// for the next event.
    pub(crate) fn try_io<R>(
        &self,
        direction: Direction,
        op: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        self.try_io_seen(direction, |_| op())
    }

    /// [`try_io`](Self::try_io) whose `op` gets the readiness seen before
    /// it.
    pub(crate) fn try_io_seen<R>(
        &self,
        direction: Direction,
        op: impl FnOnce(ReadyEvent) -> io::Result<R>,
    ) -> io::Result<R> {
        let seen = self.io.snapshot();
        let result = op(seen);
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.io.clear_readiness(seen, direction);
        }
        result
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let removed = self.reactor.registrations.lock().remove(self.token);
        debug_assert!(
            removed.is_none() || removed.as_ref().is_some_and(|r| Arc::ptr_eq(r, &self.io))
        );
        self.io.shutdown();
        // Waiters (e.g. another task holding a clone of an owned half's
        // stream) wake up to the shutdown error instead of hanging. Async
        // waiters borrow the socket, so only `poll_*` wakers (at most one
        // per direction) can be left: this allocates nothing in practice.
        let mut wakers = Vec::new();
        self.io.take_all_wakers(&mut wakers);
        wake_batch::reraise_in_drop(wake_batch::wake_all(wakers));
    }
}

/// The future of [`Registration::io_seen`]: the operation loop with its
/// own waiter entry, removed when the future is dropped.
///
/// A named type rather than an `async fn`: an async receive is polled
/// once per datagram, and a generator keeps its arguments twice (as
/// captures and as the locals the body moved them into), so the three
/// layers of a closure receive (`UdpSocket`, `DatagramIo`, here) took 176
/// bytes, and `recv_from`'s 224, spread over three or four cache lines of
/// the task, each a cold line per datagram at thousands of sockets. This
/// holds what a poll reads: 64 and 80 bytes (guarded by
/// `a_receive_future_is_only_what_its_poll_reads` in `tests/udp.rs`).
#[must_use = "futures do nothing unless polled"]
pub(crate) struct IoSeen<'a, S, O> {
    registration: &'a Registration,
    wait: Wait<'a>,
    skips: S,
    op: O,
}

// `skips` and `op` are only ever called through `&` / `&mut`, never
// pinned: the future may move between polls like any `Unpin` value.
impl<S, O> Unpin for IoSeen<'_, S, O> {}

impl<R, S, O> std::future::Future for IoSeen<'_, S, O>
where
    S: Fn(ReadyEvent) -> bool,
    O: FnMut(ReadyEvent) -> io::Result<R>,
{
    type Output = io::Result<R>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let this = self.get_mut();
        this.registration
            .poll_op_skipping(cx, &mut this.wait, &this.skips, &mut this.op)
    }
}

/// How an operation that must wait leaves its waker.
enum Wait<'a> {
    /// In the `poll_*` slot of the direction (`poll_*` methods).
    Poll(Direction),
    /// In its own waiter entry (async methods).
    Waiter(Waiter<'a>),
}

impl Wait<'_> {
    fn direction(&self) -> Direction {
        match self {
            Wait::Poll(direction) => *direction,
            Wait::Waiter(waiter) => waiter.direction(),
        }
    }

    /// [`ScheduledIo::poll_ready`] through this waiting place.
    fn poll_ready(
        &mut self,
        io: &ScheduledIo,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<ReadyEvent>> {
        match self {
            Wait::Poll(direction) => io.poll_ready(cx, *direction),
            Wait::Waiter(waiter) => waiter.poll_ready(cx),
        }
    }
}

/// A readiness wait found the socket ready: spends one unit of the task's
/// budget, or, with the budget spent, wakes the task and returns `Pending`
/// (the readiness stays for the next poll).
#[inline]
fn spend_unit(cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    ready!(coop::poll_proceed(cx)).made_progress();
    Poll::Ready(Ok(()))
}
