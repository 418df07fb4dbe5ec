//! The throttling scheduler's tick cadence, as issue 5 specifies it:
//! overruns, idle blocking, remote spawns and wakes batched to the next tick,
//! and the explicit unparks that cut the sleep between ticks short.
//!
//! Throttling scheduler only: ticks, overruns and wakes batched to the next
//! tick are its cadence; the basic scheduler has none.
//!
//! Timing is observed through the paused clock, `Turn` reports and counters,
//! never asserted on the real clock. The helpers these files share are in
//! `support/throttle.rs`.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tempo::runtime::Builder;
use tempo::time::{self, Instant};

mod support;
use support::throttle::*;

#[test]
fn overrun_by_budget_starts_the_next_tick_at_once() {
    let rt = Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .max_throttling(T)
        .tick_budget(1)
        .build()
        .unwrap();
    for _ in 0..3 {
        drop(rt.spawn(async {}));
    }
    for _ in 0..2 {
        let turn = rt.turn(Duration::MAX);
        assert_eq!(turn.tasks_polled(), 1);
        assert!(turn.overrun());
        assert!(turn.tasks_remaining());
        assert!(!turn.parked());
        assert_eq!(turn.parked_for(), Duration::ZERO);
    }
    let last = rt.turn(Duration::MAX);
    assert_eq!(last.tasks_polled(), 1);
    assert!(!last.overrun());
    assert!(
        last.parked(),
        "no work left: back to sleeping between ticks"
    );
    assert_eq!(rt.metrics().overruns, 2);
    assert_eq!(rt.metrics().ticks, 3);
}

#[test]
fn overrun_by_a_long_tick_starts_the_next_tick_at_once() {
    // A task that blocks its thread longer than T (real clock: a blocking
    // sleep lasts at least what it asks, so this is not a timing bet).
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(Duration::from_millis(5))
        .build()
        .unwrap();
    drop(rt.spawn(async { thread::sleep(Duration::from_millis(12)) }));
    let turn = rt.turn(Duration::MAX);
    assert_eq!(turn.tasks_polled(), 1);
    assert!(turn.overrun());
    assert!(!turn.parked());
    assert_eq!(rt.metrics().overruns, 1);

    // The same on the paused clock: a task's virtual work moves the clock
    // 30 ms past the tick's start.
    let rt = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .max_throttling(T)
        .build()
        .unwrap();
    drop(rt.spawn(async { time::advance(Duration::from_millis(30)).await }));
    let turn = rt.turn(Duration::MAX);
    assert!(turn.overrun());
    assert!(!turn.parked());
    assert_eq!(rt.metrics().overruns, 1);
}

#[test]
fn idle_runtime_blocks_instead_of_ticking() {
    // The I/O driver is wrapped in a probe that reports when the runtime
    // blocks on it with no time-out: the remote thread waits for that,
    // not for a stretch of real time, so the test cannot depend on which
    // thread runs first.
    let blocked = BlockProbe::default();
    let probe = blocked.clone();
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(T)
        .with_park_fn(move |io| probe.wrap(io))
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let done = Signal::default();
    let remote_done = done.clone();
    let remote = thread::spawn(move || {
        blocked.wait_until_blocked();
        let metrics = handle.metrics();
        remote_done.set();
        metrics
    });
    rt.block_on(done);
    let at_block = remote.join().unwrap();
    assert!(
        at_block.ticks <= 2,
        "an idle runtime ticked {} times before it blocked",
        at_block.ticks
    );
    assert_eq!(
        rt.handle().unpark_count(),
        1,
        "only the final wake unparks it"
    );
}

