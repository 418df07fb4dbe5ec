//! Model: `ParkThread`'s park / unpark protocol.
#![cfg(loom)]

use loom::thread;
use tempo_park::{Park, ParkThread, Unpark};

/// An unpark that happens before the park makes the park return.
#[test]
fn unpark_before_park() {
    loom::model(|| {
        let mut p = ParkThread::new();
        let u = p.unpark();
        u.unpark();
        p.park().unwrap();
    });
}

/// An unpark racing with the park, from another thread, is never lost:
/// if it were, `park` would block forever and loom reports a deadlock.
#[test]
fn unpark_during_park() {
    loom::model(|| {
        let mut p = ParkThread::new();
        let u = p.unpark();
        let t = thread::spawn(move || u.unpark());
        p.park().unwrap();
        t.join().unwrap();
    });
}

/// Two unparks from two threads wake one park; the park after that, with a
/// zero timeout, does not block.
#[test]
fn two_unparks() {
    loom::model(|| {
        let mut p = ParkThread::new();
        let u1 = p.unpark();
        let u2 = p.unpark();
        let t1 = thread::spawn(move || u1.unpark());
        let t2 = thread::spawn(move || u2.unpark());
        p.park().unwrap();
        p.park_timeout(std::time::Duration::ZERO).unwrap();
        t1.join().unwrap();
        t2.join().unwrap();
    });
}

/// An unpark after the parker was dropped (driver shut down) is harmless.
#[test]
fn unpark_during_shutdown() {
    loom::model(|| {
        let p = ParkThread::new();
        let u = p.unpark();
        let t = thread::spawn(move || u.unpark());
        drop(p);
        t.join().unwrap();
    });
}
