//! The task-level side of the cooperative budget ([`tempo_park::coop`],
//! as tokio's): each task poll gets 128 units, every ready resource
//! operation spends one, and with none left the operation wakes the task
//! and returns `Pending`, so it goes to the back of the run queue.
//! [`consume_budget`] serves CPU-bound loops, [`unconstrained`] opts out,
//! and [`poll_proceed`] / [`RestoreOnPending`] make your own resource
//! cooperative.
//!
//! ```
//! use tempo::task::coop::consume_budget;
//!
//! let rt = tempo::runtime::Builder::new_current_thread().build()?;
//! rt.block_on(async {
//!     let other = tempo::spawn(async { "ran meanwhile" });
//!     // A CPU-bound loop yields whenever its budget is spent.
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

/// Spends one unit of the task's cooperative budget, yielding first if
/// none is left: cheap enough for every iteration of a CPU-bound loop,
/// unlike [`yield_now`](super::yield_now), which always yields.
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

/// Turns off cooperative scheduling for `inner`: its ready operations
/// always proceed. A loop on an always-ready resource under it starves every
/// other task; it suits a short burst that must finish in one poll.
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
