//! `spawn_blocking`: run blocking code on a pool of threads, off the
//! runtime's thread.
//!
//! A Tempo runtime polls every task on one thread, so one task that blocks
//! stalls them all. [`spawn_blocking`] hands a closure to the runtime's
//! blocking pool (see `pool.rs` for its protocol) and returns the same
//! [`JoinHandle`] as [`spawn`](crate::spawn): the closure runs as an
//! *unowned task* on a pool thread (see `task/unowned.rs`), and its output
//! (or panic) wakes the awaiting task through the usual join path.

pub(crate) mod pool;

pub(crate) use pool::{BlockingPool, PoolConfig};

use crate::runtime::{Handle, Runtime};
use crate::task::JoinHandle;

/// Runs the blocking closure `f` on the current runtime's blocking pool
/// and returns a [`JoinHandle`] to await its result.
///
/// Use it for work that would block the runtime's thread: file system
/// calls (see [`tempo::fs`](crate::fs)), blocking libraries, heavy
/// computation. The pool starts threads on demand, up to
/// [`Builder::max_blocking_threads`](crate::runtime::Builder::max_blocking_threads)
/// (512 by default); past that, closures queue until a thread is free. An
/// idle pool thread exits after
/// [`Builder::thread_keep_alive`](crate::runtime::Builder::thread_keep_alive)
/// (10 s by default). Pool threads are named `tempo-blocking` unless
/// [`Builder::thread_name`](crate::runtime::Builder::thread_name) says
/// otherwise.
///
/// A panic in `f` is caught: the JoinHandle resolves to a
/// [`JoinError`](crate::task::JoinError) with `is_panic()`.
/// [`JoinHandle::abort`] prevents a closure that has not started from
/// running; one that runs cannot be interrupted and runs to the end.
///
/// When the runtime shuts down, closures that have not started are dropped
/// (their JoinHandles resolve cancelled); running ones are waited for (see
/// [`Runtime`'s shutdown docs](crate::runtime::Runtime#shutdown)). After
/// shutdown, `spawn_blocking` through a leftover [`Handle`] returns a
/// JoinHandle that resolves cancelled.
///
/// # Panics
///
/// Outside a Tempo runtime (as [`spawn`](crate::spawn)); use
/// [`Handle::spawn_blocking`] from other threads.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// let sum = rt.block_on(async {
///     tempo::task::spawn_blocking(|| (1..=100u64).sum::<u64>()).await.unwrap()
/// });
/// assert_eq!(sum, 5050);
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(f),
        Err(_) => panic!(
            "tempo::task::spawn_blocking called outside a Tempo runtime: call it from inside \
             Runtime::block_on, a task, or after Runtime::enter, or use Handle::spawn_blocking"
        ),
    }
}

impl Handle {
    /// Runs the blocking closure `f` on the runtime's blocking pool, from
    /// any thread; see [`spawn_blocking`].
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
    /// [`spawn_blocking`].
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
