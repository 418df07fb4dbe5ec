//! Per-registration state shared by the driver and a socket: the readiness
//! word and the two wakers.
//!
//! # The readiness word
//!
//! One `AtomicUsize` holds three fields:
//!
//! ```text
//!  usize::BITS-1            6        5         4 .. 0
//! [ tick (wrapping)       ][ shutdown ][ ready bits ]
//! ```
//!
//! * The driver ORs each event's bits in and increments the tick
//!   ([`ScheduledIo::set_readiness`]).
//! * An operation takes a [`ReadyEvent`] snapshot (bits and tick) *before*
//!   its syscall. If the syscall returns `WouldBlock`, it clears the bits of
//!   its direction with [`ScheduledIo::clear_readiness`], which does nothing
//!   if the tick moved: an event that arrived between the snapshot and the
//!   clear is never erased, so no edge is lost (edge-triggered epoll would
//!   not repeat it). Closed states stay set once seen; they are final.
//!
//! # Wakers
//!
//! A reader waker and a writer waker behind one small mutex
//! (parking_lot's, loom's under `cfg(loom)`): registrations are touched by the
//! driver once per event and by the socket on `Pending` only, so the lock is
//! uncontended in practice, and a mutex keeps the "store waker, then re-check
//! readiness" step obviously correct. The driver *takes* the wakers (no
//! clone, no allocation) and wakes them after releasing its locks.
//!
//! One reader and one writer may wait at a time; a second waiter in the same
//! direction replaces the first (as with tokio's `poll_*` methods).

use std::io;
use std::task::{Context, Poll, Waker};

use crate::ready::{Direction, Ready};
use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering::AcqRel, Ordering::Acquire};

const SHUTDOWN: usize = 1 << 5;
const TICK_SHIFT: u32 = 6;

/// The readiness seen by an operation before its syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyEvent {
    tick: usize,
    ready: Ready,
}

impl ReadyEvent {
    /// Whether the snapshot allows an operation in `direction` to proceed.
    pub fn is_ready(&self, direction: Direction) -> bool {
        !self.ready.intersection(direction.mask()).is_empty()
    }
}

#[derive(Debug, Default)]
struct Waiters {
    reader: Option<Waker>,
    writer: Option<Waker>,
}

/// "No tick yet" for the per-registration tick fields. Not `u64::MAX`: at
/// tick 0, `tick - 1` wraps to `u64::MAX`, and the deferred-retry check
/// compares with it. The driver never reaches this tick.
const NO_TICK: u64 = u64::MAX - 1;

/// Readiness and wakers of one registered source.
#[derive(Debug)]
pub struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
    /// Driver tick of the last successful receive (deferred drain retry).
    pub(crate) last_recv_tick: AtomicU64,
    /// Driver tick at which this registration was put on the deferred list,
    /// so that it is pushed at most once per tick.
    pub(crate) deferred_tick: AtomicU64,
    /// Driver tick in which receives drain until `WouldBlock` instead of
    /// deferring (a deferred retry found data: there may be a backlog).
    pub(crate) drain_tick: AtomicU64,
}

impl Default for ScheduledIo {
    fn default() -> Self {
        ScheduledIo::new()
    }
}

impl ScheduledIo {
    /// A registration with no readiness and no waiters.
    pub fn new() -> ScheduledIo {
        ScheduledIo {
            readiness: AtomicUsize::new(0),
            waiters: Mutex::new(Waiters::default()),
            last_recv_tick: AtomicU64::new(NO_TICK),
            deferred_tick: AtomicU64::new(NO_TICK),
            drain_tick: AtomicU64::new(NO_TICK),
        }
    }

