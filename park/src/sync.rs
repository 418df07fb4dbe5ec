//! Synchronisation primitives: std's normally, loom's under `cfg(loom)`, so
//! that the loom models in `loom-tests/` explore the real [`ParkThread`]
//! code rather than a copy.
//!
//! std's `Mutex` and `Condvar` are futex-based on Linux and share loom's API,
//! which keeps this shim to re-exports.
//!
//! [`ParkThread`]: crate::ParkThread

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
