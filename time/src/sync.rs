//! The synchronisation primitives of timer registration and firing, from
//! the workspace's one loom shim ([`tempo_park::sync`]): std's and
//! parking_lot's normally, loom's under `cfg(loom)`, so that the loom models
//! in `loom-tests/` explore the real registration and firing code.
//!
//! The wheel lives behind [`Mutex`]. On the thread that owns the driver the
//! lock is uncontended (the driver and the tasks it wakes run on one thread),
//! and an uncontended parking_lot lock is one compare-and-swap to take and one
//! to release: cheaper than a lock-free queue that would still need a second
//! pass on the driver side. Other threads take the same lock, which is what
//! makes cross-thread registration and cancellation O(1) and allocation-free.

pub(crate) use tempo_park::sync::{
    Arc, AtomicBool, AtomicU64, Mutex, MutexGuard, Ordering, UnsafeCell,
};
