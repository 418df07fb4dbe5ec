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

/// An owned permission to await a task's output: `Ok(output)`, or a
/// [`JoinError`] if the task panicked or was cancelled. Dropping it
/// *detaches* the task, which runs on.
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

    /// Cancels the task from any thread: unless it completed, its future is
    /// dropped on its runtime's thread and awaiting this handle yields a
    /// cancelled [`JoinError`].
    pub fn abort(&self) {
        if self.raw.state().transition_to_notified_and_cancel() {
            // SAFETY: the transition counted a reference for the scheduler.
            unsafe { self.raw.schedule() };
        }
    }

    /// A handle that can abort the task without owning its output (`Send`
    /// even when the output is not).
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::new(self.raw)
    }

    /// Returns the task's [`Id`]: the same as
    /// [`task::id()`](crate::task::id) inside the task.
    pub fn id(&self) -> Id {
        self.raw.header().id
    }

    /// `true` once the task has completed (returned, panicked or cancelled).
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }
}

impl<T> Unpin for JoinHandle<T> {}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // A join spends the cooperative budget, as a resource operation.
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
