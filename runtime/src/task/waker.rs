//! A task's `Waker`: the task pointer plus one reference in its state word.
//!
//! Cloning a waker increments the reference count and dropping it
//! decrements it; waking moves the task to NOTIFIED and, when it was idle,
//! hands a `Notified` reference to its scheduler. Nothing here allocates:
//! there is one static `RawWakerVTable` for every task type, and the typed
//! work goes through the task's own vtable.

use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use super::raw::{Header, RawTask};
use super::state::TransitionToNotified;

static WAKER_VTABLE: RawWakerVTable =
    RawWakerVTable::new(clone_waker, wake_by_val, wake_by_ref, drop_waker);

fn raw_waker(ptr: NonNull<Header>) -> RawWaker {
    RawWaker::new(ptr.as_ptr() as *const (), &WAKER_VTABLE)
}

fn task(data: *const ()) -> RawTask {
    // SAFETY: every RawWaker with WAKER_VTABLE is built by `raw_waker` from
    // a non-null header pointer.
    RawTask::from_raw(unsafe { NonNull::new_unchecked(data as *mut Header) })
}

/// A waker for the poll in progress that borrows the poller's reference
/// instead of counting its own. `ManuallyDrop` keeps it from decrementing
/// the count; a clone made by the future counts normally.
pub(super) fn waker_ref(ptr: NonNull<Header>) -> ManuallyDrop<Waker> {
    // SAFETY: the vtable functions uphold the RawWaker contract: clone
    // counts a reference, wake consumes one, drop releases one.
    ManuallyDrop::new(unsafe { Waker::from_raw(raw_waker(ptr)) })
}

unsafe fn clone_waker(data: *const ()) -> RawWaker {
    let task = task(data);
    task.state().ref_inc();
    raw_waker(task.header_ptr())
}

unsafe fn wake_by_val(data: *const ()) {
    let task = task(data);
    match task.state().transition_to_notified_by_val() {
        // SAFETY: the waker's reference moves to the scheduler.
        TransitionToNotified::Submit => unsafe { task.schedule() },
        // SAFETY: the count reached zero.
        TransitionToNotified::Dealloc => unsafe { task.dealloc() },
        TransitionToNotified::DoNothing => {}
    }
}

unsafe fn wake_by_ref(data: *const ()) {
    let task = task(data);
    if task.state().transition_to_notified_by_ref() == TransitionToNotified::Submit {
        // SAFETY: the transition counted a new reference for the scheduler.
        unsafe { task.schedule() };
    }
}

unsafe fn drop_waker(data: *const ()) {
    task(data).drop_reference();
}
