//! Model: a timer created on another thread inside the firing window of
//! the last fire pass. Its deadline is in the future, so it does
//! not complete on its first poll; it waits for the *next* pass, which must
//! therefore come: a driver blocked with no other timer is unparked (if
//! that wake-up were lost, loom would report a deadlock).
//!
//! Second model: the same registration racing the tick's end-of-tick pass,
//! which reads its "entries pending" flag without the lock. The
//! entry is fired by that pass or, if it registered after the pass looked,
//! by the next park, which must not block on it. Mutation check: with the
//! wheel's next expiration ignoring the end-of-tick list, the park blocks
//! and loom reports the deadlock.
#![cfg(loom)]

use std::future::Future;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::thread;
use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};

struct FlagWaker(AtomicBool);

impl Wake for FlagWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, SeqCst);
    }
}

const MS: Duration = Duration::from_millis(1);

/// The remote thread's sleep and the flag its waker sets.
type Registered = (std::pin::Pin<Box<Sleep>>, std::sync::Arc<FlagWaker>);

/// A driver with a 10 ms firing window after one pass (the wheel has
/// processed every tick up to now + 10 ms), and a thread that registers a
/// sleep with a given deadline 1 ms ahead, inside that window: it must not
/// complete in the poll that created it.
fn driver_and_remote_registration() -> (Driver<ParkThread>, thread::JoinHandle<Registered>) {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    driver.set_firing_window(MS * 10);
    driver.park_timeout(Duration::ZERO).unwrap();
    let handle = driver.handle();
    let remote = thread::spawn(move || {
        let flag = std::sync::Arc::new(FlagWaker(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut sleep = Box::pin(Sleep::new(handle.clone(), handle.now() + MS, false));
        let first = sleep.as_mut().poll(&mut Context::from_waker(&waker));
        assert!(first.is_pending(), "completed in the poll that created it");
        (sleep, flag)
    });
    (driver, remote)
}

#[test]
fn registration_inside_the_window_waits_for_the_next_pass_and_unparks() {
    loom::model(|| {
        let (mut driver, remote) = driver_and_remote_registration();
        // Blocks (no timer yet) unless the registration came first; either
        // way the pass that ends this park fires the new timer.
        driver.park().unwrap();
        let (sleep, flag) = remote.join().unwrap();
        assert!(flag.0.load(SeqCst), "timer never woken");
        assert!(sleep.is_elapsed());
    });
}

#[test]
fn registration_racing_the_end_of_tick_pass_is_fired_by_it_or_the_next_park() {
    loom::model(|| {
        let (mut driver, remote) = driver_and_remote_registration();
        let at_end_of_tick = driver.handle().fire_end_of_tick();
        let (sleep, flag) = remote.join().unwrap();
        if at_end_of_tick == 0 {
            // Registered after the pass looked: the next park fires it
            // without blocking (a blocked park here is a lost timer).
            driver.park().unwrap();
        }
        assert!(flag.0.load(SeqCst), "timer never woken");
        assert!(sleep.is_elapsed());
    });
}
