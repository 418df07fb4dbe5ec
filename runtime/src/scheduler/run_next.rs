//! The run-next slot: a task woken by the running task runs right after it.
//!
//! # Why
//!
//! A task that wakes another one on the same thread usually just handed it
//! data: a source element pushed a buffer into a channel, a sender a
//! message. Queued at the back, the woken task runs after every other task
//! ready in that batch; in the media pipeline (5,000 sources, each with a
//! sink on the same context) that is after every other source of the tick,
//! by which time the channel, the sink's state and the buffer have left
//! the cache again: the sink's bookkeeping cost 4% of the samples against
//! 0.5% in a plain receiver, and 2-4 ms of latency. Run next, it finds them
//! hot.
//!
//! # The rule
//!
//! While [`run_ready`](super::core::SchedulerCore::run_ready) polls a task,
//! a wake of *another* task of the same scheduler, made on the scheduler's
//! own thread, puts the woken task in a one-entry slot instead of at the
//! back of the run queue; the batch polls the slot before taking the next
//! task from the queue. A task already in the slot (the running task woke
//! two) is pushed to the back of the queue: the last one woken runs next,
//! as in tokio's multi-thread scheduler, whose per-worker "LIFO slot" this
//! follows. Everything else queues as before:
//!
//! * a task that woke *itself* ([`yield_now`](crate::task::yield_now), a
//!   wake during its own poll): to the back, so yielding stays fair;
//! * wakes from other threads: the inject queue, unchanged;
//! * wakes outside a task poll (the `block_on` future, the driver's timers
//!   and I/O, deferred tasks, destructors at shutdown) and spawns: the
//!   back of the queue.
//!
//! # Fairness
//!
//! Two tasks that wake each other (a channel ping-pong) would keep the
//! slot forever and starve the queue. So a *chain* of slot polls (slot
//! polls since the last task taken from the queue) is capped at
//! [`MAX_RUN_NEXT_POLLS`]: once it is reached, the slot is closed until the
//! next task from the queue is polled, and wakes go to the back. A queued
//! task therefore waits for at most `MAX_RUN_NEXT_POLLS` extra polls per
//! task ahead of it. Slot polls are polls like any other: they count
//! toward `run_ready`'s budget (the event interval, the throttled tick's
//! budget), each has a fresh cooperative budget, and when the budget is
//! spent a task left in the slot goes to the back of the queue. The slot
//! is empty whenever `run_ready` is not running, so a throttled tick's
//! "run every ready task, then sleep" and the park handshake see every
//! ready task in the queue; [`shutdown`](super::core::SchedulerCore::shutdown)
//! still drains it, in case a poll unwound through `run_ready`.
//!
//! Both schedulers have the slot (it lives in the core both loops share).
//! tokio's current-thread scheduler has none: there a woken task always
//! goes to the back.

use std::cell::Cell;

/// Consecutive slot polls before the slot closes until the next task
/// from the queue (tokio's multi-thread scheduler uses the same number).
pub(crate) const MAX_RUN_NEXT_POLLS: u32 = 3;

/// The slot, and whether a wake may use it now (see the module docs).
pub(super) struct RunNext<T> {
    slot: Cell<Option<T>>,
    /// Slot polls since the last task taken from the queue.
    chain: Cell<u32>,
    /// A task is being polled by `run_ready` and the chain is below the
    /// cap: a local wake of another task goes to the slot.
    open: Cell<bool>,
}

/// Where a woken task goes.
pub(super) enum Offer<T> {
    /// Into the slot, empty before.
    Placed,
    /// Into the slot; the task it held goes to the back of the queue.
    Displaced(T),
    /// The slot is closed: the task goes to the back of the queue.
    Refused(T),
}

impl<T> RunNext<T> {
    pub(super) fn new() -> RunNext<T> {
        RunNext {
            slot: Cell::new(None),
            chain: Cell::new(0),
            open: Cell::new(false),
        }
    }

    /// Offers a task another task woke on the owning thread.
    pub(super) fn offer(&self, task: T) -> Offer<T> {
        if !self.open.get() {
            return Offer::Refused(task);
        }
        match self.slot.replace(Some(task)) {
            None => Offer::Placed,
            Some(previous) => Offer::Displaced(previous),
        }
    }

    /// The slot's task, if any, to poll next: counted in the chain, and
    /// the slot stays open for its wakes only while the chain is below
    /// the cap.
    pub(super) fn take(&self) -> Option<T> {
        let task = self.slot.take()?;
        let chain = self.chain.get() + 1;
        self.chain.set(chain);
        self.open.set(chain < MAX_RUN_NEXT_POLLS);
        Some(task)
    }

    /// A task from the queue is about to be polled: a new chain starts.
    pub(super) fn start_chain(&self) {
        self.chain.set(0);
        self.open.set(true);
    }

    /// The batch ended: closes the slot and returns the task left in it
    /// (the budget ran out before it was polled), for the back of the
    /// queue.
    pub(super) fn close(&self) -> Option<T> {
        self.open.set(false);
        self.chain.set(0);
        self.slot.take()
    }

    /// `true` if a task waits in the slot (only within a batch).
    pub(super) fn is_occupied(&self) -> bool {
        // A `Cell<Option<T>>` cannot be inspected in place: take and put
        // back (no drop, no reentrancy).
        let task = self.slot.take();
        let occupied = task.is_some();
        self.slot.set(task);
        occupied
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn closed_outside_a_batch() {
        let slot = RunNext::new();
        assert!(matches!(slot.offer(1), Offer::Refused(1)));
        assert!(slot.take().is_none());
    }

    #[test]
    fn last_woken_runs_next() {
        let slot = RunNext::new();
        slot.start_chain();
        assert!(matches!(slot.offer(1), Offer::Placed));
        assert!(matches!(slot.offer(2), Offer::Displaced(1)));
        assert_eq!(slot.take(), Some(2));
        assert!(slot.close().is_none());
    }

    #[test]
    fn a_chain_closes_at_the_cap_until_a_queued_task() {
        let slot = RunNext::new();
        slot.start_chain();
        for _ in 0..MAX_RUN_NEXT_POLLS {
            assert!(matches!(slot.offer(7), Offer::Placed));
            assert_eq!(slot.take(), Some(7));
        }
        assert!(matches!(slot.offer(8), Offer::Refused(8)));
        slot.start_chain();
        assert!(matches!(slot.offer(9), Offer::Placed));
        assert!(slot.is_occupied());
        assert_eq!(slot.close(), Some(9));
        assert!(!slot.is_occupied());
    }
}
