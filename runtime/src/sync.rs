//! The synchronisation primitives of the task state machine, the injection
//! queue, the park protocol and the blocking pool, from the workspace's one
//! loom shim ([`tempo_park::sync`]): std's and parking_lot's normally,
//! loom's under `cfg(loom)`, so that the models in `loom-tests/` explore the
//! real code rather than copies.

pub(crate) use tempo_park::sync::{
    thread, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering, UnsafeCell,
};
