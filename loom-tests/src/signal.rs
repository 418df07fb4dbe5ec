//! [`Signal`]: a flag one thread sets and a future another awaits.

use std::future::Future;
use std::task::{Poll, Waker};

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};

/// A one-shot flag with a waiter: the model's "work done on another thread".
///
/// The waiting future stores its waker on every poll, then checks the flag;
/// the setter sets the flag, then takes the waker. Whatever the
/// interleaving, either the waiter sees the flag or the setter finds the
/// waker, so a model that hangs points at the scheduler under test, never
/// at this helper.
#[derive(Clone, Default)]
pub struct Signal {
    done: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Signal {
    /// An unset signal.
    pub fn new() -> Signal {
        Signal::default()
    }

    /// Sets the flag and returns the waiter's waker, if it registered one,
    /// without waking it (for models that interleave something in between).
    pub fn set_and_take_waker(&self) -> Option<Waker> {
        self.done.store(true, SeqCst);
        self.waker.lock().unwrap().take()
    }

    /// Sets the flag and wakes the waiter.
    pub fn set(&self) {
        if let Some(waker) = self.set_and_take_waker() {
            waker.wake();
        }
    }

    /// Completes once the flag is set.
    pub fn wait(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.done.load(SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}
