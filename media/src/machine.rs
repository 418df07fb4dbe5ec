//! The state machine: one Tempo task per prepared [`Task`](crate::Task), on
//! the element's context, from prepare to unprepare.
//!
//! It takes requests one at a time, asks the [transition
//! table](crate::transition::transition) what each does, runs the
//! element's action, and answers. In `Started` it runs the loop between
//! requests: before every `try_next` poll it looks whether a request waits
//! first (biased; one atomic load, see [`crate::shared`]), so a request
//! cancels a pending `try_next` at its await point, while `handle_item`,
//! awaited outside that check, runs to completion.
//!
//! A task of its own, so the element's code always runs on its context one
//! step at a time, whoever asked.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Poll, Waker};

use crate::ack::{BoxError, Transition, TransitionError};
#[cfg(loom)]
use crate::shared::Mutant;
use crate::shared::{Request, Shared};
use crate::task_impl::TaskImpl;
use crate::transition::{transition, Action, Outcome, TaskState, Trigger};

/// The waker the state machine last stored in the core, kept here so that
/// checking it takes no lock; requesters clone it, never take it (protocol:
/// [`crate::shared`]).
#[derive(Default)]
struct Registered(Option<Waker>);

impl Registered {
    /// Makes `waker` the stored one if it is not already (under the lock),
    /// then returns whether a request waits. The order matters: the flag is
    /// read after the waker is stored, so a request pushed before the store
    /// is seen here, and one pushed after it finds the waker to wake.
    fn request_pending(&mut self, shared: &Shared, waker: &Waker) -> bool {
        #[cfg(loom)]
        let early = (shared.mutant == Some(Mutant::FlagBeforeWaker)).then(|| shared.pending());
        let stored = self.0.as_ref().is_some_and(|w| w.will_wake(waker));
        #[cfg(loom)]
        let stored = stored || (shared.mutant == Some(Mutant::StoreOnce) && self.0.is_some());
        if !stored {
            let mut core = shared.lock();
            core.waker = Some(waker.clone());
            drop(core);
            self.0 = Some(waker.clone());
        }
        #[cfg(loom)]
        if let Some(early) = early {
            return early;
        }
        shared.pending()
    }

    /// The next request, or `None` with the waker stored (see
    /// [`Self::request_pending`]).
    fn poll_request(&mut self, shared: &Shared, waker: &Waker) -> Option<Request> {
        if !self.request_pending(shared, waker) {
            return None;
        }
        let mut core = shared.lock();
        let request = core.queue.pop_front();
        shared.sync_pending(&core);
        request
    }
}

/// Detaches the state machine from its task when the machine ends, however
/// it ends (after unprepare, dropped mid-action by a panic, or dropped
/// before its first poll: it is made with the machine's future).
pub(crate) struct Detach(Option<Arc<Shared>>);

impl Detach {
    pub(crate) fn new(shared: Arc<Shared>) -> Detach {
        Detach(Some(shared))
    }

    fn shared(&self) -> Arc<Shared> {
        self.0.clone().expect("detached once")
    }

    /// Detaches after `unprepare`, answering it first.
    fn finish(mut self, unprepare: Request, from: TaskState) {
        let shared = self.0.take().expect("detached once");
        let answer = Ok(Transition::Complete {
            trigger: Trigger::Unprepare,
            from,
            to: TaskState::Unprepared,
        });
        shared.detach(Some((unprepare, answer)));
    }
}

impl Drop for Detach {
    fn drop(&mut self) {
        if let Some(shared) = self.0.take() {
            shared.detach(None);
        }
    }
}

