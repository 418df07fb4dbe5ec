//! A task's `Waker`: the task pointer plus one reference in its state word.
//!
//! Cloning a waker increments the reference count and dropping it
//! decrements it; waking moves the task to NOTIFIED and, when it was idle,
//! hands a `Notified` reference to its scheduler. Nothing here allocates:
//! there is one static `RawWakerVTable` for every task type, and the typed
//! work goes through the task's own vtable.

use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{RawWaker, RawWakerVTable, Wake, Waker};

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

/// A [`Waker`] for an `Arc<W>` that borrows the `Arc`: making and dropping
/// it touch no reference count, so `block_on` of a ready future costs no
/// atomic read-modify-write. A clone owns a reference, as `Waker::from`.
pub(crate) struct ArcWakerRef<'a, W> {
    waker: ManuallyDrop<Waker>,
    _arc: std::marker::PhantomData<&'a Arc<W>>,
}

impl<W> std::ops::Deref for ArcWakerRef<'_, W> {
    type Target = Waker;

    fn deref(&self) -> &Waker {
        &self.waker
    }
}

/// The `RawWakerVTable` of `Arc<W>` wakers: the same behaviour as std's
/// `Waker::from(Arc<W>)`, written out so that a borrowed one can be made.
struct ArcVtable<W>(std::marker::PhantomData<W>);

impl<W: Wake + Send + Sync + 'static> ArcVtable<W> {
    const VTABLE: RawWakerVTable =
        RawWakerVTable::new(Self::clone, Self::wake, Self::wake_by_ref, Self::drop);

    fn raw(data: *const W) -> RawWaker {
        RawWaker::new(data.cast(), &Self::VTABLE)
    }

    unsafe fn clone(data: *const ()) -> RawWaker {
        // SAFETY: `data` comes from `Arc::as_ptr` of an `Arc<W>` that is
        // alive: borrowed by the `ArcWakerRef`, or owned by a clone.
        unsafe { Arc::increment_strong_count(data.cast::<W>()) };
        Self::raw(data.cast())
    }

    unsafe fn wake(data: *const ()) {
        // SAFETY: an owned waker (a clone) holds one strong reference,
        // which this consumes. A borrowed `ArcWakerRef` is never woken by
        // value: it is `ManuallyDrop` behind a shared reference.
        let arc = unsafe { Arc::from_raw(data.cast::<W>()) };
        W::wake(arc);
    }

    unsafe fn wake_by_ref(data: *const ()) {
        // SAFETY: the `Arc` is alive (see `clone`); `ManuallyDrop` keeps
        // this temporary from releasing a reference it does not own.
        let arc = ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<W>()) });
        W::wake_by_ref(&arc);
    }

    unsafe fn drop(data: *const ()) {
        // SAFETY: only owned wakers (clones) are dropped through the
        // vtable; each holds one strong reference.
        drop(unsafe { Arc::from_raw(data.cast::<W>()) });
    }
}

/// A waker for `arc` that borrows it; see [`ArcWakerRef`].
pub(crate) fn arc_waker_ref<W: Wake + Send + Sync + 'static>(arc: &Arc<W>) -> ArcWakerRef<'_, W> {
    let raw = ArcVtable::<W>::raw(Arc::as_ptr(arc));
    ArcWakerRef {
        // SAFETY: the vtable upholds the RawWaker contract for `Arc<W>`
        // (clone counts a reference, wake consumes one, drop releases one);
        // `ManuallyDrop` keeps this borrowed waker from releasing one, and
        // the lifetime keeps `arc` alive while it is in use.
        waker: ManuallyDrop::new(unsafe { Waker::from_raw(raw) }),
        _arc: std::marker::PhantomData,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn a_borrowed_arc_waker_counts_references_only_for_its_clones() {
        let arc = Arc::new(Count::default());
        {
            let borrowed = arc_waker_ref(&arc);
            use_borrowed(&arc, &borrowed);
        }
        // The borrowed waker went out of scope without releasing anything.
        assert_eq!(Arc::strong_count(&arc), 1);
        assert_eq!(arc.0.load(SeqCst), 3);
    }

    fn use_borrowed(arc: &Arc<Count>, borrowed: &Waker) {
        assert_eq!(Arc::strong_count(arc), 1);
        borrowed.wake_by_ref();
        assert_eq!(arc.0.load(SeqCst), 1);

        let owned = borrowed.clone();
        assert_eq!(Arc::strong_count(arc), 2);
        assert!(owned.will_wake(borrowed));
        owned.wake_by_ref();
        owned.wake();
        assert_eq!(arc.0.load(SeqCst), 3);
        assert_eq!(Arc::strong_count(arc), 1);

        let dropped = borrowed.clone();
        assert_eq!(Arc::strong_count(arc), 2);
        drop(dropped);
        assert_eq!(Arc::strong_count(arc), 1);
    }
}
