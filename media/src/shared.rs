//! The core a [`Task`](crate::Task) shares with its state machine: the
//! queue of requests, the state, the machine's waker and where it runs.
//!
//! The protocol between requesters and the state machine (modelled on this
//! code by `loom-tests/tests/media_request.rs`): a requester pushes under
//! the core's lock, raises the `pending` flag and clones the machine's
//! waker under the same lock, then wakes it. The machine stores its waker
//! under that lock once (again only if its waker changes), then, before
//! every `try_next` poll, reads the flag: one atomic load per item, no
//! lock. Either the waker was stored before the requester's critical
//! section (the requester wakes it, and the machine's next poll reads the
//! flag raised), or after it (the machine reads the flag after storing,
//! and finds it raised): a request never waits for another wake-up.
//!
//! Order: requests run in the order they were queued, prepare included.
//! A prepare queued while a state machine runs carries its element; if an
//! unprepare before it ends that machine, [`Shared::detach`] starts the
//! next one with the rest of the queue, so nothing is answered out of
//! turn.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::Waker;
use std::thread::{self, ThreadId};

use tempo::runtime::Handle;

use crate::ack::{Ack, Acknowledger, Transition, TransitionError, TransitionResult};
use crate::sync::{AtomicBool, Mutex, MutexGuard, Ordering};
use crate::transition::{transition, Outcome, TaskState, Trigger};

/// A bug injected into the protocol's code, that the loom model must
/// catch (`loom-tests/tests/media_request.rs`).
#[cfg(loom)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// The machine reads the `pending` flag before it stores its waker.
    FlagBeforeWaker,
    /// A requester takes the machine's waker instead of cloning it.
    TakeWaker,
    /// The machine stores a waker only once, whatever its identity.
    StoreOnce,
}

/// A queued trigger.
pub(crate) struct Request {
    pub(crate) trigger: Trigger,
    /// `None` for triggers nobody waits for (error recovery, a drop).
    pub(crate) ack: Option<Acknowledger>,
    /// Applied by an error handler: if its action fails too, the task goes
    /// to `Error` instead of asking the handler again (no endless loop).
    pub(crate) recovery: bool,
    /// A prepare's element and context, until a state machine takes them.
    pub(crate) prepare: Option<Prepare>,
}

impl Request {
    pub(crate) fn new(trigger: Trigger, ack: Option<Acknowledger>) -> Request {
        Request {
            trigger,
            ack,
            recovery: false,
            prepare: None,
        }
    }

    /// Answers the requester; an element this request carried is dropped
    /// first, so that a requester that waited finds its resources released.
    pub(crate) fn answer(mut self, result: TransitionResult) {
        drop(self.prepare.take());
        if let Some(ack) = self.ack {
            ack.send(result);
        }
    }
}

/// Where a state machine runs.
pub(crate) struct Link {
    pub(crate) handle: Handle,
    pub(crate) thread: ThreadId,
}

/// What a state machine needs to start: where, and the call that spawns
/// it there (owning the element and its context).
pub(crate) struct Prepare {
    pub(crate) link: Link,
    pub(crate) start: Box<dyn FnOnce(Arc<Shared>) + Send>,
}

pub(crate) struct Core {
    pub(crate) state: TaskState,
    pub(crate) queue: VecDeque<Request>,
    /// The state machine's waker: stored once by the machine, cloned (not
    /// taken) by requesters, so that it stays valid for the next request.
    pub(crate) waker: Option<Waker>,
    /// `Some` while a state machine runs or is about to (from prepare to
    /// unprepare). Invariant: `None` implies an empty queue.
    link: Option<Link>,
}

pub(crate) struct Shared {
    pub(crate) id: u64,
    /// Whether the queue holds a request: `!core.queue.is_empty()`, written
    /// under the lock after every change of the queue, read without it by
    /// the loop (see the module docs).
    pending: AtomicBool,
    core: Mutex<Core>,
    /// A bug the loom model must catch, injected into this code.
    #[cfg(loom)]
    pub(crate) mutant: Option<Mutant>,
}

impl Shared {
    pub(crate) fn new(id: u64) -> Shared {
        Shared {
            id,
            pending: AtomicBool::new(false),
            core: Mutex::new(Core {
                state: TaskState::Unprepared,
                queue: VecDeque::new(),
                waker: None,
                link: None,
            }),
            #[cfg(loom)]
            mutant: None,
        }
    }

    /// Every critical section leaves the core consistent: no element code
    /// runs under the lock.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock()
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

    /// Queues `request` first (error recovery), for the running machine.
    pub(crate) fn push_front(&self, request: Request) {
        let mut core = self.lock();
        core.queue.push_front(request);
        self.sync_pending(&core);
    }

