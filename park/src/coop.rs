//! The cooperative budget, as in tokio: each task poll gets
//! [`INITIAL_BUDGET`] units, every *ready* resource operation spends one,
//! and with none left operations wake the task and return `Pending`, so a
//! task looping on an always-ready resource cannot starve the others. It
//! lives here because the drivers that spend it and the scheduler that
//! refills it meet only in this crate.
//!
//! **Deferred wakes.** A scheduler lends its [`Deferred`] list to the thread
//! for a batch of polls ([`lend_deferred`], each poll under
//! [`budget_deferring`]): an exhausted poll leaves its waker there, and the
//! scheduler wakes the list after its next driver poll, so the driver is not
//! starved either. It must not block in its driver while the list is not
//! empty. Outside such a scope the task is woken at once.
//!
//! # Rules for a resource operation (part of the driver contract)
//!
//! 1. **Check first.** Before any work (before the syscall), call
//!    [`poll_proceed`]; if it returns `Pending`, the task was already woken:
//!    return `Pending`.
//! 2. **One unit per ready operation.** Call
//!    [`RestoreOnPending::made_progress`] if the operation completes; drop
//!    the guard if it ends up `Pending`, which gives the unit back.
//! 3. **Non-blocking attempts are free.** `try_*` methods never return
//!    `Pending` and do not consult the budget.
//!
//! Outside a scheduler's poll (no runtime, a driver used alone, inside
//! [`with_unconstrained`]) the budget is *unconstrained*.
//!
//! ```
//! use std::future::Future;
//! use std::pin::Pin;
//! use std::sync::Arc;
//! use std::task::{ready, Context, Poll, Wake, Waker};
//! use tempo_park::coop;
//!
//! /// A resource that is always ready, made cooperative.
//! struct AlwaysReady;
//!
//! impl Future for AlwaysReady {
//!     type Output = ();
//!     fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
//!         let progress = ready!(coop::poll_proceed(cx));
//!         progress.made_progress();
//!         Poll::Ready(())
//!     }
//! }
//!
//! // What a scheduler does around each task poll: a fresh budget.
//! struct Noop;
//! impl Wake for Noop {
//!     fn wake(self: Arc<Self>) {}
//! }
//! let waker = Waker::from(Arc::new(Noop));
//! let mut cx = Context::from_waker(&waker);
//! let ready = coop::budget(|| {
//!     (0..1000)
//!         .take_while(|_| Pin::new(&mut AlwaysReady).poll(&mut cx).is_ready())
//!         .count()
//! });
//! assert_eq!(ready, usize::from(coop::INITIAL_BUDGET));
//! ```

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::task::{Context, Poll, Waker};

use crate::sync::thread_local;

/// Units a scheduler gives each poll of a task (tokio's figure).
pub const INITIAL_BUDGET: u8 = 128;

/// What is left of the current poll's budget: `None` is unconstrained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Budget(Option<u8>);

impl Budget {
    const UNCONSTRAINED: Budget = Budget(None);

    fn has_remaining(self) -> bool {
        self.0.is_none_or(|units| units > 0)
    }
}

/// What is in force on this thread: the budget, and whether an exhausted
/// poll defers its wake to [`DEFERRED`]. One cell, aligned to be read and
/// written as one word.
#[derive(Debug, Clone, Copy)]
#[repr(align(4))]
struct State {
    budget: Budget,
    /// Set by [`lend_deferred`], kept by [`budget_deferring`], cleared by
    /// a plain [`budget`] for its own call.
    deferring: bool,
}

impl State {
    const OUTSIDE: State = State {
        budget: Budget::UNCONSTRAINED,
        deferring: false,
    };
}

#[cfg(not(loom))]
thread_local! {
    // `const`: no lazy-initialisation check on the hot path.
    static STATE: Cell<State> = const { Cell::new(State::OUTSIDE) };
    /// The wakers deferred during [`lend_deferred`] calls.
    static DEFERRED: RefCell<ThreadList> = const { RefCell::new(ThreadList::EMPTY) };
}

#[cfg(loom)]
thread_local! {
    // loom's macro takes no `const` block.
    static STATE: Cell<State> = Cell::new(State::OUTSIDE);
    static DEFERRED: RefCell<ThreadList> = RefCell::new(ThreadList::EMPTY);
}

/// The thread's list of deferred wakers, shared by nested
/// [`lend_deferred`] calls: the innermost call's wakers are those from
/// `start` on, moved to its scheduler's [`Deferred`] when it returns.
#[derive(Debug)]
struct ThreadList {
    wakers: Vec<Waker>,
    /// Where the innermost [`lend_deferred`] call's wakers begin.
    start: usize,
}

