//! The run-next slot: a task woken by the running task (on its thread,
//! during `run_ready`) is polled right after it, while the data it was
//! handed is in cache; a displaced task goes to the back, as tokio's LIFO
//! slot. Self-wakes, remote wakes, wakes outside a task poll and spawns
//! queue as usual. A chain of slot polls is capped at
//! [`MAX_RUN_NEXT_POLLS`] so two tasks waking each other cannot starve the
//! queue. Invariant: the slot is empty whenever `run_ready` is not running,
//! so the park handshake and a tick see every ready task in the queue.

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

    /// The slot's task, if any, to poll next (counted in the chain).
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

    /// The batch ended: closes the slot and returns the task left in it,
    /// for the back of the queue.
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