/// The state machine of `shared`'s task, running `imp` on `context`.
///
/// It holds `context`: a prepared element keeps its context running.
pub(crate) async fn run<I: TaskImpl, C: Send>(detach: Detach, mut imp: I, context: C) {
    let shared = detach.shared();
    let mut registered = Registered::default();
    let (unprepare, from) = loop {
        let request = poll_fn(|cx| match registered.poll_request(&shared, cx.waker()) {
            Some(request) => Poll::Ready(request),
            None => Poll::Pending,
        })
        .await;
        if let Some(done) = step(&shared, &mut imp, request).await {
            break done;
        }
        if shared.lock().state == TaskState::Started {
            run_loop(&shared, &mut registered, &mut imp).await;
        }
    };
    // Unprepared: the element is dropped before the answer, so that a
    // requester that waited for it finds the element's resources released.
    drop(imp);
    detach.finish(unprepare, from);
    drop(context);
}

/// Applies one request. Returns the request and its origin state if it
/// unprepared the task (the state machine ends).
async fn step<I: TaskImpl>(
    shared: &Shared,
    imp: &mut I,
    request: Request,
) -> Option<(Request, TaskState)> {
    let trigger = request.trigger;
    let origin = shared.lock().state;
    match transition(origin, trigger) {
        Outcome::Skip => request.answer(Ok(Transition::Skipped {
            trigger,
            state: origin,
        })),
        Outcome::Refuse => request.answer(Err(TransitionError::Refused {
            trigger,
            state: origin,
        })),
        Outcome::Run {
            action,
            during,
            target,
        } => {
            if let Some(during) = during {
                shared.set_state(during);
            }
            let result = match action {
                Some(action) => act(imp, action).await,
                None => Ok(()),
            };
            match result {
                Ok(()) if target == TaskState::Unprepared => return Some((request, origin)),
                Ok(()) => {
                    shared.set_state(target);
                    request.answer(Ok(Transition::Complete {
                        trigger,
                        from: origin,
                        to: target,
                    }));
                }
                Err(error) => {
                    shared.set_state(origin);
                    let next = if request.recovery {
                        Trigger::Error
                    } else {
                        imp.handle_action_error(trigger, origin, &error).await
                    };
                    // Queued before the answer: whoever acts on the answer
                    // queues behind the recovery.
                    shared.push_front(Request {
                        recovery: true,
                        ..Request::new(next, None)
                    });
                    request.answer(Err(TransitionError::Failed {
                        trigger,
                        state: origin,
                        error,
                    }));
                }
            }
        }
    }
    None
}

/// Runs the element's code of `action`.
async fn act<I: TaskImpl>(imp: &mut I, action: Action) -> Result<(), BoxError> {
    match action {
        Action::Prepare => imp.prepare().await,
        Action::Unprepare => {
            imp.unprepare().await;
            Ok(())
        }
        Action::Start => imp.start().await,
        Action::Pause => imp.pause().await,
        Action::Stop => imp.stop().await,
        Action::FlushStart => imp.flush_start().await,
        Action::FlushStop => imp.flush_stop().await,
        Action::FlushStopThenStart => {
            imp.flush_stop().await?;
            imp.start().await
        }
    }
}

/// The `Started` loop; returns when a request waits (or the loop failed
/// and queued its handler's trigger).
async fn run_loop<I: TaskImpl>(shared: &Shared, registered: &mut Registered, imp: &mut I) {
    loop {
        let next = {
            let mut try_next = pin!(imp.try_next());
            // Biased: a waiting request wins over an item, and drops the
            // pending `try_next` (cancelled at its await point).
            poll_fn(|cx| {
                if registered.request_pending(shared, cx.waker()) {
                    return Poll::Ready(None);
                }
                try_next.as_mut().poll(cx).map(Some)
            })
            .await
        };
        let result = match next {
            None => return,
            Some(Ok(item)) => imp.handle_item(item).await,
            Some(Err(error)) => Err(error),
        };
        // Each item spends coop budget: an always-ready `try_next` yields.
        tempo::task::consume_budget().await;
        if let Err(error) = result {
            let trigger = imp.handle_loop_error(error).await;
            shared.push_front(Request::new(trigger, None));
            return;
        }
    }
}