impl ThreadList {
    const EMPTY: ThreadList = ThreadList {
        wakers: Vec::new(),
        start: 0,
    };
}

/// The current state (outside any poll during thread tear-down).
#[inline]
fn current_state() -> State {
    STATE.try_with(Cell::get).unwrap_or(State::OUTSIDE)
}

#[inline]
fn set_state(state: State) {
    let _ = STATE.try_with(|cell| cell.set(state));
}

fn current() -> Budget {
    current_state().budget
}

/// Sets the budget only: a [`RestoreOnPending`] may outlive the scope that
/// set the list, so it must never put a list back.
#[inline]
fn set(budget: Budget) {
    let _ = STATE.try_with(|cell| {
        let state = cell.get();
        cell.set(State { budget, ..state });
    });
}

/// A scheduler's list of wakers of tasks whose budget ran out, woken after
/// its next driver poll (see the [module docs](self)). `!Sync`.
#[derive(Debug, Default)]
pub struct Deferred {
    wakers: RefCell<Vec<Waker>>,
}

impl Deferred {
    /// An empty list.
    pub const fn new() -> Deferred {
        Deferred {
            wakers: RefCell::new(Vec::new()),
        }
    }

    /// `true` if no waker waits.
    pub fn is_empty(&self) -> bool {
        self.wakers.borrow().is_empty()
    }

    /// How many wakers wait.
    pub fn len(&self) -> usize {
        self.wakers.borrow().len()
    }

    /// Wakes every waker kept, in order; returns how many. A scheduler
    /// calls it after polling its driver.
    pub fn wake_all(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        // `wake` runs arbitrary code, which must find the list free.
        let mut wakers = std::mem::take(&mut *self.wakers.borrow_mut());
        let woken = wakers.len();
        for waker in wakers.drain(..) {
            waker.wake();
        }
        let mut kept = self.wakers.borrow_mut();
        if kept.is_empty() {
            *kept = wakers;
        }
        woken
    }

    /// Drops every waker kept without waking it (shutdown).
    pub fn clear(&self) {
        // Dropped outside the borrow: a waker's destructor may be the last
        // reference to a task, whose drop runs arbitrary code.
        let wakers = std::mem::take(&mut *self.wakers.borrow_mut());
        drop(wakers);
    }
}

/// Keeps the waker of an exhausted poll in the lent list if one is in
/// force (once, if it equals the last one kept), else wakes it at once.
// Cold and out of line: keeps `poll_proceed` small.
#[cold]
#[inline(never)]
fn defer_or_wake(deferring: bool, waker: &Waker) {
    let kept = deferring
        && DEFERRED
            .try_with(|slot| {
                // Never busy during a poll; if it were, wake at once.
                let Ok(mut list) = slot.try_borrow_mut() else {
                    return false;
                };
                let kept_last = list.wakers.len() > list.start
                    && list.wakers.last().is_some_and(|last| last.will_wake(waker));
                if !kept_last {
                    list.wakers.push(waker.clone());
                }
                true
            })
            .unwrap_or(false);
    if !kept {
        waker.wake_by_ref();
    }
}

/// Runs `f` with a fresh budget of [`INITIAL_BUDGET`] units, then restores
/// the one in force before (also on panic). Schedulers call it around each
/// task poll.
#[inline]
pub fn budget<R>(f: impl FnOnce() -> R) -> R {
    with_state(
        |_| State {
            budget: Budget(Some(INITIAL_BUDGET)),
            deferring: false,
        },
        f,
    )
}

/// Lends `deferred` to this thread while `f` runs (a batch of polls): an
/// exhausted poll under [`budget_deferring`] leaves its waker there (see
/// the [module docs](self)), moved in when `f` returns or unwinds; a nested
/// call gets only its own polls' wakers.
pub fn lend_deferred<R>(deferred: &Deferred, f: impl FnOnce() -> R) -> R {
    /// Moves this call's wakers to `deferred`, unwinding included.
    struct Lent<'a> {
        deferred: &'a Deferred,
        /// Where the outer call's wakers began (`None`: tear-down).
        outer_start: Option<usize>,
    }

    impl Drop for Lent<'_> {
        fn drop(&mut self) {
            let Some(outer_start) = self.outer_start else {
                return;
            };
            let _ = DEFERRED.try_with(|slot| {
                let mut list = slot.borrow_mut();
                let start = list.start;
                if list.wakers.len() > start {
                    self.deferred
                        .wakers
                        .borrow_mut()
                        .extend(list.wakers.drain(start..));
                }
                list.start = outer_start;
            });
        }
    }

    let outer_start = DEFERRED
        .try_with(|slot| {
            let mut list = slot.borrow_mut();
            let len = list.wakers.len();
            std::mem::replace(&mut list.start, len)
        })
        .ok();
    let _lent = Lent {
        deferred,
        outer_start,
    };
    with_state(
        |outer| State {
            deferring: true,
            ..outer
        },
        f,
    )
}

