//! [`JoinHandle`]: the spawner's side of a task.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::abort::AbortHandle;
use tempo_park::coop;

use super::error::JoinError;
use super::id::Id;
use super::raw::RawTask;

/// An owned permission to await a task's output, returned by
/// [`spawn`](crate::spawn) and [`spawn_local`](crate::spawn_local).
///
/// Awaiting it yields `Ok(output)`, or a [`JoinError`] if the task panicked
/// or was cancelled ([`abort`](JoinHandle::abort), or the runtime shut
/// down). Dropping it *detaches* the task: it keeps running and its output
/// is dropped when it finishes.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// let answer = rt.block_on(async {
///     let handle = tempo::spawn(async { 6 * 7 });
///     handle.await.unwrap()
/// });
/// assert_eq!(answer, 42);
/// ```
pub struct JoinHandle<T> {
    raw: RawTask,
    /// `JoinHandle<T>` is `Send`/`Sync` exactly when `T: Send`, and it
    /// behaves as if it owned a `T` for drop checking.
    _output: PhantomData<T>,
}

// SAFETY: the handle only reads the output (of type `T`, sent across with
// it) and touches the task through atomic state transitions and the
// JoinHandle-owned waker slot; polling the future never happens through it.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: every `&self` method (`abort`, `is_finished`) is a state-word
// operation, safe from any thread.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    pub(super) fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle {
            raw,
            _output: PhantomData,
        }
    }

    /// Cancels the task: if it has not completed, its future is dropped the
    /// next time its runtime gets to it (on the runtime's thread, never on
    /// the caller's), and awaiting this handle yields a cancelled
    /// [`JoinError`]. Callable from any thread; a task that already
    /// completed is not affected.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build()?;
    /// rt.block_on(async {
    ///     let join = tempo::spawn(std::future::pending::<()>());
    ///     join.abort();
    ///     assert!(join.await.unwrap_err().is_cancelled());
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn abort(&self) {
        if self.raw.state().transition_to_notified_and_cancel() {
            // SAFETY: the transition counted a reference for the scheduler.
            unsafe { self.raw.schedule() };
        }
    }

    /// Returns a handle that can [`abort`](AbortHandle::abort) the task
    /// without owning its output (it may be sent to another thread even
    /// when the output is `!Send`).
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::new(self.raw)
    }

    /// Returns the task's [`Id`]: the same as
    /// [`task::id()`](crate::task::id) inside the task.
    pub fn id(&self) -> Id {
        self.raw.header().id
    }

    /// Returns `true` once the task has completed (returned, panicked or
    /// been cancelled), i.e. when awaiting the handle will not wait.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build()?;
    /// rt.block_on(async {
    ///     let join = tempo::spawn(async { 5 });
    ///     assert!(!join.is_finished());
    ///     tempo::task::yield_now().await; // the task runs
    ///     assert!(join.is_finished());
    ///     assert_eq!(join.await.unwrap(), 5);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }
}

impl<T> Unpin for JoinHandle<T> {}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // A join is a resource operation: it spends the task's cooperative
        // budget (a loop awaiting finished handles must yield too).
        let progress = std::task::ready!(coop::poll_proceed(cx));
        let mut out: Poll<Result<T, JoinError>> = Poll::Pending;
        // SAFETY: we are the JoinHandle and `out` has the output's type.
        unsafe {
            self.raw.try_read_output(
                &mut out as *mut Poll<Result<T, JoinError>> as *mut (),
                cx.waker(),
            )
        };
        if out.is_ready() {
            progress.made_progress();
        }
        out
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // SAFETY: we are the JoinHandle, dropping ourselves.
        unsafe { self.raw.drop_join_handle() }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.raw.header().id)
            .field("state", self.raw.state())
            .finish()
    }
}
