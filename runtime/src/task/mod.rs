//! Tasks: spawning, joining, yielding; and the task system underneath.
//!
//! A task is one heap block (state word, future, output: `raw.rs`) reached
//! through counted references: the [`JoinHandle`], each `Waker`, a run
//! queue's `Notified`, and the owned-task list's `Task` (`list.rs`). The
//! state machine is in `state.rs`, the typed operations in `harness.rs`.
//!
//! Invariant: a task is polled, cancelled and dropped only on its runtime's
//! thread, through the `!Send` owned-task list, which checks ownership;
//! handles only move a pointer and a reference, so they may cross threads.
//! That is what lets [`spawn_local`] futures be woken from anywhere.

mod abort;
pub mod coop;
mod error;
mod harness;
mod id;
mod join;
mod join_set;
mod list;
mod raw;
mod state;
mod unowned;
mod waker;
mod yield_now;

use std::future::Future;
use std::marker::PhantomData;

pub use crate::spawn::{spawn, spawn_blocking, spawn_local};
pub use abort::AbortHandle;
pub use coop::{consume_budget, unconstrained, Unconstrained};
pub use error::JoinError;
pub use id::{id, try_id, Id};
pub use join::JoinHandle;
pub use join_set::JoinSet;
pub(crate) use list::OwnedTasks;
pub(crate) use unowned::{unowned, UnownedTask};
pub(crate) use waker::{arc_waker_ref, ArcWakerRef};
pub use yield_now::yield_now;

use raw::RawTask;

/// A scheduler that tasks can wake into.
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// Queues a woken (or aborted) task to be run on the owning thread.
    /// Called from any thread.
    fn schedule(&self, task: Notified<Self>);

    /// Queues a task that woke itself while it ran (as [`yield_now`]), once
    /// its poll returned: behind the ready tasks, never in a run-next slot.
    fn yield_now(&self, task: Notified<Self>) {
        self.schedule(task);
    }
}

/// One counted reference to a task.
pub(crate) struct Task<S: 'static> {
    raw: RawTask,
    _scheduler: PhantomData<S>,
}

/// The reference to a task that sits in a run queue: the task is NOTIFIED.
pub(crate) struct Notified<S: 'static>(Task<S>);

// SAFETY: a Task / Notified only carries a pointer and a reference count;
// the future behind it is polled and dropped only through `OwnedTasks` on
// the owning thread (see the module docs), and the state word is atomic.
unsafe impl<S: Schedule> Send for Task<S> {}
// SAFETY: as for Send; `&Task` gives access to the atomic state only.
unsafe impl<S: Schedule> Sync for Task<S> {}

impl<S: Schedule> Task<S> {
    /// Takes ownership of a reference already counted in the state word.
    fn from_raw(raw: RawTask) -> Task<S> {
        Task {
            raw,
            _scheduler: PhantomData,
        }
    }

    fn into_raw(self) -> RawTask {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
}

impl<S: 'static> Drop for Task<S> {
    fn drop(&mut self) {
        self.raw.drop_reference();
    }
}

impl<S: Schedule> Notified<S> {
    fn from_raw(raw: RawTask) -> Notified<S> {
        Notified(Task::from_raw(raw))
    }
}

impl<S: 'static> std::fmt::Debug for Notified<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Notified")
            .field(&self.0.raw.state())
            .finish()
    }
}

/// Spawns a `Send` future: allocates the task and hands its `Notified` to
/// `submit`. If given back (the runtime is shut down), the task is
/// cancelled here, which is sound since the future is `Send` and unpolled.
pub(crate) fn spawn_send<T, S>(
    future: T,
    scheduler: S,
    owner_id: u64,
    submit: impl FnOnce(Notified<S>) -> Result<(), Notified<S>>,
) -> JoinHandle<T::Output>
where
    T: Future + Send + 'static,
    T::Output: Send + 'static,
    S: Schedule,
{
    let raw = RawTask::new(future, scheduler, owner_id);
    let join = JoinHandle::new(raw);
    if let Err(rejected) = submit(Notified::from_raw(raw)) {
        // SAFETY: `T: Send`, so dropping the future on this thread is fine,
        // and `rejected` holds a reference across the call.
        unsafe { rejected.0.raw.shutdown() };
        drop(rejected);
    }
    join
}
