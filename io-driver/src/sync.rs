//! Synchronisation primitives of the readiness protocol: std's and
//! parking_lot's normally, loom's under `cfg(loom)`, so that the loom model
//! in `loom-tests/tests/io_readiness.rs` explores the real
//! [`ScheduledIo`](crate::scheduled_io::ScheduledIo) code, not a copy.
//!
//! [`Mutex`] hides the one API difference: parking_lot's `lock` returns the
//! guard, loom's returns a `LockResult`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A mutex whose `lock` returns the guard directly.
#[derive(Debug)]
pub(crate) struct Mutex<T> {
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
    #[cfg(not(loom))]
    inner: parking_lot::Mutex<T>,
}

#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;
#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Mutex<T> {
        Mutex {
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
            #[cfg(not(loom))]
            inner: parking_lot::Mutex::new(value),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(loom)]
        return self.inner.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(not(loom))]
        return self.inner.lock();
    }
}
