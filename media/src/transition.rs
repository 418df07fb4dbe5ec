//! The transition table: every (state, trigger) pair and what it does, in
//! one pure function.
//!
//! Why one function: a lifecycle spread over `match`es in every request
//! method drifts (one path lets `start` through from `Error`, another does
//! not). Here the state machine, and the request path when no state
//! machine runs, both ask [`transition`]; the unit tests below pin every
//! one of the 9 x 8 cells.
//!
//! The table follows the semantics of GStreamer threadshare's `Task`:
//! flushing is orthogonal to paused (`Paused` + flush start =
//! `PausedFlushing`; `PausedFlushing` + start = `Flushing`, the loop waits
//! for flush stop), flush stop restarts a flushing task (its `flush_stop`
//! then its `start` action run), and `Error` is left only by unprepare.

use std::fmt;

/// The lifecycle state of a [`Task`](crate::Task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// No state machine: the initial state, and the state after unprepare.
    Unprepared,
    /// The `prepare` action is running.
    Preparing,
    /// Prepared (resources acquired), not started.
    Prepared,
    /// The loop runs: `try_next`, then `handle_item`, again and again.
    Started,
    /// Started once, the loop does not run; start resumes it.
    Paused,
    /// Started and flushing: in-flight data dropped, the loop does not run
    /// until flush stop.
    Flushing,
    /// Paused and flushing: flush stop goes back to `Paused`, start to
    /// `Flushing`.
    PausedFlushing,
    /// Stopped: the loop does not run; start starts it again.
    Stopped,
    /// An unrecoverable error; only unprepare leaves it.
    Error,
}

/// What is asked of a [`Task`](crate::Task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// Acquire resources ([`TaskImpl::prepare`](crate::TaskImpl::prepare)).
    Prepare,
    /// Release them ([`TaskImpl::unprepare`](crate::TaskImpl::unprepare)).
    Unprepare,
    /// Run the loop.
    Start,
    /// Stop running the loop, keep the data.
    Pause,
    /// Stop running the loop.
    Stop,
    /// Drop in-flight data, stop running the loop until flush stop.
    FlushStart,
    /// End a flush.
    FlushStop,
    /// Enter the error state (returned by the error handlers).
    Error,
}

impl Trigger {
    /// Every trigger, in declaration order.
    pub const ALL: [Trigger; 8] = [
        Trigger::Prepare,
        Trigger::Unprepare,
        Trigger::Start,
        Trigger::Pause,
        Trigger::Stop,
        Trigger::FlushStart,
        Trigger::FlushStop,
        Trigger::Error,
    ];
}

impl TaskState {
    /// Every state, in declaration order.
    pub const ALL: [TaskState; 9] = [
        TaskState::Unprepared,
        TaskState::Preparing,
        TaskState::Prepared,
        TaskState::Started,
        TaskState::Paused,
        TaskState::Flushing,
        TaskState::PausedFlushing,
        TaskState::Stopped,
        TaskState::Error,
    ];
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The element's code a transition runs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// [`TaskImpl::prepare`](crate::TaskImpl::prepare).
    Prepare,
    /// [`TaskImpl::unprepare`](crate::TaskImpl::unprepare).
    Unprepare,
    /// [`TaskImpl::start`](crate::TaskImpl::start).
    Start,
    /// [`TaskImpl::pause`](crate::TaskImpl::pause).
    Pause,
    /// [`TaskImpl::stop`](crate::TaskImpl::stop).
    Stop,
    /// [`TaskImpl::flush_start`](crate::TaskImpl::flush_start).
    FlushStart,
    /// [`TaskImpl::flush_stop`](crate::TaskImpl::flush_stop).
    FlushStop,
    /// [`TaskImpl::flush_stop`](crate::TaskImpl::flush_stop), then
    /// [`TaskImpl::start`](crate::TaskImpl::start): ending the flush of a
    /// started task restarts it.
    FlushStopThenStart,
}

