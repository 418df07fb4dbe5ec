//! The cooperative budget: how one busy task is kept from starving the
//! others and the driver.
//!
//! # Why
//!
//! A single-thread scheduler only regains control when a task returns
//! `Pending`. A task that loops on a resource that is always ready (a
//! flooded UDP socket, a TCP stream with a backlog, a channel that is never
//! empty) never does: every `.await` completes at once, the loop goes on,
//! and the other tasks, the timers and the I/O driver wait until the flood
//! stops. Nothing in the task's code is wrong; it simply never yields.
//!
//! The fix, as in tokio, is a **budget per task poll**: the scheduler gives
//! each poll of a task (and of the `block_on` future) a number of units
//! ([`INITIAL_BUDGET`]); every resource operation that is *ready* spends one;
//! when none is left, operations return `Pending` (after waking the task, so
//! it is rescheduled behind the others) until the next poll gets a fresh
//! budget. The budget lives in this crate because the drivers that spend it
//! (`tempo-io`, `tempo-time`) and the scheduler that refills it (`tempo`)
//! meet only here.
//!
//! # Part of the driver contract
//!
//! A resource operation of a driver (an I/O read or write, a readiness wait,
//! a timer, a join) follows these rules:
//!
//! 1. **Check first.** Before doing any work (before the syscall), call
//!    [`poll_proceed`]. If it returns `Pending`, the task has already been
//!    woken: return `Pending`. An exhausted budget costs no syscall.
//! 2. **One unit per ready operation.** `poll_proceed` takes one unit and
//!    returns a [`RestoreOnPending`] guard. If the operation completes, call
//!    [`RestoreOnPending::made_progress`]: the unit stays spent. If it ends
//!    up `Pending`, drop the guard: the unit is given back, since waiting is
//!    not work.
//! 3. **Non-blocking attempts are free.** `try_*` methods do not consult the
//!    budget: they never return `Pending`, so they cannot be made to yield.
//!
//! Outside a scheduler's poll (no runtime on this thread, a driver used
//! alone, a poll inside [`with_unconstrained`]) the budget is *unconstrained*
//! and every operation proceeds.
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

use std::cell::Cell;
use std::marker::PhantomData;
use std::task::{Context, Poll};

use crate::sync::thread_local;

/// Units a scheduler gives each poll of a task (tokio's figure).
///
/// ```
/// use std::task::{Context, Poll};
/// use tempo_park::coop::{budget, poll_proceed, INITIAL_BUDGET};
///
/// # struct Noop;
/// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
/// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
/// budget(|| {
///     for _ in 0..INITIAL_BUDGET {
///         assert!(poll_proceed(&mut cx).is_ready()); // guard dropped: unit given back
///     }
/// });
/// ```
pub const INITIAL_BUDGET: u8 = 128;

/// What is left of the current poll's budget: `None` is unconstrained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Budget(Option<u8>);

impl Budget {
    const UNCONSTRAINED: Budget = Budget(None);

    fn has_remaining(self) -> bool {
        self.0.map_or(true, |units| units > 0)
    }
}

#[cfg(not(loom))]
thread_local! {
    // `const`: no lazy-initialisation check on the hot path.
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::UNCONSTRAINED) };
}

#[cfg(loom)]
thread_local! {
    // loom's macro takes no `const` block.
    static BUDGET: Cell<Budget> = Cell::new(Budget::UNCONSTRAINED);
}

/// Reads the current budget; unconstrained if the thread-local is gone
/// (thread tear-down).
fn current() -> Budget {
    BUDGET.try_with(Cell::get).unwrap_or(Budget::UNCONSTRAINED)
}

fn set(budget: Budget) {
    // During thread tear-down there is no budget to keep.
    let _ = BUDGET.try_with(|cell| cell.set(budget));
}

/// Runs `f` with a fresh budget of [`INITIAL_BUDGET`] units, then restores
/// the budget that was in force before (also if `f` panics), so that
/// nested runs (a runtime turned from inside another's task, a host loop)
/// do not disturb each other. Schedulers call it around each task poll.
///
/// ```
/// use std::task::Context;
/// use tempo_park::coop::{budget, has_budget_remaining, poll_proceed, INITIAL_BUDGET};
///
/// # struct Noop;
/// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
/// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
/// // What a scheduler does around one task poll.
/// let spent = budget(|| {
///     let mut n = 0;
///     while let std::task::Poll::Ready(guard) = poll_proceed(&mut cx) {
///         guard.made_progress();
///         n += 1;
///     }
///     assert!(!has_budget_remaining());
///     n
/// });
/// assert_eq!(spent, INITIAL_BUDGET as usize);
/// assert!(has_budget_remaining()); // outside: unconstrained again
/// ```
pub fn budget<R>(f: impl FnOnce() -> R) -> R {
    with_budget(Budget(Some(INITIAL_BUDGET)), f)
}

