//! `spawn_blocking`: run blocking code on a pool of threads, off the
//! runtime's thread.
//!
//! A Tempo runtime polls every task on one thread, so one task that blocks
//! stalls them all. [`spawn_blocking`](crate::task::spawn_blocking) (in
//! `spawn.rs`) hands a closure to the runtime's
//! blocking pool (see `pool.rs` for its protocol) and returns the same
//! [`JoinHandle`](crate::task::JoinHandle) as [`spawn`](crate::spawn): the closure runs as an
//! *unowned task* on a pool thread (see `task/unowned.rs`), and its output
//! (or panic) wakes the awaiting task through the usual join path.

pub(crate) mod pool;

pub(crate) use pool::{BlockingPool, PoolConfig};
