//! The synchronisation primitives of the readiness protocol, from the
//! workspace's one loom shim ([`tempo_park::sync`]): std's and parking_lot's
//! normally, loom's under `cfg(loom)`, so that the loom models in
//! `loom-tests/` explore the real `ScheduledIo` code
//! (`readiness/scheduled_io.rs`), not a copy.

pub(crate) use tempo_park::sync::{AtomicUsize, Mutex, Ordering};
