//! The workspace's one loom shim: std's and parking_lot's primitives
//! normally, loom's under `cfg(loom)`, so that the loom models in
//! `loom-tests/` explore the real code of every crate. Not API
//! (`#[doc(hidden)]`). One API for both builds:
//!
//! * [`Mutex`] has parking_lot's non-poisoning `lock()`.
//! * [`Condvar`]: under loom a *timed* wait releases the lock, lets others
//!   run and times out (the worst case); an untimed wait still blocks until
//!   notified, so a lost notification shows as a loom deadlock.
//! * [`UnsafeCell`] has loom's closure API, so loom sees every access.
//! * The thread-local macro is loom's under loom (one per modelled thread).

#[cfg(loom)]
pub use loom::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    Arc,
};
#[cfg(not(loom))]
pub use std::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(loom)]
pub use loom::{thread, thread_local};
#[cfg(not(loom))]
pub use std::{thread, thread_local};

#[cfg(loom)]
pub use loom::cell::UnsafeCell;

/// A cell whose every access goes through a closure taking a raw pointer
/// (loom's API, std's cell).
#[cfg(not(loom))]
#[derive(Debug)]
pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading; the caller upholds the aliasing
    /// rules.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing; the caller upholds the aliasing
    /// rules.
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// A mutex whose `lock` cannot fail: parking_lot's, or loom's under
/// `cfg(loom)` (a poisoned loom lock is taken all the same).
#[derive(Debug)]
pub struct Mutex<T> {
    #[cfg(not(loom))]
    inner: parking_lot::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard [`Mutex::lock`] returns.
#[cfg(not(loom))]
pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
/// The guard [`Mutex::lock`] returns.
#[cfg(loom)]
pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// A new, unlocked mutex holding `value`.
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            #[cfg(not(loom))]
            inner: parking_lot::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Blocks until the lock is taken.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(loom))]
        return self.inner.lock();
        #[cfg(loom)]
        return self.inner.lock().unwrap_or_else(|e| e.into_inner());
    }
}

/// A condition variable for [`Mutex`]: parking_lot's, or loom's under
/// `cfg(loom)` (where a timed wait always times out, see the module docs).
#[derive(Debug)]
pub struct Condvar {
    #[cfg(not(loom))]
    inner: parking_lot::Condvar,
    #[cfg(loom)]
    inner: loom::sync::Condvar,
}

impl Condvar {
    /// A condition variable with no waiter.
    pub fn new() -> Condvar {
        Condvar {
            #[cfg(not(loom))]
            inner: parking_lot::Condvar::new(),
            #[cfg(loom)]
            inner: loom::sync::Condvar::new(),
        }
    }

    /// Blocks until notified (or a spurious wake-up).
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        #[cfg(not(loom))]
        {
            let mut guard = guard;
            self.inner.wait(&mut guard);
            guard
        }
        #[cfg(loom)]
        return self.inner.wait(guard).unwrap_or_else(|e| e.into_inner());
    }

    /// Blocks until notified or `timeout` passed; `true` if it timed out.
    /// `mutex` is the mutex `guard` locks: loom's timed wait re-takes it.
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
        mutex: &'a Mutex<T>,
    ) -> (MutexGuard<'a, T>, bool) {
        #[cfg(not(loom))]
        {
            let _ = mutex;
            let mut guard = guard;
            let timed_out = self.inner.wait_for(&mut guard, timeout).timed_out();
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

    /// Wakes one waiter, if any.
    pub fn notify_one(&self) {
        self.inner.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.inner.notify_all();
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}
