//! The executor the crate's doc examples run on.
//!
//! `tempo-io` cannot depend on `tempo` (the runtime depends on it), yet a
//! socket example only means something if it runs: so the examples drive
//! their `async` block with [`__doc_block_on`], a few lines of executor
//! over a fresh [`Driver`], hidden from the rendered docs (`# ` lines).
//! In an application the `tempo` runtime's `block_on`, or a task, takes
//! its place. Hidden from the API (`#[doc(hidden)]`): it is not a public
//! executor, and it may change with the examples.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tempo_park::Park;

use crate::driver::Driver;
use crate::handle::Handle;

/// How many parks an example may take before it is declared stuck: an
/// example that lost a wake-up fails instead of hanging the doctests.
const MAX_PARKS: u32 = 1_000;

/// How long one park may block: with [`MAX_PARKS`], the bound on a stuck
/// example's run time.
const PARK_TIMEOUT: Duration = Duration::from_millis(100);

/// Wakes the example's future: sets a flag and unparks the driver (the
/// wake may come from another thread, such as a resolver's).
struct FlagWaker {
    woken: AtomicBool,
    handle: Handle,
}

impl Wake for FlagWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        self.handle.unpark();
    }
}

/// Runs a doc example's `future` to completion on a new [`Driver`],
/// entered as the thread's reactor, and returns its result. Panics if the
/// future is still pending after [`MAX_PARKS`] parks. For the crate's doc
/// examples only.
#[doc(hidden)]
pub fn __doc_block_on<T, F>(future: F) -> io::Result<T>
where
    F: Future<Output = io::Result<T>>,
{
    let mut driver = Driver::new()?;
    let handle = driver.handle();
    let _enter = handle.enter();
    let flag = Arc::new(FlagWaker {
        woken: AtomicBool::new(true),
        handle: handle.clone(),
    });
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    for _ in 0..MAX_PARKS {
        if flag.woken.swap(false, SeqCst) {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
        }
        driver.park_timeout(PARK_TIMEOUT)?;
    }
    panic!("doc example still pending after {MAX_PARKS} parks: lost wake-up?");
}
