//! The single allocation behind a task, and the type-erased handle to it.
//!
//! ```text
//! Box<Cell<T, S>>  (#[repr(C)], so a pointer to the cell is a pointer to its header)
//! +-----------------------------------------------------------------+
//! | Header   state word, vtable, owner id, task id, owned-list key  |  touched through
//! |                                                                 |  NonNull<Header>
//! | TaskCore scheduler handle S, Stage<T>: Running(future) |        |  by every handle
//! |          Finished(Result<T::Output, JoinError>) | Consumed      |
//! | Trailer  the JoinHandle's waker                                 |
//! +-----------------------------------------------------------------+
//! ```
//!
//! Every handle is a `NonNull<Header>` plus one reference in the state
//! word; operations on the concrete `T` and `S` go through the [`Vtable`]
//! ([`harness`]). A spawn allocates this one block; waking and polling
//! allocate nothing.

use std::future::Future;
use std::ptr::NonNull;
use std::sync::atomic::AtomicUsize;
use std::task::Waker;

use super::error::JoinError;
use super::harness;
use super::id::Id;
use super::state::State;
use super::Schedule;
use crate::sync::UnsafeCell;

/// The type-independent part of a task, at the start of its allocation.
#[repr(C)]
pub(crate) struct Header {
    pub(super) state: State,
    pub(super) vtable: &'static Vtable,
    /// The runtime (owned-task list) this task belongs to.
    pub(super) owner_id: u64,
    /// The task's identity ([`Id`]), drawn at spawn.
    pub(super) id: Id,
    /// Key in the owner's [`OwnedTasks`](super::OwnedTasks), or
    /// `UNBOUND`. Only read and written on the owning thread; atomic only so
    /// the header stays `Sync`.
    pub(super) owned_key: AtomicUsize,
}

/// `owned_key` of a task that is not in an owned-task list.
pub(super) const UNBOUND: usize = usize::MAX;

/// The whole allocation.
#[repr(C)]
pub(super) struct Cell<T: Future, S> {
    pub(super) header: Header,
    pub(super) core: TaskCore<T, S>,
    pub(super) trailer: Trailer,
}

pub(super) struct TaskCore<T: Future, S> {
    pub(super) scheduler: S,
    pub(super) stage: UnsafeCell<Stage<T>>,
}

/// What the task holds: its future, then its output, then nothing.
pub(super) enum Stage<T: Future> {
    Running(T),
    Finished(Result<T::Output, JoinError>),
    Consumed,
}

pub(super) struct Trailer {
    /// Owned by the JoinHandle while JOIN_WAKER is clear, read by the task
    /// side while it is set (see the state module).
    pub(super) waker: UnsafeCell<Option<Waker>>,
}

/// The operations that need the task's concrete types.
pub(super) struct Vtable {
    /// Polls (or cancels) the task; consumes one (`Notified`) reference.
    /// Returns `true` if the task is now complete.
    pub(super) poll: unsafe fn(NonNull<Header>) -> bool,
    /// Hands one already-counted reference to the scheduler as `Notified`.
    pub(super) schedule: unsafe fn(NonNull<Header>),
    /// Frees the allocation (reference count reached zero).
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    /// JoinHandle poll: writes `Poll<Result<T::Output, JoinError>>` to `dst`
    /// if complete, else registers the waker.
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    /// JoinHandle drop; consumes the JoinHandle's reference.
    pub(super) drop_join_handle: unsafe fn(NonNull<Header>),
    /// Cancels the task if it is idle (no reference consumed).
    pub(super) shutdown: unsafe fn(NonNull<Header>),
}

/// Returns the vtable of tasks with future `T` and scheduler `S`.
fn vtable<T: Future, S: Schedule>() -> &'static Vtable {
    &Vtable {
        poll: harness::poll::<T, S>,
        schedule: harness::schedule::<T, S>,
        dealloc: harness::dealloc::<T, S>,
        try_read_output: harness::try_read_output::<T, S>,
        drop_join_handle: harness::drop_join_handle::<T, S>,
        shutdown: harness::shutdown::<T, S>,
    }
}

/// A type-erased pointer to a task. Carries no reference by itself: the
/// typed handles around it own the references.
#[derive(Clone, Copy)]
pub(crate) struct RawTask {
    ptr: NonNull<Header>,
}

impl RawTask {
    /// Allocates a task (the one allocation of a spawn). The state starts
    /// with two references, NOTIFIED and JOIN_INTEREST.
    pub(super) fn new<T: Future, S: Schedule>(future: T, scheduler: S, owner_id: u64) -> RawTask {
        let cell = Box::new(Cell {
            header: Header {
                state: State::new(),
                vtable: vtable::<T, S>(),
                owner_id,
                id: Id::next(),
                owned_key: AtomicUsize::new(UNBOUND),
            },
            core: TaskCore {
                scheduler,
                stage: UnsafeCell::new(Stage::Running(future)),
            },
            trailer: Trailer {
                waker: UnsafeCell::new(None),
            },
        });
        let ptr = NonNull::from(Box::leak(cell)).cast::<Header>();
        RawTask { ptr }
    }

    pub(super) fn from_raw(ptr: NonNull<Header>) -> RawTask {
        RawTask { ptr }
    }

    pub(super) fn header_ptr(self) -> NonNull<Header> {
        self.ptr
    }

    pub(super) fn header(&self) -> &Header {
        // SAFETY: a RawTask is only built from a live allocation, and every
        // holder of one owns a reference that keeps it alive.
        unsafe { self.ptr.as_ref() }
    }

    pub(super) fn state(&self) -> &State {
        &self.header().state
    }

    /// Polls or cancels the task, consuming one `Notified` reference.
    ///
    /// # Safety
    /// The caller owns a `Notified` reference and is on the owning thread.
    pub(super) unsafe fn poll(self) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.poll)(self.ptr) }
    }

    /// # Safety
    /// The caller transfers one counted reference.
    pub(super) unsafe fn schedule(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.schedule)(self.ptr) }
    }

    /// # Safety
    /// The reference count is zero.
    pub(super) unsafe fn dealloc(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.dealloc)(self.ptr) }
    }

    /// # Safety
    /// The caller is the JoinHandle and `dst` points to a
    /// `Poll<Result<T::Output, JoinError>>` of the task's output type.
    pub(super) unsafe fn try_read_output(self, dst: *mut (), waker: &Waker) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.try_read_output)(self.ptr, dst, waker) }
    }

    /// # Safety
    /// The caller is the JoinHandle, dropping itself.
    pub(super) unsafe fn drop_join_handle(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.drop_join_handle)(self.ptr) }
    }

    /// # Safety
    /// The caller holds a reference and may drop the future on this thread
    /// (the owning thread, or any thread for a `Send` future).
    pub(super) unsafe fn shutdown(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.header().vtable.shutdown)(self.ptr) }
    }

    /// Drops one reference, freeing the task if it was the last.
    pub(super) fn drop_reference(self) {
        if self.state().ref_dec() {
            // SAFETY: the count just reached zero: no handle is left.
            unsafe { self.dealloc() }
        }
    }
}
