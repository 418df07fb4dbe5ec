//! Tempo: a single-thread async runtime with a throttling scheduler, for
//! thousands of low-rate network streams.
//!
//! This crate is what applications depend on: the [task system](task), the
//! schedulers, and the [runtime API](runtime). Names follow tokio's where
//! the meaning is the same, so that moving a current-thread tokio
//! application to Tempo is a change of imports.
//!
//! ```
//! use tempo::runtime::Builder;
//!
//! let rt = Builder::new_current_thread().build().unwrap();
//! let out = rt.block_on(async {
//!     let handles: Vec<_> = (0..3).map(|i| tempo::spawn(async move { i * 10 })).collect();
//!     let mut sum = 0;
//!     for h in handles {
//!         sum += h.await.unwrap();
//!     }
//!     sum
//! });
//! assert_eq!(out, 30);
//! ```
//!
//! # Tasks and threads
//!
//! A runtime runs every task on one thread. [`spawn`] takes `Send` futures
//! and works from any thread through a [`Handle`](runtime::Handle);
//! [`spawn_local`] takes `!Send` futures on the runtime's thread. Wakers
//! work from any thread; a wake from the runtime's thread costs no syscall,
//! and a wake from another thread wakes the runtime's thread only if it is
//! parked.
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod blocking;
mod builder;
pub mod context;
mod current;
mod driver;
pub mod fs;
mod handle;
mod metrics;
pub mod net;
pub mod runtime;
mod scheduler;
mod sync;
pub mod task;
pub mod time;

pub use task::{spawn, spawn_local};

/// The park / unpark driver contract ([`tempo_park`]), for writing a custom
/// driver to put under the scheduler with
/// [`Builder::with_park`](runtime::Builder::with_park).
pub use tempo_park as park;

/// Internals exposed to the loom models in `loom-tests/` only; not API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    pub use crate::scheduler::inject::InjectQueue;

    /// The blocking pool, alone, for `loom-tests/tests/blocking_pool.rs`.
    #[derive(Debug, Clone)]
    pub struct BlockingPool(crate::blocking::BlockingPool);

    impl BlockingPool {
        /// A pool of at most `max_threads` threads with this keep-alive.
        pub fn new(max_threads: usize, keep_alive: std::time::Duration) -> BlockingPool {
            BlockingPool(crate::blocking::BlockingPool::new(
                crate::blocking::PoolConfig {
                    max_threads,
                    keep_alive,
                    ..Default::default()
                },
            ))
        }

        /// Runs `f` on a pool thread.
        pub fn spawn<F, R>(&self, f: F) -> crate::task::JoinHandle<R>
        where
            F: FnOnce() -> R + Send + 'static,
            R: Send + 'static,
        {
            self.0.spawn(f)
        }

        /// Shuts the pool down; `true` if every thread exited.
        pub fn shutdown(&self, timeout: Option<std::time::Duration>) -> bool {
            self.0.shutdown(timeout)
        }

        /// Live threads.
        pub fn threads(&self) -> usize {
            self.0.stats().threads
        }
    }
}

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