/// [`budget`] for one poll of a batch under [`lend_deferred`]: exhaustion
/// leaves the wake in the lent list.
#[inline]
pub fn budget_deferring<R>(f: impl FnOnce() -> R) -> R {
    with_state(
        |outer| State {
            budget: Budget(Some(INITIAL_BUDGET)),
            deferring: outer.deferring,
        },
        f,
    )
}

/// Runs `f` with an unconstrained budget, then restores the one before.
pub fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    with_state(
        |outer| State {
            budget: Budget::UNCONSTRAINED,
            ..outer
        },
        f,
    )
}

/// Runs `f` with the state `inner` makes of the outer one, then restores
/// the outer state.
#[inline]
fn with_state<R>(inner: impl FnOnce(State) -> State, f: impl FnOnce() -> R) -> R {
    /// Restores the outer state on the way out, unwinding included.
    struct Reset(State);

    impl Drop for Reset {
        #[inline]
        fn drop(&mut self) {
            set_state(self.0);
        }
    }

    let outer = current_state();
    let _reset = Reset(outer);
    set_state(inner(outer));
    f()
}

/// `true` if the current poll may still do a ready operation (always, when
/// unconstrained).
pub fn has_budget_remaining() -> bool {
    current().has_remaining()
}

/// Asks to do one resource operation: `Ready(guard)` with one unit taken,
/// or `Pending` with the task already woken (or its wake deferred). Drop
/// the guard without [`made_progress`](RestoreOnPending::made_progress) if
/// the operation ends up `Pending`: the unit is given back.
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    let state = current_state();
    let before = state.budget;
    match before.0 {
        None => Poll::Ready(RestoreOnPending::new(None)),
        Some(0) => {
            defer_or_wake(state.deferring, cx.waker());
            Poll::Pending
        }
        Some(units) => {
            set_state(State {
                budget: Budget(Some(units - 1)),
                ..state
            });
            Poll::Ready(RestoreOnPending::new(Some(before)))
        }
    }
}

/// Gives the unit taken by [`poll_proceed`] back when dropped, unless the
/// operation [made progress](RestoreOnPending::made_progress). `!Send`.
#[derive(Debug)]
#[must_use = "dropping the guard at once gives the unit back"]
pub struct RestoreOnPending {
    /// The budget before the unit was taken; `None` once progress was made.
    restore: Cell<Option<Budget>>,
    _not_send: PhantomData<*mut ()>,
}

impl RestoreOnPending {
    #[inline]
    fn new(restore: Option<Budget>) -> RestoreOnPending {
        RestoreOnPending {
            restore: Cell::new(restore),
            _not_send: PhantomData,
        }
    }

    /// The operation completed: the unit stays spent.
    #[inline]
    pub fn made_progress(&self) {
        self.restore.set(None);
    }
}

impl Drop for RestoreOnPending {
    #[inline]
    fn drop(&mut self) {
        if let Some(before) = self.restore.get() {
            set(before);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counting() -> (Arc<CountingWaker>, Waker) {
        let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
        (counter.clone(), Waker::from(counter))
    }

    /// Takes units until `poll_proceed` refuses; returns how many it gave.
    fn drain(cx: &mut Context<'_>) -> usize {
        let mut taken = 0;
        while taken <= 1000 {
            match poll_proceed(cx) {
                Poll::Ready(guard) => guard.made_progress(),
                Poll::Pending => break,
            }
            taken += 1;
        }
        taken
    }

    #[test]
    fn outside_a_poll_the_budget_is_unconstrained() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        assert!(has_budget_remaining());
        for _ in 0..1000 {
            assert!(poll_proceed(&mut cx).is_ready());
        }
        assert_eq!(wakes.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_budget_gives_initial_units_then_wakes_and_refuses() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        budget(|| {
            assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET));
            assert!(!has_budget_remaining());
        });
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert!(
            has_budget_remaining(),
            "the outer (unconstrained) budget is back"
        );
    }

