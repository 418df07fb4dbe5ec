//! The typed half of the task: the functions of the vtable, monomorphised
//! for each future type `T` and scheduler `S`.
//!
//! Exclusive access to the stage (the future or the output) is decided by
//! the state word: the thread that set RUNNING owns the stage until it
//! clears RUNNING; after COMPLETE the JoinHandle owns it if JOIN_INTEREST was
//! still set at completion, otherwise the completing thread dropped it.
//! Every user callback (poll, drop of a future or output, a join waker) runs
//! under `catch_unwind`, so a panicking task or a panicking destructor is
//! reported through the JoinHandle, or ignored at shutdown, and never
//! unwinds through the scheduler.

use std::future::Future;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::error::JoinError;
use super::id;
use super::raw::{Cell, Header, RawTask, Stage};
use super::state::{TransitionToIdle, TransitionToRunning};
use super::waker::waker_ref;
use super::{Notified, Schedule};

/// A typed view of a task allocation.
struct Harness<T: Future, S: 'static> {
    cell: NonNull<Cell<T, S>>,
}

impl<T: Future, S: Schedule> Harness<T, S> {
    /// # Safety
    /// `ptr` points to a live `Cell<T, S>`.
    unsafe fn from_raw(ptr: NonNull<Header>) -> Harness<T, S> {
        Harness { cell: ptr.cast() }
    }

    fn cell(&self) -> &Cell<T, S> {
        // SAFETY: the caller of `from_raw` guaranteed the cell is live, and
        // it outlives the harness (a reference is held across every call).
        unsafe { self.cell.as_ref() }
    }

    fn raw(&self) -> RawTask {
        RawTask::from_raw(self.cell.cast())
    }

    fn header(&self) -> &Header {
        &self.cell().header
    }

    /// Replaces the stage.
    ///
    /// # Safety
    /// The caller has exclusive access to the stage (see the module docs).
    unsafe fn set_stage(&self, stage: Stage<T>) -> Stage<T> {
        // SAFETY: exclusive access, guaranteed by the caller.
        self.cell()
            .core
            .stage
            .with_mut(|ptr| unsafe { mem::replace(&mut *ptr, stage) })
    }

