//! `JoinSet`: tokio's semantics, on both schedulers.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::task::{yield_now, JoinSet};
use tempo::time::sleep;

mod support;
use support::{on_each_flavor, DropCounter, Flavor};

/// Runs the test body on `flavor`'s runtime, with I/O, timers and the
/// paused clock; the body gets the flavor's name.
fn on_flavor<F, Fut>(flavor: Flavor, body: F)
where
    F: FnOnce(&'static str) -> Fut,
    Fut: Future<Output = ()>,
{
    let rt = flavor
        .builder()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(body(flavor.name()));
}

/// Sleeps (virtual time) in 10 ms steps until `counter` reaches `n`, at
/// most ~10 s of it. (Shorter steps work too: a timer created in a tick
/// fires at the next tick, and the paused clock advances a period between
/// ticks.)
async fn wait_for(counter: &AtomicUsize, n: usize) {
    for _ in 0..1000 {
        if counter.load(SeqCst) >= n {
            return;
        }
        sleep(Duration::from_millis(10)).await;
    }
    panic!("counter stuck at {} (wanted {n})", counter.load(SeqCst));
}

on_each_flavor! {
    #[test]
    fn outputs_come_in_completion_order() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            for ms in [300u64, 100, 200] {
                set.spawn(async move {
                    sleep(Duration::from_millis(ms)).await;
                    ms
                });
            }
            assert_eq!(set.len(), 3);
            let mut order = Vec::new();
            while let Some(result) = set.join_next().await {
                order.push(result.unwrap());
            }
            assert_eq!(order, [100, 200, 300], "{name}");
            assert!(set.is_empty(), "{name}");
            assert!(set.join_next().await.is_none(), "{name}");
        });
    }

    #[test]
    fn abort_all_gives_cancelled_errors_and_drops_the_futures() {
        on_flavor(FLAVOR, |name| async move {
            let drops = Arc::new(AtomicUsize::new(0));
            let mut set = JoinSet::new();
            for _ in 0..5 {
                let guard = DropCounter(drops.clone());
                set.spawn(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                });
            }
            yield_now().await; // let them start
            set.abort_all();
            assert_eq!(set.len(), 5, "{name}: aborted tasks stay until joined");
            let mut cancelled = 0;
            while let Some(result) = set.join_next().await {
                assert!(result.unwrap_err().is_cancelled(), "{name}");
                cancelled += 1;
            }
            assert_eq!(cancelled, 5, "{name}");
            assert_eq!(drops.load(SeqCst), 5, "{name}");
        });
    }

    #[test]
    fn shutdown_aborts_and_waits() {
        on_flavor(FLAVOR, |name| async move {
            let drops = Arc::new(AtomicUsize::new(0));
            let mut set = JoinSet::new();
            for i in 0..4u64 {
                let guard = DropCounter(drops.clone());
                set.spawn(async move {
                    let _guard = guard;
                    sleep(Duration::from_secs(10 + i)).await;
                });
            }
            set.shutdown().await;
            assert!(set.is_empty(), "{name}");
            assert_eq!(drops.load(SeqCst), 4, "{name}");
        });
    }

    #[test]
    fn detach_all_lets_the_tasks_run_on() {
        on_flavor(FLAVOR, |name| async move {
            let finished = Arc::new(AtomicUsize::new(0));
            let mut set = JoinSet::new();
            for _ in 0..3 {
                let finished = finished.clone();
                set.spawn(async move {
                    sleep(Duration::from_millis(50)).await;
                    finished.fetch_add(1, SeqCst);
                });
            }
            set.detach_all();
            assert!(set.is_empty(), "{name}");
            assert!(set.join_next().await.is_none(), "{name}");
            drop(set); // dropping an emptied set aborts nothing
            wait_for(&finished, 3).await;
        });
    }

    #[test]
    fn dropping_the_set_aborts_its_tasks() {
        on_flavor(FLAVOR, |name| async move {
            let drops = Arc::new(AtomicUsize::new(0));
            let finished = Arc::new(AtomicUsize::new(0));
            let mut set = JoinSet::new();
            for _ in 0..3 {
                let guard = DropCounter(drops.clone());
                let finished = finished.clone();
                set.spawn(async move {
                    let _guard = guard;
                    sleep(Duration::from_millis(50)).await;
                    finished.fetch_add(1, SeqCst);
                });
            }
            yield_now().await;
            drop(set);
            wait_for(&drops, 3).await;
            sleep(Duration::from_millis(100)).await;
            assert_eq!(finished.load(SeqCst), 0, "{name}: an aborted task ran on");
        });
    }

    #[test]
    fn a_panicking_member_gives_a_panic_error_and_the_others_go_on() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            let bad = set.spawn(async { panic!("member failed") });
            set.spawn(async {
                yield_now().await;
                "ok"
            });
            let mut panics = 0;
            let mut oks = 0;
            while let Some(result) = set.join_next().await {
                match result {
                    Ok(out) => {
                        assert_eq!(out, "ok");
                        oks += 1;
                    }
                    Err(err) => {
                        assert!(err.is_panic(), "{name}");
                        assert_eq!(err.id(), bad.id(), "{name}");
                        assert!(err.to_string().contains("member failed"), "{name}");
                        panics += 1;
                    }
                }
            }
            assert_eq!((panics, oks), (1, 1), "{name}");
        });
    }

    #[test]
    fn try_join_next_returns_only_finished_tasks() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            assert!(set.try_join_next().is_none(), "{name}: empty");
            set.spawn(async { 1 });
            set.spawn(async {
                sleep(Duration::from_secs(1)).await;
                2
            });
            assert!(set.try_join_next().is_none(), "{name}: nothing ran yet");
            // Bounded wait for the quick one (a tick under throttling).
            let mut first = None;
            for _ in 0..100 {
                if let Some(result) = set.try_join_next() {
                    first = Some(result.unwrap());
                    break;
                }
                sleep(Duration::from_millis(10)).await; // see wait_for
            }
            assert_eq!(first, Some(1), "{name}");
            assert!(
                set.try_join_next().is_none(),
                "{name}: the other still sleeps"
            );
            assert_eq!(set.len(), 1, "{name}");
            assert_eq!(set.join_next().await.unwrap().unwrap(), 2, "{name}");
        });
    }

    #[test]
    fn join_next_with_id_names_each_task() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            let a = set.spawn(async { "a" });
            let b = set.spawn_local(async { "b" });
            let mut seen = Vec::new();
            while let Some(result) = set.join_next_with_id().await {
                let (id, out) = result.unwrap();
                let expected = if out == "a" { a.id() } else { b.id() };
                assert_eq!(id, expected, "{name}");
                seen.push(out);
            }
            seen.sort();
            assert_eq!(seen, ["a", "b"], "{name}");
        });
    }

    #[test]
    fn a_dropped_join_next_loses_no_task() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            set.spawn(async {
                sleep(Duration::from_millis(200)).await;
                7
            });
            let early = tempo::time::timeout(Duration::from_millis(50), set.join_next()).await;
            assert!(early.is_err(), "{name}: timed out, future dropped");
            assert_eq!(set.len(), 1, "{name}");
            assert_eq!(set.join_next().await.unwrap().unwrap(), 7, "{name}");
        });
    }

    #[test]
    fn spawn_on_from_another_thread() {
        let rt = builder().build().unwrap();
        let handle = rt.handle().clone();
        let mut set = std::thread::spawn(move || {
            let mut set = JoinSet::new();
            for i in 0..10u32 {
                set.spawn_on(async move { i }, &handle);
            }
            set
        })
        .join()
        .unwrap();
        let sum = rt.block_on(async move {
            let mut sum = 0;
            while let Some(result) = set.join_next().await {
                sum += result.unwrap();
            }
            sum
        });
        assert_eq!(sum, 45);
    }

    #[test]
    fn a_thousand_tasks() {
        on_flavor(FLAVOR, |name| async move {
            let mut set = JoinSet::new();
            for i in 0..1000u64 {
                set.spawn(async move {
                    // Staggered completions, a few wake-ups each.
                    for _ in 0..(i % 4) {
                        yield_now().await;
                    }
                    sleep(Duration::from_millis(i % 17)).await;
                    i
                });
            }
            assert_eq!(set.len(), 1000, "{name}");
            let mut seen = vec![false; 1000];
            let mut count = 0;
            while let Some(result) = set.join_next().await {
                let i = result.unwrap() as usize;
                assert!(!seen[i], "{name}: task {i} joined twice");
                seen[i] = true;
                count += 1;
            }
            assert_eq!(count, 1000, "{name}");
        });
    }

    /// `try_join_next` is a non-blocking attempt: like every `try_*`
    /// method it spends no budget, so a spent budget does not hide a
    /// finished member from it (it used to return `None` then, although
    /// the member had finished: each member's handle refused for lack of
    /// budget). Its result does not depend on the budget; `join_next`'s
    /// yield does, and comes back with the output at the next poll.
    #[test]
    fn try_join_next_ignores_a_spent_budget() {
        let rt = builder().build().unwrap();
        rt.block_on(async {
            let flavor = FLAVOR.name();
            let done = Arc::new(AtomicUsize::new(0));
            let mut set = JoinSet::new();
            let finished = done.clone();
            set.spawn(async move {
                finished.fetch_add(1, SeqCst);
                7
            });
            for _ in 0..1_000 {
                if done.load(SeqCst) == 1 {
                    break;
                }
                yield_now().await;
            }
            assert_eq!(done.load(SeqCst), 1, "{flavor}: the member ran");
            while tempo::task::coop::has_budget_remaining() {
                tempo::task::consume_budget().await;
            }
            let joined = set.try_join_next().map(Result::unwrap);
            assert_eq!(joined, Some(7), "{flavor}: finished, whatever the budget");
            assert!(set.is_empty(), "{flavor}");
        });
    }
}
