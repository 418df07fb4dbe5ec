//! Model: tempo-media's request / acknowledge protocol on the crate's own
//! code (`media/src/shared.rs`, `machine.rs`, `ack.rs`, through its `sync`
//! shim): a requester on another thread pushes a trigger and awaits its
//! `Ack` while the state machine runs its `Started` loop.
//!
//! The state machine is the real one (`machine::run`), prepared with
//! `tempo_media::__loom::prepare_here` and polled by the model on its own
//! loom thread instead of on a context (a context is an OS thread, which
//! loom cannot run). The element's `try_next` yields `items` items, then
//! waits for good: only a request's wake can end the loop. A lost wake-up
//! leaves the machine (or the requester) parked, and loom reports a
//! deadlock; every request must be answered with its own trigger's result.
//!
//! Mutants, kept as tests (each must make loom report the deadlock):
//! `Mutant::FlagBeforeWaker` (the machine reads the flag before storing
//! a changed waker: a request fits between the read and the store and
//! wakes the old waker), `Mutant::TakeWaker` (a requester takes the waker
//! instead of cloning it: the next request finds none), `Mutant::StoreOnce`
//! (the machine keeps the first waker it stored, whatever its identity).
//! The first store of a machine's waker happens with the prepare already
//! queued, so a wrong order shows only when the waker changes.
#![cfg(loom)]

use std::future::pending;
use std::task::{Context, Wake, Waker};

use loom::thread;
use tempo::runtime::Builder;
use tempo_loom_tests::{block_on, is_mutant_run, must_catch};
use tempo_media::__loom::{prepare_here, task, Machine, Mutant};
use tempo_media::{
    FlowError, Task, TaskImpl, TaskState, Transition, TransitionError, TransitionResult, Trigger,
};

/// A waker nobody wakes (the machine's first, replaced one).
struct Unwoken;

impl Wake for Unwoken {
    fn wake(self: std::sync::Arc<Self>) {}
}

/// `try_next` yields `items` items, then waits for good.
struct Items(usize);

impl TaskImpl for Items {
    type Item = ();

    async fn try_next(&mut self) -> Result<(), FlowError> {
        if self.0 == 0 {
            pending::<()>().await;
        }
        self.0 -= 1;
        Ok(())
    }

    async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> {
        Ok(())
    }
}

/// A started task whose machine the caller polls.
fn started(mutant: Option<Mutant>, items: usize) -> (Task, Machine) {
    // Only for the link's handle: the model never unparks it (its loom
    // threads share one OS thread, so every request looks local).
    let rt = Builder::new_current_thread().build().unwrap();
    let task = task(mutant);
    let (prepared, machine) = prepare_here(&task, Items(items), rt.handle().clone());
    drop(prepared);
    drop(task.start());
    (task, machine)
}

fn complete(trigger: Trigger, from: TaskState, to: TaskState) -> Transition {
    Transition::Complete { trigger, from, to }
}

/// A pause from another thread races the loop; the requester then drops
/// the task (stop and unprepare, unanswered), which ends the machine.
fn pause_racing_the_loop(mutant: Option<Mutant>, items: usize) {
    let (task, machine) = started(mutant, items);
    let requester = thread::spawn(move || {
        let answer = block_on(task.pause());
        drop(task);
        answer.unwrap()
    });
    block_on(machine);
    assert_eq!(
        requester.join().unwrap(),
        complete(Trigger::Pause, TaskState::Started, TaskState::Paused)
    );
}

/// Two requesters on two threads race each other and the loop: a pause
/// (from a `TaskRef`) and a stop, after which its thread drops the task.
/// Each is answered with its own trigger's result, whatever the order.
fn two_triggers_racing_the_loop(mutant: Option<Mutant>) {
    let (task, machine) = started(mutant, 0);
    let other = task.task_ref();
    let pauser = thread::spawn(move || block_on(other.pause()));
    let stopper = thread::spawn(move || {
        let answer = block_on(task.stop());
        drop(task);
        answer
    });
    block_on(machine);
    assert_eq!(answered(pauser.join().unwrap()), Trigger::Pause);
    assert_eq!(answered(stopper.join().unwrap()), Trigger::Stop);
}

/// The trigger a result answers (a pause after the unprepare is refused).
fn answered(result: TransitionResult) -> Trigger {
    match result {
        Ok(Transition::Complete { trigger, .. } | Transition::Skipped { trigger, .. })
        | Err(TransitionError::Refused { trigger, .. }) => trigger,
        other => panic!("not answered by the machine: {other:?}"),
    }
}

/// The machine polled once under another waker (which goes away unwoken),
/// then under its own: the changed waker must be stored again, or the
/// requester wakes the old one and the machine waits forever.
fn a_changed_waker_is_stored_again(mutant: Option<Mutant>) {
    let (task, mut machine) = started(mutant, 0);
    let other = Waker::from(std::sync::Arc::new(Unwoken));
    let first = machine.as_mut().poll(&mut Context::from_waker(&other));
    drop(other);
    assert!(first.is_pending());
    let requester = thread::spawn(move || {
        let answer = block_on(task.pause());
        drop(task);
        answer.unwrap()
    });
    block_on(machine);
    assert_eq!(
        requester.join().unwrap(),
        complete(Trigger::Pause, TaskState::Started, TaskState::Paused)
    );
}

/// `try_next` waits from its first poll: only the wake-up can end the loop.
#[test]
fn trigger_racing_a_waiting_try_next() {
    loom::model(|| pause_racing_the_loop(None, 0));
}

/// One item is ready: the trigger may also land during `handle_item`.
#[test]
fn trigger_racing_the_loop_iteration() {
    loom::model(|| pause_racing_the_loop(None, 1));
}

#[test]
fn two_triggers_racing_the_loop_model() {
    loom::model(|| two_triggers_racing_the_loop(None));
}

#[test]
fn a_changed_waker_is_stored_again_model() {
    loom::model(|| a_changed_waker_is_stored_again(None));
}

/// Set in the child process that runs a mutant.
const MUTANT_ENV: &str = "TEMPO_LOOM_MEDIA_REQUEST_MUTANT";

#[test]
fn mutant_flag_before_waker_loses_the_wake_up() {
    if is_mutant_run(MUTANT_ENV) {
        loom::model(|| a_changed_waker_is_stored_again(Some(Mutant::FlagBeforeWaker)));
        return;
    }
    must_catch(
        "mutant_flag_before_waker_loses_the_wake_up",
        MUTANT_ENV,
        "deadlock",
    );
}

#[test]
fn mutant_take_waker_loses_the_second_wake_up() {
    if is_mutant_run(MUTANT_ENV) {
        loom::model(|| two_triggers_racing_the_loop(Some(Mutant::TakeWaker)));
        return;
    }
    must_catch(
        "mutant_take_waker_loses_the_second_wake_up",
        MUTANT_ENV,
        "deadlock",
    );
}

#[test]
fn mutant_store_once_wakes_the_old_waker() {
    if is_mutant_run(MUTANT_ENV) {
        loom::model(|| a_changed_waker_is_stored_again(Some(Mutant::StoreOnce)));
        return;
    }
    must_catch(
        "mutant_store_once_wakes_the_old_waker",
        MUTANT_ENV,
        "deadlock",
    );
}
