//! Synchronisation primitives: std's normally, loom's under `cfg(loom)`, so
//! that the loom models in `loom-tests/` explore the real [`ParkThread`]
//! code rather than a copy. The cooperative budget's thread-local is loom's
//! under loom too: loom runs its threads on one OS thread, where a std
//! thread-local would be shared between them.
//!
//! std's `Mutex` and `Condvar` are futex-based on Linux and share loom's API,
//! which keeps this shim to re-exports.
//!
//! [`ParkThread`]: crate::ParkThread

#[cfg(loom)]
pub(crate) use loom::thread_local;
#[cfg(not(loom))]
pub(crate) use std::thread_local;

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc, Condvar, Mutex,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc, Condvar, Mutex,
};
