//! The synchronisation primitives of the request protocol (the task's core,
//! the ack slot, the machine mark), from the workspace's loom shim
//! ([`tempo::park::sync`]): std's and parking_lot's normally, loom's under
//! `cfg(loom)`, so that `loom-tests/tests/media_request.rs` explores this
//! crate's code.

pub(crate) use tempo::park::sync::{
    thread_local, AtomicBool, Condvar, Mutex, MutexGuard, Ordering,
};
