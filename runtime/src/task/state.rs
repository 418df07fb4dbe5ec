//! The task state machine: one atomic word per task.
//!
//! # Layout
//!
//! ```text
//!  bit 0  RUNNING        a scheduler thread is polling (or cancelling) the task;
//!                        it has exclusive access to the future / output stage
//!  bit 1  COMPLETE       the stage holds the output (or has been consumed);
//!                        the future is gone
//!  bit 2  NOTIFIED       idle: a `Notified` reference sits in a run queue;
//!                        running: poll again when this poll returns
//!  bit 3  CANCELLED      abort or shutdown asked for the task to be cancelled
//!  bit 4  JOIN_INTEREST  the JoinHandle is alive and will read the output
//!  bit 5  JOIN_WAKER     the trailer holds the JoinHandle's waker; while set,
//!                        only the task side reads it, while clear only the
//!                        JoinHandle side touches it
//!  6..    reference count (one per Task / Notified / JoinHandle / Waker)
//! ```
//!
//! States: *idle* = none of RUNNING, NOTIFIED, COMPLETE; *scheduled* =
//! NOTIFIED; *running* = RUNNING (| NOTIFIED if woken meanwhile).
//!
//! # Transitions
//!
//! | transition                          | from                          | to                                   | result              |
//! |-------------------------------------|-------------------------------|--------------------------------------|---------------------|
//! | `transition_to_running`             | NOTIFIED, !RUNNING, !COMPLETE | RUNNING, !NOTIFIED                   | `Success` / `Cancelled` if CANCELLED |
//! |                                     | RUNNING or COMPLETE           | unchanged                            | `Failed`            |
//! | `transition_to_idle`                | RUNNING, CANCELLED            | unchanged                            | `Cancelled`         |
//! |                                     | RUNNING, NOTIFIED             | !RUNNING, NOTIFIED (poller's ref moves to the queue) | `OkNotified` |
//! |                                     | RUNNING                       | !RUNNING, ref - 1 (the poller's)     | `Ok` / `OkDealloc` if last |
//! | `transition_to_complete`            | RUNNING, !COMPLETE            | !RUNNING, COMPLETE                   | snapshot            |
//! | `transition_to_notified_by_ref`     | COMPLETE or NOTIFIED          | unchanged                            | `DoNothing`         |
//! |                                     | RUNNING                       | NOTIFIED                             | `DoNothing`         |
//! |                                     | idle                          | NOTIFIED, ref + 1                    | `Submit`            |
//! | `transition_to_notified_by_val`     | RUNNING                       | NOTIFIED, ref - 1                    | `DoNothing`         |
//! |                                     | COMPLETE or NOTIFIED          | ref - 1                              | `DoNothing` / `Dealloc` if last |
//! |                                     | idle                          | NOTIFIED (the caller's ref moves)    | `Submit`            |
//! | `transition_to_notified_and_cancel` | COMPLETE or CANCELLED         | unchanged                            | `false`             |
//! |                                     | RUNNING                       | NOTIFIED, CANCELLED                  | `false`             |
//! |                                     | NOTIFIED                      | CANCELLED                            | `false`             |
//! |                                     | idle                          | NOTIFIED, CANCELLED, ref + 1         | `true` (schedule)   |
//! | `transition_to_shutdown`            | !RUNNING, !COMPLETE           | RUNNING, CANCELLED                   | `true` (cancel it)  |
//! |                                     | otherwise                     | CANCELLED                            | `false`             |
//! | `unset_join_interested`             | COMPLETE                      | unchanged                            | `Err` (drop output) |
//! |                                     | !COMPLETE                     | !JOIN_INTEREST, !JOIN_WAKER          | `Ok`                |
//! | `set_join_waker`                    | !COMPLETE, !JOIN_WAKER        | JOIN_WAKER                           | `Ok`                |
//! |                                     | COMPLETE                      | unchanged                            | `Err`               |
//! | `unset_join_waker`                  | !COMPLETE, JOIN_WAKER         | !JOIN_WAKER                          | `Ok`                |
//! |                                     | COMPLETE                      | unchanged                            | `Err`               |
//! | `ref_inc` / `ref_dec`               | any                           | ref +/- 1                            | `ref_dec`: last?    |
//!
//! A new task starts as NOTIFIED | JOIN_INTEREST with two references: the
//! `Notified` handed to the scheduler and the `JoinHandle`. The scheduler's
//! owned-task list takes a third when it binds the task.
//!
//! `transition_to_idle` releases the poller's reference, or hands it to
//! the run queue if the task was woken meanwhile, in one read-modify-write.
//!
//! Every read-modify-write is `AcqRel`, so whoever wins a transition sees
//! the stage and trailer writes of whoever made the previous one.

