//! A throttling runtime's life, as issue 5 specifies it: built (period
//! validation, `with_park` vs `enable_io`), driven from a host loop on a
//! custom `Park`, and dropped with live tasks and pending timers.
//!
//! Throttling scheduler only: the period's validation has no basic
//! counterpart, and the rest is the throttling side of what `turn.rs`
//! (host loop) and `shutdown.rs` (drop with live tasks, on each flavor)
//! test for the basic scheduler.
//!
//! Timing is observed through the paused clock, `Turn` reports and counters,
//! never asserted on the real clock. The helpers these files share are in
//! `support/throttle.rs`.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempo::runtime::{Builder, TimerPolicy};
use tempo::time::{self, Instant};

mod support;
use support::throttle::*;
use support::DropCounter;

#[test]
fn host_loop_drives_a_throttled_runtime_on_a_custom_park() {
    let (park, polls, _) = BusyPark::new(false);
    let rt = Builder::new_current_thread()
        .with_park(park)
        .enable_time()
        .start_paused(true)
        .max_throttling(T)
        .build()
        .unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let e = errors.clone();
    let task = rt.spawn(async move {
        for ms in [50u64, 27, 133] {
            let deadline = Instant::now() + Duration::from_millis(ms);
            time::sleep_until(deadline).await;
            e.lock().unwrap().push(signed_us(Instant::now(), deadline));
        }
    });
    let mut turns = 0u64;
    while !task.is_finished() {
        let turn = rt.turn(Duration::from_millis(100));
        turns += 1;
        assert!(turns < 1_000, "the host loop did not finish the task");
        let _ = turn;
    }
    assert!(polls.load(SeqCst) >= turns, "each turn polled the driver");
    let errors = errors.lock().unwrap().clone();
    assert_eq!(errors.len(), 3);
    for e in &errors {
        assert!(
            (-HALF_T_US..=HALF_T_US).contains(e),
            "error {e} us outside ±T/2"
        );
    }
    assert_eq!(rt.metrics().timers_fired, 3);
}

#[test]
fn builder_validates_the_throttling_period() {
    for bad in [
        Duration::from_secs(3600),
        Duration::from_micros(500),
        Duration::from_millis(1001),
    ] {
        let error = Builder::new_current_thread()
            .max_throttling(bad)
            .build()
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        let message = error.to_string();
        assert!(
            message.contains("1 ms to 1 s"),
            "message does not state the range: {message}"
        );
    }
    for good in [
        Duration::ZERO,
        Duration::from_millis(1),
        Duration::from_millis(20),
        Duration::from_secs(1),
    ] {
        let rt = Builder::new_current_thread()
            .max_throttling(good)
            .build()
            .unwrap();
        assert_eq!(rt.handle().max_throttling(), good);
        assert_eq!(rt.block_on(async { 5 }), 5);
    }
}

#[test]
fn with_park_and_enable_io_are_exclusive() {
    let (park, _, _) = BusyPark::new(false);
    let error = Builder::new_current_thread()
        .with_park(park)
        .enable_all()
        .max_throttling(T)
        .build()
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("enable_time"), "{error}");
}

#[test]
fn dropping_a_throttled_runtime_drops_live_tasks_and_pending_timers() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = throttled(TimerPolicy::NearestTick);
    let mut joins = Vec::new();
    for i in 0..20u64 {
        let counter = DropCounter(drops.clone());
        joins.push(rt.spawn(async move {
            let _counter = counter;
            time::sleep(Duration::from_secs(60 + i)).await;
        }));
    }
    // Some polled (timers registered), some never polled.
    for _ in 0..10 {
        let counter = DropCounter(drops.clone());
        joins.push(rt.spawn(async move {
            let _counter = counter;
            std::future::pending::<()>().await;
        }));
    }
    rt.turn(Duration::ZERO);
    for i in 0..5 {
        let counter = DropCounter(drops.clone());
        joins.push(rt.spawn(async move {
            let _counter = counter;
            time::sleep(Duration::from_millis(i)).await;
        }));
    }
    assert_eq!(drops.load(SeqCst), 0);
    drop(rt);
    assert_eq!(drops.load(SeqCst), 35);
    for join in joins {
        assert!(join.is_finished());
    }
}
