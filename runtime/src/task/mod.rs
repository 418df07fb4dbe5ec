//! Tasks: spawning, joining, yielding; and the task system underneath.
//!
//! A task is one heap block holding a state word, the future, then its
//! output (`task/raw.rs`), handled through reference-counted pointers:
//!
//! * [`JoinHandle`]: the spawner's side, awaits the output.
//! * a `Waker`: one reference; waking schedules the task (`task/waker.rs`).
//! * `Notified`: the reference a run queue holds while the task is
//!   scheduled.
//! * `Task`: the reference the runtime's owned-task list holds so that
//!   shutdown can reach every live task (`task/list.rs`).
//!
//! The lifecycle is the state machine of `task/state.rs`; the typed operations
//! (poll, cancel, complete, read the output) are in `task/harness.rs`.
//!
//! # Threads
//!
//! A task belongs to one runtime and is polled, cancelled and dropped only on
//! that runtime's thread: the only way to poll a task is through
//! the owned-task list, which is `!Send` and checks that the task belongs to it.
//! Handles may move between threads (a `Waker` must), because moving one
//! only moves a pointer and a reference. That is what lets
//! [`spawn_local`] run `!Send` futures while their wakers are woken from
//! anywhere.
//!
//! ```
//! use tempo::task::{self, JoinSet};
//!
//! let rt = tempo::runtime::Builder::new_current_thread().build()?;
//! rt.block_on(async {
//!     // A `Send` task, a `!Send` one, and a closure on the blocking pool.
//!     let shared = tempo::spawn(async { 1 });
//!     let local = tempo::spawn_local({
//!         let rc = std::rc::Rc::new(2);
//!         async move { *rc }
//!     });
//!     let blocking = task::spawn_blocking(|| 3);
//!     let mut set = JoinSet::new();
//!     set.spawn(async { 4 });
//!     let mut sum = shared.await.unwrap() + local.await.unwrap() + blocking.await.unwrap();
//!     while let Some(out) = set.join_next().await {
//!         sum += out.unwrap();
//!     }
//!     assert_eq!(sum, 10);
//! });
//! # Ok::<(), std::io::Error>(())
//! ```

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

    /// Queues a task that was woken while it ran (it woke itself, as
    /// [`yield_now`] does), once its poll returned. It goes behind the
    /// tasks already ready: a scheduler that runs a woken task next (the
    /// local scheduler's run-next slot) must not run a task that yields
    /// again at once.
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
/// `submit`. If `submit` gives it back (the runtime is shut down), the task
/// is cancelled right here, on the calling thread, which is sound because
/// the future is `Send` and was never polled; the returned JoinHandle then
/// resolves to a cancelled [`JoinError`].
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
