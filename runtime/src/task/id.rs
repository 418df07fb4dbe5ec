//! Task identity: [`Id`], and which task this thread is running
//! ([`id`], [`try_id`]). The current task is a thread-local set around
//! every poll and every drop of a task's future, so `task::id()` also
//! answers in a destructor run by an abort or a shutdown.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tempo_park::scoped::ScopedGuard;

/// The identity of a task: unique in the process for its whole life, never
/// reused; from [`JoinHandle::id`](super::JoinHandle::id), [`task::id`](id)
/// inside the task, or a [`JoinError`](super::JoinError). Prints as a number.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let handle = tempo::spawn(async { tempo::task::id() });
///     let id = handle.id();
///     assert_eq!(handle.await.unwrap(), id);
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

/// Source of task ids. Not a loom atomic: it only hands out numbers, no
/// other memory depends on its order.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Id {
    /// A fresh id, for a task being spawned.
    pub(super) fn next() -> Id {
        let n = NEXT_ID.fetch_add(1, Relaxed);
        Id(NonZeroU64::new(n).expect("task id counter overflowed"))
    }

    /// The id as a number (as printed).
    pub fn as_u64(&self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}

tempo_park::scoped_thread_local! {
    /// The task this thread polls or drops right now.
    static CURRENT_TASK: Id
}

/// Marks `id` as the task this thread runs until the guard drops (which
/// restores the previous one); at thread teardown no id is visible.
pub(super) fn enter(id: Id) -> ScopedGuard<Id> {
    CURRENT_TASK.enter(id)
}

/// Returns the [`Id`] of the task this code runs in.
///
/// # Panics
///
/// Outside a task (the `block_on` future is not one); [`try_id`] returns
/// `None` instead.
#[track_caller]
pub fn id() -> Id {
    try_id().expect(
        "tempo::task::id() called outside a task: only code run by a spawned task \
         (its poll, or the drop of its future) has a task id; use task::try_id() to check",
    )
}

/// Returns the [`Id`] of the task this code runs in, or `None` outside a
/// task.
pub fn try_id() -> Option<Id> {
    CURRENT_TASK.get()
}
