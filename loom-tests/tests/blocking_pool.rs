//! Model: the blocking pool's idle-wait / spawn / shutdown handshake
//! (`runtime/src/blocking/pool.rs`), on the real pool code.
//!
//! Loom has no clock: in these models a pool thread's keep-alive wait
//! lets the other threads run and then times out, so every interleaving of
//! a spawn with the last idle thread's time-out is explored. No task may be
//! lost (a lost one shows as a loom deadlock: its JoinHandle never
//! resolves), every JoinHandle resolves, and shutdown returns once every
//! pool thread is gone.
#![cfg(loom)]

use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use tempo::__loom::BlockingPool;
use tempo_loom_tests::block_on;

const KEEP_ALIVE: Duration = Duration::from_millis(10);

/// A closure submitted while the only pool thread finishes its first one,
/// goes idle and times out still runs: the spawner either leaves the idle
/// thread a notification (which it honours even though its wait timed
/// out), queues it for the busy thread, or starts a new thread.
#[test]
fn spawn_racing_the_last_idle_thread_timing_out() {
    loom::model(|| {
        let pool = BlockingPool::new(1, KEEP_ALIVE);
        let ran = Arc::new(AtomicUsize::new(0));
        let r1 = ran.clone();
        let first = pool.spawn(move || r1.fetch_add(1, SeqCst));
        let r2 = ran.clone();
        let second = pool.spawn(move || r2.fetch_add(1, SeqCst));
        block_on(first).unwrap();
        block_on(second).unwrap();
        assert_eq!(ran.load(SeqCst), 2);
        assert!(pool.shutdown(None));
        assert_eq!(pool.threads(), 0);
    });
}

/// The same race after the first closure is known to be done, so that the
/// second spawn meets the thread on its way to idle or out.
#[test]
fn spawn_after_completion_racing_the_time_out() {
    loom::model(|| {
        let pool = BlockingPool::new(1, KEEP_ALIVE);
        block_on(pool.spawn(|| ())).unwrap();
        assert_eq!(block_on(pool.spawn(|| 7)).unwrap(), 7);
        assert!(pool.shutdown(None));
        assert_eq!(pool.threads(), 0);
    });
}

/// Shutdown racing a spawn from another thread: the spawned closure either
/// runs or is cancelled, never left pending, and shutdown returns only once
/// the pool thread is gone.
#[test]
fn shutdown_racing_a_remote_spawn() {
    loom::model(|| {
        let pool = BlockingPool::new(1, KEEP_ALIVE);
        let first = pool.spawn(|| 1);
        let remote = pool.clone();
        let spawner = thread::spawn(move || match block_on(remote.spawn(|| 2)) {
            Ok(n) => assert_eq!(n, 2),
            Err(e) => assert!(e.is_cancelled()),
        });
        assert!(pool.shutdown(None));
        assert_eq!(pool.threads(), 0);
        match block_on(first) {
            Ok(n) => assert_eq!(n, 1),
            Err(e) => assert!(e.is_cancelled()),
        }
        spawner.join().unwrap();
    });
}