/// Runs `f` with an unconstrained budget (operations never yield for lack
/// of budget), then restores the budget in force before.
///
/// ```
/// use tempo_park::coop::{budget, has_budget_remaining, poll_proceed, with_unconstrained};
/// use std::task::Context;
///
/// # struct Noop;
/// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
/// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
/// budget(|| {
///     while let std::task::Poll::Ready(guard) = poll_proceed(&mut cx) {
///         guard.made_progress();
///     }
///     assert!(!has_budget_remaining());
///     with_unconstrained(|| assert!(has_budget_remaining()));
///     assert!(!has_budget_remaining()); // restored on the way out
/// });
/// ```
pub fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    with_budget(Budget::UNCONSTRAINED, f)
}

fn with_budget<R>(budget: Budget, f: impl FnOnce() -> R) -> R {
    /// Restores the outer budget on the way out, unwinding included.
    struct Reset(Budget);

    impl Drop for Reset {
        fn drop(&mut self) {
            set(self.0);
        }
    }

    let _reset = Reset(current());
    set(budget);
    f()
}

/// `true` if the current poll may still do a ready operation (always, when
/// unconstrained).
///
/// ```
/// use tempo_park::coop::{budget, has_budget_remaining};
///
/// assert!(has_budget_remaining()); // no scheduler poll: unconstrained
/// budget(|| assert!(has_budget_remaining())); // a fresh budget
/// ```
pub fn has_budget_remaining() -> bool {
    current().has_remaining()
}

/// Asks to do one resource operation: `Ready(guard)` with one unit taken,
/// or `Pending` with the task already woken (the budget is spent; the task
/// runs again after the others).
///
/// Drop the guard without calling
/// [`made_progress`](RestoreOnPending::made_progress) if the operation
/// ends up `Pending`: the unit is given back.
///
/// ```
/// use std::task::{Context, Poll};
/// use tempo_park::coop::poll_proceed;
///
/// /// A resource operation that follows the contract: check the budget
/// /// first, keep the unit only if the operation completed.
/// fn poll_op(cx: &mut Context<'_>, ready: bool) -> Poll<u32> {
///     let guard = match poll_proceed(cx) {
///         Poll::Ready(guard) => guard,
///         Poll::Pending => return Poll::Pending, // already woken
///     };
///     if ready {
///         guard.made_progress();
///         Poll::Ready(42)
///     } else {
///         Poll::Pending // `guard` dropped: the unit comes back
///     }
/// }
///
/// # struct Noop;
/// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
/// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
/// assert_eq!(poll_op(&mut cx, true), Poll::Ready(42));
/// assert_eq!(poll_op(&mut cx, false), Poll::Pending);
/// ```
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    let before = current();
    match before.0 {
        None => Poll::Ready(RestoreOnPending::new(None)),
        Some(0) => {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        Some(units) => {
            set(Budget(Some(units - 1)));
            Poll::Ready(RestoreOnPending::new(Some(before)))
        }
    }
}

/// Gives the unit taken by [`poll_proceed`] back when dropped, unless the
/// operation [made progress](RestoreOnPending::made_progress).
///
/// `!Send`: the budget belongs to the thread whose poll took the unit.
///
/// ```
/// use std::task::{Context, Poll};
/// use tempo_park::coop::{budget, poll_proceed, INITIAL_BUDGET};
///
/// # struct Noop;
/// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
/// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
/// budget(|| {
///     for _ in 0..(INITIAL_BUDGET as usize * 2) {
///         // Dropped without progress: the unit is given back every time.
///         let Poll::Ready(_guard) = poll_proceed(&mut cx) else { panic!("budget lost") };
///     }
/// });
/// ```
#[derive(Debug)]
#[must_use = "dropping the guard at once gives the unit back"]
pub struct RestoreOnPending {
    /// The budget before the unit was taken; `None` once progress was made
    /// (or if the budget was unconstrained).
    restore: Cell<Option<Budget>>,
    _not_send: PhantomData<*mut ()>,
}

impl RestoreOnPending {
    fn new(restore: Option<Budget>) -> RestoreOnPending {
        RestoreOnPending {
            restore: Cell::new(restore),
            _not_send: PhantomData,
        }
    }

    /// The operation completed: the unit stays spent.
    ///
    /// ```
    /// use std::task::{Context, Poll};
    /// use tempo_park::coop::{budget, poll_proceed, INITIAL_BUDGET};
    ///
    /// # struct Noop;
    /// # impl std::task::Wake for Noop { fn wake(self: std::sync::Arc<Self>) {} }
    /// # let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
    /// let mut cx = Context::from_waker(&waker);
    /// budget(|| {
    ///     for _ in 0..INITIAL_BUDGET {
    ///         let Poll::Ready(guard) = poll_proceed(&mut cx) else { unreachable!() };
    ///         guard.made_progress(); // the unit stays spent
    ///     }
    ///     assert!(poll_proceed(&mut cx).is_pending()); // and the task is woken
    /// });
    /// ```
    pub fn made_progress(&self) {
        self.restore.set(None);
    }
}

impl Drop for RestoreOnPending {
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
    fn a_panic_inside_a_budget_restores_the_outer_one() {
        let caught = std::panic::catch_unwind(|| {
            budget(|| {
                with_budget(Budget(Some(0)), || panic!("boom"));
            })
        });
        assert!(caught.is_err());
        assert!(has_budget_remaining());
        assert_eq!(current(), Budget::UNCONSTRAINED);
    }
}