use std::fmt;

use crate::sync::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire};

const RUNNING: usize = 1 << 0;
const COMPLETE: usize = 1 << 1;
const NOTIFIED: usize = 1 << 2;
const CANCELLED: usize = 1 << 3;
const JOIN_INTEREST: usize = 1 << 4;
const JOIN_WAKER: usize = 1 << 5;
const REF_SHIFT: usize = 6;
const REF_ONE: usize = 1 << REF_SHIFT;

/// State of a new task: scheduled, JoinHandle alive, two references.
const INITIAL: usize = NOTIFIED | JOIN_INTEREST | (2 * REF_ONE);

/// The atomic state word of a task.
pub(crate) struct State {
    value: AtomicUsize,
}

/// A copy of the state word at one instant.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot(usize);

/// Result of [`State::transition_to_running`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransitionToRunning {
    /// Poll the future.
    Success,
    /// The task was aborted: cancel it instead of polling.
    Cancelled,
    /// The task is already running or complete: drop the reference.
    Failed,
}

/// Result of [`State::transition_to_idle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransitionToIdle {
    /// Idle: wait for a wake. The poller's reference was released.
    Ok,
    /// Idle, and the poller's reference was the last: free the task.
    OkDealloc,
    /// Woken while running: schedule it again; the poller's reference is
    /// now the run queue's.
    OkNotified,
    /// Aborted while running: still RUNNING, cancel it now (the poller
    /// keeps its reference).
    Cancelled,
}

/// Result of a wake transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransitionToNotified {
    /// Nothing to do (already scheduled, running or complete).
    DoNothing,
    /// Hand a `Notified` reference to the scheduler.
    Submit,
    /// The caller's reference was the last: free the task.
    Dealloc,
}

impl State {
    pub(crate) fn new() -> State {
        State {
            value: AtomicUsize::new(INITIAL),
        }
    }

    pub(crate) fn load(&self) -> Snapshot {
        Snapshot(self.value.load(Acquire))
    }

    /// Applies `f` atomically; `f` returns the new value (or `None` to leave
    /// the word unchanged) and the transition's result.
    fn update<R>(&self, mut f: impl FnMut(Snapshot) -> (Option<Snapshot>, R)) -> R {
        let mut current = self.value.load(Acquire);
        loop {
            let (next, result) = f(Snapshot(current));
            let Some(next) = next else {
                return result;
            };
            match self
                .value
                .compare_exchange_weak(current, next.0, AcqRel, Acquire)
            {
                Ok(_) => return result,
                Err(actual) => current = actual,
            }
        }
    }

    #[inline]
    pub(crate) fn transition_to_running(&self) -> TransitionToRunning {
        self.update(|s| {
            assert!(s.is_notified(), "running a task that was not scheduled");
            if s.is_running() || s.is_complete() {
                return (None, TransitionToRunning::Failed);
            }
            let next = Snapshot((s.0 | RUNNING) & !NOTIFIED);
            let result = if s.is_cancelled() {
                TransitionToRunning::Cancelled
            } else {
                TransitionToRunning::Success
            };
            (Some(next), result)
        })
    }

    #[inline]
    pub(crate) fn transition_to_idle(&self) -> TransitionToIdle {
        self.update(|s| {
            assert!(s.is_running(), "idling a task that is not running");
            if s.is_cancelled() {
                return (None, TransitionToIdle::Cancelled);
            }
            let next = s.0 & !RUNNING;
            if s.is_notified() {
                (Some(Snapshot(next)), TransitionToIdle::OkNotified)
            } else {
                let next = ref_dec(next);
                let result = if next >> REF_SHIFT == 0 {
                    TransitionToIdle::OkDealloc
                } else {
                    TransitionToIdle::Ok
                };
                (Some(Snapshot(next)), result)
            }
        })
    }

    /// RUNNING -> COMPLETE. Returns the state after the transition.
    pub(crate) fn transition_to_complete(&self) -> Snapshot {
        let prev = Snapshot(self.value.fetch_xor(RUNNING | COMPLETE, AcqRel));
        assert!(prev.is_running(), "completing a task that is not running");
        assert!(!prev.is_complete(), "completing a task twice");
        Snapshot(prev.0 ^ (RUNNING | COMPLETE))
    }

