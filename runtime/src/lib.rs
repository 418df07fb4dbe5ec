//! Tempo: a single-thread async runtime with a throttling scheduler, for
//! thousands of low-rate network streams.
//!
//! Names follow tokio's where the meaning is the same, so moving a
//! current-thread tokio application is a change of imports
//! (`docs/coming-from-tokio.md`); the crate map is in `docs/architecture.md`.
//! A runtime runs every task on one thread: [`spawn`] takes `Send` futures
//! from any thread, [`spawn_local`] `!Send` ones on the runtime's thread.
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
//! # Features
//!
//! * `macros` (default): [`#[tempo::main]`](macro@main), [`#[tempo::test]`](macro@test).
//! * `futures-io` (default) / `tokio-io`: `AsyncRead` / `AsyncWrite` of
//!   `futures_io` / `tokio::io` for the [`net`] stream types.
//! * `bytes`: [`net`] receive methods into a `bytes::BufMut`.
//! * `tokio-compat`: tokio's runtime-bound calls work inside a Tempo
//!   runtime, on a helper tokio runtime (`tempo::tokio_compat`).
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(rust_2018_idioms)]

mod blocking;
mod builder;
pub mod context;
mod current;
mod driver;
pub mod fs;
mod handle;
pub mod io;
mod metrics;
pub mod net;
pub mod runtime;
mod scheduler;
pub mod signal;
mod spawn;
mod sync;
pub mod task;
pub mod time;
#[cfg(feature = "tokio-compat")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
pub mod tokio_compat;

pub use spawn::{spawn, spawn_local};

/// Runs an `async fn main` on a new Tempo runtime with I/O and timers
/// (feature `macros`). Optional arguments: `max_throttling = "20ms"` (1 ms
/// to 1 s), `timer_policy = "never_early"` / `"nearest_tick"`,
/// `start_paused = true`, `flavor = "current_thread"` (the only flavor,
/// accepted for tokio's syntax) and `crate = "path"`. Anything else is a
/// compile error.
///
/// ```
/// #[tempo::main(max_throttling = "20ms", timer_policy = "never_early")]
/// async fn main() -> std::io::Result<()> {
///     let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
///     drop(socket);
///     Ok(())
/// }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tempo_macros::main;

/// Runs an `async fn` as a `#[test]` on a runtime of its own (feature
/// `macros`); takes the same arguments as [`macro@main`].
///
/// ```no_run
/// #[tempo::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = tempo::time::Instant::now();
///     tempo::time::sleep(std::time::Duration::from_secs(3600)).await;
///     assert!(start.elapsed() >= std::time::Duration::from_secs(3600));
/// }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tempo_macros::test;

/// Each block below must fail to compile (messages: `tempo-macros` tests);
/// the last, valid one must compile.
/// ```compile_fail
/// #[tempo::main(max_throttle = "20ms")]
/// async fn main() {}
/// ```
/// ```compile_fail
/// #[tempo::main(flavor = "multi_thread")]
/// async fn main() {}
/// ```
/// ```compile_fail
/// #[tempo::test(worker_threads = 2)]
/// async fn t() {}
/// ```
/// ```compile_fail
/// #[tempo::main(max_throttling = "20")]
/// async fn main() {}
/// ```
/// ```compile_fail
/// #[tempo::main(max_throttling = "5s")]
/// async fn main() {}
/// ```
/// ```compile_fail
/// #[tempo::main(timer_policy = "late")]
/// async fn main() {}
/// ```
/// ```compile_fail
/// #[tempo::test(start_paused = "yes")]
/// async fn t() {}
/// ```
/// ```compile_fail
/// #[tempo::main]
/// fn main() {}
/// ```
/// ```
/// #[tempo::main(flavor = "current_thread", max_throttling = "20ms", start_paused = true)]
/// async fn main() {}
/// ```
#[cfg(all(doctest, feature = "macros"))]
pub struct MacroArgumentsCompileFail;

/// The park / unpark driver contract ([`tempo_park`]), for writing a custom
/// driver to put under the scheduler with
/// [`Builder::with_park`](runtime::Builder::with_park).
pub use tempo_park as park;

/// Internals exposed to the loom models in `loom-tests/` only; not API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    pub use crate::scheduler::inject::InjectQueue;
    #[cfg(unix)]
    pub use crate::signal::listeners::SignalListeners;

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
