//! `Sleep`, `Timeout` and the driver's semantics under the paused clock
//! (deterministic), plus cross-thread registration with the real clock.

mod support;

use std::future::{pending, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::{block_on, SplitMix64};
use tempo_park::{DriverStats, Park, ParkThread, Unpark};
use tempo_time::{error::Elapsed, Clock, Driver, Handle, Instant, Sleep};
use tokio_test::{assert_pending, assert_ready, task};

fn paused_driver() -> Driver<ParkThread> {
    Driver::new(ParkThread::new(), Clock::paused())
}

#[test]
fn zero_window_never_completes_before_the_deadline() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let _guard = handle.enter();
    let mut rng = SplitMix64(7);
    for _ in 0..200 {
        // Sub-millisecond parts too: the deadline tick rounds up.
        let duration = Duration::from_micros(1 + rng.below(200_000));
        let start = Instant::now();
        let mut sleep = task::spawn(tempo_time::sleep(duration));
        assert_pending!(sleep.poll());
        // Walk the clock up to just before the deadline, firing each step.
        let mut steps = 0;
        while Instant::now() + Duration::from_millis(1) < start + duration {
            handle.clock().advance(Duration::from_millis(1));
            driver.park_timeout(Duration::ZERO).unwrap();
            assert!(!sleep.is_woken(), "woken before its deadline");
            assert_pending!(sleep.poll());
            steps += 1;
            assert!(steps < 1_000);
        }
        handle.clock().advance(Duration::from_millis(1));
        driver.park_timeout(Duration::ZERO).unwrap();
        assert!(sleep.is_woken());
        assert_ready!(sleep.poll());
        assert!(Instant::now() >= start + duration);
        assert!(Instant::now() < start + duration + Duration::from_millis(2));
    }
}

#[test]
fn paused_clock_auto_advances_to_the_next_timer() {
    let mut driver = paused_driver();
    let start = driver.clock().now();
    block_on(&mut driver, async {
        tempo_time::sleep(Duration::from_secs(3 * 24 * 3600)).await;
        tempo_time::sleep(Duration::from_millis(1)).await;
    });
    assert_eq!(
        driver.clock().now() - start,
        Duration::from_secs(3 * 24 * 3600) + Duration::from_millis(1)
    );
    assert_eq!(driver.stats().timers_fired, 2);
}

#[test]
fn park_timeout_with_a_paused_clock_advances_by_the_timeout_at_most() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let start = handle.now();
    let mut sleep = task::spawn(Sleep::new(
        handle.clone(),
        start + Duration::from_secs(10),
        false,
    ));
    assert_pending!(sleep.poll());
    driver.park_timeout(Duration::from_secs(3)).unwrap();
    assert_eq!(handle.now() - start, Duration::from_secs(3));
    assert_pending!(sleep.poll());
    driver.park_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(handle.now() - start, Duration::from_secs(10));
    assert_ready!(sleep.poll());
    // No timers: a timeout still moves virtual time.
    driver.park_timeout(Duration::from_secs(1)).unwrap();
    assert_eq!(handle.now() - start, Duration::from_secs(11));
}

#[test]
fn duration_max_never_fires_and_never_overflows() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let _guard = handle.enter();
    let start = Instant::now();
    let mut sleep = task::spawn(tempo_time::sleep(Duration::MAX));
    assert_eq!(
        sleep.enter(|_, s| s.deadline()),
        start + Instant::FAR_FUTURE
    );
    assert_pending!(sleep.poll());
    let year = Duration::from_secs(365 * 24 * 3600);
    for _ in 0..20 {
        handle.clock().advance(year);
        driver.park_timeout(Duration::ZERO).unwrap();
        assert!(!sleep.is_woken());
        assert_pending!(sleep.poll());
    }
    assert_eq!(Instant::now() - start, year * 20);
    assert_eq!(
        Instant::now() + Duration::MAX,
        Instant::now() + Instant::FAR_FUTURE
    );
    assert_eq!(driver.stats().timers_fired, 0);
}

