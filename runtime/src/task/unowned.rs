//! Unowned tasks: closures run on another thread (the blocking pool) that
//! complete through an ordinary [`JoinHandle`], as tokio's `spawn_blocking`
//! (the task allocation already is a oneshot cell).
//!
//! Sound off the owning thread: an unowned task is made only here, from a
//! `Send` closure with a `Send` output wrapped in [`BlockingTask`], and is
//! never in an owned-task list; the RUNNING bit gives one thread at a time
//! exclusive access to its stage. Never scheduled ([`NoSchedule`]): it
//! starts NOTIFIED, runs once and is ready at its first poll, so it is
//! never idle. An abort before the run drops the closure; during, it has
//! no effect.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::raw::RawTask;
use super::{JoinHandle, Notified, Schedule};

/// The owner id of a task in no owned-task list (list ids start at 1).
const NO_OWNER: u64 = 0;

/// The scheduler of unowned tasks: none; see the module docs.
pub(crate) struct NoSchedule;

impl Schedule for NoSchedule {
    fn schedule(&self, _task: Notified<Self>) {
        unreachable!("an unowned task is never idle, so nothing schedules it");
    }
}

/// A future that calls its closure on its first poll.
struct BlockingTask<F>(Option<F>);

// The closure is never pinned in place: it is moved out to be called.
impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self
            .0
            .take()
            .expect("a blocking task is polled once: its first poll completes it");
        Poll::Ready(f())
    }
}

/// A queued unowned task (its `Notified` reference). Dropping it without
/// [`run`](UnownedTask::run) cancels the task.
pub(crate) struct UnownedTask {
    notified: Option<Notified<NoSchedule>>,
}

/// Creates an unowned task that runs `f`, and its JoinHandle.
pub(crate) fn unowned<F, R>(f: F) -> (UnownedTask, JoinHandle<R>)
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let raw = RawTask::new(BlockingTask(Some(f)), NoSchedule, NO_OWNER);
    let join = JoinHandle::new(raw);
    let task = UnownedTask {
        notified: Some(Notified::from_raw(raw)),
    };
    (task, join)
}

impl UnownedTask {
    /// Runs the closure on this thread (or drops it if the task was
    /// aborted), stores its output or panic, and wakes the JoinHandle.
    pub(crate) fn run(mut self) {
        let notified = self
            .notified
            .take()
            .expect("an UnownedTask holds its reference");
        let raw = notified.0.into_raw();
        // SAFETY: `raw.poll` consumes the Notified reference we just took
        // over; the future is a `BlockingTask` of a `Send` closure with a
        // `Send` output (the only kind `unowned` builds), so polling and
        // dropping it on this thread is sound, and the RUNNING bit gives
        // this thread exclusive access to the stage (module docs).
        unsafe { raw.poll() };
    }
}

impl Drop for UnownedTask {
    fn drop(&mut self) {
        if let Some(notified) = self.notified.take() {
            // SAFETY: `notified` holds a reference across the call, and the
            // future is `Send` (see `run`), so dropping it here is sound.
            unsafe { notified.0.raw.shutdown() };
        }
    }
}

// SAFETY: an UnownedTask only carries a pointer and a reference to a task
// whose future and output are `Send` (see `unowned`); the state word
// serialises every access to them.
unsafe impl Send for UnownedTask {}

impl std::fmt::Debug for UnownedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnownedTask").finish_non_exhaustive()
    }
}
