//! Synchronisation primitives: std's and parking_lot's normally, loom's under
//! `cfg(loom)`, so that the loom models in `loom-tests/` explore the real
//! registration and firing code rather than a copy.
//!
//! The wheel lives behind [`Mutex`]. On the thread that owns the driver the
//! lock is uncontended (the driver and the tasks it wakes run on one thread),
//! and an uncontended parking_lot lock is one compare-and-swap to take and one
//! to release: cheaper than a lock-free queue that would still need a second
//! pass on the driver side. Other threads take the same lock, which is what
//! makes cross-thread registration and cancellation O(1) and allocation-free.

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU64, Ordering},
    Arc,
};

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU64, Ordering},
    Arc,
};

/// loom's `UnsafeCell` tracks every access, so a model flags an entry
/// touched by two threads without the wheel lock ordering them.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// std's `UnsafeCell` with loom's closure-based API.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading.
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing.
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// A mutex whose `lock` cannot fail: parking_lot's, or loom's under `cfg(loom)`.
#[derive(Debug)]
pub(crate) struct Mutex<T> {
    #[cfg(not(loom))]
    inner: parking_lot::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard [`Mutex::lock`] returns.
#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
/// The guard [`Mutex::lock`] returns.
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Mutex<T> {
        Mutex {
            #[cfg(not(loom))]
            inner: parking_lot::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(loom))]
        {
            self.inner.lock()
        }
        #[cfg(loom)]
        {
            self.inner.lock().unwrap_or_else(|e| e.into_inner())
        }
    }
}