    pub(crate) fn transition_to_notified_by_ref(&self) -> TransitionToNotified {
        self.update(|s| {
            if s.is_complete() || s.is_notified() {
                (None, TransitionToNotified::DoNothing)
            } else if s.is_running() {
                (
                    Some(Snapshot(s.0 | NOTIFIED)),
                    TransitionToNotified::DoNothing,
                )
            } else {
                (
                    Some(Snapshot(ref_inc(s.0 | NOTIFIED))),
                    TransitionToNotified::Submit,
                )
            }
        })
    }

    /// A wake that consumes the caller's reference.
    pub(crate) fn transition_to_notified_by_val(&self) -> TransitionToNotified {
        self.update(|s| {
            if s.is_running() {
                // The poller holds a reference, so this is never the last.
                let next = ref_dec(s.0 | NOTIFIED);
                (Some(Snapshot(next)), TransitionToNotified::DoNothing)
            } else if s.is_complete() || s.is_notified() {
                let next = ref_dec(s.0);
                let result = if next >> REF_SHIFT == 0 {
                    TransitionToNotified::Dealloc
                } else {
                    TransitionToNotified::DoNothing
                };
                (Some(Snapshot(next)), result)
            } else {
                (Some(Snapshot(s.0 | NOTIFIED)), TransitionToNotified::Submit)
            }
        })
    }

    /// Abort: returns `true` if the caller must schedule the task (with a
    /// new reference already counted).
    pub(crate) fn transition_to_notified_and_cancel(&self) -> bool {
        self.update(|s| {
            if s.is_complete() || s.is_cancelled() {
                (None, false)
            } else if s.is_running() || s.is_notified() {
                (Some(Snapshot(s.0 | NOTIFIED | CANCELLED)), false)
            } else {
                (Some(Snapshot(ref_inc(s.0 | NOTIFIED | CANCELLED))), true)
            }
        })
    }

    /// Shutdown: marks the task cancelled; returns `true` if the caller now
    /// owns it (RUNNING) and must cancel it.
    pub(crate) fn transition_to_shutdown(&self) -> bool {
        self.update(|s| {
            if s.is_running() || s.is_complete() {
                (Some(Snapshot(s.0 | CANCELLED)), false)
            } else {
                (Some(Snapshot(s.0 | CANCELLED | RUNNING)), true)
            }
        })
    }

    /// JoinHandle drop: `Err` if the task is complete (the caller then owns
    /// the output and drops it), else clears JOIN_INTEREST and JOIN_WAKER
    /// (the caller then owns the trailer's waker slot).
    pub(crate) fn unset_join_interested(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested());
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = Snapshot(s.0 & !(JOIN_INTEREST | JOIN_WAKER));
                (Some(next), Ok(next))
            }
        })
    }

    pub(crate) fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested());
            assert!(!s.is_join_waker_set());
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = Snapshot(s.0 | JOIN_WAKER);
                (Some(next), Ok(next))
            }
        })
    }

    pub(crate) fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested());
            assert!(s.is_join_waker_set());
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = Snapshot(s.0 & !JOIN_WAKER);
                (Some(next), Ok(next))
            }
        })
    }

    pub(crate) fn ref_inc(&self) {
        let prev = self
            .value
            .fetch_add(REF_ONE, crate::sync::Ordering::Relaxed);
        // A count this large means a reference leak; wrapping would free a
        // live task.
        if prev > usize::MAX / 2 {
            std::process::abort();
        }
    }

    /// Returns `true` if this was the last reference.
    pub(crate) fn ref_dec(&self) -> bool {
        let prev = self.value.fetch_sub(REF_ONE, AcqRel);
        assert!(prev >> REF_SHIFT >= 1, "task reference count underflow");
        prev >> REF_SHIFT == 1
    }
}

#[inline]
fn ref_inc(v: usize) -> usize {
    v + REF_ONE
}

#[inline]
fn ref_dec(v: usize) -> usize {
    assert!(v >> REF_SHIFT >= 1, "task reference count underflow");
    v - REF_ONE
}