    /// Drops the future or the output **in place** (`Pin`'s drop guarantee:
    /// a registered `Sleep` unlinks at the address it was linked at),
    /// catching a panic of its destructor; returns the payload.
    ///
    /// # Safety
    /// As for [`set_stage`](Self::set_stage).
    unsafe fn drop_stage(&self) -> Result<(), Box<dyn std::any::Any + Send>> {
        panic::catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: exclusive access, forwarded from the caller. The
            // assignment drops the old stage where it lies, and stores
            // `Consumed` even if that destructor panics, so the cell stays
            // consistent.
            self.cell()
                .core
                .stage
                .with_mut(|ptr| unsafe { *ptr = Stage::Consumed })
        }))
    }

    /// Polls the future once.
    ///
    /// # Safety
    /// The caller set RUNNING (exclusive access) and is on the owning thread.
    unsafe fn poll_future(&self, cx: &mut Context<'_>) -> Poll<T::Output> {
        // SAFETY: exclusive access per the caller. The future is never moved
        // out of the cell while in `Running`, so pinning it is sound.
        self.cell().core.stage.with_mut(|ptr| unsafe {
            match &mut *ptr {
                Stage::Running(future) => std::pin::Pin::new_unchecked(future).poll(cx),
                _ => unreachable!("polling a task whose future is gone"),
            }
        })
    }

    /// Polls the future once; if the poll panics, drops the future *during
    /// the unwind* (tokio's order: its destructor sees
    /// [`std::thread::panicking`], and a second panic there aborts).
    ///
    /// # Safety
    /// As for [`poll_future`](Self::poll_future).
    unsafe fn poll_future_dropping_on_panic(&self, cx: &mut Context<'_>) -> Poll<T::Output> {
        /// Drops the stage if dropped itself, i.e. on unwind.
        struct DropStageOnUnwind<'a, T: Future, S: Schedule>(&'a Harness<T, S>);
        impl<T: Future, S: Schedule> Drop for DropStageOnUnwind<'_, T, S> {
            fn drop(&mut self) {
                // SAFETY: only reached while unwinding out of `poll_future`,
                // whose caller holds RUNNING (exclusive access) on the
                // owning thread. The future is dropped in place.
                self.0
                    .cell()
                    .core
                    .stage
                    .with_mut(|ptr| unsafe { *ptr = Stage::Consumed });
            }
        }
        let guard = DropStageOnUnwind(self);
        // SAFETY: forwarded from the caller.
        let poll = unsafe { self.poll_future(cx) };
        mem::forget(guard);
        poll
    }

    /// Drops the future and stores the cancellation (or the panic of the
    /// future's destructor) as the output, then completes.
    ///
    /// # Safety
    /// The caller set RUNNING and may drop the future on this thread.
    unsafe fn cancel_and_complete(&self) {
        // SAFETY: forwarded from the caller.
        let error = match unsafe { self.drop_stage() } {
            Ok(()) => JoinError::cancelled(self.header().id),
            Err(payload) => JoinError::panic(self.header().id, payload),
        };
        // SAFETY: still RUNNING: exclusive access.
        unsafe { self.set_stage(Stage::Finished(Err(error))) };
        // SAFETY: RUNNING is set by us.
        unsafe { self.complete() };
    }

    /// RUNNING -> COMPLETE with the output already stored; then drops the
    /// output if nobody will read it, or wakes the JoinHandle.
    ///
    /// # Safety
    /// The caller set RUNNING and stored the output.
    unsafe fn complete(&self) {
        let snapshot = self.header().state.transition_to_complete();
        if !snapshot.is_join_interested() {
            // The JoinHandle is gone: the output is ours to drop.
            // SAFETY: without JOIN_INTEREST nobody else touches the stage.
            let _ = unsafe { self.drop_stage() };
        } else if snapshot.is_join_waker_set() {
            // A panicking waker must not unwind into the scheduler.
            let _ = panic::catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: JOIN_WAKER was set at completion, so the JoinHandle
                // no longer writes the waker slot (its unset fails on COMPLETE).
                self.cell().trailer.waker.with(|ptr| unsafe {
                    if let Some(waker) = &*ptr {
                        waker.wake_by_ref();
                    }
                })
            }));
        }
    }

    /// Stores the JoinHandle's waker, then publishes it with JOIN_WAKER.
    ///
    /// # Safety
    /// The caller is the JoinHandle and JOIN_WAKER is clear (it owns the slot).
    unsafe fn set_join_waker(&self, waker: &Waker) -> bool {
        // SAFETY: the JoinHandle owns the slot while JOIN_WAKER is clear.
        self.cell()
            .trailer
            .waker
            .with_mut(|ptr| unsafe { *ptr = Some(waker.clone()) });
        if self.header().state.set_join_waker().is_ok() {
            return true;
        }
        // Completed meanwhile: the slot is still ours, empty it.
        // SAFETY: JOIN_WAKER was not set, so we still own the slot.
        self.cell()
            .trailer
            .waker
            .with_mut(|ptr| unsafe { *ptr = None });
        false
    }

    /// JoinHandle poll: returns `true` if the output can be read.
    ///
    /// # Safety
    /// The caller is the JoinHandle.
    unsafe fn can_read_output(&self, waker: &Waker) -> bool {
        let snapshot = self.header().state.load();
        if snapshot.is_complete() {
            return true;
        }
        let registered = if !snapshot.is_join_waker_set() {
            // SAFETY: JOIN_WAKER clear: the slot is ours.
            unsafe { self.set_join_waker(waker) }
        } else {
            // SAFETY: JOIN_WAKER set and not complete: the task side only
            // reads the slot after completing, so a shared read is fine.
            let same = self
                .cell()
                .trailer
                .waker
                .with(|ptr| unsafe { (*ptr).as_ref().is_some_and(|w| w.will_wake(waker)) });
            if same {
                return false;
            }
            if self.header().state.unset_join_waker().is_err() {
                return true;
            }
            // SAFETY: JOIN_WAKER now clear: the slot is ours.
            unsafe { self.set_join_waker(waker) }
        };
        // Registered means not complete yet; otherwise it completed while we
        // registered, and the output is ready.
        !registered
    }
}

