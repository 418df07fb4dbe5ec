//! Task identity: [`Id`], and which task this thread is running
//! ([`id`], [`try_id`]).
//!
//! An id is drawn from one process-wide counter when the task is spawned
//! and stored in the task's header, so a [`JoinHandle`](super::JoinHandle),
//! a [`JoinError`](super::JoinError) and the task itself can all name the
//! same task in logs. Ids are unique among the tasks of the process for its
//! whole life (a `u64` counter does not wrap in practice), never reused.
//!
//! The "current task" is a thread-local set by the harness around every
//! poll and every drop of a task's future, so `task::id()` also answers in
//! a destructor that runs when the task is aborted or shut down.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tempo_park::scoped::ScopedGuard;

/// The identity of a task: unique among all tasks of the process, for its
/// whole life.
///
/// Get it from [`JoinHandle::id`](super::JoinHandle::id), from inside the
/// task with [`task::id`](id), or from a [`JoinError`](super::JoinError).
/// It prints as a plain number.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let handle = tempo::spawn(async { tempo::task::id() });
///     let id = handle.id();
///     assert_eq!(handle.await.unwrap(), id);
///     println!("task {id} done");
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

/// Marks `id` as the task this thread runs until the guard is dropped,
/// which restores the previous one (a task may be polled from inside
/// another's destructor). During thread teardown the thread-local
/// may be gone: then no task id is visible, which `try_id` reports as
/// `None`.
pub(super) fn enter(id: Id) -> ScopedGuard<Id> {
    CURRENT_TASK.enter(id)
}

/// Returns the [`Id`] of the task this code runs in.
///
/// # Panics
///
/// Panics if called outside a task (for instance in the future given to
/// `block_on` itself, which is not a task); [`try_id`] returns `None`
/// instead.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let handle = tempo::spawn(async {
///         println!("running as task {}", tempo::task::id());
///         tempo::task::id()
///     });
///     let id = handle.id();
///     assert_eq!(handle.await.unwrap(), id);
/// });
/// ```
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
