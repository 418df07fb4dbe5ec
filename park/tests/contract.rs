//! The Park contract, checked from outside the crate on `ParkThread`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tempo_park::{Park, ParkThread, Unpark};

#[test]
fn many_unpark_park_round_trips_lose_nothing() {
    // A ping-pong between two threads: each round, the main thread parks
    // until the helper has set the flag and unparked it. A lost wake-up
    // would hang; `park_timeout` with a generous bound turns that into a
    // failed assertion instead.
    let mut parker = ParkThread::new();
    let unpark = parker.unpark();
    let flag = Arc::new(AtomicBool::new(false));
    let flag2 = flag.clone();
    let rounds = 10_000;
    let t = thread::spawn(move || {
        for _ in 0..rounds {
            while flag2.load(Ordering::Acquire) {
                thread::yield_now();
            }
            flag2.store(true, Ordering::Release);
            unpark.unpark();
        }
    });
    for _ in 0..rounds {
        let mut waits = 0;
        while !flag.load(Ordering::Acquire) {
            parker.park_timeout(Duration::from_secs(10)).unwrap();
            waits += 1;
            assert!(waits < 1_000, "lost wake-up");
        }
        flag.store(false, Ordering::Release);
    }
    t.join().unwrap();
}

#[test]
fn duration_max_is_forever_not_overflow() {
    let mut parker = ParkThread::new();
    let unpark = parker.unpark();
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        unpark.unpark();
    });
    parker.park_timeout(Duration::MAX).unwrap();
    t.join().unwrap();
}

#[test]
fn unpark_handles_are_send_sync_static() {
    fn assert_unpark<U: Unpark + Clone>(_: &U) {}
    let parker = ParkThread::new();
    assert_unpark(&parker.unpark());
    let boxed: Box<dyn Unpark> = Box::new(parker.unpark());
    boxed.unpark();
}
