//! Task identity: [`Id`], and which task this thread is running
//! ([`id`], [`try_id`]). The current task is a thread-local set around
//! every poll and every drop of a task's future, so `task::id()` also
//! answers in a destructor run by an abort or a shutdown.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use std::cell::Cell;

use tempo_park::sync::thread_local;

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

// The task this thread polls or drops right now. A plain `Cell` rather
// than a `tempo_park::scoped` slot: the value is `Copy` (nothing is dropped
// inside an access), and it is set and restored around every poll, so it
// is read and written directly, with no borrow flag. Same rules otherwise:
// scoped by a guard, `try_with` on every path.
#[cfg(not(loom))]
thread_local! {
    // `const`: no lazy-initialisation check on the hot path.
    static CURRENT_TASK: Cell<Option<Id>> = const { Cell::new(None) };
}

#[cfg(loom)]
thread_local! {
    // loom's macro takes no `const` block.
    static CURRENT_TASK: Cell<Option<Id>> = Cell::new(None);
}

/// Restores the task that was current before [`enter`] when dropped.
/// `!Send`: it restores thread-local state.
#[must_use = "the task is current only while the guard lives"]
pub(super) struct EnterGuard {
    prev: Option<Id>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for EnterGuard {
    #[inline]
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = CURRENT_TASK.try_with(|current| current.set(prev));
    }
}

/// Marks `id` as the task this thread runs until the guard drops (which
/// restores the previous one); at thread teardown no id is visible.
#[inline]
pub(super) fn enter(id: Id) -> EnterGuard {
    EnterGuard {
        prev: CURRENT_TASK
            .try_with(|current| current.replace(Some(id)))
            .ok()
            .flatten(),
        _not_send: std::marker::PhantomData,
    }
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
    CURRENT_TASK.try_with(Cell::get).ok().flatten()
}
