//! The task-level side of the cooperative budget: [`consume_budget`] for
//! CPU-bound loops that touch no resource, [`unconstrained`] to opt a
//! future out.
//!
//! The mechanism itself is [`tempo_park::coop`]: the scheduler gives each
//! task poll a budget of 128 units, every ready resource operation (socket
//! I/O, readiness wait, timer, join) spends one, and when none is left the
//! operation wakes the task and returns `Pending`, so the task goes to the
//! back of the run queue instead of starving the others.
//!
//! The paths follow tokio's: `tempo::task::coop::{consume_budget,
//! unconstrained, Unconstrained, has_budget_remaining, poll_proceed,
//! RestoreOnPending}`, with the first three also in [`tempo::task`](super).
//! [`poll_proceed`] and [`RestoreOnPending`] make a resource of your own
//! cooperative (see [`tempo_park::coop`] for the rules).
//!
//! ```
//! use tempo::task::coop::consume_budget;
//!
//! let rt = tempo::runtime::Builder::new_current_thread().build()?;
//! rt.block_on(async {
//!     let other = tempo::spawn(async { "ran meanwhile" });
//!     // A long CPU-bound loop that touches no socket still lets the
//!     // other task run: it yields whenever its budget is spent.
//!     let mut n = 0u64;
//!     for i in 0..10_000 {
//!         n += i;
//!         consume_budget().await;
//!     }
//!     assert!(other.is_finished());
//!     assert_eq!(n, 49_995_000);
//! });
//! # Ok::<(), std::io::Error>(())
//! ```

pub use tempo_park::coop::{has_budget_remaining, poll_proceed, RestoreOnPending};

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};

use tempo_park::coop;

/// Spends one unit of the current task's cooperative budget; if none is
/// left, yields to the scheduler first (the task goes to the back of the run
/// queue and resumes with a fresh budget).
///
/// For a loop that does CPU work without awaiting any Tempo resource, and
/// so would never yield on its own. Unlike [`yield_now`](super::yield_now),
/// which always yields, this yields only once every 128 calls or so
/// (sharing the count with the task's I/O and timers), so it is cheap
/// enough to call on every iteration.
pub async fn consume_budget() {
    let mut done = false;
    poll_fn(move |cx| {
        if done {
            return Poll::Ready(());
        }
        let progress = std::task::ready!(coop::poll_proceed(cx));
        progress.made_progress();
        done = true;
        Poll::Ready(())
    })
    .await
}

/// A future that runs without a cooperative budget: its resource
/// operations never yield for lack of budget. Created by [`unconstrained`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Unconstrained<F> {
    // Structurally pinned: see `poll`.
    inner: F,
}

/// Turns off cooperative scheduling for `inner`: while it is polled, socket,
/// timer and join operations that are ready always proceed, whatever the
/// task's budget.
///
/// Use it with care: a future that loops on an always-ready resource under
/// `unconstrained` starves every other task on its runtime until it stops,
/// which is what the budget exists to prevent. It suits a short burst that
/// must finish in one poll, or a future that does its own yielding.
///
/// ```
/// use tempo::task::unconstrained;
///
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     // 1,000 operations in one poll: never asked to yield.
///     let n = unconstrained(async {
///         let mut n = 0;
///         for _ in 0..1_000 {
///             tempo::task::consume_budget().await;
///             n += 1;
///         }
///         n
///     })
///     .await;
///     assert_eq!(n, 1_000);
/// });
/// ```
pub fn unconstrained<F: Future>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `inner` is structurally pinned: `Unconstrained` never
        // moves it out of a pinned `self`, has no `Drop` impl, and is
        // `Unpin` only when `F` is (the auto trait).
        let inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        coop::with_unconstrained(|| inner.poll(cx))
    }
}
