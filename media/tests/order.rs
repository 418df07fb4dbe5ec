//! Requests from one thread take effect in the order they were made.
//!
//! Generated over the transition table: from every state a task can be
//! put in, every ordered pair of requests (so both orders of each pair) is
//! made back to back without waiting, and each answer must be the one the
//! table gives when the two run one after the other: the first from the
//! start state, the second from the state the first left.

use std::future::pending;
use std::time::Duration;

use tempo::context::Context;
use tempo_media::transition::{transition, Outcome};
use tempo_media::{
    Ack, BoxError, FlowError, Task, TaskImpl, TaskState, Transition, TransitionError,
    TransitionResult, Trigger,
};

const HANG: Duration = Duration::from_secs(20);

/// Every trigger a user can request: all but `Error`, which only an
/// element's error handlers return.
fn requests() -> impl Iterator<Item = Trigger> + Clone {
    Trigger::ALL.into_iter().filter(|t| *t != Trigger::Error)
}

/// An element whose loop never yields and whose actions all succeed,
/// except `start` if it is told to fail (the way to `Error`).
struct Quiet {
    fail_start: bool,
}

impl TaskImpl for Quiet {
    type Item = ();

    async fn start(&mut self) -> Result<(), BoxError> {
        if self.fail_start {
            return Err("told to fail".into());
        }
        Ok(())
    }

    async fn try_next(&mut self) -> Result<(), FlowError> {
        pending().await
    }

    async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> {
        Ok(())
    }
}

fn request(task: &Task, trigger: Trigger, context: &Context) -> Ack {
    prepare_or(task, trigger, context, false)
}

/// [`request`], with an element whose `start` fails if `fail_start`.
fn prepare_or(task: &Task, trigger: Trigger, context: &Context, fail_start: bool) -> Ack {
    match trigger {
        Trigger::Prepare => task.prepare(Quiet { fail_start }, context.clone()),
        Trigger::Unprepare => task.unprepare(),
        Trigger::Start => task.start(),
        Trigger::Pause => task.pause(),
        Trigger::Stop => task.stop(),
        Trigger::FlushStart => task.flush_start(),
        Trigger::FlushStop => task.flush_stop(),
        Trigger::Error => unreachable!("not a request"),
    }
}

/// What the table says `trigger` does in `state`: the answer, and the
/// state after it.
fn expected(state: TaskState, trigger: Trigger) -> (TransitionResult, TaskState) {
    match transition(state, trigger) {
        Outcome::Run { target, .. } => (
            Ok(Transition::Complete {
                trigger,
                from: state,
                to: target,
            }),
            target,
        ),
        Outcome::Skip => (Ok(Transition::Skipped { trigger, state }), state),
        Outcome::Refuse => (Err(TransitionError::Refused { trigger, state }), state),
    }
}

/// The requests, each awaited, that put a new task in `state`.
fn path_to(state: TaskState) -> &'static [Trigger] {
    use Trigger::*;
    match state {
        TaskState::Unprepared => &[],
        TaskState::Prepared => &[Prepare],
        TaskState::Started => &[Prepare, Start],
        TaskState::Paused => &[Prepare, Pause],
        TaskState::Flushing => &[Prepare, Start, FlushStart],
        TaskState::PausedFlushing => &[Prepare, Pause, FlushStart],
        TaskState::Stopped => &[Prepare, Start, Stop],
        // The start fails; the refused pause is answered after the
        // recovery (queued before the start's answer) put the task in
        // `Error`.
        TaskState::Error => &[Prepare, Start, Pause],
        TaskState::Preparing => unreachable!("not a resting state"),
    }
}

/// Every ordered pair of requests, from `start`.
fn every_pair_from(start: TaskState, name: &str) {
    let context = Context::acquire(name, Duration::from_millis(20)).unwrap();
    for first in requests() {
        for second in requests() {
            let task = Task::new();
            let fail_start = start == TaskState::Error;
            for &trigger in path_to(start) {
                let answer = prepare_or(&task, trigger, &context, fail_start).wait(HANG);
                assert!(answer.is_ok() || fail_start, "{trigger}: {answer:?}");
            }
            assert_eq!(task.state(), start);
            let a = request(&task, first, &context);
            let b = request(&task, second, &context);
            let (want_a, between) = expected(start, first);
            let (want_b, end) = expected(between, second);
            let case = format!("{first} then {second}, from {start}");
            assert_eq!(
                format!("{:?}", a.wait(HANG)),
                format!("{want_a:?}"),
                "{case}: the first answer"
            );
            assert_eq!(
                format!("{:?}", b.wait(HANG)),
                format!("{want_b:?}"),
                "{case}: the second answer"
            );
            assert_eq!(task.state(), end, "{case}: the state after both");
            // Stopped and unprepared on its context.
            drop(task);
        }
    }
}

#[test]
fn every_pair_from_unprepared() {
    every_pair_from(TaskState::Unprepared, "media-order-unprepared");
}

#[test]
fn every_pair_from_prepared() {
    every_pair_from(TaskState::Prepared, "media-order-prepared");
}

#[test]
fn every_pair_from_started() {
    every_pair_from(TaskState::Started, "media-order-started");
}

#[test]
fn every_pair_from_paused() {
    every_pair_from(TaskState::Paused, "media-order-paused");
}

#[test]
fn every_pair_from_flushing() {
    every_pair_from(TaskState::Flushing, "media-order-flushing");
}

#[test]
fn every_pair_from_paused_flushing() {
    every_pair_from(TaskState::PausedFlushing, "media-order-paused-flushing");
}

#[test]
fn every_pair_from_stopped() {
    every_pair_from(TaskState::Stopped, "media-order-stopped");
}

#[test]
fn every_pair_from_error() {
    every_pair_from(TaskState::Error, "media-order-error");
}

/// The case that was answered out of turn: an unprepare not awaited, then
/// at once a prepare with a new element. The prepare runs after the
/// unprepare, with the new element.
#[test]
fn a_prepare_right_after_an_unprepare_prepares_the_new_element() {
    let context = Context::acquire("media-order-reprepare", Duration::from_millis(20)).unwrap();
    let task = Task::new();
    task.prepare(Quiet { fail_start: false }, context.clone())
        .wait(HANG)
        .unwrap();
    let unprepare = task.unprepare();
    let prepare = task.prepare(Quiet { fail_start: false }, context.clone());
    assert!(matches!(
        unprepare.wait(HANG),
        Ok(Transition::Complete {
            to: TaskState::Unprepared,
            ..
        })
    ));
    assert_eq!(
        prepare.wait(HANG).unwrap(),
        Transition::Complete {
            trigger: Trigger::Prepare,
            from: TaskState::Unprepared,
            to: TaskState::Prepared,
        }
    );
    assert_eq!(
        task.start().wait(HANG).unwrap(),
        Transition::Complete {
            trigger: Trigger::Start,
            from: TaskState::Prepared,
            to: TaskState::Started,
        }
    );
}