    /// Queues `trigger` for the state machine and wakes it (see the module
    /// docs); answers it at once from the table if no state machine runs.
    pub(crate) fn request(&self, trigger: Trigger) -> Ack {
        let core = self.lock();
        if core.link.is_none() {
            let state = core.state;
            drop(core);
            return Ack::ready(trigger, self.id, answer_without_machine(state, trigger));
        }
        let (ack, answer) = Ack::pair(trigger, self.id);
        self.push(core, Request::new(trigger, Some(ack)));
        answer
    }

    /// Queues a prepare carrying its element: starts a state machine with
    /// it if none runs, else queues it behind the requests made before it.
    pub(crate) fn prepare(self: &Arc<Self>, prepare: Prepare) -> Ack {
        let (ack, answer) = Ack::pair(Trigger::Prepare, self.id);
        let mut request = Request::new(Trigger::Prepare, Some(ack));
        request.prepare = Some(prepare);
        let mut core = self.lock();
        if core.link.is_some() {
            self.push(core, request);
        } else {
            core.queue.push_back(request);
            if let Some(start) = self.take_start(&mut core) {
                drop(core);
                start(self.clone());
            }
        }
        answer
    }

    /// Queues requests nobody waits for (a dropped `Task`), if a state
    /// machine runs.
    pub(crate) fn request_unanswered(&self, triggers: &[Trigger]) {
        let mut core = self.lock();
        if core.link.is_none() {
            return;
        }
        for &trigger in triggers {
            core.queue.push_back(Request::new(trigger, None));
        }
        self.sync_pending(&core);
        self.wake(core);
    }

    fn push(&self, mut core: MutexGuard<'_, Core>, request: Request) {
        core.queue.push_back(request);
        self.sync_pending(&core);
        self.wake(core);
    }

    /// Wakes the state machine after a push, and unparks its context if the
    /// caller is on another thread.
    fn wake(&self, core: MutexGuard<'_, Core>) {
        #[cfg(loom)]
        if self.mutant == Some(Mutant::TakeWaker) {
            let mut core = core;
            let waker = core.waker.take();
            drop(core);
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
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
            // the sleep short (control does not wait for a tick).
            handle.unpark();
        }
    }

    /// With no state machine linked: answers the queued requests up to the
    /// first prepare as the table says in `Unprepared`, links that
    /// prepare's context and returns the call that starts its machine (the
    /// prepare left first in the queue, its element moved into the call).
    /// Returns the answered requests' answers through `answered`.
    fn take_start_answering(
        &self,
        core: &mut Core,
        answered: &mut Vec<Request>,
    ) -> Option<Box<dyn FnOnce(Arc<Shared>) + Send>> {
        debug_assert!(core.link.is_none());
        while let Some(mut request) = core.queue.pop_front() {
            if let Some(prepare) = request.prepare.take() {
                core.link = Some(prepare.link);
                core.queue.push_front(request);
                self.sync_pending(core);
                return Some(prepare.start);
            }
            answered.push(request);
        }
        self.sync_pending(core);
        None
    }

    /// [`Self::take_start_answering`] for a queue that holds only the
    /// prepare just pushed.
    fn take_start(&self, core: &mut Core) -> Option<Box<dyn FnOnce(Arc<Shared>) + Send>> {
        let mut answered = Vec::new();
        let start = self.take_start_answering(core, &mut answered);
        debug_assert!(answered.is_empty());
        start
    }

    /// The state machine ended (after unprepare, or because it was
    /// dropped): the task is unprepared. `last` (the unprepare that ended
    /// it, with its answer) is answered first; requests still queued keep
    /// their order: those before the next prepare are answered as if there
    /// were no state machine, the rest go to the machine that prepare
    /// starts.
    pub(crate) fn detach(self: &Arc<Self>, last: Option<(Request, TransitionResult)>) {
        let mut answered = Vec::new();
        let start = {
            let mut core = self.lock();
            core.link = None;
            core.state = TaskState::Unprepared;
            core.waker = None;
            self.take_start_answering(&mut core, &mut answered)
        };
        if let Some((request, result)) = last {
            request.answer(result);
        }
        for request in answered {
            let trigger = request.trigger;
            request.answer(answer_without_machine(TaskState::Unprepared, trigger));
        }
        if let Some(start) = start {
            start(self.clone());
        }
    }
}

/// The result of `trigger` when no state machine runs (the task is
/// unprepared): skipped or refused, from the one table.
fn answer_without_machine(state: TaskState, trigger: Trigger) -> TransitionResult {
    match transition(state, trigger) {
        Outcome::Skip => Ok(Transition::Skipped { trigger, state }),
        // Running an action needs a state machine (and an element): only a
        // prepare starts one.
        Outcome::Refuse | Outcome::Run { .. } => Err(TransitionError::Refused { trigger, state }),
    }
}
