//! A waker that panics while the driver wakes a batch of timers (a foreign
//! waker: another executor's, or a user's own `Wake` impl) must not strand
//! the other wakers of the batch: every one is woken, then the first panic
//! is re-raised. One test per path that wakes batches: the fire pass of a
//! park, `advance` on the paused clock, and the driver's shutdown.
//!
//! 40 ordinary timers around the panicking one, more than one wake batch
//! (32), so that batches after the panic are covered too.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};

const MS: Duration = Duration::from_millis(1);
const OTHERS: usize = 40;

struct CountingWaker(Arc<AtomicU64>);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("foreign waker panicked");
    }
}

struct Fixture {
    driver: Driver<ParkThread>,
    woken: Arc<AtomicU64>,
    sleeps: Vec<Pin<Box<Sleep>>>,
}

/// A paused driver with `OTHERS` timers at +5 ms on a counting waker and
/// one, registered in the middle, on a panicking waker.
fn fixture() -> Fixture {
    let driver = Driver::new(ParkThread::new(), Clock::paused());
    let handle = driver.handle();
    let deadline = handle.now() + MS * 5;
    let woken = Arc::new(AtomicU64::new(0));
    let counting = Waker::from(Arc::new(CountingWaker(woken.clone())));
    let panicking = Waker::from(Arc::new(PanickingWaker));
    let mut sleeps = Vec::new();
    for i in 0..=OTHERS {
        let waker = if i == OTHERS / 2 {
            &panicking
        } else {
            &counting
        };
        let mut sleep = Box::pin(Sleep::new(handle.clone(), deadline, false));
        assert!(sleep
            .as_mut()
            .poll(&mut Context::from_waker(waker))
            .is_pending());
        sleeps.push(sleep);
    }
    Fixture {
        driver,
        woken,
        sleeps,
    }
}

fn assert_panic_message(result: std::thread::Result<()>) {
    let payload = result.expect_err("the waker's panic is re-raised");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"foreign waker panicked")
    );
}

#[test]
fn fire_pass_wakes_the_whole_batch_then_re_raises() {
    let mut f = fixture();
    f.driver.clock().advance(MS * 5);
    let result = catch_unwind(AssertUnwindSafe(|| {
        f.driver.park_timeout(Duration::ZERO).unwrap();
    }));
    assert_panic_message(result);
    assert_eq!(f.woken.load(SeqCst), OTHERS as u64);
    assert!(f.sleeps.iter().all(|s| s.is_elapsed()));
    assert_eq!(f.driver.handle().timers_fired(), OTHERS as u64 + 1);
    // The driver goes on: a later pass works normally.
    f.driver.park_timeout(Duration::ZERO).unwrap();
}

#[test]
fn advance_wakes_the_whole_batch_then_re_raises() {
    let f = fixture();
    let _guard = f.driver.handle().enter();
    let mut advance = Box::pin(tempo_time::advance(MS * 5));
    let noop = Waker::from(Arc::new(CountingWaker(Arc::new(AtomicU64::new(0)))));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _ = advance.as_mut().poll(&mut Context::from_waker(&noop));
    }));
    assert_panic_message(result);
    assert_eq!(f.woken.load(SeqCst), OTHERS as u64);
    assert!(f.sleeps.iter().all(|s| s.is_elapsed()));
}

#[test]
fn shutdown_wakes_every_timer_then_re_raises() {
    let f = fixture();
    let Fixture {
        driver,
        woken,
        sleeps,
    } = f;
    let result = catch_unwind(AssertUnwindSafe(move || drop(driver)));
    assert_panic_message(result);
    assert_eq!(woken.load(SeqCst), OTHERS as u64);
    drop(sleeps);
}
