//! The free spawn functions: [`spawn`], [`spawn_local`] and
//! [`spawn_blocking`], which find the runtime entered on this thread.
//!
//! They are the public entry points of three different mechanisms (the
//! task system through a [`Handle`], the owning thread's run queue, the
//! blocking pool), gathered here so that each rule about "which runtime"
//! is written once: a runtime is found through [`current`](crate::current),
//! and outside one each function panics with a message naming the
//! `Handle` method to use instead. They are re-exported as `tempo::spawn`,
//! `tempo::spawn_local` and `tempo::task::{spawn, spawn_local,
//! spawn_blocking}`.

use std::future::Future;

use crate::runtime::Handle;
use crate::scheduler::core::try_spawn_local;
use crate::task::JoinHandle;

/// The handle of the runtime entered on this thread.
///
/// # Panics
///
/// Outside a runtime, naming `what` was called and `instead`, the
/// [`Handle`] method that works from anywhere.
#[track_caller]
fn current_handle(what: &str, instead: &str) -> Handle {
    match Handle::try_current() {
        Ok(handle) => handle,
        Err(_) => panic!(
            "{what} called outside a Tempo runtime: call it from inside \
             Runtime::block_on, a task, or after Runtime::enter, or use {instead}"
        ),
    }
}

/// Spawns a future onto the current thread's runtime.
///
/// The future runs on the runtime's thread; `spawn` may be called from the
/// runtime's thread or from any thread where the runtime is entered (see
/// [`Runtime::enter`](crate::runtime::Runtime::enter)). To spawn from an
/// arbitrary thread, use a [`Handle`](crate::runtime::Handle).
///
/// # Panics
///
/// Panics if called outside a Tempo runtime.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let h = tempo::spawn(async { "done" });
///     assert_eq!(h.await.unwrap(), "done");
/// });
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    current_handle("tempo::spawn", "Handle::spawn").spawn(future)
}

/// Spawns a `!Send` future onto the runtime that runs on this thread.
///
/// The future is polled and dropped on this thread only. Its waker may
/// still be woken from any thread.
///
/// # Panics
///
/// Panics if this thread does not own an entered Tempo runtime (called
/// outside `block_on` / `turn` / [`Runtime::enter`](crate::runtime::Runtime::enter),
/// or from another thread).
///
/// ```
/// use std::rc::Rc;
///
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// let shared = Rc::new(5);
/// let n = rt.block_on(async move {
///     tempo::spawn_local(async move { *shared + 1 }).await.unwrap()
/// });
/// assert_eq!(n, 6);
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match try_spawn_local(future) {
        Some(join) => join,
        None => panic!(
            "tempo::spawn_local must be called on the thread that runs a Tempo runtime, \
             inside Runtime::block_on, Runtime::turn, a task, or after Runtime::enter"
        ),
    }
}

/// Runs the blocking closure `f` on the current runtime's blocking pool
/// and returns a [`JoinHandle`] to await its result.
///
/// For work that would block the runtime's thread (file system calls,
/// blocking libraries, heavy computation). The pool starts threads on
/// demand, up to
/// [`Builder::max_blocking_threads`](crate::runtime::Builder::max_blocking_threads);
/// past that, closures queue. A panic in `f` resolves the JoinHandle to a
/// [`JoinError`](crate::task::JoinError) with `is_panic()`;
/// [`JoinHandle::abort`] stops a closure that has not started, never one
/// that runs. On shutdown, closures not started are dropped (resolving
/// cancelled) and running ones are waited for (see
/// [`Runtime`'s shutdown docs](crate::runtime::Runtime#shutdown)).
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
    current_handle("tempo::task::spawn_blocking", "Handle::spawn_blocking").spawn_blocking(f)
}