    /// Driver side: records an event's readiness and moves the tick.
    pub fn set_readiness(&self, ready: Ready) {
        let mut current = self.readiness.load(Acquire);
        loop {
            let tick = (current >> TICK_SHIFT).wrapping_add(1);
            let next = (tick << TICK_SHIFT)
                | (current & SHUTDOWN)
                | (current & Ready::ALL.bits())
                | ready.bits();
            match self
                .readiness
                .compare_exchange_weak(current, next, AcqRel, Acquire)
            {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Marks the registration as gone (socket dropped or driver shut down):
    /// every later [`poll_ready`](Self::poll_ready) fails.
    pub(crate) fn shutdown(&self) {
        self.readiness.fetch_or(SHUTDOWN, AcqRel);
    }

    fn is_shutdown(word: usize) -> bool {
        word & SHUTDOWN != 0
    }

    /// The current readiness and tick.
    pub fn snapshot(&self) -> ReadyEvent {
        let word = self.readiness.load(Acquire);
        ReadyEvent {
            tick: word >> TICK_SHIFT,
            ready: Ready::from_bits(word),
        }
    }

    /// Operation side, after `WouldBlock`: clears the clearable bits of
    /// `direction`, unless an event arrived since `seen` was taken.
    pub fn clear_readiness(&self, seen: ReadyEvent, direction: Direction) {
        let clear = direction
            .mask()
            .intersection(Ready::CLEARABLE.union(Ready::ERROR));
        let mut current = self.readiness.load(Acquire);
        loop {
            if current >> TICK_SHIFT != seen.tick {
                return; // a newer event: keep it
            }
            let next = current & !clear.bits();
            if next == current {
                return;
            }
            match self
                .readiness
                .compare_exchange_weak(current, next, AcqRel, Acquire)
            {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Returns the readiness if `direction` may proceed; otherwise stores
    /// the waker and returns `Pending`. Fails once the registration is shut
    /// down.
    pub fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        if let Some(ready) = self.check(direction) {
            return Poll::Ready(ready);
        }
        self.store_waker(cx, direction);
        // Re-check: an event dispatched between the first check and the
        // store found no waker to take.
        match self.check(direction) {
            Some(ready) => Poll::Ready(ready),
            None => Poll::Pending,
        }
    }

    fn check(&self, direction: Direction) -> Option<io::Result<ReadyEvent>> {
        let word = self.readiness.load(Acquire);
        if Self::is_shutdown(word) {
            return Some(Err(shutdown_error()));
        }
        let event = ReadyEvent {
            tick: word >> TICK_SHIFT,
            ready: Ready::from_bits(word),
        };
        event.is_ready(direction).then_some(Ok(event))
    }

    /// Stores the task's waker for `direction` (no clone if it is the same).
    pub(crate) fn store_waker(&self, cx: &mut Context<'_>, direction: Direction) {
        let mut waiters = self.waiters.lock();
        let slot = match direction {
            Direction::Read => &mut waiters.reader,
            Direction::Write => &mut waiters.writer,
        };
        match slot {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => *slot = Some(cx.waker().clone()),
        }
    }

    /// Driver side: moves the wakers that `ready` concerns into `out`.
    pub fn take_wakers(&self, ready: Ready, out: &mut Vec<Waker>) {
        let mut waiters = self.waiters.lock();
        if !ready.intersection(Direction::Read.mask()).is_empty() {
            out.extend(waiters.reader.take());
        }
        if !ready.intersection(Direction::Write.mask()).is_empty() {
            out.extend(waiters.writer.take());
        }
    }

    /// Takes both wakers (for shutdown), without allocating.
    pub(crate) fn take_all_wakers(&self) -> [Option<Waker>; 2] {
        let mut waiters = self.waiters.lock();
        [waiters.reader.take(), waiters.writer.take()]
    }

    /// Takes the reader waker only (deferred drain retry).
    pub(crate) fn take_reader(&self) -> Option<Waker> {
        self.waiters.lock().reader.take()
    }
}

pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other("the Tempo I/O driver this socket was registered with has shut down (or the socket was deregistered)",
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::Wake;

    struct CountWaker(StdAtomicUsize);
    impl Wake for CountWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn event_during_would_block_is_not_cleared() {
        let io = ScheduledIo::new();
        io.set_readiness(Ready::READABLE);
        let seen = io.snapshot();
        assert!(seen.is_ready(Direction::Read));
        // The syscall returned WouldBlock, but an event landed meanwhile.
        io.set_readiness(Ready::READABLE);
        io.clear_readiness(seen, Direction::Read);
        assert!(io.snapshot().is_ready(Direction::Read));
        // Without a new event the clear applies.
        let seen = io.snapshot();
        io.clear_readiness(seen, Direction::Read);
        assert!(!io.snapshot().is_ready(Direction::Read));
    }

    #[test]
    fn clear_keeps_other_direction_and_closed_bits() {
        let io = ScheduledIo::new();
        io.set_readiness(
            Ready::READABLE
                .union(Ready::WRITABLE)
                .union(Ready::WRITE_CLOSED),
        );
        io.clear_readiness(io.snapshot(), Direction::Read);
        io.clear_readiness(io.snapshot(), Direction::Write);
        assert!(!io.snapshot().ready.contains(Ready::READABLE));
        assert!(!io.snapshot().ready.contains(Ready::WRITABLE));
        assert!(io.snapshot().is_ready(Direction::Write)); // write-closed stays
    }

    #[test]
    fn pending_then_event_wakes_reader_only() {
        let io = ScheduledIo::new();
        let count = Arc::new(CountWaker(StdAtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        assert!(io.poll_ready(&mut cx, Direction::Write).is_pending());
        io.set_readiness(Ready::READABLE);
        let mut out = Vec::new();
        io.take_wakers(Ready::READABLE, &mut out);
        assert_eq!(out.len(), 1);
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.0.load(SeqCst), 1);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready());
        // The writer waker is still stored.
        let [reader, writer] = io.take_all_wakers();
        assert!(reader.is_none() && writer.is_some());
    }

    #[test]
    fn shutdown_fails_poll_ready() {
        let io = ScheduledIo::new();
        io.shutdown();
        let waker = Waker::from(Arc::new(CountWaker(StdAtomicUsize::new(0))));
        let mut cx = Context::from_waker(&waker);
        match io.poll_ready(&mut cx, Direction::Read) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down")),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn tick_wraps_without_panicking() {
        let io = ScheduledIo::new();
        io.readiness
            .store(usize::MAX & !SHUTDOWN & !Ready::ALL.bits(), SeqCst);
        io.set_readiness(Ready::READABLE);
        assert_eq!(io.snapshot().tick, 0);
        assert!(io.snapshot().is_ready(Direction::Read));
    }
}