#[test]
fn duration_zero_is_ready_on_first_poll() {
    let driver = paused_driver();
    let _guard = driver.handle().enter();
    let mut sleep = task::spawn(tempo_time::sleep(Duration::ZERO));
    assert_ready!(sleep.poll());
    assert!(sleep.enter(|_, s| s.is_elapsed()));
    // It completed without a fire pass.
    assert_eq!(driver.stats().timers_fired, 0);
}

#[test]
fn reset_moves_the_deadline_and_keeps_the_waker() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let _guard = handle.enter();
    let start = Instant::now();
    let mut sleep = task::spawn(tempo_time::sleep(Duration::from_secs(10)));
    assert_pending!(sleep.poll());

    // Earlier.
    sleep.enter(|_, s| s.reset(start + Duration::from_millis(5)));
    assert_eq!(
        sleep.enter(|_, s| s.deadline()),
        start + Duration::from_millis(5)
    );
    handle.clock().advance(Duration::from_millis(5));
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(
        sleep.is_woken(),
        "the waker of the first poll survives reset"
    );
    assert_ready!(sleep.poll());

    // After completion: pending again.
    sleep.enter(|_, s| s.reset(Instant::now() + Duration::from_secs(1)));
    assert!(!sleep.enter(|_, s| s.is_elapsed()));
    assert_pending!(sleep.poll());

    // To the past: the waiting task is woken at once.
    sleep.enter(|_, s| s.reset(start));
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
}

#[test]
fn cancelled_sleeps_never_fire() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let _guard = handle.enter();
    let mut keep = task::spawn(tempo_time::sleep(Duration::from_millis(50)));
    assert_pending!(keep.poll());
    for i in 0..100 {
        let mut s = task::spawn(tempo_time::sleep(Duration::from_millis(i)));
        let _ = s.poll();
    } // dropped: cancelled
    handle.clock().advance(Duration::from_millis(200));
    driver.park_timeout(Duration::ZERO).unwrap();
    assert_eq!(driver.stats().timers_fired, 1);
    assert_ready!(keep.poll());
}

#[test]
fn timeout_returns_elapsed_and_drops_the_inner_future() {
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let mut driver = paused_driver();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    let start = driver.clock().now();
    let result = block_on(&mut driver, async move {
        tempo_time::timeout(Duration::from_secs(60), async move {
            let _flag = flag;
            pending::<()>().await
        })
        .await
    });
    assert_eq!(result, Err(Elapsed::new_for_tests()));
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(driver.clock().now() - start, Duration::from_secs(60));

    // A future that completes first wins.
    let value = block_on(&mut driver, async {
        tempo_time::timeout(Duration::from_secs(1), async { 7 }).await
    });
    assert_eq!(value, Ok(7));
    let err: std::io::Error = Elapsed::new_for_tests().into();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
}

#[test]
fn dropping_the_driver_with_pending_timers() {
    let driver = paused_driver();
    let handle = driver.handle();
    let mut sleeps: Vec<_> = (1..50)
        .map(|i| {
            task::spawn(Sleep::new(
                handle.clone(),
                handle.now() + Duration::from_millis(i),
                false,
            ))
        })
        .collect();
    for s in &mut sleeps {
        assert_pending!(s.poll());
    }
    drop(driver);
    for s in &mut sleeps {
        assert!(s.is_woken(), "shutdown wakes the waiting tasks");
        assert!(!s.enter(|_, s| s.is_elapsed()));
    }
    // Polling after shutdown panics with a clear message.
    let mut first = sleeps.pop().unwrap();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = first.poll();
    }))
    .unwrap_err();
    let message = panic.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(message.contains("shut down"), "{message}");
    drop(sleeps); // dropping after the driver is fine
}

#[test]
fn handle_current_outside_a_runtime_says_what_to_do() {
    assert!(Handle::try_current().is_none());
    let panic = std::panic::catch_unwind(Handle::current).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(message.contains("enable_time()"), "{message}");
}

