//! [`Registration`]: one socket's entry in the driver, and the operation
//! loop every net type uses.
//!
//! # The operation loop
//!
//! An operation first *tries the syscall* (data already queued never goes
//! through the waker path). Only on `WouldBlock` does it clear the readiness
//! it saw before the syscall (tick-checked, see
//! [`ScheduledIo`](crate::scheduled_io)) and register its waker; if an event
//! arrived meanwhile, it retries at once.
//!
//! Before all that, an operation asks the task's [cooperative
//! budget](tempo_park::coop) for a unit; when the budget is spent it wakes
//! the task and returns `Pending` *without the syscall*, so a flooded socket
//! cannot keep one task running forever and an exhausted budget adds no
//! syscall. A completed operation keeps its unit spent; one that ends up
//! `Pending` gives it back. `try_io` never consults the budget.

use std::io;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

use mio::event::Source;
use mio::{Interest, Token};
use tempo_park::coop;

use crate::ready::Direction;
use crate::scheduled_io::ScheduledIo;
use crate::Handle;

/// After this many "WouldBlock, yet ready again" rounds in one poll, an
/// operation yields (wakes itself and returns `Pending`) rather than spin.
const MAX_RETRIES: usize = 32;

/// A socket's registration with a driver. Dropping it removes the slot and
/// wakes any waiter, which then gets an error.
#[derive(Debug)]
pub(crate) struct Registration {
    handle: Handle,
    token: Token,
    io: Arc<ScheduledIo>,
}

impl Registration {
    /// Registers `source` for read and write readiness (edge-triggered).
    pub(crate) fn new(source: &mut impl Source, handle: Handle) -> io::Result<Registration> {
        let (token, io) = handle.shared.registrations.lock().insert()?;
        let registration = Registration { handle, token, io };
        registration.handle.shared.registry.register(
            source,
            token,
            Interest::READABLE | Interest::WRITABLE,
        )?;
        // On error, `registration` is dropped here and frees the slot.
        Ok(registration)
    }

    /// Removes `source` from the poller (for `into_std`).
    pub(crate) fn deregister(&self, source: &mut impl Source) -> io::Result<()> {
        self.handle.shared.registry.deregister(source)
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Waits for readiness in `direction` without doing I/O.
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<()>> {
        let progress = ready!(coop::poll_proceed(cx));
        let result = ready!(self.io.poll_ready(cx, direction));
        progress.made_progress();
        Poll::Ready(result.map(|_| ()))
    }

    /// Runs `op` until it succeeds, fails, or returns `WouldBlock` with no
    /// readiness left (then `Pending`, waker stored).
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        // Before the syscall: an exhausted budget costs none.
        let progress = ready!(coop::poll_proceed(cx));
        for _ in 0..MAX_RETRIES {
            let seen = self.io.snapshot();
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.io.clear_readiness(seen, direction);
                    match self.io.poll_ready(cx, direction) {
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

    /// [`poll_io`](Self::poll_io) for datagram receives, with the deferred
    /// drain retry of [`Driver::set_defer_drain_retry`](crate::Driver::set_defer_drain_retry).
    ///
    /// Per registration and driver tick (one `park*` call):
    ///
    /// 1. The first receive of a tick makes the syscall.
    /// 2. After a successful receive, the next one in the same tick does not:
    ///    it is *deferred* to the next tick (the retry that would usually
    ///    find the socket empty is skipped; at the next tick it usually
    ///    finds the next datagram instead).
    /// 3. If that deferred retry finds data, the socket may hold a backlog:
    ///    nothing cheaper than a syscall tells one fresh datagram from
    ///    several queued ones. So for the rest of that tick receives drain
    ///    until `WouldBlock`. Every datagram queued when a tick starts is
    ///    therefore read by the next tick at the latest, whatever the rate.
    ///
    /// Cost at one datagram per socket per tick: three `recvfrom` per two
    /// datagrams (tokio's drain loop: four), plus one `epoll_wait` per tick.
    /// The cooperative budget is spent inside `poll_io`, so only a receive
    /// that reaches the syscall spends a unit; a deferred one does not.
    pub(crate) fn poll_recv_io<R>(
        &self,
        cx: &mut Context<'_>,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let shared = &self.handle.shared;
        if !shared.defer_drain_retry.load(Relaxed) {
            return self.poll_io(cx, Direction::Read, op);
        }
        let tick = shared.tick.load(SeqCst);
        let last_recv = self.io.last_recv_tick.load(Relaxed);
        let draining = self.io.drain_tick.load(Relaxed) == tick;
        if last_recv == tick && !draining {
            // Already received this tick: retry at the next one.
            self.io.store_waker(cx, Direction::Read);
            if self.io.deferred_tick.swap(tick, Relaxed) != tick {
                shared.deferred.lock().push(self.token);
            }
            if shared.tick.load(SeqCst) != tick {
                // The driver took the deferred list before our push: it
                // will not wake us, so retry now.
                cx.waker().wake_by_ref();
            }
            return Poll::Pending;
        }
        let result = self.poll_io(cx, Direction::Read, op);
        if let Poll::Ready(Ok(_)) = result {
            let deferred_retry =
                last_recv != tick && self.io.deferred_tick.load(Relaxed) == tick.wrapping_sub(1);
            if deferred_retry {
                self.io.drain_tick.store(tick, Relaxed);
            }
            self.io.last_recv_tick.store(tick, Relaxed);
        }
        result
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
        if let Err(e) = &result {
            if e.kind() == io::ErrorKind::WouldBlock {
                self.io.clear_readiness(seen, direction);
            }
        }
        result
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let removed = self.handle.shared.registrations.lock().remove(self.token);
        debug_assert!(
            removed.is_none() || removed.as_ref().is_some_and(|r| Arc::ptr_eq(r, &self.io))
        );
        self.io.shutdown();
        // Waiters (e.g. another task holding a clone of an owned half's
        // stream) wake up to the shutdown error instead of hanging.
        self.io
            .take_all_wakers()
            .into_iter()
            .flatten()
            .for_each(Waker::wake);
    }
}
