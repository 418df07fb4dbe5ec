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
//!
//! # Features
//!
//! One dependency line covers the stack; the features pass through to the
//! crates underneath:
//!
//! * `macros` (default): [`#[tempo::main]`](macro@main) and
//!   [`#[tempo::test]`](macro@test).
//! * `futures-io` (default): `futures_io::AsyncRead` / `AsyncWrite` for the
//!   [`net`] stream types (tempo-io's feature of the same name).
//! * `tokio-io`: `tokio::io::AsyncRead` / `AsyncWrite` for the same types,
//!   so tokio-util codecs run on Tempo (tempo-io's feature).
//! * `bytes`: the [`net`] receive methods that take a `bytes::BufMut`
//!   (`recv_buf`, `recv_buf_from`, `try_recv_buf`, `try_recv_buf_from`,
//!   `try_read_buf`; tempo-io's feature).
//! * `tokio-compat`: tokio's runtime-bound calls (`tokio::spawn`,
//!   `tokio::time`, `tokio::net`, `tokio::fs`, `tokio::process`,
//!   `tokio::task::spawn_blocking`, and the crates built on them) work
//!   inside every Tempo runtime, on a helper tokio runtime; see
//!   `tempo::tokio_compat` (a module only with the feature on).
//!
//! ```toml
//! tempo = { version = "0.1", features = ["tokio-io"] }
//! ```
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

/// Runs an `async fn main` on a new Tempo runtime (feature `macros`, on by
/// default).
///
/// The runtime is built with I/O and timers enabled
/// ([`Builder::enable_all`](runtime::Builder::enable_all)); with no
/// argument it runs the basic scheduler. Arguments, all optional:
///
/// * `max_throttling = "20ms"` (`"1s"`, `"500us"`; 1 ms to 1 s): the
///   throttling scheduler with this period
///   ([`Builder::max_throttling`](runtime::Builder::max_throttling));
/// * `timer_policy = "never_early"` or `"nearest_tick"`
///   ([`TimerPolicy`](runtime::TimerPolicy));
/// * `start_paused = true`: the paused clock
///   ([`Builder::start_paused`](runtime::Builder::start_paused));
/// * `flavor = "current_thread"`: accepted so that
///   `#[tokio::main(flavor = "current_thread")]` moves by renaming the
///   crate. It is the only flavor: another one, or `worker_threads`, is a
///   compile error, since a Tempo runtime runs its tasks on one thread;
/// * `crate = "path"`: where to find this crate if it is re-exported under
///   another name.
///
/// An unknown argument or a malformed value is a compile error pointing at
/// it and listing what is accepted.
///
/// ```
/// use std::time::Duration;
///
/// #[tempo::main(max_throttling = "20ms", timer_policy = "never_early")]
/// async fn main() -> std::io::Result<()> {
///     let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
///     let start = tempo::time::Instant::now();
///     tempo::time::sleep(Duration::from_millis(5)).await;
///     assert!(start.elapsed() >= Duration::from_millis(5)); // never early
///     drop(socket);
///     Ok(())
/// }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tempo_macros::main;

/// Runs an `async fn` as a `#[test]` on a new runtime of its own (feature
/// `macros`, on by default).
///
/// Takes the same arguments as [`macro@main`]. `start_paused = true` gives
/// the test the paused clock, so long timeouts take no time;
/// `max_throttling = "..."` runs it on the throttling scheduler.
///
/// ```no_run
/// use std::time::Duration;
///
/// #[tempo::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = tempo::time::Instant::now();
///     tempo::time::sleep(Duration::from_secs(3600)).await;
///     assert!(start.elapsed() >= Duration::from_secs(3600));
/// }
///
/// #[tempo::test(max_throttling = "10ms")]
/// async fn on_the_throttling_scheduler() {
///     assert_eq!(tempo::spawn(async { 1 }).await.unwrap(), 1);
/// }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tempo_macros::test;

/// Compile-fail checks of the macros' arguments: each block below must be
/// rejected at compile time. (The messages themselves are checked by the
/// unit tests of `tempo-macros`.)
///
/// An unknown argument:
///
/// ```compile_fail
/// #[tempo::main(max_throttle = "20ms")]
/// async fn main() {}
/// ```
///
/// The multi-thread flavor, and `worker_threads`:
///
/// ```compile_fail
/// #[tempo::main(flavor = "multi_thread")]
/// async fn main() {}
/// ```
///
/// ```compile_fail
/// #[tempo::test(worker_threads = 2)]
/// async fn t() {}
/// ```
///
/// A duration without a unit, or out of range:
///
/// ```compile_fail
/// #[tempo::main(max_throttling = "20")]
/// async fn main() {}
/// ```
///
/// ```compile_fail
/// #[tempo::main(max_throttling = "5s")]
/// async fn main() {}
/// ```
///
/// An unknown timer policy, a non-boolean `start_paused`:
///
/// ```compile_fail
/// #[tempo::main(timer_policy = "late")]
/// async fn main() {}
/// ```
///
/// ```compile_fail
/// #[tempo::test(start_paused = "yes")]
/// async fn t() {}
/// ```
///
/// A function that is not `async`:
///
/// ```compile_fail
/// #[tempo::main]
/// fn main() {}
/// ```
///
/// The same program with valid arguments compiles (so the failures above
/// are the arguments' fault):
///
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
