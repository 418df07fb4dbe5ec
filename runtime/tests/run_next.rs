//! The run-next slot (`scheduler::run_next`): a task woken by the running
//! task on the scheduler's thread is polled right after it; the chain of
//! such polls is capped; self-wakes, remote wakes and tasks left over at
//! shutdown take the queue as before.
//!
//! Every test records the order of polls (no timing) and runs on both
//! schedulers, which share the slot.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

mod support;
use support::*;

/// The order in which tasks were polled.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<&'static str>>>);

impl Log {
    fn push(&self, name: &'static str) {
        self.0.lock().unwrap().push(name);
    }

    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A waker one task leaves and another takes to wake it.
#[derive(Clone, Default)]
struct WakerCell(Arc<Mutex<Option<Waker>>>);

impl WakerCell {
    fn set(&self, waker: &Waker) {
        *self.0.lock().unwrap() = Some(waker.clone());
    }

    fn take(&self) -> Option<Waker> {
        self.0.lock().unwrap().take()
    }
}

/// A task named `name` that logs each poll and completes on its second
/// (it waits to be woken once, through `cell`).
fn waits_once(
    log: &Log,
    name: &'static str,
    cell: &WakerCell,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (log, cell) = (log.clone(), cell.clone());
    let mut polls = 0;
    std::future::poll_fn(move |cx| {
        log.push(name);
        polls += 1;
        if polls == 1 {
            cell.set(cx.waker());
            return Poll::Pending;
        }
        Poll::Ready(())
    })
}

/// Task "A": logs its one poll and hands the waker `W` left in `cell` to
/// `wake` (which wakes it from this thread or another).
fn wakes_w(
    log: &Log,
    cell: &WakerCell,
    wake: impl FnOnce(Waker) + Send + 'static,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (log, cell) = (log.clone(), cell.clone());
    async move {
        log.push("A");
        wake(cell.take().expect("W ran first"));
    }
}

/// Runs `rt` until every task of `joins` has completed.
fn join_all(rt: &tempo::runtime::Runtime, joins: Vec<tempo::task::JoinHandle<()>>) {
    rt.block_on(async {
        for join in joins {
            join.await.unwrap();
        }
    });
}

/// A task named `name` that logs its one poll.
fn logs(log: &Log, name: &'static str) -> impl std::future::Future<Output = ()> + Send + 'static {
    let log = log.clone();
    async move { log.push(name) }
}

on_each_flavor! {
    #[test]
    fn a_woken_task_runs_right_after_its_waker() {
        let rt = builder().build().unwrap();
        let (log, w) = (Log::default(), WakerCell::default());
        let joins = vec![
            rt.spawn(waits_once(&log, "W", &w)),
            rt.spawn(wakes_w(&log, &w, Waker::wake)),
            rt.spawn(logs(&log, "C")),
            rt.spawn(logs(&log, "D")),
        ];
        join_all(&rt, joins);
        // Queued at the back, W would run after C and D.
        assert_eq!(log.take(), ["W", "A", "W", "C", "D"]);
    }

    #[test]
    fn a_task_that_wakes_itself_goes_behind_the_queue() {
        let rt = builder().build().unwrap();
        let log = Log::default();
        let joins = vec![
            rt.spawn({
                let log = log.clone();
                async move {
                    log.push("Y");
                    tempo::task::yield_now().await;
                    log.push("Y");
                }
            }),
            rt.spawn(logs(&log, "C")),
        ];
        join_all(&rt, joins);
        assert_eq!(log.take(), ["Y", "C", "Y"]);
    }

    #[test]
    fn two_tasks_waking_each_other_do_not_starve_a_queued_one() {
        const ROUNDS: usize = 20;
        let rt = builder().build().unwrap();
        let log = Log::default();
        let cells = [WakerCell::default(), WakerCell::default()];
        let ping_pong = |me: usize, name: &'static str| {
            let (log, cells) = (log.clone(), cells.clone());
            let mut polls = 0;
            std::future::poll_fn(move |cx| {
                log.push(name);
                polls += 1;
                cells[me].set(cx.waker());
                if let Some(other) = cells[1 - me].take() {
                    other.wake();
                }
                if polls == ROUNDS {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
        };
        let joins = vec![
            rt.spawn(ping_pong(0, "P")),
            rt.spawn(ping_pong(1, "Q")),
            rt.spawn(logs(&log, "C")),
        ];
        join_all(&rt, joins);
        let log = log.take();
        assert_eq!(log.len(), 2 * ROUNDS + 1);
        // Q woke P: P ran before C, which was queued first.
        assert_eq!(log[..3], ["P", "Q", "P"]);
        // The chain of slot polls is capped (at 3): C runs after P and Q's
        // first polls and at most that many slot polls, not after the
        // whole ping-pong.
        let c = log.iter().position(|&name| name == "C").unwrap();
        assert!(c <= 2 + 3, "C was polled at {c}: {log:?}");
    }

    #[test]
    fn a_remote_wake_does_not_take_the_slot() {
        let rt = builder().build().unwrap();
        let (log, w) = (Log::default(), WakerCell::default());
        let joins = vec![
            rt.spawn(waits_once(&log, "W", &w)),
            // Woken from another thread while A runs: the inject queue,
            // behind C.
            rt.spawn(wakes_w(&log, &w, |waker| {
                std::thread::spawn(move || waker.wake()).join().unwrap();
            })),
            rt.spawn(logs(&log, "C")),
        ];
        join_all(&rt, joins);
        assert_eq!(log.take(), ["W", "A", "C", "W"]);
    }

    #[test]
    fn a_task_woken_into_the_slot_when_the_budget_ends_is_dropped_with_the_runtime() {
        let rt = builder().event_interval(1).tick_budget(1).build().unwrap();
        let (log, w) = (Log::default(), WakerCell::default());
        let dropped = Arc::new(AtomicUsize::new(0));
        let alive = Arc::new(());
        rt.spawn({
            let (log, w) = (log.clone(), w.clone());
            let guard = (DropCounter(dropped.clone()), alive.clone());
            std::future::poll_fn(move |cx| {
                let _ = &guard;
                log.push("W");
                w.set(cx.waker());
                Poll::<()>::Pending
            })
        });
        // One poll per turn: W registers its waker.
        rt.turn(Duration::ZERO);
        rt.spawn({
            let (log, w) = (log.clone(), w.clone());
            async move {
                log.push("A");
                w.take().expect("W ran first").wake();
            }
        });
        // A wakes W into the slot with the budget spent: W goes to the
        // queue, not polled.
        rt.turn(Duration::ZERO);
        assert_eq!(log.take(), ["W", "A"]);
        drop(rt);
        assert_eq!(dropped.load(SeqCst), 1, "W's future was dropped");
        assert_eq!(Arc::strong_count(&alive), 1, "nothing of W leaked");
        assert!(log.take().is_empty(), "W was not polled at shutdown");
    }
}
