//! [`Task`] and [`TaskRef`]: where transitions are requested.
//!
//! A request is queued in the task's [shared core](crate::shared), which
//! wakes the state machine (unparking its context from another thread);
//! the machine answers through the request's [`Ack`].

use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use tempo::context::Context;

use crate::ack::{Ack, MachineMark};
use crate::machine::{self, Detach};
use crate::shared::{Link, Prepare, Shared};
use crate::task_impl::TaskImpl;
use crate::transition::{TaskState, Trigger};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A new task id; never 0 (the machine mark's "no machine").
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// An element's task: prepared on a context with a [`TaskImpl`], then
/// started, paused, flushed, stopped and unprepared from any thread.
///
/// Every request returns an [`Ack`] at once and is applied in request
/// order. Dropping the `Task` stops and unprepares it without waiting
/// ([`TaskRef`]s do not keep it alive).
pub struct Task {
    task: TaskRef,
}

/// A reference to a [`Task`] that requests transitions but does not own
/// it: hand it to other elements, to tasks on other contexts, or to the
/// element's own [`TaskImpl`] (the task's drop is not held back by it).
/// Once the `Task` is dropped and unprepared, requests are refused.
#[derive(Clone)]
pub struct TaskRef {
    shared: Arc<Shared>,
}

impl Task {
    /// A new, unprepared task.
    pub fn new() -> Task {
        Task {
            task: TaskRef {
                shared: Arc::new(Shared::new(next_id())),
            },
        }
    }

    /// A [`TaskRef`] to this task.
    pub fn task_ref(&self) -> TaskRef {
        self.task.clone()
    }

    /// Prepares the task: starts its state machine on `context` with the
    /// element `imp`, whose [`prepare`](TaskImpl::prepare) runs there.
    ///
    /// Runs in request order; if the task is prepared (or running) by its
    /// turn, `imp` is dropped and the table answers from that state.
    pub fn prepare<I: TaskImpl>(&self, imp: I, context: Context) -> Ack {
        let link = Link {
            handle: context.handle().clone(),
            thread: context.thread_id(),
        };
        let start = move |shared: Arc<Shared>| spawn_machine(shared, imp, context);
        self.task.shared.prepare(Prepare {
            link,
            start: Box::new(start),
        })
    }

    /// Unprepares the task: runs [`unprepare`](TaskImpl::unprepare), ends
    /// the state machine and drops the element. Refused while the loop may
    /// run (started, paused, flushing): stop first.
    pub fn unprepare(&self) -> Ack {
        self.task.unprepare()
    }
}

#[cfg(loom)]
impl Task {
    /// A task over `shared` (which carries a mutant).
    pub(crate) fn from_shared(shared: Shared) -> Task {
        Task {
            task: TaskRef {
                shared: Arc::new(shared),
            },
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.task.shared
    }
}

impl Default for Task {
    fn default() -> Self {
        Task::new()
    }
}

impl std::ops::Deref for Task {
    type Target = TaskRef;

    fn deref(&self) -> &TaskRef {
        &self.task
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.task
            .shared
            .request_unanswered(&[Trigger::Stop, Trigger::Unprepare]);
    }
}

impl TaskRef {
    /// The task's current state.
    pub fn state(&self) -> TaskState {
        self.shared.lock().state
    }

    /// Runs the loop (from prepared, paused or stopped).
    pub fn start(&self) -> Ack {
        self.shared.request(Trigger::Start)
    }

    /// Stops running the loop, cancelling a pending `try_next`.
    pub fn pause(&self) -> Ack {
        self.shared.request(Trigger::Pause)
    }

    /// Stops running the loop, cancelling a pending `try_next`.
    pub fn stop(&self) -> Ack {
        self.shared.request(Trigger::Stop)
    }

    /// Starts a flush: cancels a pending `try_next` and runs
    /// [`flush_start`](TaskImpl::flush_start), which drops in-flight data.
    pub fn flush_start(&self) -> Ack {
        self.shared.request(Trigger::FlushStart)
    }

    /// Ends a flush: a started task starts again, a paused one stays
    /// paused.
    pub fn flush_stop(&self) -> Ack {
        self.shared.request(Trigger::FlushStop)
    }

    /// See [`Task::unprepare`].
    pub fn unprepare(&self) -> Ack {
        self.shared.request(Trigger::Unprepare)
    }
}

impl fmt::Debug for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskRef")
            .field("id", &self.shared.id)
            .field("state", &self.state())
            .finish()
    }
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("id", &self.task.shared.id)
            .field("state", &self.state())
            .finish()
    }
}

/// Spawns `shared`'s state machine on `context`, running `imp`; a spawn
/// from another thread unparks the context, so the prepare runs now.
fn spawn_machine<I: TaskImpl>(shared: Arc<Shared>, imp: I, context: Context) {
    let on_context = thread::current().id() == context.thread_id();
    let handle = context.handle().clone();
    let id = shared.id;
    let machine = marked(id, machine::run(Detach::new(shared), imp, context));
    // Detached: the state machine ends on its own after unprepare.
    if on_context {
        drop(handle.spawn(machine));
    } else {
        drop(handle.spawn_and_unpark(machine));
    }
}

/// `inner` (the state machine's future), marking the thread while it is
/// polled (see [`Ack`]'s "never deadlocks").
pub(crate) async fn marked<F: Future>(id: u64, inner: F) -> F::Output {
    let mut inner = pin!(inner);
    poll_fn(|cx| {
        let _mark = MachineMark::enter(id);
        inner.as_mut().poll(cx)
    })
    .await
}
