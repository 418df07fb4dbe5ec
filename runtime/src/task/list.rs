//! [`OwnedTasks`]: every live task of one runtime, so that shutdown can
//! cancel them all; and the only door through which a task is polled. A
//! `Slab` (touched only on the owning thread, no lock) gives O(1) insert
//! and removal with no extra `unsafe`. A task is bound the first time it
//! is taken from a run queue, not at spawn (a remote spawn cannot touch
//! this `!Send` list); an unbound task at shutdown is cancelled by the
//! queue drain (`shutdown_queued`).

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::Relaxed;

use slab::Slab;

use super::raw::{RawTask, UNBOUND};
use super::{JoinHandle, Notified, Schedule, Task};

/// Source of runtime ids; a task records the id of the list it belongs to.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The live tasks of one runtime.
pub(crate) struct OwnedTasks<S: 'static> {
    tasks: Slab<Task<S>>,
    id: u64,
    closed: bool,
    /// Created on the owning thread and never leaves it.
    _not_send: PhantomData<*const ()>,
}

impl<S: Schedule> OwnedTasks<S> {
    pub(crate) fn new() -> OwnedTasks<S> {
        OwnedTasks {
            tasks: Slab::new(),
            id: NEXT_ID.fetch_add(1, Relaxed),
            closed: false,
            _not_send: PhantomData,
        }
    }

    /// The id that tasks of this runtime carry.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Number of bound (live, already run once) tasks.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Creates a task for a `!Send` future. Taking `&self` proves the call
    /// is on the owning thread, where the future will be polled.
    pub(crate) fn new_local_task<T>(
        &self,
        future: T,
        scheduler: S,
    ) -> (Notified<S>, JoinHandle<T::Output>)
    where
        T: Future + 'static,
        T::Output: 'static,
    {
        let raw = RawTask::new(future, scheduler, self.id);
        (Notified::from_raw(raw), JoinHandle::new(raw))
    }

    fn assert_owner(&self, raw: RawTask) {
        assert_eq!(
            raw.header().owner_id,
            self.id,
            "a task was scheduled on a runtime it does not belong to"
        );
    }

    /// Inserts the task if it is new; returns its key, or `None` if it is
    /// not (and will not be) in the list.
    fn bind(&mut self, raw: RawTask) -> Option<usize> {
        let key = raw.header().owned_key.load(Relaxed);
        if key != UNBOUND {
            return Some(key);
        }
        if self.closed || raw.state().load().is_complete() {
            return None;
        }
        raw.state().ref_inc();
        let key = self.tasks.insert(Task::from_raw(raw));
        raw.header().owned_key.store(key, Relaxed);
        Some(key)
    }

    /// Runs a task taken from a run queue: binds it, polls or cancels it,
    /// removes it once complete. The list is not borrowed during the poll,
    /// so the task may spawn.
    pub(crate) fn run(this: &RefCell<Self>, task: Notified<S>) {
        let raw = task.0.into_raw();
        let key = {
            let mut list = this.borrow_mut();
            list.assert_owner(raw);
            list.bind(raw)
        };
        // SAFETY: `raw` carries the Notified reference, which the poll
        // consumes. We are on the owning thread: `this` is `!Sync` and was
        // never sent, and `assert_owner` checked the task is ours.
        let completed = unsafe { raw.poll() };
        if let (true, Some(key)) = (completed, key) {
            // The list's reference keeps the task alive until here.
            let removed = {
                let mut list = this.borrow_mut();
                match list.tasks.get(key) {
                    Some(t) if t.raw.header_ptr() == raw.header_ptr() => {
                        raw.header().owned_key.store(UNBOUND, Relaxed);
                        Some(list.tasks.remove(key))
                    }
                    _ => None,
                }
            };
            drop(removed);
        }
    }

    /// Closes the list and cancels every bound task here, on the owning
    /// thread; the drops' wakes and spawns land in the run queues, which
    /// the caller drains with [`shutdown_queued`](Self::shutdown_queued).
    pub(crate) fn close_and_shutdown_all(this: &RefCell<Self>) {
        let tasks: Vec<Task<S>> = {
            let mut list = this.borrow_mut();
            list.closed = true;
            list.tasks.drain().collect()
        };
        for task in tasks {
            task.raw.header().owned_key.store(UNBOUND, Relaxed);
            // SAFETY: we hold the list's reference, and we are on the
            // owning thread (the list is `!Send`, `!Sync`).
            unsafe { task.raw.shutdown() };
            drop(task);
        }
    }

    /// Cancels a task taken from a run queue during shutdown (if it is not
    /// complete yet) and drops the queue's reference.
    pub(crate) fn shutdown_queued(this: &RefCell<Self>, task: Notified<S>) {
        this.borrow().assert_owner(task.0.raw);
        // SAFETY: `task` holds a reference; owning thread as above.
        unsafe { task.0.raw.shutdown() };
        drop(task);
    }
}

impl<S: 'static> std::fmt::Debug for OwnedTasks<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedTasks")
            .field("id", &self.id)
            .field("len", &self.tasks.len())
            .field("closed", &self.closed)
            .finish()
    }
}
