//! [`Task`] and [`TaskRef`]: where transitions are requested.
//!
//! A request is queued in the task's shared core, then the state machine
//! (a Tempo task on the element's context) is woken and, if the request
//! comes from another thread, the context is unparked: the request is seen
//! at once, not at the context's next tick. The state machine answers
//! through the request's [`Ack`].
//!
//! The protocol between requesters and the state machine (see
//! `loom-tests/tests/media_request.rs` for its model): a requester pushes
//! under the core's lock, raises the `pending` flag and clones the
//! machine's waker under the same lock, then wakes it. The machine stores
//! its waker under that lock once (again only if its waker changes), and
//! then, before every `try_next` poll, reads the flag: one atomic load per
//! item, no lock, no waker comparison under a lock. Either the machine's
//! waker was stored before the requester's critical section (the requester
//! wakes it, and the machine's next poll reads the flag raised), or it is
//! stored after it (the machine reads the flag after storing, and finds it
//! raised); a request is never left waiting for another wake-up.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::thread::{self, ThreadId};

use tempo::context::Context;
use tempo::runtime::Handle;

use crate::ack::{Ack, Acknowledger, MachineMark, Transition, TransitionError};
use crate::machine;
use crate::task_impl::TaskImpl;
use crate::transition::{transition, Outcome, TaskState, Trigger};

/// A queued trigger.
pub(crate) struct Request {
    pub(crate) trigger: Trigger,
    /// `None` for triggers nobody waits for (error recovery, a drop).
    pub(crate) ack: Option<Acknowledger>,
    /// Applied by an error handler: if its action fails too, the task goes
    /// to `Error` instead of asking the handler again (no endless loop).
    pub(crate) recovery: bool,
}

impl Request {
    pub(crate) fn answer(self, result: Result<Transition, TransitionError>) {
        if let Some(ack) = self.ack {
            ack.send(result);
        }
    }
}

/// The running state machine: where to reach it.
struct Link {
    handle: Handle,
    thread: ThreadId,
}

pub(crate) struct Core {
    pub(crate) state: TaskState,
    pub(crate) queue: VecDeque<Request>,
    /// The state machine's waker: stored once by the machine, cloned (not
    /// taken) by requesters, so that it stays valid for the next request.
    pub(crate) waker: Option<Waker>,
    /// `Some` while a state machine runs (from prepare to unprepare).
    link: Option<Link>,
}

pub(crate) struct Shared {
    pub(crate) id: u64,
    /// Whether the queue holds a request: `!core.queue.is_empty()`, written
    /// under the lock after every change of the queue, read without it by
    /// the loop (see the module docs).
    pending: AtomicBool,
    core: Mutex<Core>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        // Every critical section leaves the core consistent (no element code
        // runs under the lock), so a poisoned lock is still sound.
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_state(&self, state: TaskState) {
        self.lock().state = state;
    }

    /// Whether a request waits, without taking the lock.
    pub(crate) fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Publishes whether `core`'s queue holds a request; called under the
    /// lock after every change of the queue.
    pub(crate) fn sync_pending(&self, core: &Core) {
        self.pending
            .store(!core.queue.is_empty(), Ordering::Release);
    }

    /// Queues `request` for the state machine and wakes it (see the module
    /// docs); answers it at once from the table if no state machine runs.
    fn request(&self, trigger: Trigger) -> Ack {
        let mut core = self.lock();
        if core.link.is_none() {
            let state = core.state;
            drop(core);
            return Ack::ready(trigger, self.id, answer_without_machine(state, trigger));
        }
        let (ack, answer) = Ack::pair(trigger, self.id);
        core.queue.push_back(Request {
            trigger,
            ack: Some(ack),
            recovery: false,
        });
        self.sync_pending(&core);
        self.wake(core);
        answer
    }

    /// Wakes the state machine after a push, and unparks its context if the
    /// caller is on another thread.
    fn wake(&self, core: MutexGuard<'_, Core>) {
        let waker = core.waker.clone();
        let remote = core
            .link
            .as_ref()
            .filter(|link| link.thread != thread::current().id())
            .map(|link| link.handle.clone());
        drop(core);
        if let Some(waker) = waker {
            waker.wake();
        }
        if let Some(handle) = remote {
            // The wake only queues the machine for the next tick; this cuts
            // the sleep short (throttling is for data, not for control).
            handle.unpark();
        }
    }

    /// The state machine ended (after unprepare, or because it was
    /// dropped): the task is unprepared, and requests still queued are
    /// answered as if there were no state machine.
    pub(crate) fn detach(&self) {
        let leftovers = {
            let mut core = self.lock();
            core.link = None;
            core.state = TaskState::Unprepared;
            core.waker = None;
            let leftovers = std::mem::take(&mut core.queue);
            self.sync_pending(&core);
            leftovers
        };
        for request in leftovers {
            let trigger = request.trigger;
            request.answer(answer_without_machine(TaskState::Unprepared, trigger));
        }
    }
}

