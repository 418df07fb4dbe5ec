//! The acknowledgement of a transition request: a future, or a blocking
//! wait with a timeout, that never deadlocks a context.
//!
//! A one-shot slot with a waker (for a task) and a condition variable (for
//! a thread). A thread-local marker, set while task `n`'s state machine is
//! polled, makes an [`Ack`] of task `n` polled there resolve at once to
//! [`Transition::NotWaiting`]: that requester must not wait at all.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use tempo::runtime::Handle;

use crate::sync::{Condvar, Mutex, MutexGuard};
use crate::transition::{TaskState, Trigger};

/// The error type of the element's actions: any error, boxed.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// A request's result when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The transition ran: the task went from `from` to `to`.
    Complete {
        /// What was asked.
        trigger: Trigger,
        /// The state before.
        from: TaskState,
        /// The state after.
        to: TaskState,
    },
    /// Nothing to do in `state` (see [`Outcome::Skip`](crate::transition::Outcome::Skip)).
    Skipped {
        /// What was asked.
        trigger: Trigger,
        /// The state the task was in, and still is.
        state: TaskState,
    },
    /// The request is queued and will run, but waiting for it would have
    /// blocked a context thread or the task's own state machine.
    NotWaiting {
        /// What was asked.
        trigger: Trigger,
    },
}

/// A request's result when it failed.
#[derive(Debug)]
pub enum TransitionError {
    /// The trigger is not allowed in `state` (see
    /// [`Outcome::Refuse`](crate::transition::Outcome::Refuse)).
    Refused {
        /// What was asked.
        trigger: Trigger,
        /// The state the task was in, and still is.
        state: TaskState,
    },
    /// The element's action returned an error; the task applied the trigger
    /// its [`handle_action_error`](crate::TaskImpl::handle_action_error)
    /// returned.
    Failed {
        /// What was asked.
        trigger: Trigger,
        /// The state the action started from.
        state: TaskState,
        /// The action's error.
        error: BoxError,
    },
    /// [`Ack::wait`] gave up; the request still runs.
    TimedOut {
        /// What was asked.
        trigger: Trigger,
    },
    /// The state machine went away without answering (an action panicked).
    Gone {
        /// What was asked.
        trigger: Trigger,
    },
}

impl TransitionError {
    /// The trigger the failed request asked for.
    pub fn trigger(&self) -> Trigger {
        match self {
            TransitionError::Refused { trigger, .. }
            | TransitionError::Failed { trigger, .. }
            | TransitionError::TimedOut { trigger }
            | TransitionError::Gone { trigger } => *trigger,
        }
    }
}

impl fmt::Display for TransitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransitionError::Refused { trigger, state } => {
                write!(f, "{trigger} is not allowed in state {state}")
            }
            TransitionError::Failed {
                trigger,
                state,
                error,
            } => write!(f, "{trigger} from state {state} failed: {error}"),
            TransitionError::TimedOut { trigger } => {
                write!(f, "{trigger} was not acknowledged in time (it still runs)")
            }
            TransitionError::Gone { trigger } => {
                write!(f, "{trigger}: the task's state machine went away")
            }
        }
    }
}

impl StdError for TransitionError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            TransitionError::Failed { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

/// What a request results in.
pub type TransitionResult = Result<Transition, TransitionError>;

// No `const { .. }`: loom's `thread_local!` takes only an expression.
#[allow(clippy::missing_const_for_thread_local)]
mod in_machine {
    use std::cell::Cell;

    use crate::sync::thread_local;

    thread_local! {
        /// The id of the task whose state machine this thread is polling, or 0.
        pub(super) static IN_MACHINE: Cell<u64> = Cell::new(0);
    }
}
use in_machine::IN_MACHINE;

/// Marks this thread as running task `id`'s state machine until dropped.
pub(crate) struct MachineMark(u64);

impl MachineMark {
    pub(crate) fn enter(id: u64) -> MachineMark {
        MachineMark(IN_MACHINE.with(|m| m.replace(id)))
    }
}

impl Drop for MachineMark {
    fn drop(&mut self) {
        IN_MACHINE.with(|m| m.set(self.0));
    }
}

fn in_machine_of(id: u64) -> bool {
    IN_MACHINE.with(|m| m.get() == id)
}

/// The runtime a requester awaits its `Ack` on, and its thread.
struct Requester {
    handle: Handle,
    thread: ThreadId,
}

#[derive(Default)]
struct SlotInner {
    result: Option<TransitionResult>,
    waker: Option<Waker>,
    /// Set with `waker` when the `Ack` is polled on a Tempo runtime.
    requester: Option<Requester>,
    /// The sender went away (answered or not).
    closed: bool,
}

/// Where the state machine puts one request's result.
struct Slot {
    inner: Mutex<SlotInner>,
    done: Condvar,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            inner: Mutex::new(SlotInner::default()),
            done: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SlotInner> {
        self.inner.lock()
    }
}

/// The state machine's end of an [`Ack`]. Dropping it unanswered gives the
/// requester [`TransitionError::Gone`].
pub(crate) struct Acknowledger {
    slot: Arc<Slot>,
}

impl Acknowledger {
    pub(crate) fn send(self, result: TransitionResult) {
        let mut inner = self.slot.lock();
        inner.result = Some(result);
        // `Drop` closes, wakes and notifies.
    }
}

impl Drop for Acknowledger {
    /// Closes the slot and wakes the requester; an answer is control, so
    /// a requester's runtime on another thread is unparked too.
    fn drop(&mut self) {
        let (waker, requester) = {
            let mut inner = self.slot.lock();
            inner.closed = true;
            (inner.waker.take(), inner.requester.take())
        };
        self.slot.done.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
        if let Some(requester) = requester {
            if requester.thread != thread::current().id() {
                requester.handle.unpark();
            }
        }
    }
}

enum Repr {
    /// Answered when requested (no state machine was involved), or taken.
    Ready(Option<TransitionResult>),
    Waiting(Arc<Slot>),
}

/// The acknowledgement of a transition request: `.await` it, or
/// [`wait`](Ack::wait) for it from a thread that is not a context's, or
/// drop it (the request runs anyway).
///
/// Awaiting it never deadlocks: polled by the task's own state machine it
/// resolves at once to [`Transition::NotWaiting`].
///
/// ```
/// use std::time::Duration;
/// use tempo_media::{Task, TaskState, Transition, Trigger};
///
/// let task = Task::new();
/// // Not prepared: nothing to stop, answered at once.
/// let ack = task.unprepare();
/// assert_eq!(ack.trigger(), Trigger::Unprepare);
/// assert!(matches!(
///     ack.wait(Duration::from_secs(1)),
///     Ok(Transition::Skipped { state: TaskState::Unprepared, .. })
/// ));
/// ```
#[must_use = "an Ack tells how the transition went; the request runs even if it is dropped"]
pub struct Ack {
    trigger: Trigger,
    task: u64,
    repr: Repr,
}

impl Ack {
    pub(crate) fn ready(trigger: Trigger, task: u64, result: TransitionResult) -> Ack {
        Ack {
            trigger,
            task,
            repr: Repr::Ready(Some(result)),
        }
    }

