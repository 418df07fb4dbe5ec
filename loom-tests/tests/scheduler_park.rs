//! Model: "unpark only when parked". A remote spawn or wake pushes to the
//! injection queue and unparks the driver only if the scheduler announced
//! PARKED; the scheduler re-checks the queue after announcing. If the
//! handshake could lose a wake-up, `block_on` would park forever and loom
//! would report a deadlock.
#![cfg(loom)]

use loom::thread;
use tempo::runtime::Builder;
use tempo_loom_tests::Signal;

/// block_on waits for a flag that a task spawned from another thread sets.
#[test]
fn remote_spawn_wakes_block_on() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let handle = rt.handle().clone();
        let signal = Signal::new();
        let setter = signal.clone();
        let t = thread::spawn(move || {
            drop(handle.spawn(async move { setter.set() }));
        });
        rt.block_on(signal.wait());
        t.join().unwrap();
        assert!(rt.handle().unpark_count() <= 1);
    });
}

/// A remote wake of the block_on future itself.
#[test]
fn remote_wake_of_block_on() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let signal = Signal::new();
        let setter = signal.clone();
        let t = thread::spawn(move || setter.set());
        rt.block_on(signal.wait());
        t.join().unwrap();
    });
}
