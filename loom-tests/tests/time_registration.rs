//! Models: cross-thread timer registration and cancellation racing the
//! timer driver's fire pass, and a registration waking a parked driver.
//! The real `tempo_time` code runs on loom's primitives
//! (its `sync` shim), under the paused clock so that time is deterministic.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};
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

fn flag_waker() -> (std::sync::Arc<FlagWaker>, Waker) {
    let flag = std::sync::Arc::new(FlagWaker(AtomicBool::new(false)));
    (flag.clone(), Waker::from(flag))
}

fn poll(sleep: Pin<&mut Sleep>, waker: &Waker) -> Poll<()> {
    sleep.poll(&mut Context::from_waker(waker))
}

const MS: Duration = Duration::from_millis(1);

/// A driver and a 1 ms timer polled once (registered), with the clock
/// moved to its deadline but no fire pass yet.
fn due_sleep() -> (
    Driver<ParkThread>,
    std::sync::Arc<FlagWaker>,
    Waker,
    Pin<Box<Sleep>>,
) {
    let driver = Driver::new(ParkThread::new(), Clock::paused());
    let handle = driver.handle();
    let (flag, waker) = flag_waker();
    let mut sleep = Box::pin(Sleep::new(handle.clone(), handle.now() + MS, false));
    assert!(poll(sleep.as_mut(), &waker).is_pending());
    driver.clock().advance(MS);
    (driver, flag, waker, sleep)
}

/// A timer registered on another thread while the driver fires is either
/// fired by that pass or by the next one: its task is never left waiting.
#[test]
fn registration_races_fire_pass() {
    loom::model(|| {
        let mut driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let deadline = handle.now() + MS;
        let remote = thread::spawn(move || {
            let (flag, waker) = flag_waker();
            let mut sleep = Box::pin(Sleep::new(handle, deadline, false));
            let first = poll(sleep.as_mut(), &waker);
            (sleep, flag, waker, first)
        });
        driver.clock().advance(MS);
        driver.park_timeout(Duration::ZERO).unwrap();
        let (mut sleep, flag, waker, first) = remote.join().unwrap();
        driver.park_timeout(Duration::ZERO).unwrap();
        if first.is_pending() {
            // Registered before the clock moved: a fire pass woke it.
            assert!(flag.0.load(SeqCst), "registered timer never woken");
        }
        assert!(sleep.is_elapsed());
        assert!(poll(sleep.as_mut(), &waker).is_ready());
    });
}

/// Cancelling (dropping) a timer on another thread while the driver fires
/// never wakes a dropped task twice nor touches freed memory.
#[test]
fn cancellation_races_fire_pass() {
    loom::model(|| {
        let (mut driver, flag, _waker, sleep) = due_sleep();
        let remote = thread::spawn(move || drop(sleep));
        driver.park_timeout(Duration::ZERO).unwrap();
        remote.join().unwrap();
        let fired = driver.stats().timers_fired;
        assert!(fired <= 1);
        assert_eq!(flag.0.load(SeqCst), fired == 1);
    });
}

/// Completing a timer on another thread while the driver fires it: the
/// owner's poll, `is_elapsed` and drop take the fired fast path (no lock)
/// only once the driver is done with the entry, so loom never sees the two
/// touch it at once; a poll that missed the fire leaves its task woken.
#[test]
fn completion_races_fire_pass() {
    loom::model(|| {
        let (mut driver, flag, waker, mut sleep) = due_sleep();
        let remote_waker = waker.clone();
        let remote = thread::spawn(move || {
            if poll(sleep.as_mut(), &remote_waker).is_ready() {
                assert!(sleep.is_elapsed());
                drop(sleep);
                None
            } else {
                Some(sleep)
            }
        });
        driver.park_timeout(Duration::ZERO).unwrap();
        let pending = remote.join().unwrap();
        assert_eq!(driver.stats().timers_fired, 1);
        if let Some(mut sleep) = pending {
            // The poll missed the fire: the pass woke its task.
            assert!(flag.0.load(SeqCst), "a pending poll was never woken");
            assert!(poll(sleep.as_mut(), &waker).is_ready());
        }
    });
}

/// A registration from another thread wakes a driver that is blocked with
/// no timer (if the wake-up were lost, loom would report a deadlock).
#[test]
fn registration_unparks_a_parked_driver() {
    loom::model(|| {
        let mut driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let remote = thread::spawn(move || {
            let (_flag, waker) = flag_waker();
            let mut sleep = Box::pin(Sleep::new(handle.clone(), handle.now() + MS, false));
            assert!(poll(sleep.as_mut(), &waker).is_pending());
            sleep
        });
        driver.park().unwrap();
        let sleep = remote.join().unwrap();
        drop(sleep);
    });
}

/// Re-arming a registered timer on another thread while the driver fires:
/// the timer ends either fired at the new deadline or pending with its task
/// to be woken by a later pass; never fired for the old deadline after the
/// reset returned.
#[test]
fn reset_races_fire_pass() {
    loom::model(|| {
        let mut driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let start = handle.now();
        let (flag, waker) = flag_waker();
        let mut sleep = Box::pin(Sleep::new(handle.clone(), start + MS, false));
        assert!(poll(sleep.as_mut(), &waker).is_pending());
        driver.clock().advance(MS);
        let remote = thread::spawn(move || {
            sleep.as_mut().reset(start + MS * 10);
            sleep
        });
        driver.park_timeout(Duration::ZERO).unwrap();
        let mut sleep = remote.join().unwrap();
        // After the reset the timer waits for the new deadline.
        assert!(!sleep.is_elapsed());
        assert!(poll(sleep.as_mut(), &waker).is_pending());
        driver.clock().advance(MS * 9);
        driver.park_timeout(Duration::ZERO).unwrap();
        assert!(flag.0.load(SeqCst));
        assert!(sleep.is_elapsed());
    });
}
