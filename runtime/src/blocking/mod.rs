//! `spawn_blocking`'s pool: a closure runs as an *unowned task* on a pool
//! thread (`task/unowned.rs`) and completes through the same
//! [`JoinHandle`](crate::task::JoinHandle) as [`spawn`](crate::spawn).

pub(crate) mod pool;

pub(crate) use pool::{BlockingPool, PoolConfig};
