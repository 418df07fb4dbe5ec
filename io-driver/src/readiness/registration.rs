//! [`Registration`]: one socket's entry in the driver, and the operation
//! loop every net type uses.
//!
//! An operation first *tries the syscall* (data already queued never goes
//! through the waker path). Only on `WouldBlock` does it clear the
//! readiness it saw before the syscall (checked against the event
//! sequence number, see `scheduled_io`) and store its waker; if an event
//! arrived meanwhile, it retries at once. The `poll_*` form keeps its
//! waker in the direction's single slot, the async form in a waiter entry
//! of its own, so any number of async operations may wait on one socket.
//!
//! Budget: an operation asks the task's [cooperative budget](tempo_park::coop)
//! for a unit before the syscall; with the budget spent it wakes the task
//! and returns `Pending` without the syscall. A completed operation keeps
//! its unit spent, a `Pending` one gives it back; `try_*` never asks. The
//! readiness waits do no I/O and ask for the unit only once ready.
//!
//! Receives ([`Registration::receive`] and its forms) also learn when a
//! socket is drained: the operation says so, and the loop records it in
//! the socket's [`DrainedMark`] and clears the readiness it saw. A poll
//! whose readiness the mark covers waits at once, before the budget: it
//! stores its waker, re-checks the readiness, and returns `Pending` if no
//! event came, having spent nothing and run no operation.

use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use mio::event::Source;
use mio::Token;
use tempo_park::coop;

use crate::ready::{Direction, Interest, Ready};

use super::sync::{AtomicUsize, Ordering};

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
        ready!(self.io.poll_ready(cx, direction))?;
        spend_unit(cx)
    }

    /// Waits for readiness in `direction` without doing I/O (async form:
    /// the future has its own waiter entry).
    pub(crate) async fn ready(&self, direction: Direction) -> io::Result<()> {
        let mut waiter = Waiter::new(&self.io, direction);
        poll_fn(|cx| {
            ready!(waiter.poll_ready(cx))?;
            spend_unit(cx)
        })
        .await
    }

    /// Waits until the socket is ready for any part of `interest`, without
    /// doing I/O, and returns the readiness states `interest` covers (async
    /// form: one waiter entry per direction of interest, so a socket ready
    /// in either direction completes it).
    pub(crate) async fn ready_for(&self, interest: Interest) -> io::Result<Ready> {
        let mut read = interest
            .is_readable()
            .then(|| Waiter::new(&self.io, Direction::Read));
        let mut write = interest
            .is_writable()
            .then(|| Waiter::new(&self.io, Direction::Write));
        poll_fn(|cx| {
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
        self.poll_op(cx, &mut Wait::Poll(direction), None, None, &mut Plain(op))
    }

    /// [`poll_io`](Self::poll_io) as a future with its own waiter entry:
    /// the async methods, any number of which may wait at once.
    pub(crate) async fn io<R>(
        &self,
        direction: Direction,
        op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        let mut wait = Wait::Waiter(Waiter::new(&self.io, direction));
        let mut op = Plain(op);
        poll_fn(|cx| self.poll_op(cx, &mut wait, None, None, &mut op)).await
    }

    /// A receive: [`poll_io`](Self::poll_io) for an `op` that may mark the
    /// socket drained in `mark`, and that waits at once while `mark` holds
    /// for the current readiness (see the module docs).
    pub(crate) fn poll_receive<O: IoOp>(
        &self,
        cx: &mut Context<'_>,
        mark: &DrainedMark,
        op: &mut O,
    ) -> Poll<io::Result<O::Output>> {
        self.poll_receive_as(cx, &mut Wait::Poll(Direction::Read), mark, op)
    }

    /// [`poll_receive`](Self::poll_receive) as a future with its own
    /// waiter entry (see [`Receive`]).
    #[inline]
    pub(crate) fn receive<'a, O: IoOp>(&'a self, mark: &'a DrainedMark, op: O) -> Receive<'a, O> {
        Receive {
            registration: self,
            wait: Wait::Waiter(Waiter::new(&self.io, Direction::Read)),
            mark,
            op,
        }
    }

    /// A `try_*` receive: one attempt, never skipped; marks the socket
    /// drained if `op` says so, clears the readiness it saw on `WouldBlock`.
    pub(crate) fn try_receive<O: IoOp>(
        &self,
        mark: &DrainedMark,
        mut op: O,
    ) -> io::Result<O::Output> {
        let seen = self.io.snapshot();
        match op.attempt(seen) {
            Ok((value, drained)) => {
                if drained {
                    mark.set(seen);
                    self.io.clear_readiness(seen, Direction::Read);
                }
                Ok(value)
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::WouldBlock {
                    self.io.clear_readiness(seen, Direction::Read);
                }
                Err(e)
            }
        }
    }

    /// The receive loop: `Pending` at once when `mark` holds and no event
    /// came, else the operation loop.
    fn poll_receive_as<O: IoOp>(
        &self,
        cx: &mut Context<'_>,
        wait: &mut Wait<'_>,
        mark: &DrainedMark,
        op: &mut O,
    ) -> Poll<io::Result<O::Output>> {
        let seen = self.io.snapshot();
        if !mark.skips(seen) {
            return self.poll_op(cx, wait, Some(mark), Some(seen), op);
        }
        if wait.poll_ready(&self.io, cx).is_pending() {
            return Poll::Pending;
        }
        self.poll_op(cx, wait, Some(mark), None, op)
    }

    /// The operation loop. `op` gets the readiness seen before it (the
    /// first attempt `first_seen`, if the caller took it, else a snapshot
    /// of its own); with a `mark`, an attempt the mark skips is a
    /// `WouldBlock` without a syscall, and one that reports the socket
    /// drained marks it and clears the readiness it saw.
    #[inline]
    fn poll_op<O: IoOp>(
        &self,
        cx: &mut Context<'_>,
        wait: &mut Wait<'_>,
        mark: Option<&DrainedMark>,
        mut first_seen: Option<ReadyEvent>,
        op: &mut O,
    ) -> Poll<io::Result<O::Output>> {
        let direction = wait.direction();
        // Before the syscall: an exhausted budget costs none.
        let progress = ready!(coop::poll_proceed(cx));
        for _ in 0..MAX_RETRIES {
            let seen = first_seen.take().unwrap_or_else(|| self.io.snapshot());
            match attempt_at(&self.io, seen, mark, op, direction) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match wait.poll_ready(&self.io, cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(e)) => {
                            progress.made_progress();
                            return Poll::Ready(Err(e));
                        }
                        Poll::Ready(Ok(_)) => continue, // a new event: retry
                    }
                }
                Ok(value) => {
                    progress.made_progress();
                    return Poll::Ready(Ok(value));
                }
                Err(e) => {
                    progress.made_progress();
                    return Poll::Ready(Err(e));
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
        let seen = self.io.snapshot();
        let result = op();
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.io.clear_readiness(seen, direction);
        }
        result
    }
}