/// The result of `trigger` when no state machine runs (the task is
/// unprepared): skipped or refused, from the one table.
fn answer_without_machine(
    state: TaskState,
    trigger: Trigger,
) -> Result<Transition, TransitionError> {
    match transition(state, trigger) {
        Outcome::Skip => Ok(Transition::Skipped { trigger, state }),
        // Running an action needs a state machine (and an element): only
        // `Task::prepare` starts one.
        Outcome::Refuse | Outcome::Run { .. } => Err(TransitionError::Refused { trigger, state }),
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An element's task: prepared on a context with a [`TaskImpl`], then
/// started, paused, flushed, stopped and unprepared from any thread.
///
/// Every request returns an [`Ack`] at once; `.await` it, [`wait`](Ack::wait)
/// for it (off a context's thread), or drop it. Requests are applied in the
/// order they were made.
///
/// Dropping the `Task` stops and unprepares it (on its context, without
/// waiting); [`TaskRef`]s do not keep it alive. To know when it is done,
/// `unprepare().wait(..)` before dropping.
///
/// ```
/// use std::time::Duration;
/// use tempo::context::Context;
/// use tempo_media::{FlowError, Task, TaskImpl, TaskState};
///
/// struct Idle;
/// impl TaskImpl for Idle {
///     type Item = ();
///     async fn try_next(&mut self) -> Result<(), FlowError> {
///         std::future::pending().await
///     }
///     async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> {
///         Ok(())
///     }
/// }
///
/// let context = Context::acquire("doc-task", Duration::from_millis(20))?;
/// let task = Task::new();
/// let second = Duration::from_secs(5);
/// task.prepare(Idle, context).wait(second)?;
/// task.start().wait(second)?;
/// assert_eq!(task.state(), TaskState::Started);
/// task.stop().wait(second)?;
/// task.unprepare().wait(second)?;
/// assert_eq!(task.state(), TaskState::Unprepared);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
                shared: Arc::new(Shared {
                    id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                    pending: AtomicBool::new(false),
                    core: Mutex::new(Core {
                        state: TaskState::Unprepared,
                        queue: VecDeque::new(),
                        waker: None,
                        link: None,
                    }),
                }),
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
    /// If a state machine already runs (the task is not unprepared, or an
    /// unprepare is still on its way), `imp` is dropped and the request is
    /// answered by the table from the current state (skipped if prepared,
    /// refused otherwise).
    pub fn prepare<I: TaskImpl>(&self, imp: I, context: Context) -> Ack {
        let shared = &self.task.shared;
        let mut core = shared.lock();
        if core.link.is_some() {
            drop(core);
            drop(imp);
            return shared.request(Trigger::Prepare);
        }
        let (ack, answer) = Ack::pair(Trigger::Prepare, shared.id);
        core.queue.push_back(Request {
            trigger: Trigger::Prepare,
            ack: Some(ack),
            recovery: false,
        });
        shared.sync_pending(&core);
        core.link = Some(Link {
            handle: context.handle().clone(),
            thread: context.thread_id(),
        });
        drop(core);
        let on_context = thread::current().id() == context.thread_id();
        let handle = context.handle().clone();
        let machine = Marked {
            id: shared.id,
            inner: machine::run(shared.clone(), imp, context),
        };
        // Detached: the state machine ends on its own after unprepare.
        if on_context {
            drop(handle.spawn(machine));
        } else {
            drop(handle.spawn_and_unpark(machine));
        }
        answer
    }

    /// Unprepares the task: runs [`unprepare`](TaskImpl::unprepare), ends
    /// the state machine and drops the element. Refused while the loop may
    /// run (started, paused, flushing): stop first.
    pub fn unprepare(&self) -> Ack {
        self.task.unprepare()
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
        let shared = &self.task.shared;
        let mut core = shared.lock();
        if core.link.is_none() {
            return;
        }
        for trigger in [Trigger::Stop, Trigger::Unprepare] {
            core.queue.push_back(Request {
                trigger,
                ack: None,
                recovery: false,
            });
        }
        shared.sync_pending(&core);
        shared.wake(core);
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

/// The state machine's future, marking the thread while it is polled (see
/// [`Ack`]'s "never deadlocks"). Held inline in the task (not boxed): one
/// allocation and one pointer hop less per poll of the loop.
struct Marked<F> {
    id: u64,
    inner: F,
}

impl<F: std::future::Future> std::future::Future for Marked<F> {
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let _mark = MachineMark::enter(self.id);
        // SAFETY: `inner` is structurally pinned: it is never moved out of
        // `Marked`, which has no `Drop` of its own and is `Unpin` only if
        // `F` is (the auto impl); this is the only place it is reached
        // through the pin.
        let inner = unsafe { self.map_unchecked_mut(|m| &mut m.inner) };
        inner.poll(cx)
    }
}
