//! `spawn_blocking`: run blocking code on a pool of threads, off the
//! runtime's thread.
//!
//! A Tempo runtime polls every task on one thread, so one task that blocks
//! stalls them all. [`spawn_blocking`](crate::task::spawn_blocking) (in
//! `spawn.rs`) hands a closure to the runtime's
//! blocking pool (see `pool.rs` for its protocol) and returns the same
//! [`JoinHandle`] as [`spawn`](crate::spawn): the closure runs as an
//! *unowned task* on a pool thread (see `task/unowned.rs`), and its output
//! (or panic) wakes the awaiting task through the usual join path.

pub(crate) mod pool;

pub(crate) use pool::{BlockingPool, PoolConfig};

use crate::runtime::{Handle, Runtime};
use crate::task::JoinHandle;

impl Handle {
    /// Runs the blocking closure `f` on the runtime's blocking pool, from
    /// any thread; see [`spawn_blocking`](crate::task::spawn_blocking).
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// let handle = rt.handle().clone();
    /// let join = std::thread::spawn(move || handle.spawn_blocking(|| "from the pool"))
    ///     .join()
    ///     .unwrap();
    /// assert_eq!(rt.block_on(join).unwrap(), "from the pool");
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.shared.blocking.spawn(f)
    }
}

impl Runtime {
    /// Runs the blocking closure `f` on this runtime's blocking pool; see
    /// [`spawn_blocking`](crate::task::spawn_blocking).
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// let join = rt.spawn_blocking(|| std::thread::current().name().map(str::to_owned));
    /// let name = rt.block_on(join).unwrap();
    /// assert_eq!(name.as_deref(), Some("tempo-blocking"));
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle().spawn_blocking(f)
    }
}
