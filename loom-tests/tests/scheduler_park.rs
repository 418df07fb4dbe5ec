//! Model: "unpark only when parked". A remote spawn or wake pushes to the
//! injection queue and unparks the driver only if the scheduler announced
//! PARKED; the scheduler re-checks the queue after announcing. If the
//! handshake could lose a wake-up, `block_on` would park forever and loom
//! would report a deadlock.
#![cfg(loom)]

use std::task::{Poll, Waker};

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo::runtime::Builder;

/// block_on waits for a flag that a task spawned from another thread sets.
#[test]
fn remote_spawn_wakes_block_on() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let handle = rt.handle().clone();
        let done = Arc::new(AtomicBool::new(false));
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let (d, s) = (done.clone(), slot.clone());
        let t = thread::spawn(move || {
            drop(handle.spawn(async move {
                d.store(true, SeqCst);
                if let Some(w) = s.lock().unwrap().take() {
                    w.wake();
                }
            }));
        });
        rt.block_on(std::future::poll_fn(|cx| {
            *slot.lock().unwrap() = Some(cx.waker().clone());
            if done.load(SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        t.join().unwrap();
        assert!(rt.handle().unpark_count() <= 1);
    });
}

/// A remote wake of the block_on future itself.
#[test]
fn remote_wake_of_block_on() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let (d, s) = (done.clone(), slot.clone());
        let t = thread::spawn(move || {
            d.store(true, SeqCst);
            let waker = s.lock().unwrap().take();
            if let Some(w) = waker {
                w.wake();
            }
        });
        rt.block_on(std::future::poll_fn(|cx| {
            *slot.lock().unwrap() = Some(cx.waker().clone());
            if done.load(SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        t.join().unwrap();
    });
}
