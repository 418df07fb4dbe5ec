//! The free spawn functions: [`spawn`], [`spawn_local`] and
//! [`spawn_blocking`], which find the runtime entered on this thread
//! through [`current`](crate::current) and, outside one, panic naming the
//! `Handle` method to use instead.

use std::future::Future;

use crate::runtime::Handle;
use crate::scheduler::core::try_spawn_local;
use crate::task::JoinHandle;

/// The handle of the runtime entered on this thread; outside one, panics
/// naming `what` was called and `instead`.
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

/// Spawns a future onto the current thread's runtime; it runs on the
/// runtime's thread. From other threads, use a [`Handle`].
///
/// Panics outside a Tempo runtime.
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

/// Spawns a `!Send` future onto the runtime that runs on this thread; it
/// is polled and dropped here only (its waker works from any thread).
///
/// Panics if this thread does not own an entered Tempo runtime.
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
/// (threads start on demand up to
/// [`max_blocking_threads`](crate::runtime::Builder::max_blocking_threads),
/// then closures queue). A panic resolves the handle to a panic
/// [`JoinError`](crate::task::JoinError); `abort` stops only a closure not
/// yet started. For shutdown, see
/// [`Runtime`'s docs](crate::runtime::Runtime#shutdown).
///
/// Panics outside a Tempo runtime; use [`Handle::spawn_blocking`] from other threads.
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