    pub(crate) fn pair(trigger: Trigger, task: u64) -> (Acknowledger, Ack) {
        let slot = Arc::new(Slot::new());
        (
            Acknowledger { slot: slot.clone() },
            Ack {
                trigger,
                task,
                repr: Repr::Waiting(slot),
            },
        )
    }

    /// The trigger this acknowledges.
    pub fn trigger(&self) -> Trigger {
        self.trigger
    }

    /// The result, if it is there (without waiting).
    fn try_take(&mut self) -> Option<TransitionResult> {
        match &mut self.repr {
            Repr::Ready(result) => Some(result.take().expect("Ack polled after completion")),
            Repr::Waiting(slot) => {
                let mut inner = slot.lock();
                match inner.result.take() {
                    Some(result) => Some(result),
                    None if inner.closed => Some(Err(TransitionError::Gone {
                        trigger: self.trigger,
                    })),
                    None => None,
                }
            }
        }
    }

    /// Blocks the calling thread until the request is acknowledged, at most
    /// `timeout`.
    ///
    /// On a [`Context`](tempo::context::Context)'s thread it never blocks:
    /// it returns the result if there, else [`Transition::NotWaiting`]
    /// (`.await` the `Ack` there instead).
    ///
    /// # Errors
    ///
    /// The request's own error, or [`TransitionError::TimedOut`] after
    /// `timeout` (the request still runs).
    pub fn wait(mut self, timeout: Duration) -> TransitionResult {
        if let Some(result) = self.try_take() {
            return result;
        }
        if tempo::context::Context::current_weak().is_some() {
            return Ok(Transition::NotWaiting {
                trigger: self.trigger,
            });
        }
        let Repr::Waiting(slot) = &self.repr else {
            unreachable!("a ready Ack was answered by try_take")
        };
        let deadline = Instant::now().checked_add(timeout);
        let mut inner = slot.lock();
        loop {
            if let Some(result) = inner.result.take() {
                return result;
            }
            if inner.closed {
                return Err(TransitionError::Gone {
                    trigger: self.trigger,
                });
            }
            let left = match deadline {
                // A timeout too large for the clock: wait without one.
                None => Duration::MAX,
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            };
            if left.is_zero() {
                return Err(TransitionError::TimedOut {
                    trigger: self.trigger,
                });
            }
            inner = match deadline {
                None => slot.done.wait(inner),
                Some(_) => slot.done.wait_timeout(inner, left, &slot.inner).0,
            };
        }
    }
}

impl Future for Ack {
    type Output = TransitionResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<TransitionResult> {
        if let Some(result) = self.try_take() {
            return Poll::Ready(result);
        }
        if in_machine_of(self.task) {
            // The state machine that must answer is the one polling us.
            self.repr = Repr::Ready(None);
            return Poll::Ready(Ok(Transition::NotWaiting {
                trigger: self.trigger,
            }));
        }
        let Repr::Waiting(slot) = &self.repr else {
            unreachable!("a ready Ack was answered by try_take")
        };
        let mut inner = slot.lock();
        if inner.result.is_none() && !inner.closed {
            match &inner.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => {
                    inner.waker = Some(cx.waker().clone());
                    inner.requester = Handle::try_current().ok().map(|handle| Requester {
                        handle,
                        thread: thread::current().id(),
                    });
                }
            }
            return Poll::Pending;
        }
        drop(inner);
        match self.try_take() {
            Some(result) => Poll::Ready(result),
            None => unreachable!("the slot was answered or closed"),
        }
    }
}

impl fmt::Debug for Ack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ack")
            .field("trigger", &self.trigger)
            .field(
                "answered",
                &match &self.repr {
                    Repr::Ready(_) => true,
                    Repr::Waiting(slot) => slot.lock().result.is_some(),
                },
            )
            .finish()
    }
}
