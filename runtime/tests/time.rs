//! `tempo::time` used the tokio way through a runtime (basic scheduler):
//! sleep, interval, timeout and the paused clock; timers created on other
//! threads; timers owned by tasks that are aborted, finish, or outlive the
//! runtime; the error without `enable_time`.
//!
//! Basic scheduler only (not `on_each_flavor!`): these tests assert tokio's
//! exact instants on the paused clock (a 100 ms timeout completes after
//! exactly 100 ms, an interval ticks at 0, 250, 500 ms). Under throttling a
//! timer fires at the tick nearest its deadline instead, within `±T/2`;
//! `time_rules.rs` (rules on both schedulers), `nearest_tick.rs` and
//! `throttle_timers.rs` test that. The one throttled test here is
//! `sleep_at_least`'s never-early promise.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tempo::runtime::{Builder, Runtime};
use tempo::time::{self, Instant, MissedTickBehavior};

mod support;
use support::{DropCounter, Flavor};

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn sleep_interval_and_timeout_on_the_paused_clock() {
    let rt = paused();
    rt.block_on(async {
        let start = Instant::now();
        time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(3600));

        let start = Instant::now();
        let mut interval = time::interval(ms(250));
        let mut ticks = Vec::new();
        for _ in 0..4 {
            ticks.push(interval.tick().await - start);
        }
        assert_eq!(ticks, vec![ms(0), ms(250), ms(500), ms(750)]);

        let start = Instant::now();
        let elapsed = time::timeout(ms(100), std::future::pending::<()>()).await;
        assert!(elapsed.is_err());
        assert_eq!(start.elapsed(), ms(100));

        let quick = time::timeout(ms(100), async {
            time::sleep(ms(40)).await;
            7
        })
        .await;
        assert_eq!(quick.unwrap(), 7);
    });
}

#[test]
fn interval_missed_tick_behaviours_on_the_paused_clock() {
    let rt = paused();
    rt.block_on(async {
        let start = Instant::now();
        let mut interval = time::interval(ms(10));
        interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
        interval.tick().await;
        time::advance(ms(35)).await;
        // Skip: the late tick fires now, the next one stays on the grid.
        interval.tick().await;
        assert_eq!(Instant::now() - start, ms(35));
        interval.tick().await;
        assert_eq!(Instant::now() - start, ms(40));
    });
}

#[test]
fn advance_fires_due_timers_in_order() {
    let rt = paused();
    let order = rt.block_on(async {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut joins = Vec::new();
        for d in [30u64, 10, 20] {
            let log = log.clone();
            joins.push(tempo::spawn(async move {
                time::sleep(ms(d)).await;
                log.lock().unwrap().push(d);
            }));
        }
        tempo::task::yield_now().await; // let them register
        time::advance(ms(15)).await;
        assert_eq!(*log.lock().unwrap(), vec![10]);
        time::advance(ms(20)).await;
        for join in joins {
            join.await.unwrap();
        }
        let order = log.lock().unwrap().clone();
        order
    });
    assert_eq!(order, vec![10, 20, 30]);
}

#[test]
fn timers_created_on_another_thread_with_handle_enter() {
    let rt = paused();
    let handle = rt.handle().clone();
    let (sleep, deadline) = thread::spawn(move || {
        let _enter = handle.enter();
        let sleep = time::sleep(ms(500));
        let deadline = sleep.deadline();
        (sleep, deadline)
    })
    .join()
    .unwrap();
    let handle = rt.handle().clone();
    let interval = thread::spawn(move || {
        let _enter = handle.enter();
        time::interval(ms(100))
    })
    .join()
    .unwrap();
    rt.block_on(async move {
        sleep.await;
        assert!(Instant::now() >= deadline);
        let mut interval = interval;
        interval.tick().await;
        interval.tick().await;
    });
}

#[test]
fn sleep_is_never_early_on_the_real_clock() {
    // Only the lower bound is asserted: a sleep may be late on a busy
    // machine, never early.
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async {
        for d in [1u64, 3, 7, 12] {
            let start = std::time::Instant::now();
            time::sleep(ms(d)).await;
            assert!(start.elapsed() >= ms(d), "{d} ms sleep ended early");
        }
        let start = std::time::Instant::now();
        let deadline = Instant::now() + ms(5);
        time::sleep_until(deadline).await;
        assert!(Instant::now() >= deadline);
        assert!(start.elapsed() >= ms(4));
    });
}

#[test]
fn sleep_at_least_is_never_early_under_throttling_on_the_real_clock() {
    let rt = Flavor::Throttling.builder().enable_time().build().unwrap();
    rt.block_on(async {
        for d in [1u64, 4, 9] {
            let start = std::time::Instant::now();
            time::sleep_at_least(ms(d)).await;
            assert!(
                start.elapsed() >= ms(d),
                "{d} ms sleep_at_least ended early"
            );
        }
    });
}

#[test]
#[should_panic(expected = "enable_time")]
fn sleep_without_enable_time_panics_with_a_clear_message() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async { time::sleep(ms(1)).await });
}

#[test]
fn aborting_and_finishing_tasks_that_own_registered_timers() {
    // A task's future is dropped where it lies (its timers are pinned
    // intrusive entries): after aborts, completions with a timer still
    // registered, and a shutdown, the timer wheel is intact.
    let rt = paused();
    rt.block_on(async {
        for round in 0..50u64 {
            // Aborted while its sleep is registered.
            let sleeper = tempo::spawn(time::sleep(Duration::from_secs(10 + round)));
            // Completes while its Timeout still holds a registered sleep.
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let timeout = tempo::spawn(time::timeout(Duration::from_secs(60), WaitForChannel(rx)));
            tempo::task::yield_now().await;
            tx.send(()).unwrap();
            sleeper.abort();
            timeout.await.unwrap().unwrap();
            assert!(sleeper.await.unwrap_err().is_cancelled());
        }
        // Other timers still fire at their deadline.
        let start = Instant::now();
        time::sleep(ms(25)).await;
        assert_eq!(start.elapsed(), ms(25));
    });
    let drops = Arc::new(AtomicUsize::new(0));
    for i in 0..10 {
        let counter = DropCounter(drops.clone());
        drop(rt.spawn(async move {
            let _counter = counter;
            time::sleep(Duration::from_secs(i)).await;
        }));
    }
    rt.block_on(async { tempo::task::yield_now().await });
    drop(rt);
    assert_eq!(drops.load(SeqCst), 10);
}

/// Ready once a message is in the channel; wakes itself to re-check
/// (a minimal cross-task signal with no timer of its own).
struct WaitForChannel(std::sync::mpsc::Receiver<()>);

impl std::future::Future for WaitForChannel {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0.try_recv().is_ok() {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}