impl Snapshot {
    pub(crate) fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    pub(crate) fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    pub(crate) fn is_notified(self) -> bool {
        self.0 & NOTIFIED != 0
    }
    pub(crate) fn is_cancelled(self) -> bool {
        self.0 & CANCELLED != 0
    }
    pub(crate) fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    pub(crate) fn is_join_waker_set(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    pub(crate) fn ref_count(self) -> usize {
        self.0 >> REF_SHIFT
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("running", &self.is_running())
            .field("complete", &self.is_complete())
            .field("notified", &self.is_notified())
            .field("cancelled", &self.is_cancelled())
            .field("join_interest", &self.is_join_interested())
            .field("join_waker", &self.is_join_waker_set())
            .field("refs", &self.ref_count())
            .finish()
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.load().fmt(f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const FLAGS: usize = (1 << REF_SHIFT) - 1;

    fn flags(state: &State) -> usize {
        state.load().0 & FLAGS
    }

    fn refs(state: &State) -> usize {
        state.load().ref_count()
    }

    /// A state that has been polled once and is now idle (the poller's
    /// reference released: the JoinHandle's is left).
    fn idle() -> State {
        let s = State::new();
        assert_eq!(s.transition_to_running(), TransitionToRunning::Success);
        assert_eq!(s.transition_to_idle(), TransitionToIdle::Ok);
        s
    }

    fn running() -> State {
        let s = State::new();
        assert_eq!(s.transition_to_running(), TransitionToRunning::Success);
        s
    }

    #[test]
    fn initial_state() {
        let s = State::new();
        assert_eq!(flags(&s), NOTIFIED | JOIN_INTEREST);
        assert_eq!(refs(&s), 2);
    }

    #[test]
    fn running_from_notified() {
        let s = State::new();
        assert_eq!(s.transition_to_running(), TransitionToRunning::Success);
        assert_eq!(flags(&s), RUNNING | JOIN_INTEREST);
        assert_eq!(refs(&s), 2);
    }

    #[test]
    fn running_from_notified_cancelled() {
        let s = State::new();
        assert!(!s.transition_to_notified_and_cancel()); // already NOTIFIED
        assert_eq!(s.transition_to_running(), TransitionToRunning::Cancelled);
        assert!(s.load().is_running());
    }

    #[test]
    fn running_fails_when_complete() {
        let s = State::new();
        assert!(s.transition_to_shutdown());
        s.transition_to_complete();
        assert_eq!(s.transition_to_running(), TransitionToRunning::Failed);
    }

    #[test]
    fn idle_plain() {
        let s = idle();
        assert_eq!(flags(&s), JOIN_INTEREST);
        assert_eq!(refs(&s), 1);
    }

    #[test]
    fn idle_releasing_the_last_reference_deallocates() {
        let s = running();
        assert!(!s.ref_dec()); // the JoinHandle goes away while it runs
        assert_eq!(s.transition_to_idle(), TransitionToIdle::OkDealloc);
        assert_eq!(refs(&s), 0);
    }

    #[test]
    fn idle_after_wake_while_running() {
        let s = running();
        assert_eq!(
            s.transition_to_notified_by_ref(),
            TransitionToNotified::DoNothing
        );
        assert_eq!(flags(&s), RUNNING | NOTIFIED | JOIN_INTEREST);
        assert_eq!(s.transition_to_idle(), TransitionToIdle::OkNotified);
        assert_eq!(flags(&s), NOTIFIED | JOIN_INTEREST);
        assert_eq!(refs(&s), 2); // the poller's, now the run queue's
    }

    #[test]
    fn idle_after_abort_while_running() {
        let s = running();
        assert!(!s.transition_to_notified_and_cancel());
        assert_eq!(s.transition_to_idle(), TransitionToIdle::Cancelled);
        assert!(s.load().is_running());
        assert_eq!(refs(&s), 2);
    }

    #[test]
    fn complete_from_running() {
        let s = running();
        let after = s.transition_to_complete();
        assert!(after.is_complete() && !after.is_running());
        assert_eq!(flags(&s), COMPLETE | JOIN_INTEREST);
    }

    #[test]
    #[should_panic(expected = "not running")]
    fn complete_requires_running() {
        idle().transition_to_complete();
    }

    #[test]
    fn wake_by_ref_idle_submits() {
        let s = idle();
        assert_eq!(
            s.transition_to_notified_by_ref(),
            TransitionToNotified::Submit
        );
        assert_eq!(flags(&s), NOTIFIED | JOIN_INTEREST);
        assert_eq!(refs(&s), 2); // the JoinHandle's and the new Notified
    }

    #[test]
    fn wake_by_ref_notified_or_complete_does_nothing() {
        let s = State::new();
        assert_eq!(
            s.transition_to_notified_by_ref(),
            TransitionToNotified::DoNothing
        );
        assert_eq!(refs(&s), 2);
        let s = running();
        s.transition_to_complete();
        assert_eq!(
            s.transition_to_notified_by_ref(),
            TransitionToNotified::DoNothing
        );
        assert!(!s.load().is_notified());
    }

    #[test]
    fn wake_by_val_idle_moves_reference() {
        let s = idle();
        s.ref_inc(); // the waker's reference
        assert_eq!(
            s.transition_to_notified_by_val(),
            TransitionToNotified::Submit
        );
        assert_eq!(refs(&s), 2); // the waker's became the Notified
        assert!(s.load().is_notified());
    }

    #[test]
    fn wake_by_val_running_drops_reference() {
        let s = running();
        s.ref_inc();
        assert_eq!(
            s.transition_to_notified_by_val(),
            TransitionToNotified::DoNothing
        );
        assert_eq!(refs(&s), 2);
        assert!(s.load().is_notified());
    }

    #[test]
    fn wake_by_val_last_reference_deallocs() {
        let s = running();
        s.transition_to_complete();
        assert!(!s.ref_dec()); // JoinHandle gone
        assert_eq!(
            s.transition_to_notified_by_val(),
            TransitionToNotified::Dealloc
        );
        assert_eq!(refs(&s), 0);
    }

    #[test]
    fn wake_by_val_notified_keeps_others() {
        let s = State::new();
        s.ref_inc();
        assert_eq!(
            s.transition_to_notified_by_val(),
            TransitionToNotified::DoNothing
        );
        assert_eq!(refs(&s), 2);
    }

    #[test]
    fn abort_idle_schedules() {
        let s = idle();
        assert!(s.transition_to_notified_and_cancel());
        assert_eq!(flags(&s), NOTIFIED | CANCELLED | JOIN_INTEREST);
        assert_eq!(refs(&s), 2);
        // Aborting twice does nothing more.
        assert!(!s.transition_to_notified_and_cancel());
        assert_eq!(refs(&s), 2);
    }

    #[test]
    fn abort_complete_does_nothing() {
        let s = running();
        s.transition_to_complete();
        assert!(!s.transition_to_notified_and_cancel());
        assert!(!s.load().is_cancelled());
    }

    #[test]
    fn shutdown_idle_takes_ownership() {
        let s = idle();
        assert!(s.transition_to_shutdown());
        assert_eq!(flags(&s), RUNNING | CANCELLED | JOIN_INTEREST);
    }

    #[test]
    fn shutdown_running_or_complete_only_marks() {
        let s = running();
        assert!(!s.transition_to_shutdown());
        assert!(s.load().is_cancelled());
        s.transition_to_complete();
        assert!(!s.transition_to_shutdown());
    }

    #[test]
    fn join_interest_unset_before_complete() {
        let s = idle();
        assert!(s.set_join_waker().is_ok());
        let after = s.unset_join_interested().unwrap();
        assert!(!after.is_join_interested() && !after.is_join_waker_set());
    }

    #[test]
    fn join_interest_unset_after_complete_fails() {
        let s = running();
        s.transition_to_complete();
        assert!(s.unset_join_interested().is_err());
        assert!(s.load().is_join_interested());
    }

    #[test]
    fn join_waker_set_and_unset() {
        let s = idle();
        assert!(s.set_join_waker().unwrap().is_join_waker_set());
        assert!(!s.unset_join_waker().unwrap().is_join_waker_set());
    }

    #[test]
    fn join_waker_fails_after_complete() {
        let s = running();
        s.transition_to_complete();
        assert!(s.set_join_waker().is_err());
        let s = running();
        s.set_join_waker().unwrap();
        s.transition_to_complete();
        assert!(s.unset_join_waker().is_err());
    }

    #[test]
    fn ref_count_last() {
        let s = State::new();
        s.ref_inc();
        assert!(!s.ref_dec());
        assert!(!s.ref_dec());
        assert!(s.ref_dec());
    }

    #[test]
    #[should_panic(expected = "underflow")]
    fn ref_count_underflow_panics() {
        let s = State::new();
        s.ref_dec();
        s.ref_dec();
        s.ref_dec();
    }
}