    #[test]
    fn a_pending_operation_gives_its_unit_back() {
        let (_, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        budget(|| {
            for _ in 0..1000 {
                let guard = poll_proceed(&mut cx);
                assert!(guard.is_ready());
                drop(guard); // no progress: the unit returns
            }
            assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET));
        });
    }

    #[test]
    fn nested_budgets_restore_the_outer_one() {
        let (_, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        budget(|| {
            for _ in 0..10 {
                let progress = poll_proceed(&mut cx);
                assert!(progress.map(|g| g.made_progress()).is_ready());
            }
            // An inner poll (a runtime turned from inside a task) gets its
            // own fresh budget ...
            budget(|| assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET)));
            // ... and unconstrained code never runs out ...
            with_unconstrained(|| {
                for _ in 0..1000 {
                    let progress = poll_proceed(&mut cx);
                    assert!(progress.map(|g| g.made_progress()).is_ready());
                }
                assert!(has_budget_remaining());
            });
            // ... and neither touches the outer poll's remaining units.
            assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET) - 10);
        });
    }

    #[test]
    fn under_budget_deferring_an_exhausted_poll_leaves_its_wake_in_the_list() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let deferred = Deferred::new();
        lend_deferred(&deferred, || {
            budget_deferring(|| {
                assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET));
                assert!(poll_proceed(&mut cx).is_pending());
            })
        });
        assert_eq!(wakes.0.load(Ordering::Relaxed), 0, "not woken yet");
        assert_eq!(deferred.len(), 1, "kept once");
        assert_eq!(deferred.wake_all(), 1);
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert!(deferred.is_empty());
        assert!(!current_state().deferring, "the list left with its scope");
    }

    #[test]
    fn a_plain_budget_inside_a_deferring_one_wakes_at_once() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let deferred = Deferred::new();
        lend_deferred(&deferred, || {
            budget_deferring(|| {
                // A runtime turned from inside a task: its own rules apply.
                budget(|| drain(&mut cx));
                assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
                // Back in the outer poll: its budget and its list.
                assert_eq!(drain(&mut cx), usize::from(INITIAL_BUDGET));
            })
        });
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert_eq!(deferred.len(), 1);
        deferred.clear();
        assert!(deferred.is_empty());
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1, "cleared, not woken");
    }

    #[test]
    fn a_guard_dropped_after_its_scope_restores_no_list() {
        let (_, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let deferred = Deferred::new();
        let guard = lend_deferred(&deferred, || {
            budget_deferring(|| match poll_proceed(&mut cx) {
                Poll::Ready(guard) => guard,
                Poll::Pending => unreachable!("a fresh budget"),
            })
        });
        drop(guard);
        assert!(!current_state().deferring);
    }

    #[test]
    fn nested_deferring_schedulers_keep_their_own_lists() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let (outer, inner) = (Deferred::new(), Deferred::new());
        lend_deferred(&outer, || {
            budget_deferring(|| {
                lend_deferred(&inner, || budget_deferring(|| drain(&mut cx)));
                assert_eq!(inner.len(), 1, "the inner scheduler's list has its wake");
                drain(&mut cx);
            })
        });
        assert_eq!(outer.len(), 1);
        assert_eq!(inner.len(), 1);
        assert_eq!(wakes.0.load(Ordering::Relaxed), 0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lend_deferred(&outer, || budget_deferring(|| panic!("boom")));
        }));
        assert!(caught.is_err());
        assert_eq!(outer.len(), 1, "a panicking poll gives the list back");
    }

    #[test]
    fn a_nested_scheduler_takes_only_its_own_wakes() {
        let (wakes, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let (outer, inner) = (Deferred::new(), Deferred::new());
        lend_deferred(&outer, || {
            // The outer poll runs out first: its wake waits in the thread's
            // list while the inner scheduler runs.
            budget_deferring(|| drain(&mut cx));
            budget_deferring(|| {
                // The same waker runs out in the inner batch: kept for the
                // inner scheduler, not taken for a duplicate of the outer's.
                lend_deferred(&inner, || budget_deferring(|| drain(&mut cx)));
                assert_eq!(inner.len(), 1, "the inner wake");
                assert!(outer.is_empty(), "the outer batch is still running");
            });
        });
        assert_eq!(
            outer.len(),
            1,
            "the outer wake, not moved to the inner list"
        );
        assert_eq!(inner.len(), 1);
        assert_eq!(wakes.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_panic_inside_a_budget_restores_the_outer_one() {
        let caught = std::panic::catch_unwind(|| {
            budget(|| {
                with_state(
                    |_| State {
                        budget: Budget(Some(0)),
                        deferring: false,
                    },
                    || panic!("boom"),
                );
            })
        });
        assert!(caught.is_err());
        assert!(has_budget_remaining());
        assert_eq!(current(), Budget::UNCONSTRAINED);
    }
}