#[test]
fn remote_spawns_and_wakes_during_the_sleep_do_not_unpark() {
    // On a driver that always reports an event, the runtime never blocks
    // idle: every tick ends in a sleep (state SLEEPING) on the real clock.
    let (park, polls, _) = BusyPark::new(true);
    let rt = Builder::new_current_thread()
        .with_park(park)
        .max_throttling(Duration::from_millis(2))
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let ran = Arc::new(AtomicUsize::new(0));
    let all_ran = Signal::default();
    // 50 tasks waiting for a remote wake each.
    let waiting: Vec<Signal> = (0..50).map(|_| Signal::default()).collect();
    for signal in &waiting {
        let (signal, ran, all_ran) = (signal.clone(), ran.clone(), all_ran.clone());
        drop(rt.spawn(async move {
            signal.await;
            if ran.fetch_add(1, SeqCst) + 1 == 100 {
                all_ran.set();
            }
        }));
    }
    let (r, a) = (ran.clone(), all_ran.clone());
    let remote = thread::spawn(move || {
        // Wait until the runtime ticks (its waiting tasks have run once).
        for _ in 0..10_000_000 {
            if polls.load(SeqCst) >= 2 {
                break;
            }
            thread::yield_now();
        }
        for signal in waiting {
            signal.set();
        }
        for _ in 0..50 {
            let (r, a) = (r.clone(), a.clone());
            drop(handle.spawn(async move {
                if r.fetch_add(1, SeqCst) + 1 == 100 {
                    a.set();
                }
            }));
        }
        handle.unpark_count()
    });
    rt.block_on(all_ran);
    let unparks_seen_remotely = remote.join().unwrap();
    assert_eq!(ran.load(SeqCst), 100);
    assert_eq!(unparks_seen_remotely, 0);
    assert_eq!(
        rt.handle().unpark_count(),
        0,
        "no wake unparked the runtime"
    );
    assert_eq!(rt.metrics().unparks, 0);
}

#[test]
fn a_remote_spawn_unparks_an_idle_runtime_once() {
    // A driver with no events: the throttled runtime blocks in it when idle.
    let (park, _, blocking) = BusyPark::new(false);
    let rt = Builder::new_current_thread()
        .with_park(park)
        .max_throttling(T)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let remote = thread::spawn(move || {
        for _ in 0..10_000_000 {
            if blocking.load(SeqCst) > 0 {
                break;
            }
            thread::yield_now();
        }
        handle.spawn(async { 7 })
    });
    // Blocks idle until the remote spawn arrives.
    let turn = rt.turn(Duration::MAX);
    assert!(turn.parked());
    assert_eq!(rt.handle().unpark_count(), 1);
    let join = remote.join().unwrap();
    assert_eq!(rt.block_on(join).unwrap(), 7);
    assert_eq!(rt.handle().unpark_count(), 1);
}

/// A throttled runtime on the paused clock whose first tick makes a remote
/// thread spawn a task that records the virtual time it runs at, with
/// `spawn_and_unpark` or plain `spawn`; returns that time minus the first
/// tick's start.
fn remote_spawn_delay(and_unpark: bool) -> Duration {
    let rt = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .max_throttling(T)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let ran_at = Arc::new(Mutex::new(None));
    let tick_start = Arc::new(Mutex::new(None));
    let (ran_at_remote, start) = (ran_at.clone(), tick_start.clone());
    drop(rt.spawn(async move {
        *start.lock().unwrap() = Some(Instant::now());
        // The remote spawn happens while this tick runs, after its run
        // queue was filled: the task waits for the tick's sleep to end.
        thread::spawn(move || {
            let record = async move {
                *ran_at_remote.lock().unwrap() = Some(Instant::now());
            };
            if and_unpark {
                drop(handle.spawn_and_unpark(record));
            } else {
                drop(handle.spawn(record));
            }
        })
        .join()
        .unwrap();
    }));
    for _ in 0..10 {
        if ran_at.lock().unwrap().is_some() {
            break;
        }
        rt.turn(Duration::MAX);
    }
    let ran_at = ran_at.lock().unwrap().expect("the remote task ran");
    let tick_start = tick_start.lock().unwrap().unwrap();
    ran_at - tick_start
}

#[test]
fn spawn_and_unpark_cuts_the_sleep_short() {
    let plain = remote_spawn_delay(false);
    let unparked = remote_spawn_delay(true);
    eprintln!("remote spawn ran after {plain:?} (spawn), {unparked:?} (spawn_and_unpark)");
    assert_eq!(plain, T, "a plain remote spawn waits for the next tick");
    assert_eq!(unparked, Duration::ZERO, "spawn_and_unpark does not wait");
}

#[test]
fn handle_unpark_cuts_the_sleep_short() {
    let rt = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .max_throttling(T)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    drop(rt.spawn(async move { handle.unpark() }));
    let before = rt.block_on(async { Instant::now() });
    let turn = rt.turn(Duration::MAX);
    assert_eq!(turn.tasks_polled(), 1);
    assert!(!turn.overrun());
    assert_eq!(turn.parked_for(), Duration::ZERO, "the sleep was cut short");
    assert_eq!(rt.block_on(async { Instant::now() }), before);
}