#[test]
fn enter_guards_nest_and_instant_now_follows_the_paused_clock() {
    let outer = paused_driver();
    let inner = paused_driver();
    inner.clock().advance(Duration::from_secs(3600));
    let g1 = outer.handle().enter();
    assert_eq!(Instant::now(), outer.clock().now());
    {
        let _g2 = inner.handle().enter();
        assert_eq!(Instant::now(), inner.clock().now());
    }
    assert_eq!(Instant::now(), outer.clock().now());
    tempo_time::resume();
    assert!(!outer.clock().is_paused());
    tempo_time::pause();
    assert!(outer.clock().is_paused());
    drop(g1);
    assert!(Handle::try_current().is_none());
}

#[test]
fn advance_fires_due_timers_and_yields() {
    let mut driver = paused_driver();
    let fired_before_yield_returned = block_on(&mut driver, async {
        let handle = Handle::current();
        let mut sleep = pin!(tempo_time::sleep(Duration::from_secs(5)));
        // Register it.
        let waker = futures_noop_waker();
        assert!(sleep
            .as_mut()
            .poll(&mut std::task::Context::from_waker(&waker))
            .is_pending());
        tempo_time::advance(Duration::from_secs(5)).await;
        (sleep.is_elapsed(), handle.timers_fired())
    });
    assert_eq!(fired_before_yield_returned, (true, 1));
}

fn futures_noop_waker() -> std::task::Waker {
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    std::task::Waker::from(Arc::new(Noop))
}

/// A `ParkThread` that counts unparks and says when it is about to block.
struct Observed {
    inner: ParkThread,
    blocking: Arc<AtomicBool>,
    unparks: Arc<AtomicUsize>,
}

struct ObservedUnpark {
    inner: <ParkThread as Park>::Unpark,
    unparks: Arc<AtomicUsize>,
}

impl Unpark for ObservedUnpark {
    fn unpark(&self) {
        self.unparks.fetch_add(1, Ordering::SeqCst);
        self.inner.unpark();
    }
}

impl Park for Observed {
    type Unpark = ObservedUnpark;
    type Error = std::convert::Infallible;
    fn unpark(&self) -> ObservedUnpark {
        ObservedUnpark {
            inner: self.inner.unpark(),
            unparks: self.unparks.clone(),
        }
    }
    fn park(&mut self) -> Result<(), Self::Error> {
        self.blocking.store(true, Ordering::SeqCst);
        self.inner.park()
    }
    fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
        if !d.is_zero() {
            self.blocking.store(true, Ordering::SeqCst);
        }
        self.inner.park_timeout(d)
    }
    fn stats(&self) -> DriverStats {
        DriverStats::default()
    }
}

#[test]
fn timers_registered_from_another_thread_wake_a_parked_driver() {
    let blocking = Arc::new(AtomicBool::new(false));
    let unparks = Arc::new(AtomicUsize::new(0));
    let mut driver = Driver::new(
        Observed {
            inner: ParkThread::new(),
            blocking: blocking.clone(),
            unparks: unparks.clone(),
        },
        Clock::real(),
    );
    let handle = driver.handle();
    // The driver parks towards a timer an hour away.
    let mut far = task::spawn(Sleep::new(
        handle.clone(),
        handle.now() + Duration::from_secs(3600),
        false,
    ));
    assert_pending!(far.poll());

    let remote = std::thread::spawn(move || {
        // Wait (bounded) until the driver blocks.
        for _ in 0..10_000_000 {
            if blocking.load(Ordering::SeqCst) {
                break;
            }
            std::thread::yield_now();
        }
        // Later than what the driver sleeps towards: no unpark.
        let mut later = task::spawn(Sleep::new(
            handle.clone(),
            handle.now() + Duration::from_secs(7200),
            false,
        ));
        assert_pending!(later.poll());
        // Earlier: unparks the driver.
        let mut soon = task::spawn(Sleep::new(
            handle.clone(),
            handle.now() + Duration::from_millis(5),
            false,
        ));
        assert_pending!(soon.poll());
        soon
    });
    // Bounded: each park lasts at most a minute; the remote timer is due in
    // 5 ms, so a lost wake-up shows as a minute-long hang and a failure.
    let mut parks = 0;
    while driver.stats().timers_fired == 0 && parks < 3 {
        driver.park_timeout(Duration::from_secs(60)).unwrap();
        parks += 1;
    }
    let mut soon = remote.join().unwrap();
    assert_eq!(driver.stats().timers_fired, 1);
    assert!(soon.is_woken());
    assert_ready!(soon.poll());
    assert_eq!(
        unparks.load(Ordering::SeqCst),
        1,
        "only the earlier deadline unparks"
    );
}

