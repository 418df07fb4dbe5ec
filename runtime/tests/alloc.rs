//! Allocations per spawn and per wake, measured with a counting global
//! allocator (in its own test binary so it applies only here).
//!
//! Run with `--nocapture` to see the numbers.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use tempo_test_support::alloc::{count_on_this_thread as count, CountingAllocator};

mod support;
use support::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

on_each_flavor! {
    /// Turns until no task is ready (bounded).
    fn run_all(rt: &tempo::runtime::Runtime) {
        for _ in 0..100_000 {
            if !rt.turn(Duration::ZERO).tasks_remaining() {
                return;
            }
        }
        panic!("tasks still ready after 100000 turns");
    }

    /// A task that waits to be woken `rounds` times, storing its waker.
    fn waiter(
        slot: Arc<Mutex<Option<Waker>>>,
        flag: Arc<AtomicBool>,
    ) -> impl std::future::Future<Output = ()> + Send {
        std::future::poll_fn(move |cx| {
            if flag.swap(false, SeqCst) {
                // Woken: go back to waiting (the test stops by aborting).
            }
            let mut slot = slot.lock().unwrap();
            match &*slot {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => *slot = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }

    #[test]
    fn one_allocation_per_spawn_none_per_wake() {
        const N: u64 = 1000;
        let rt = builder().build().unwrap();

        // Warm-up: grow the run queue and the owned-task slab to N entries.
        let warm: Vec<_> = (0..N)
            .map(|_| rt.spawn(std::future::pending::<()>()))
            .collect();
        run_all(&rt);
        for j in &warm {
            j.abort();
        }
        run_all(&rt);
        drop(warm);

        // Spawns (the JoinHandles go into a pre-sized Vec).
        let mut joins = Vec::with_capacity(N as usize);
        let ((), spawn_allocs) = count(|| {
            for _ in 0..N {
                joins.push(rt.spawn(std::future::pending::<()>()));
            }
            run_all(&rt);
        });
        let per_spawn = spawn_allocs as f64 / N as f64;

        // Same-thread wakes of a pending task.
        let slot = Arc::new(Mutex::new(None));
        let flag = Arc::new(AtomicBool::new(false));
        let w = rt.spawn(waiter(slot.clone(), flag.clone()));
        rt.turn(Duration::ZERO);
        let waker = slot.lock().unwrap().clone().unwrap();
        let ((), local_wake_allocs) = count(|| {
            let _enter = rt.enter();
            for _ in 0..N {
                flag.store(true, SeqCst);
                waker.wake_by_ref();
                rt.turn(Duration::ZERO);
            }
        });

        // Wakes from another thread, then the turn that runs the task. Each
        // turn is one iteration; the injection queue is warm after the first.
        let remote = {
            let waker = waker.clone();
            std::thread::spawn(move || waker.wake_by_ref())
        };
        remote.join().unwrap();
        rt.turn(Duration::ZERO);
        let mut remote_wake_allocs = 0;
        for _ in 0..N / 10 {
            let w2 = waker.clone();
            // Only the wake itself is counted on the helper thread.
            let t = std::thread::spawn(move || count(|| w2.wake_by_ref()).1);
            remote_wake_allocs += t.join().unwrap();
            let ((), n) = count(|| {
                rt.turn(Duration::ZERO);
            });
            remote_wake_allocs += n;
        }

        eprintln!(
            "allocations: {per_spawn:.3} per spawn, {:.3} per same-thread wake+poll, {:.3} per remote wake+poll",
            local_wake_allocs as f64 / N as f64,
            remote_wake_allocs as f64 / (N / 10) as f64,
        );
        assert_eq!(
            spawn_allocs, N,
            "exactly one allocation per spawn after warm-up"
        );
        assert_eq!(local_wake_allocs, 0, "no allocation per same-thread wake");
        assert_eq!(remote_wake_allocs, 0, "no allocation per remote wake");
        w.abort();
        drop(joins);
    }

    /// A wake never grows the run queue once every task has run: it keeps
    /// room for all of them (a task is queued at most once), however few
    /// were ready at once before. The tasks here are spawned and run one
    /// at a time, then all woken in one poll.
    #[test]
    fn waking_every_task_at_once_allocates_nothing_once_they_ran() {
        const N: usize = 200;
        let rt = builder().build().unwrap();
        let slots: Vec<_> = (0..N).map(|_| Arc::new(Mutex::new(None))).collect();
        let joins: Vec<_> = slots
            .iter()
            .map(|slot| {
                let join = rt.spawn(waiter(slot.clone(), Arc::new(AtomicBool::new(false))));
                run_all(&rt);
                join
            })
            .collect();
        let wakers: Vec<Waker> = slots
            .iter()
            .map(|slot| slot.lock().unwrap().clone().unwrap())
            .collect();

        // One task wakes all of them in its poll (same-thread wakes).
        let go = Arc::new(AtomicBool::new(false));
        let trigger_slot = Arc::new(Mutex::new(None::<Waker>));
        let trigger = rt.spawn({
            let (go, slot) = (go.clone(), trigger_slot.clone());
            std::future::poll_fn(move |cx| {
                if go.swap(false, SeqCst) {
                    for waker in &wakers {
                        waker.wake_by_ref();
                    }
                }
                let mut slot = slot.lock().unwrap();
                if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *slot = Some(cx.waker().clone());
                }
                Poll::<()>::Pending
            })
        });
        run_all(&rt);
        let trigger_waker = trigger_slot.lock().unwrap().clone().unwrap();

        let ((), allocs) = count(|| {
            let _enter = rt.enter();
            go.store(true, SeqCst);
            trigger_waker.wake_by_ref();
            run_all(&rt);
        });
        assert_eq!(allocs, 0, "a wake of every task at once grew the run queue");
        trigger.abort();
        for join in &joins {
            join.abort();
        }
        run_all(&rt);
    }
}