/// What a trigger does in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Run `action` (if any), showing `during` while it runs (if any);
    /// on success the task is in `target`.
    Run {
        /// The element's code to run.
        action: Option<Action>,
        /// The state shown while the action runs (`Preparing`), if not the
        /// state the task was in.
        during: Option<TaskState>,
        /// The state once the action succeeded.
        target: TaskState,
    },
    /// Nothing to do: the task already is where the trigger leads (or the
    /// trigger means nothing there); the result is "skipped" with the state.
    Skip,
    /// The trigger is not allowed in this state (start before prepare,
    /// anything but unprepare after an error); the result is an error.
    Refuse,
}

const fn run(action: Action, target: TaskState) -> Outcome {
    Outcome::Run {
        action: Some(action),
        during: None,
        target,
    }
}

const fn to(target: TaskState) -> Outcome {
    Outcome::Run {
        action: None,
        during: None,
        target,
    }
}

/// The transition table: what `trigger` does in `state`.
///
/// ```
/// use tempo_media::transition::{transition, Action, Outcome};
/// use tempo_media::{TaskState, Trigger};
///
/// assert_eq!(
///     transition(TaskState::Paused, Trigger::FlushStart),
///     Outcome::Run {
///         action: Some(Action::FlushStart),
///         during: None,
///         target: TaskState::PausedFlushing,
///     }
/// );
/// assert_eq!(transition(TaskState::Started, Trigger::Start), Outcome::Skip);
/// assert_eq!(transition(TaskState::Error, Trigger::Start), Outcome::Refuse);
/// ```
pub const fn transition(state: TaskState, trigger: Trigger) -> Outcome {
    use Outcome::{Refuse, Skip};
    use TaskState as S;
    use Trigger as T;
    match (trigger, state) {
        (T::Prepare, S::Unprepared) => Outcome::Run {
            action: Some(Action::Prepare),
            during: Some(S::Preparing),
            target: S::Prepared,
        },
        (T::Prepare, S::Preparing | S::Prepared) => Skip,
        (T::Prepare, _) => Refuse,

        (T::Unprepare, S::Unprepared) => Skip,
        (T::Unprepare, S::Preparing | S::Prepared | S::Stopped | S::Error) => {
            run(Action::Unprepare, S::Unprepared)
        }
        // Running: stop it first (dropping a Task does both).
        (T::Unprepare, S::Started | S::Paused | S::Flushing | S::PausedFlushing) => Refuse,

        (T::Start, S::Prepared | S::Paused | S::Stopped) => run(Action::Start, S::Started),
        // Started while flushing: it starts once the flush stops.
        (T::Start, S::PausedFlushing) => to(S::Flushing),
        (T::Start, S::Started | S::Flushing) => Skip,
        (T::Start, S::Unprepared | S::Preparing | S::Error) => Refuse,

        (T::Pause, S::Prepared | S::Started | S::Stopped) => run(Action::Pause, S::Paused),
        (T::Pause, S::Flushing) => run(Action::Pause, S::PausedFlushing),
        (T::Pause, S::Paused | S::PausedFlushing) => Skip,
        (T::Pause, S::Unprepared | S::Preparing | S::Error) => Refuse,

        (T::Stop, S::Started | S::Paused | S::Flushing | S::PausedFlushing) => {
            run(Action::Stop, S::Stopped)
        }
        (T::Stop, S::Prepared | S::Stopped) => Skip,
        (T::Stop, S::Unprepared | S::Preparing | S::Error) => Refuse,

        (T::FlushStart, S::Started) => run(Action::FlushStart, S::Flushing),
        (T::FlushStart, S::Paused) => run(Action::FlushStart, S::PausedFlushing),
        (T::FlushStart, S::Flushing | S::PausedFlushing | S::Prepared | S::Stopped) => Skip,
        (T::FlushStart, S::Unprepared | S::Preparing | S::Error) => Refuse,

        (T::FlushStop, S::Flushing) => run(Action::FlushStopThenStart, S::Started),
        (T::FlushStop, S::PausedFlushing) => run(Action::FlushStop, S::Paused),
        (T::FlushStop, S::Started | S::Paused | S::Prepared | S::Stopped) => Skip,
        (T::FlushStop, S::Unprepared | S::Preparing | S::Error) => Refuse,

        (T::Error, S::Error) => Skip,
        (T::Error, _) => to(S::Error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action as A;
    use TaskState as S;
    use Trigger as T;

    /// One expected cell: `None` action + `Some(target)` = state change
    /// without element code.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Cell {
        Run(Option<Action>, TaskState),
        Skip,
        Refuse,
    }

    fn cell(outcome: Outcome) -> Cell {
        match outcome {
            Outcome::Run { action, target, .. } => Cell::Run(action, target),
            Outcome::Skip => Cell::Skip,
            Outcome::Refuse => Cell::Refuse,
        }
    }

    const R: Cell = Cell::Refuse;
    const K: Cell = Cell::Skip;
    const fn go(a: Action, t: TaskState) -> Cell {
        Cell::Run(Some(a), t)
    }

    /// The expected table, written out row by row (one row per state, one
    /// column per trigger in `Trigger::ALL` order: Prepare, Unprepare,
    /// Start, Pause, Stop, FlushStart, FlushStop, Error).
    const EXPECTED: [(TaskState, [Cell; 8]); 9] = [
        (
            S::Unprepared,
            [
                go(A::Prepare, S::Prepared),
                K,
                R,
                R,
                R,
                R,
                R,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Preparing,
            [
                K,
                go(A::Unprepare, S::Unprepared),
                R,
                R,
                R,
                R,
                R,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Prepared,
            [
                K,
                go(A::Unprepare, S::Unprepared),
                go(A::Start, S::Started),
                go(A::Pause, S::Paused),
                K,
                K,
                K,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Started,
            [
                R,
                R,
                K,
                go(A::Pause, S::Paused),
                go(A::Stop, S::Stopped),
                go(A::FlushStart, S::Flushing),
                K,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Paused,
            [
                R,
                R,
                go(A::Start, S::Started),
                K,
                go(A::Stop, S::Stopped),
                go(A::FlushStart, S::PausedFlushing),
                K,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Flushing,
            [
                R,
                R,
                K,
                go(A::Pause, S::PausedFlushing),
                go(A::Stop, S::Stopped),
                K,
                go(A::FlushStopThenStart, S::Started),
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::PausedFlushing,
            [
                R,
                R,
                Cell::Run(None, S::Flushing),
                K,
                go(A::Stop, S::Stopped),
                K,
                go(A::FlushStop, S::Paused),
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Stopped,
            [
                R,
                go(A::Unprepare, S::Unprepared),
                go(A::Start, S::Started),
                go(A::Pause, S::Paused),
                K,
                K,
                K,
                Cell::Run(None, S::Error),
            ],
        ),
        (
            S::Error,
            [R, go(A::Unprepare, S::Unprepared), R, R, R, R, R, K],
        ),
    ];

    #[test]
    fn every_state_and_trigger() {
        let mut checked = 0;
        for (state, row) in EXPECTED {
            for (trigger, expected) in Trigger::ALL.into_iter().zip(row) {
                assert_eq!(
                    cell(transition(state, trigger)),
                    expected,
                    "{trigger:?} in {state:?}"
                );
                checked += 1;
            }
        }
        // The expected table covers every state, each once.
        let states: Vec<_> = EXPECTED.iter().map(|(s, _)| *s).collect();
        assert_eq!(states, TaskState::ALL);
        assert_eq!(checked, 72);
    }

    #[test]
    fn only_prepare_shows_an_intermediate_state() {
        for state in TaskState::ALL {
            for trigger in Trigger::ALL {
                if let Outcome::Run { during, .. } = transition(state, trigger) {
                    let expected = (state, trigger) == (S::Unprepared, T::Prepare);
                    assert_eq!(
                        during,
                        expected.then_some(S::Preparing),
                        "{trigger:?} in {state:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn error_is_left_only_by_unprepare() {
        for trigger in Trigger::ALL {
            match transition(S::Error, trigger) {
                Outcome::Run { target, .. } => {
                    assert_eq!((trigger, target), (T::Unprepare, S::Unprepared))
                }
                Outcome::Skip => assert_eq!(trigger, T::Error),
                Outcome::Refuse => {}
            }
        }
    }
}
