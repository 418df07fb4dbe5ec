//! [`yield_now`]: give the other ready tasks a turn.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields to the scheduler: the current task goes to the back of the run
/// queue, so every task that was ready before it runs first.
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        // Woken while running: the scheduler requeues the task at the back
        // once this poll returns.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
