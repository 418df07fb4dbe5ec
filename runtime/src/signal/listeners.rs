//! [`SignalListeners`]: the wakers of every waiting [`Signal`](super::unix::Signal)
//! of the process. Each listener's reactor sees a wake-up byte only if it
//! polls before another listener drains it, so a listener that drains
//! wakes every other waiting one (signals are rare: the extra polls cost
//! nothing next to the delivery).
//!
//! Protocol, both steps under the lock: a listener going to wait stores
//! its waker, *then* reads the count (`wait_unless`); a drainer drains,
//! *then* wakes the stored wakers (`wake_all_but`). Whichever goes first,
//! the waiter sees the delivery or is woken (loom model
//! `loom-tests/tests/signal_listeners.rs`).

use std::task::Waker;

use slab::Slab;

use crate::sync::Mutex;

/// The waiting listeners' wakers (see the module docs).
pub struct SignalListeners {
    /// A slot per live listener; `None` while it is not waiting.
    wakers: Mutex<Slab<Option<Waker>>>,
}

impl SignalListeners {
    /// No listener yet.
    pub fn new() -> SignalListeners {
        SignalListeners {
            wakers: Mutex::new(Slab::new()),
        }
    }

    /// A slot for a new listener; returns its key.
    pub fn join(&self) -> usize {
        self.wakers.lock().insert(None)
    }

    /// The listener of `key` is gone.
    pub fn leave(&self, key: usize) {
        self.wakers.lock().remove(key);
    }

    /// Stores `waker` as the listener's of `key`, then returns
    /// `delivered()`: `true` means do not wait.
    pub fn wait_unless(&self, key: usize, waker: &Waker, delivered: impl FnOnce() -> bool) -> bool {
        {
            let mut wakers = self.wakers.lock();
            match &mut wakers[key] {
                Some(stored) if stored.will_wake(waker) => {}
                slot => *slot = Some(waker.clone()),
            }
        }
        delivered()
    }

    /// Wakes every waiting listener but the one of `key` (the caller,
    /// which drained a wake-up byte and looks at its count itself).
    pub fn wake_all_but(&self, key: usize) {
        let woken: Vec<Waker> = {
            let mut wakers = self.wakers.lock();
            wakers
                .iter_mut()
                .filter(|(other, _)| *other != key)
                .filter_map(|(_, waker)| waker.take())
                .collect()
        };
        // Woken outside the lock: a waker may run its task in place, and
        // that task's next poll stores its waker again.
        for waker in woken {
            waker.wake();
        }
    }
}

impl std::fmt::Debug for SignalListeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignalListeners").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::Wake;

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn counting() -> (Arc<CountingWaker>, Waker) {
        let count = Arc::new(CountingWaker::default());
        (count.clone(), Waker::from(count))
    }

    /// A drain wakes every other waiting listener once, not the drainer,
    /// not one that left, and not one that was not waiting.
    #[test]
    fn a_drain_wakes_each_other_waiting_listener_once() {
        let listeners = SignalListeners::new();
        let (drainer, waiting, gone, idle) = (
            listeners.join(),
            listeners.join(),
            listeners.join(),
            listeners.join(),
        );
        let wakers: Vec<_> = (0..3).map(|_| counting()).collect();
        assert!(!listeners.wait_unless(drainer, &wakers[0].1, || false));
        assert!(!listeners.wait_unless(waiting, &wakers[1].1, || false));
        assert!(!listeners.wait_unless(gone, &wakers[2].1, || false));
        listeners.leave(gone);
        listeners.wake_all_but(drainer);
        listeners.wake_all_but(drainer);
        let woken: Vec<usize> = wakers
            .iter()
            .map(|(count, _)| count.0.load(SeqCst))
            .collect();
        assert_eq!(woken, [0, 1, 0], "drainer, waiting, gone");
        listeners.leave(idle);
    }

    /// `wait_unless` reports the delivery its check finds, and a waker
    /// that wakes the same task is not cloned again.
    #[test]
    fn wait_unless_reports_the_delivery_and_keeps_an_equal_waker() {
        let listeners = SignalListeners::new();
        let key = listeners.join();
        let (count, waker) = counting();
        assert!(listeners.wait_unless(key, &waker, || true));
        assert!(!listeners.wait_unless(key, &waker.clone(), || false));
        assert_eq!(Arc::strong_count(&count), 3, "the stored waker and `waker`");
    }
}
