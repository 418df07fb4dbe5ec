//! [`SignalListeners`]: the wakers of every waiting [`Signal`](super::unix::Signal)
//! of the process, woken by whichever listener consumes a wake-up byte.
//!
//! Every listener reads the one wake-up socket the signal handler writes
//! to (a duplicate of it, registered with its own runtime's reactor). A
//! byte wakes each listener's reactor, but only while it is still there:
//! a listener whose reactor polls after another listener drained the byte
//! (another runtime's thread, or one that was busy) is told nothing, and
//! its task would wait for the next delivery. So a listener that drains
//! bytes wakes every other waiting listener, which then compares its
//! signal's delivery count with the one it saw.
//!
//! The protocol, between a listener `B` going to wait and a listener `A`
//! that drained a byte after the handler counted a delivery:
//!
//! * `B` stores its waker, *then* reads the count ([`wait_unless`]);
//! * `A` drains, *then* takes and wakes the stored wakers ([`wake_all_but`]).
//!
//! Both steps take the lock: if `B` stored first, `A` wakes it; if `A`
//! woke first, its drain (and the handler's count before it) happened
//! before `B`'s read, which sees the new count. Either way `B` does not
//! sleep through a delivery (loom model `loom-tests/tests/signal_listeners.rs`).
//!
//! Signals are rare: waking every listener per drained byte costs each a
//! poll that finds nothing new, which is nothing next to the delivery.
//!
//! [`wait_unless`]: SignalListeners::wait_unless
//! [`wake_all_but`]: SignalListeners::wake_all_but

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
    /// `delivered()`: `true` means a delivery is there and the caller
    /// should not wait; `false` that a later drain will wake `waker`.
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
