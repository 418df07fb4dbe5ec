//! Model: the throttling scheduler's wake-up protocol.
//!
//! Between ticks the scheduler is `SLEEPING`, and remote spawns and wakes
//! only queue (no unpark: that is what batches work). When a tick finds
//! nothing to do, the scheduler announces `PARKED`, re-checks the injection
//! queue, and blocks in the driver. A remote wake that lands between "the
//! tick found nothing" and "block in the driver" must still wake the
//! thread; if it could be lost, `block_on` would block forever and loom
//! would report a deadlock.
//!
//! The runtime runs the real throttling scheduler on a paused clock (so that
//! the sleep between ticks advances virtual time instead of waiting on a
//! real timer, which loom cannot model), on top of a `ParkThread`.
#![cfg(loom)]

use std::time::Duration;

use loom::thread;
use tempo::runtime::{Builder, Runtime};
use tempo_loom_tests::Signal;

fn throttled() -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .max_throttling(Duration::from_millis(20))
        .build()
        .unwrap()
}

/// `block_on` waits for a flag that a task spawned from another thread sets;
/// the spawn may land during a tick, during the sleep between ticks, or
/// while the scheduler is going idle.
#[test]
fn remote_spawn_reaches_a_throttled_scheduler() {
    loom::model(|| {
        let rt = throttled();
        let handle = rt.handle().clone();
        let signal = Signal::new();
        let setter = signal.clone();
        let t = thread::spawn(move || {
            drop(handle.spawn(async move { setter.set() }));
        });
        rt.block_on(signal.wait());
        t.join().unwrap();
        // At most one unpark: only a wake to a parked (idle) scheduler
        // unparks; wakes during ticks or sleeps only queue.
        assert!(rt.handle().unpark_count() <= 1);
    });
}

/// A remote wake of the `block_on` future itself, racing the idle decision.
#[test]
fn remote_wake_reaches_a_throttled_scheduler() {
    loom::model(|| {
        let rt = throttled();
        let signal = Signal::new();
        let setter = signal.clone();
        let t = thread::spawn(move || setter.set());
        rt.block_on(signal.wait());
        t.join().unwrap();
    });
}

/// A control unpark (`Handle::unpark`) from another thread, racing the
/// sleep between ticks and the idle park, never leaves the scheduler stuck
/// and costs at most one driver unpark.
#[test]
fn control_unpark_races_sleep_and_idle() {
    loom::model(|| {
        let rt = throttled();
        let handle = rt.handle().clone();
        let signal = Signal::new();
        let setter = signal.clone();
        let t = thread::spawn(move || {
            let waker = setter.set_and_take_waker();
            handle.unpark();
            if let Some(w) = waker {
                w.wake();
            }
        });
        rt.block_on(signal.wait());
        t.join().unwrap();
    });
}
