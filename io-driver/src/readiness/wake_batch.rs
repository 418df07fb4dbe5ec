//! Waking a batch of wakers when one of them may panic.
//!
//! The driver wakes wakers it does not own: a task of another executor, a
//! user's own `Wake` impl. If one panics and the panic simply unwinds out
//! of the loop, every waker after it in the batch is dropped unwoken and
//! its task (on another socket, maybe another thread) waits forever. So
//! the rule, on every path that wakes a batch (dispatch, driver
//! shutdown, a registration's drop): **every waker of
//! the batch is woken, then the first panic is re-raised**. Later panics
//! of the same batch are dropped (their messages were already printed by
//! the panic hook).
//!
//! `catch_unwind` costs nothing on the path where nothing panics, so the
//! dispatch loop stays as cheap as a plain `for` loop.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::task::Waker;

/// A panic payload caught while waking a batch.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Wakes every waker of `batch`, even if some panic, and returns the first
/// panic's payload for the caller to re-raise.
#[must_use = "the first panic must be re-raised"]
pub(crate) fn wake_all(batch: impl IntoIterator<Item = Waker>) -> Option<Panic> {
    let mut first_panic = None;
    for waker in batch {
        // AssertUnwindSafe: a panicking waker can only have broken its own
        // state; the batch is owned here and each waker is consumed.
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| waker.wake())) {
            first_panic.get_or_insert(payload);
        }
    }
    first_panic
}

/// Re-raises the first panic of a batch.
pub(crate) fn reraise(first_panic: Option<Panic>) {
    if let Some(payload) = first_panic {
        panic::resume_unwind(payload);
    }
}

/// Re-raises the first panic of a batch woken from a `Drop` impl, unless
/// the thread is already unwinding (a second panic would abort the
/// process; the waker's panic message was printed anyway).
pub(crate) fn reraise_in_drop(first_panic: Option<Panic>) {
    if !std::thread::panicking() {
        reraise(first_panic);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    struct Panics(&'static str);
    impl Wake for Panics {
        fn wake(self: Arc<Self>) {
            panic!("{}", self.0);
        }
    }

    #[test]
    fn every_waker_is_woken_and_the_first_panic_is_returned() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let batch = vec![
            Waker::from(Arc::new(Panics("first"))),
            Waker::from(count.clone()),
            Waker::from(Arc::new(Panics("second"))),
            Waker::from(count.clone()),
        ];
        let payload = wake_all(batch).expect("a panic was caught");
        assert_eq!(count.0.load(SeqCst), 2);
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("first")
        );
        let reraised =
            panic::catch_unwind(AssertUnwindSafe(|| reraise(Some(payload)))).unwrap_err();
        assert_eq!(
            reraised.downcast_ref::<String>().map(String::as_str),
            Some("first")
        );
    }

    #[test]
    fn no_panic_no_payload() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        assert!(wake_all([Waker::from(count.clone())]).is_none());
        assert_eq!(count.0.load(SeqCst), 1);
        reraise(None);
    }
}
