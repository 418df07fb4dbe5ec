//! [`AbortHandle`]: the right to cancel a task, without its output. One
//! more counted reference that never touches the future or the output, so
//! it is `Send` and `Sync` whatever the task's types.

use std::fmt;

use super::id::Id;
use super::raw::RawTask;

/// Cancels a task from anywhere, without owning its output; from
/// [`JoinHandle::abort_handle`](super::JoinHandle::abort_handle) and
/// [`JoinSet::spawn`](super::JoinSet::spawn). Dropping it does nothing.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let handle = tempo::spawn(std::future::pending::<()>());
///     let abort = handle.abort_handle();
///     std::thread::spawn(move || abort.abort()).join().unwrap(); // from any thread
///     assert!(handle.await.unwrap_err().is_cancelled());
/// });
/// ```
pub struct AbortHandle {
    raw: RawTask,
}

// SAFETY: an AbortHandle only performs atomic state transitions and
// schedules the task through its (Send + Sync) scheduler, from any thread;
// it never reads or drops the future or the output.
unsafe impl Send for AbortHandle {}
// SAFETY: as for Send: every `&self` method is a state-word operation.
unsafe impl Sync for AbortHandle {}

impl AbortHandle {
    /// Takes a new reference to the task.
    pub(super) fn new(raw: RawTask) -> AbortHandle {
        raw.state().ref_inc();
        AbortHandle { raw }
    }

    /// Cancels the task, as [`JoinHandle::abort`](super::JoinHandle::abort).
    pub fn abort(&self) {
        if self.raw.state().transition_to_notified_and_cancel() {
            // SAFETY: the transition counted a reference for the scheduler.
            unsafe { self.raw.schedule() };
        }
    }

    /// `true` once the task has completed (returned, panicked or cancelled).
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }

    /// Returns the task's [`Id`].
    pub fn id(&self) -> Id {
        self.raw.header().id
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> AbortHandle {
        AbortHandle::new(self.raw)
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        self.raw.drop_reference();
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.raw.header().id)
            .finish()
    }
}