#[test]
fn timer_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sleep>();
    send_sync::<Handle>();
    send_sync::<Clock>();
    send_sync::<Instant>();
    send_sync::<tempo_time::Interval>();
    send_sync::<tempo_time::Timeout<std::future::Ready<()>>>();
    send_sync::<Driver<ParkThread>>();
}

#[test]
fn real_clock_sleep_completes_and_is_never_early() {
    let mut driver = Driver::new(ParkThread::new(), Clock::real());
    let start = std::time::Instant::now();
    block_on(&mut driver, async {
        tempo_time::sleep(Duration::from_millis(3)).await
    });
    // A lower bound only: the upper bound is measured by the timer_error
    // example, never asserted (CI is noisy).
    assert!(start.elapsed() >= Duration::from_millis(3));
    assert_eq!(driver.stats().timers_fired, 1);
    assert!(driver.next_wake().is_none());
}

#[test]
fn next_wake_is_the_next_expiration_minus_the_window() {
    let mut driver = paused_driver();
    driver.set_firing_window(Duration::from_millis(10));
    assert_eq!(driver.firing_window(), Duration::from_millis(10));
    let handle = driver.handle();
    let start = handle.now();
    let mut sleep = task::spawn(Sleep::new(
        handle.clone(),
        start + Duration::from_millis(30),
        false,
    ));
    assert_pending!(sleep.poll());
    assert_eq!(driver.next_wake(), Some(start + Duration::from_millis(20)));
    // Nearest tick: a park reaches the deadline minus the window and fires.
    driver.park().unwrap();
    assert_eq!(handle.now() - start, Duration::from_millis(20));
    assert_ready!(sleep.poll());
    // Never early: the park goes to the deadline itself.
    let mut at_least = task::spawn(Sleep::new(
        handle.clone(),
        start + Duration::from_millis(50),
        true,
    ));
    assert_pending!(at_least.poll());
    driver.park().unwrap();
    assert_eq!(handle.now() - start, Duration::from_millis(50));
    assert_ready!(at_least.poll());
}

#[test]
fn past_deadlines_complete_by_the_next_fire_pass() {
    let mut driver = paused_driver();
    let handle = driver.handle();
    let _guard = handle.enter();
    let start = Instant::now();
    handle.clock().advance(Duration::from_millis(10));
    // The driver has not processed 10 ms yet: due at its next fire pass.
    let mut past = task::spawn(tempo_time::sleep_until(start + Duration::from_millis(5)));
    assert_pending!(past.poll());
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(past.is_woken());
    assert_ready!(past.poll());
    // Now it has: a deadline at or before that tick is ready on first poll.
    let mut processed = task::spawn(tempo_time::sleep_until(start + Duration::from_millis(10)));
    assert_ready!(processed.poll());
    // A zero timeout polls the future once, then reports Elapsed at once.
    let mut t = task::spawn(tempo_time::timeout(Duration::ZERO, pending::<()>()));
    assert_eq!(assert_ready!(t.poll()), Err(Elapsed::new_for_tests()));
}
