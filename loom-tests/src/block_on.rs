//! [`block_on`]: run a future on a loom thread, parking between polls.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use loom::thread;

/// Runs a future to completion on this loom thread, parking between polls
/// (a lost wake-up shows as a loom deadlock).
pub fn block_on<F: Future>(f: F) -> F::Output {
    struct Unparker(loom::thread::Thread);
    impl std::task::Wake for Unparker {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}
