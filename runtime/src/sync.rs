//! Synchronisation primitives: std / parking_lot normally, loom's under
//! `cfg(loom)`, so that the models in `loom-tests/` explore the real task
//! state machine, injection queue and park protocol rather than copies.
//!
//! Two small wrappers smooth over API differences:
//!
//! * [`UnsafeCell`] has loom's closure API (`with` / `with_mut`) in both
//!   builds, so every access to a task's stage or join waker is visible to
//!   loom's data-race checker.
//! * [`Mutex`] has parking_lot's non-poisoning `lock()` in both builds.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// A cell whose every access goes through a closure taking a raw pointer.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Reads through a shared pointer; the caller upholds the aliasing rules.
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Writes through a unique pointer; the caller upholds the aliasing rules.
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// A non-poisoning mutex (parking_lot's, or loom's under `cfg(loom)`).
#[derive(Debug)]
pub(crate) struct Mutex<T>(
    #[cfg(not(loom))] parking_lot::Mutex<T>,
    #[cfg(loom)] loom::sync::Mutex<T>,
);

#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Mutex<T> {
        #[cfg(not(loom))]
        return Mutex(parking_lot::Mutex::new(value));
        #[cfg(loom)]
        return Mutex(loom::sync::Mutex::new(value));
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(loom))]
        return self.0.lock();
        #[cfg(loom)]
        return self.0.lock().unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::thread;

/// A condition variable for [`Mutex`] (parking_lot's, or loom's under
/// `cfg(loom)`).
///
/// Loom has no clock, so under `cfg(loom)` a *timed* wait releases the
/// lock, lets other threads run, and reports a timeout: the model explores
/// the worst case, a timeout racing every notification, while an untimed
/// [`wait`](Condvar::wait) still blocks until notified (a lost notification
/// shows as a loom deadlock).
#[derive(Debug)]
pub(crate) struct Condvar(
    #[cfg(not(loom))] parking_lot::Condvar,
    #[cfg(loom)] loom::sync::Condvar,
);

impl Condvar {
    pub(crate) fn new() -> Condvar {
        #[cfg(not(loom))]
        return Condvar(parking_lot::Condvar::new());
        #[cfg(loom)]
        return Condvar(loom::sync::Condvar::new());
    }

    /// Blocks until notified (or a spurious wake-up).
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        #[cfg(not(loom))]
        {
            let mut guard = guard;
            self.0.wait(&mut guard);
            guard
        }
        #[cfg(loom)]
        return self.0.wait(guard).unwrap_or_else(|e| e.into_inner());
    }

    /// Blocks until notified or `timeout` passed; `true` if it timed out.
    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
        mutex: &'a Mutex<T>,
    ) -> (MutexGuard<'a, T>, bool) {
        #[cfg(not(loom))]
        {
            let _ = mutex;
            let mut guard = guard;
            let timed_out = self.0.wait_for(&mut guard, timeout).timed_out();
            (guard, timed_out)
        }
        #[cfg(loom)]
        {
            let _ = timeout;
            drop(guard);
            loom::thread::yield_now();
            (mutex.lock(), true)
        }
    }

    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
}
