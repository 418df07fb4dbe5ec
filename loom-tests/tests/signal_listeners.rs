//! Model: a signal listener going to wait while another listener, on
//! another thread, drains the wake-up byte the handler wrote after it
//! counted a delivery (`runtime/src/signal/listeners.rs`).
//!
//! The waiting listener's reactor may never see that byte (it was drained
//! before its poll), so the drainer wakes the other listeners. The waiter
//! stores its waker, then reads the count; the drainer counts (the
//! handler), then wakes. Whatever the interleaving, the waiter sees the
//! delivery or is woken. A waiter that reads the count *before* storing
//! its waker fails this model: it reads 0, the drainer wakes nobody, and
//! only then is the waker stored.
//!
//! The real `SignalListeners` runs on loom's lock (the `sync` shim); the
//! handler and the socket are reduced to the count.
#![cfg(loom)]

use std::task::{Wake, Waker};

use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use tempo::__loom::SignalListeners;

struct FlagWaker(AtomicBool);

impl Wake for FlagWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, SeqCst);
    }
}

#[test]
fn a_waiting_listener_sees_the_delivery_or_is_woken() {
    loom::model(|| {
        let listeners = Arc::new(SignalListeners::new());
        let deliveries = Arc::new(AtomicU64::new(0));
        let drainer = listeners.join();
        let waiter = listeners.join();
        let handler_then_drain = {
            let (listeners, deliveries) = (listeners.clone(), deliveries.clone());
            thread::spawn(move || {
                deliveries.fetch_add(1, SeqCst);
                listeners.wake_all_but(drainer);
            })
        };
        let woken = std::sync::Arc::new(FlagWaker(AtomicBool::new(false)));
        let waker = Waker::from(woken.clone());
        let delivered = listeners.wait_unless(waiter, &waker, || deliveries.load(SeqCst) != 0);
        handler_then_drain.join().unwrap();
        assert!(
            delivered || woken.0.load(SeqCst),
            "the listener sleeps through a delivery"
        );
        listeners.leave(waiter);
        listeners.leave(drainer);
    });
}
