//! A task on an always-ready resource must not keep the timers waiting.
//!
//! Issue 19, item 2: a task reading a flooded TCP stream spends its whole
//! cooperative budget on every poll. When a spent budget woke the task at
//! once, it went straight back on the run queue and the driver (so every
//! timer) was reached only after `event_interval` more of its polls, each
//! a budget of heavy reads: a 10 ms interval next to it saw 300 ms gaps.
//! Now its wake is deferred until after the next driver poll, so between
//! two of its polls due timers fire.
//!
//! The tests count, never time: the flood is a future that spends its
//! whole budget on every poll (an always-ready resource, as a flooded
//! socket is) and advances the paused clock by [`POLL_COST`] per poll, as
//! a poll of heavy reads takes real time. The interval's gaps are then
//! counted in flood polls.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tempo::task::coop::poll_proceed;
use tempo_park::coop::INITIAL_BUDGET;

mod support;
use support::*;

/// The virtual time one poll of the flood takes (a budget of 4 KiB reads
/// and the work on their bytes, roughly).
const POLL_COST: Duration = Duration::from_millis(1);
/// The interval next to the flood.
const PERIOD: Duration = Duration::from_millis(10);
/// Interval ticks each test waits for.
const TICKS: usize = 30;
/// The most flood polls between two interval ticks: the goal is a largest
/// gap of at most two periods. With one driver poll after each flood poll
/// the basic scheduler sees `PERIOD / POLL_COST` (10); the throttling one
/// (period `THROTTLE`, 5 ms) cuts its tick after a period of flood and
/// fires the interval at the next tick, also 10. Before deferral the
/// basic scheduler polled the flood `event_interval` (61) times between
/// two driver polls, and the throttling one read its clock only once per
/// 61 polls, and that clock the real one (which a paused test hardly
/// moves): hundreds.
const MAX_FLOOD_POLLS_PER_GAP: u64 = 2 * (PERIOD.as_millis() / POLL_COST.as_millis()) as u64;
/// Bound of the flood's loop (it stops long before, once the interval
/// ticked `TICKS` times).
const MAX_FLOOD_POLLS: u64 = 100_000;

/// A task on an always-ready resource: every poll spends the whole budget
/// (each unit a "read"), advances the paused clock by [`POLL_COST`], and
/// is told to yield. It counts its polls and stops when `stop` is set.
async fn flood(polls: Arc<AtomicU64>, stop: Arc<AtomicBool>) {
    let clock = tempo_time::Handle::current().clock().clone();
    poll_fn(|cx| {
        if stop.load(SeqCst) || polls.load(SeqCst) >= MAX_FLOOD_POLLS {
            return Poll::Ready(());
        }
        polls.fetch_add(1, SeqCst);
        clock.advance(POLL_COST);
        loop {
            match poll_proceed(cx) {
                Poll::Ready(read) => read.made_progress(),
                // Budget spent: the runtime decides when we run again.
                Poll::Pending => return Poll::Pending,
            }
        }
    })
    .await
}

/// Runs the flood as a task next to an `interval(PERIOD)` task on
/// `builder`'s runtime (paused clock) until the interval has ticked
/// `TICKS` times; returns the flood polls between each two ticks.
fn flood_polls_between_ticks(mut builder: Builder) -> Vec<u64> {
    let rt = builder.enable_time().start_paused(true).build().unwrap();
    rt.block_on(async {
        let polls = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let flood = tempo::spawn(flood(polls.clone(), stop.clone()));
        let ticks = tempo::spawn(async move {
            let mut interval = tempo::time::interval(PERIOD);
            let mut at = Vec::with_capacity(TICKS);
            for _ in 0..TICKS {
                interval.tick().await;
                at.push(polls.load(SeqCst));
            }
            stop.store(true, SeqCst);
            at
        });
        let at = ticks.await.unwrap();
        flood.await.unwrap();
        at.windows(2).map(|pair| pair[1] - pair[0]).collect()
    })
}

/// A task that spends its budget exactly once, then completes: it needs a
/// second poll, which its deferred wake must bring.
async fn spend_one_budget() {
    for _ in 0..=INITIAL_BUDGET {
        tempo::task::consume_budget().await;
    }
}

on_each_flavor! {
    #[test]
    fn a_flooded_task_leaves_the_interval_at_most_two_periods_apart() {
        let gaps = flood_polls_between_ticks(builder());
        assert_eq!(gaps.len(), TICKS - 1);
        let largest = gaps.iter().copied().max().unwrap();
        assert!(
            largest <= MAX_FLOOD_POLLS_PER_GAP,
            "{}: the flood was polled {largest} times ({largest} ms of its work) \
             between two ticks of a {PERIOD:?} interval (gaps: {gaps:?})",
            FLAVOR.name()
        );
        // And the interval did not starve the flood either.
        assert!(gaps.iter().sum::<u64>() > 0, "the flood never ran: {gaps:?}");
    }

    #[test]
    fn a_deferred_task_runs_although_nothing_else_would_wake_the_runtime() {
        let rt = builder().build().unwrap();
        // block_on waits for the task alone: after its first poll the run
        // queue is empty and only its deferred wake is left. The scheduler
        // must poll the driver and wake it, not block (which would hang).
        rt.block_on(async { tempo::spawn(spend_one_budget()).await.unwrap() });
        // The same with the block_on future itself spending its budget.
        rt.block_on(spend_one_budget());
    }

    #[test]
    fn a_turn_that_leaves_a_task_deferred_reports_work_remaining() {
        // A tick budget of one poll cuts the throttled tick with the task
        // deferred; the basic turn polls the driver and wakes it.
        let rt = builder().tick_budget(1).build().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let job = {
            let done = done.clone();
            rt.spawn(async move {
                spend_one_budget().await;
                done.store(true, SeqCst);
            })
        };
        // The turn may wait this long if it has nothing to do; with the
        // task deferred it must not wait at all (`parked` is false).
        let first = rt.turn(Duration::from_millis(200));
        assert!(!first.parked(), "a turn blocked with a task deferred");
        assert_eq!(first.tasks_polled(), 1, "polled again before a driver poll");
        assert!(!done.load(SeqCst));
        assert!(first.tasks_remaining(), "the deferred task is work left");
        // (Zero: with the task done, this turn would rightly wait.)
        let second = rt.turn(Duration::ZERO);
        assert!(done.load(SeqCst), "the deferred task ran at the next turn");
        assert!(second.tasks_polled() >= 1);
        let mut job = pin!(job);
        let waker = futures::task::noop_waker_ref();
        let finished = job.as_mut().poll(&mut std::task::Context::from_waker(waker));
        assert!(matches!(finished, Poll::Ready(Ok(()))));
    }
}
