//! [`Handle`]: a cloneable, thread-safe reference to a [`Driver`], and the
//! thread-local "current reactor" that socket constructors use.
//!
//! [`Driver`]: crate::Driver

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::driver::IoDriverShared;

thread_local! {
    static CURRENT: RefCell<Option<Handle>> = const { RefCell::new(None) };
}

/// A reference to an I/O [`Driver`](crate::Driver): registers sockets from
/// any thread and wakes the driver.
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<IoDriverShared>,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

/// Makes a [`Handle`] the current reactor of this thread until dropped; see
/// [`Handle::enter`].
#[must_use = "the handle is current only while the guard lives"]
pub struct EnterGuard {
    previous: Option<Handle>,
    /// The guard restores thread-local state: it must stay on its thread.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

impl Handle {
    pub(crate) fn from_shared(shared: Arc<IoDriverShared>) -> Handle {
        Handle { shared }
    }

    /// The reactor of the current thread: the one set by the innermost live
    /// [`Handle::enter`] guard (the runtime enters it while it runs).
    ///
    /// Fails with a message that says what to do when there is none.
    pub fn current() -> io::Result<Handle> {
        // `try_with`: at thread exit the thread-local may be gone; then
        // there is no current reactor.
        CURRENT
            .try_with(|current| current.borrow().clone())
            .ok()
            .flatten()
            .ok_or_else(no_driver_error)
    }

    /// Makes this handle the current reactor of the calling thread until the
    /// guard is dropped; nested guards restore the previous handle.
    pub fn enter(&self) -> EnterGuard {
        // `try_with`: a runtime dropped by a thread-local destructor enters
        // its drivers after this thread-local may be destroyed; then the
        // guard enters nothing and restores nothing (its drop finds the
        // thread-local gone too).
        let previous = CURRENT
            .try_with(|current| current.borrow_mut().replace(self.clone()))
            .ok()
            .flatten();
        EnterGuard {
            previous,
            _not_send: PhantomData,
        }
    }

    /// Wakes the driver: its current `park*` returns, or the next one
    /// returns at once.
    pub fn unpark(&self) {
        let _ = self.shared.waker.wake();
    }

    /// Whether the driver was dropped (sockets registered with it fail).
    pub fn is_shutdown(&self) -> bool {
        self.shared
            .is_shutdown
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // `try_with`: the thread-local may already be gone at thread exit.
        let _ = CURRENT.try_with(|current| *current.borrow_mut() = previous);
    }
}

fn no_driver_error() -> io::Error {
    io::Error::other(
        "no Tempo I/O driver is running on this thread: create sockets inside Runtime::block_on, \
         inside a task, or after Runtime::enter(), on a runtime built with enable_io() \
         (or enter a tempo_io::Handle with Handle::enter())",
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::Driver;

    #[test]
    fn current_without_driver_says_what_to_do() {
        let err = Handle::current().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert!(err.to_string().contains("Runtime::block_on"), "{err}");
    }

    #[test]
    fn nested_enter_restores_previous() {
        let a = Driver::new().unwrap();
        let b = Driver::new().unwrap();
        let (ha, hb) = (a.handle(), b.handle());
        let ga = ha.enter();
        assert!(Arc::ptr_eq(&Handle::current().unwrap().shared, &ha.shared));
        {
            let _gb = hb.enter();
            assert!(Arc::ptr_eq(&Handle::current().unwrap().shared, &hb.shared));
        }
        assert!(Arc::ptr_eq(&Handle::current().unwrap().shared, &ha.shared));
        drop(ga);
        assert!(Handle::current().is_err());
    }

    #[test]
    fn handle_is_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Handle>();
    }
}