/// Vtable `poll`: see [`RawTask::poll`].
///
/// # Safety
/// `ptr` is a live `Cell<T, S>`; the caller gives up one `Notified`
/// reference and is on the owning thread.
pub(super) unsafe fn poll<T: Future, S: Schedule>(ptr: NonNull<Header>) -> bool {
    // SAFETY: per the caller.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    // `task::id()` answers during the poll and the drops below.
    let _current = id::enter(harness.header().id);
    let completed = match harness.header().state.transition_to_running() {
        TransitionToRunning::Success => {
            let waker = waker_ref(ptr);
            let mut cx = Context::from_waker(&waker);
            // SAFETY: RUNNING set by us; owning thread per the caller.
            let result = panic::catch_unwind(AssertUnwindSafe(|| unsafe {
                harness.poll_future_dropping_on_panic(&mut cx)
            }));
            match result {
                Ok(Poll::Pending) => match harness.header().state.transition_to_idle() {
                    // The transition released our reference: nothing to
                    // drop below.
                    TransitionToIdle::Ok => return false,
                    TransitionToIdle::OkDealloc => {
                        // SAFETY: the count reached zero in the transition:
                        // no handle is left.
                        unsafe { harness.raw().dealloc() };
                        return false;
                    }
                    TransitionToIdle::OkNotified => {
                        // Woken while running: our reference is now the run
                        // queue's. It woke itself (or was woken during its
                        // own poll): a yield, to the back of the queue.
                        let notified = Notified::from_raw(harness.raw());
                        harness.cell().core.scheduler.yield_now(notified);
                        return false;
                    }
                    TransitionToIdle::Cancelled => {
                        // SAFETY: still RUNNING; owning thread.
                        unsafe { harness.cancel_and_complete() };
                        true
                    }
                },
                Ok(Poll::Ready(output)) => {
                    // SAFETY: RUNNING: exclusive access. Dropping the
                    // (finished) future may panic: caught.
                    let _ = unsafe { harness.drop_stage() };
                    // SAFETY: as above.
                    unsafe {
                        harness.set_stage(Stage::Finished(Ok(output)));
                        harness.complete();
                    }
                    true
                }
                Err(payload) => {
                    // The future was already dropped while unwinding (see
                    // `poll_future_dropping_on_panic`); the stage is
                    // `Consumed`.
                    // SAFETY: RUNNING: exclusive access.
                    unsafe {
                        harness.set_stage(Stage::Finished(Err(JoinError::panic(
                            harness.header().id,
                            payload,
                        ))));
                        harness.complete();
                    }
                    true
                }
            }
        }
        TransitionToRunning::Cancelled => {
            // SAFETY: RUNNING set by us; owning thread per the caller.
            unsafe { harness.cancel_and_complete() };
            true
        }
        TransitionToRunning::Failed => false,
    };
    harness.raw().drop_reference();
    completed
}

/// Vtable `schedule`.
///
/// # Safety
/// `ptr` is a live `Cell<T, S>` and the caller transfers one reference.
pub(super) unsafe fn schedule<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: per the caller.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    let notified = Notified::from_raw(harness.raw());
    harness.cell().core.scheduler.schedule(notified);
}

/// Vtable `dealloc`.
///
/// # Safety
/// `ptr` is a live `Cell<T, S>` whose reference count reached zero.
pub(super) unsafe fn dealloc<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: the allocation came from `Box::new` in `RawTask::new` with
    // this type, and no reference is left.
    let cell = unsafe { Box::from_raw(ptr.cast::<Cell<T, S>>().as_ptr()) };
    // Whatever the stage still holds is dropped here; a panicking
    // destructor must not unwind into a waker's or handle's drop.
    let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(cell)));
}

/// Vtable `try_read_output`.
///
/// # Safety
/// `ptr` is a live `Cell<T, S>`, the caller is its JoinHandle and `dst`
/// points to a `Poll<Result<T::Output, JoinError>>`.
pub(super) unsafe fn try_read_output<T: Future, S: Schedule>(
    ptr: NonNull<Header>,
    dst: *mut (),
    waker: &Waker,
) {
    // SAFETY: per the caller.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    // SAFETY: the caller is the JoinHandle.
    if unsafe { harness.can_read_output(waker) } {
        // SAFETY: COMPLETE with JOIN_INTEREST held by us: the JoinHandle
        // owns the stage.
        let output = match unsafe { harness.set_stage(Stage::Consumed) } {
            Stage::Finished(output) => output,
            _ => panic!("JoinHandle polled after completion"),
        };
        // SAFETY: `dst` has the output's type per the caller.
        unsafe { *dst.cast::<Poll<Result<T::Output, JoinError>>>() = Poll::Ready(output) };
    }
}

/// Vtable `drop_join_handle`.
///
/// # Safety
/// `ptr` is a live `Cell<T, S>`; the caller is its JoinHandle, giving up its
/// reference.
pub(super) unsafe fn drop_join_handle<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: per the caller.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    match harness.header().state.unset_join_interested() {
        Err(_complete) => {
            // SAFETY: COMPLETE and JOIN_INTEREST was ours: we own the output.
            let _ = unsafe { harness.drop_stage() };
        }
        Ok(_) => {
            // SAFETY: JOIN_WAKER is now clear and the task is not complete:
            // the task side will not read the slot, it is ours to empty.
            let waker = harness
                .cell()
                .trailer
                .waker
                .with_mut(|ptr| unsafe { (*ptr).take() });
            drop(waker);
        }
    }
    harness.raw().drop_reference();
}

/// Vtable `shutdown`.
///
/// # Safety
/// `ptr` is a live `Cell<T, S>`, the caller holds a reference and may drop
/// the future on this thread.
pub(super) unsafe fn shutdown<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: per the caller.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    if harness.header().state.transition_to_shutdown() {
        let _current = id::enter(harness.header().id);
        // SAFETY: we set RUNNING; the caller may drop the future here.
        unsafe { harness.cancel_and_complete() };
    }
}
