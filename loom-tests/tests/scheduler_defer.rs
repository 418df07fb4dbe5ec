//! Model: deferred wakes. A task whose cooperative budget ran out is not
//! requeued: its waker waits in the scheduler's deferred list until the
//! next driver poll. The scheduler must then poll its driver instead of
//! blocking in it, or the task would never run again: with nothing else
//! to do, `block_on` would block forever and loom would report a deadlock.
//! A remote spawn racing with that decision (landing before or after the
//! scheduler announces `PARKED`) must not change it either way.
#![cfg(loom)]

use std::time::Duration;

use loom::thread;
use tempo::runtime::{Builder, Runtime};
use tempo_loom_tests::Signal;

/// A task that spends its whole budget once (so its wake is deferred),
/// then completes on its next poll.
async fn spend_one_budget() {
    for _ in 0..=tempo_park::coop::INITIAL_BUDGET {
        tempo::task::consume_budget().await;
    }
}

/// `block_on` waits for a deferred task and for a task spawned from
/// another thread.
fn deferred_task_and_remote_spawn(rt: Runtime) {
    let handle = rt.handle().clone();
    let signal = Signal::new();
    let setter = signal.clone();
    let t = thread::spawn(move || {
        drop(handle.spawn(async move { setter.set() }));
    });
    rt.block_on(async {
        let spender = tempo::spawn(spend_one_budget());
        spender.await.unwrap();
        signal.wait().await;
    });
    t.join().unwrap();
}

#[test]
fn a_deferred_task_runs_on_the_basic_scheduler() {
    loom::model(|| {
        deferred_task_and_remote_spawn(Builder::new_current_thread().build().unwrap());
    });
}

#[test]
fn a_deferred_task_runs_on_the_throttling_scheduler() {
    loom::model(|| {
        // Paused clock: the sleep between ticks advances virtual time (see
        // `throttle.rs`).
        let rt = Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .max_throttling(Duration::from_millis(20))
            .build()
            .unwrap();
        deferred_task_and_remote_spawn(rt);
    });
}
