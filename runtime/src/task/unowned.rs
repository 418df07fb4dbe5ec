//! Unowned tasks: closures run on another thread (the blocking pool) that
//! complete through an ordinary [`JoinHandle`].
//!
//! # Why a task and not a oneshot channel
//!
//! `spawn_blocking` returns the same `JoinHandle<T>` as `spawn`, as in
//! tokio, so that code moving between the two (or from tokio) needs no
//! other type, and `abort`, `is_finished` and `JoinError` behave the same.
//! The task allocation already is a oneshot cell: a stage for the output,
//! a join waker slot, and a state word that hands the output over. The
//! blocking pool only needs to *run* the task on its own thread.
//!
//! # Why that is sound off the owning thread
//!
//! An ordinary task is polled only on its runtime's thread, because its
//! future may be `!Send`. An unowned task is created only here, from a
//! `Send` closure with a `Send` output, wrapped in [`BlockingTask`]; it is
//! never put in an owned-task list. Exclusive access to its stage comes
//! from the state word's RUNNING bit, as for every task, so any one thread
//! at a time may run (or cancel) it.
//!
//! # Why it is never scheduled
//!
//! The task starts NOTIFIED, is run once, and [`BlockingTask`] is ready on
//! its first poll (a panic is caught and completes it too), so it is never
//! idle: a wake or an abort never hands it to its scheduler
//! ([`NoSchedule`]). An abort before it runs sets CANCELLED, and the run
//! then drops the closure instead of calling it; an abort while it runs has
//! no effect (a thread cannot be interrupted), as in tokio.

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

/// A queued unowned task: the `Notified` reference of a task made by
/// [`unowned`]. Dropping it without [`run`](UnownedTask::run) cancels the
/// task (its closure is dropped on the dropping thread, its JoinHandle
/// resolves cancelled).
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