/// One attempt of `op` from the readiness `seen` before it, under `mark`
/// (a receive's): skipped as `WouldBlock` without a syscall if the mark
/// holds at `seen`; a `WouldBlock` clears the readiness `seen`, and an
/// attempt that leaves the socket drained marks it at `seen` and clears
/// that readiness too.
#[inline]
pub fn attempt_at<O: IoOp>(
    io: &ScheduledIo,
    seen: ReadyEvent,
    mark: Option<&DrainedMark>,
    op: &mut O,
    direction: Direction,
) -> io::Result<O::Output> {
    let attempt = match mark {
        Some(mark) if mark.skips(seen) => Err(io::ErrorKind::WouldBlock.into()),
        _ => op.attempt(seen),
    };
    match attempt {
        Ok((value, drained)) => {
            if let Some(mark) = mark.filter(|_| drained) {
                mark.set(seen);
                io.clear_readiness(seen, direction);
            }
            Ok(value)
        }
        Err(e) => {
            if e.kind() == io::ErrorKind::WouldBlock {
                io.clear_readiness(seen, direction);
            }
            Err(e)
        }
    }
}

/// One attempt of an operation of the loop, from the readiness `seen`
/// before it: its value, and whether it left the socket known drained at
/// `seen` (only a receive with a [`DrainedMark`] says so).
pub trait IoOp {
    /// What a successful attempt returns.
    type Output;
    /// One attempt (one syscall at most).
    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<(Self::Output, bool)>;
}

/// A closure operation (sends, streams, peeks): never drained.
struct Plain<F>(F);

impl<R, F: FnMut() -> io::Result<R>> IoOp for Plain<F> {
    type Output = R;

    #[inline]
    fn attempt(&mut self, _seen: ReadyEvent) -> io::Result<(R, bool)> {
        Ok(((self.0)()?, false))
    }
}

/// The event sequence number at which a receive found its socket
/// drained, as a word that is never 0 (event sequence numbers have fewer
/// bits than `usize`): a receive seeing that number waits for the next
/// event without a syscall. Written without a lock: every value written
/// is the number of a report whose datagrams were taken, so an
/// out-of-date one costs at most a syscall, never a stranded datagram.
#[derive(Debug, Default)]
pub struct DrainedMark(AtomicUsize);

impl DrainedMark {
    #[inline]
    fn word(seen: ReadyEvent) -> usize {
        (seen.event_seq() << 1) | 1
    }

    /// Whether a receive seeing `seen` skips its syscall.
    #[inline]
    pub fn skips(&self, seen: ReadyEvent) -> bool {
        self.0.load(Ordering::Acquire) == DrainedMark::word(seen)
    }

    /// Marks the socket drained at `seen`.
    #[inline]
    pub(crate) fn set(&self, seen: ReadyEvent) {
        self.0.store(DrainedMark::word(seen), Ordering::Release);
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

/// The future of [`Registration::receive`]: the receive loop with its
/// own waiter entry, removed when the future is dropped. A named type
/// rather than an `async fn`, so that it holds only what a poll reads
/// (see `a_receive_future_is_only_what_its_poll_reads` in `tests/udp.rs`).
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Receive<'a, O> {
    registration: &'a Registration,
    wait: Wait<'a>,
    mark: &'a DrainedMark,
    op: O,
}

// `op` is only called through `&mut`, never pinned.
impl<O> Unpin for Receive<'_, O> {}

impl<O: IoOp> std::future::Future for Receive<'_, O> {
    type Output = io::Result<O::Output>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.registration
            .poll_receive_as(cx, &mut this.wait, this.mark, &mut this.op)
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
    #[inline]
    fn direction(&self) -> Direction {
        match self {
            Wait::Poll(direction) => *direction,
            Wait::Waiter(waiter) => waiter.direction(),
        }
    }

    /// [`ScheduledIo::poll_ready`] through this waiting place.
    #[inline]
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::ready::Ready;

    /// The mark skips only the readiness it was set at: a new event, or
    /// a mark never set, makes the next receive try its syscall.
    #[test]
    fn the_mark_skips_only_the_readiness_it_was_set_at() {
        let io = ScheduledIo::new();
        let mark = DrainedMark::default();
        io.set_readiness(Ready::READABLE);
        let seen = io.snapshot();
        assert!(!mark.skips(seen), "nothing known yet");
        mark.set(seen);
        assert!(mark.skips(seen), "drained at this event, none since");
        io.set_readiness(Ready::READABLE);
        assert!(!mark.skips(io.snapshot()), "a new event: the syscall");
    }
}
