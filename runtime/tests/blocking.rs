//! `spawn_blocking` and the blocking pool, on both schedulers: results and
//! panics come back, the pool is bounded, idle threads exit, threads are
//! named, and shutdown drops queued closures and waits for running ones as
//! documented (forever on drop, up to the timeout, or not at all).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use futures::task::noop_waker;
use tempo::runtime::{Builder, Handle};
use tempo::task::{JoinError, JoinHandle};

mod support;
use support::*;

/// How long a test waits for something another thread does before it
/// gives up (a bound against hangs, never a timing assertion).
const PATIENCE: Duration = Duration::from_secs(20);

/// Polls a JoinHandle once, outside any runtime.
fn poll_once<T>(join: &mut JoinHandle<T>) -> Poll<Result<T, JoinError>> {
    let waker = noop_waker();
    pin!(join).poll(&mut Context::from_waker(&waker))
}

/// Waits (bounded) until `condition` holds, checking every millisecond.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// Blocks (bounded) on `rx` for a signal from another thread.
fn recv<T>(rx: &mpsc::Receiver<T>, what: &str) -> T {
    rx.recv_timeout(PATIENCE)
        .unwrap_or_else(|_| panic!("gave up waiting for {what}"))
}

/// Waits (bounded) until the runtime behind `handle` has shut its blocking
/// pool down: a closure spawned from then on is refused (cancelled without
/// running).
fn wait_for_pool_shutdown(handle: &Handle) {
    wait_until("the blocking pool shuts down", || {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let mut join = handle.spawn_blocking(move || flag.store(true, SeqCst));
        wait_until("a probe closure finishes", || join.is_finished());
        match poll_once(&mut join) {
            Poll::Ready(Err(e)) => e.is_cancelled() && !ran.load(SeqCst),
            _ => false,
        }
    });
}

on_each_flavor! {
    #[test]
    fn the_result_comes_back() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let out = rt.block_on(async {
            let join = tempo::task::spawn_blocking(|| 6 * 7);
            join.await.unwrap()
        });
        assert_eq!(out, 42);
        // From another thread, through a Handle.
        let handle = rt.handle().clone();
        let join = thread::spawn(move || handle.spawn_blocking(|| "remote"))
            .join()
            .unwrap();
        assert_eq!(rt.block_on(join).unwrap(), "remote");
    }

    #[test]
    fn a_panic_is_a_join_error() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let error = rt.block_on(async {
            tempo::task::spawn_blocking(|| -> u32 { panic!("blocking boom") })
                .await
                .unwrap_err()
        });
        assert!(error.is_panic());
        assert_eq!(*error.into_panic().downcast::<&str>().unwrap(), "blocking boom");
        // The pool and the runtime go on.
        assert_eq!(rt.block_on(async { tempo::task::spawn_blocking(|| 1).await.unwrap() }), 1);
    }

    #[test]
    fn more_closures_than_threads_all_run_two_at_a_time() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.max_blocking_threads(2).build().unwrap();
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let done = rt.block_on(async {
            let joins: Vec<_> = (0..20)
                .map(|i| {
                    let running = running.clone();
                    let most = most.clone();
                    tempo::task::spawn_blocking(move || {
                        let now = running.fetch_add(1, SeqCst) + 1;
                        most.fetch_max(now, SeqCst);
                        // Stay a moment, so that closures overlap if they can.
                        thread::sleep(Duration::from_millis(2));
                        running.fetch_sub(1, SeqCst);
                        i
                    })
                })
                .collect();
            // The pool never has more than two threads.
            assert!(tempo::runtime::Handle::current().metrics().blocking_threads <= 2);
            let mut done = Vec::new();
            for join in joins {
                done.push(join.await.unwrap());
            }
            done
        });
        assert_eq!(done, (0..20).collect::<Vec<_>>());
        let most = most.load(SeqCst);
        assert!((1..=2).contains(&most), "{most} closures ran at once, the maximum is 2");
        assert!(rt.metrics().blocking_threads <= 2);
        assert_eq!(rt.metrics().blocking_queue_depth, 0);
    }

    #[test]
    fn queued_closures_wait_for_a_busy_thread() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.max_blocking_threads(1).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let first = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            "first"
        });
        recv(&started_rx, "the first closure to start");
        let second = rt.spawn_blocking(|| "second");
        // One thread, busy: the second closure waits in the queue.
        let metrics = rt.metrics();
        assert_eq!(metrics.blocking_threads, 1);
        assert_eq!(metrics.idle_blocking_threads, 0);
        assert_eq!(metrics.blocking_queue_depth, 1);
        release_tx.send(()).unwrap();
        let results = rt.block_on(async { (first.await.unwrap(), second.await.unwrap()) });
        assert_eq!(results, ("first", "second"));
    }

    #[test]
    fn an_idle_thread_exits_after_the_keep_alive() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.thread_keep_alive(Duration::from_millis(50)).build().unwrap();
        rt.block_on(async { tempo::task::spawn_blocking(|| ()).await.unwrap() });
        wait_until("the idle pool thread exits", || rt.metrics().blocking_threads == 0);
        assert_eq!(rt.metrics().idle_blocking_threads, 0);
        // A new closure starts a new thread.
        let n = rt.block_on(async { tempo::task::spawn_blocking(|| 5).await.unwrap() });
        assert_eq!(n, 5);
    }

    #[test]
    fn an_idle_thread_is_reused() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let first = rt.block_on(async {
            tempo::task::spawn_blocking(|| thread::current().id()).await.unwrap()
        });
        wait_until("the pool thread is idle", || rt.metrics().idle_blocking_threads == 1);
        let second = rt.block_on(async {
            tempo::task::spawn_blocking(|| thread::current().id()).await.unwrap()
        });
        assert_eq!(first, second);
        assert_eq!(rt.metrics().blocking_threads, 1);
    }

    #[test]
    fn threads_are_named() {
        let mut builder = builder();
        builder.enable_all();
        let name = || thread::current().name().map(str::to_owned);
        let rt = builder.build().unwrap();
        let default = rt.block_on(async { tempo::task::spawn_blocking(name).await.unwrap() });
        assert_eq!(default.as_deref(), Some("tempo-blocking"));
        drop(rt);

        let rt = builder.thread_name("my-loader").build().unwrap();
        let custom = rt.block_on(async { tempo::task::spawn_blocking(name).await.unwrap() });
        assert_eq!(custom.as_deref(), Some("my-loader"));
        drop(rt);

        let next = Arc::new(AtomicUsize::new(0));
        let rt = builder
            .thread_name_fn(move || format!("numbered-{}", next.fetch_add(1, SeqCst)))
            .build()
            .unwrap();
        let numbered = rt.block_on(async { tempo::task::spawn_blocking(name).await.unwrap() });
        assert_eq!(numbered.as_deref(), Some("numbered-0"));
    }

    #[test]
    fn abort_before_start_drops_the_closure() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.max_blocking_threads(1).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let first = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        recv(&started_rx, "the first closure to start");
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let queued = rt.spawn_blocking(move || flag.store(true, SeqCst));
        queued.abort();
        release_tx.send(()).unwrap();
        let (first, queued) = rt.block_on(async { (first.await, queued.await) });
        first.unwrap();
        assert!(queued.unwrap_err().is_cancelled());
        assert!(!ran.load(SeqCst));
    }

    #[test]
    fn drop_waits_for_running_closures_and_cancels_queued_ones() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.max_blocking_threads(1).build().unwrap();
        let handle = rt.handle().clone();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        let flag = finished.clone();
        let running = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            flag.store(true, SeqCst);
            "finished"
        });
        recv(&started_rx, "the running closure to start");
        let queued_ran = Arc::new(AtomicBool::new(false));
        let flag = queued_ran.clone();
        let mut queued = rt.spawn_blocking(move || flag.store(true, SeqCst));

        // Release the running closure only once shutdown is under way: if
        // drop did not wait for it, `finished` would still be false below.
        let releaser = thread::spawn(move || {
            wait_for_pool_shutdown(&handle);
            release_tx.send(()).unwrap();
        });
        drop(rt);
        assert!(finished.load(SeqCst), "drop returned before the running closure");
        releaser.join().unwrap();

        let mut running = running;
        assert!(matches!(poll_once(&mut running), Poll::Ready(Ok("finished"))));
        match poll_once(&mut queued) {
            Poll::Ready(Err(e)) => assert!(e.is_cancelled()),
            other => panic!("the queued closure's handle gave {other:?}"),
        }
        assert!(!queued_ran.load(SeqCst));
    }

    #[test]
    fn shutdown_timeout_returns_with_a_closure_still_running() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel();
        let mut join = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            // Blocks until the test drops `release_tx`.
            let _ = release_rx.recv();
            done_tx.send(()).unwrap();
            7
        });
        recv(&started_rx, "the closure to start");
        rt.shutdown_timeout(Duration::from_millis(20));
        // Returned, and the closure is still blocked on its channel.
        assert!(done_rx.try_recv().is_err());
        assert!(!join.is_finished());
        drop(release_tx);
        recv(&done_rx, "the detached closure to return");
        wait_until("the JoinHandle completes", || join.is_finished());
        assert!(matches!(poll_once(&mut join), Poll::Ready(Ok(7))));
    }

    #[test]
    fn shutdown_background_does_not_wait() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let join = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv();
        });
        recv(&started_rx, "the closure to start");
        rt.shutdown_background();
        assert!(!join.is_finished());
        drop(release_tx);
        wait_until("the detached closure returns", || join.is_finished());
    }

    #[test]
    fn spawn_blocking_after_shutdown_is_cancelled() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let handle = rt.handle().clone();
        drop(rt);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let mut join = handle.spawn_blocking(move || flag.store(true, SeqCst));
        match poll_once(&mut join) {
            Poll::Ready(Err(e)) => assert!(e.is_cancelled()),
            other => panic!("a spawn after shutdown gave {other:?}"),
        }
        assert!(!ran.load(SeqCst));
    }

    #[test]
    fn a_blocking_closure_does_not_stall_other_tasks() {
        let mut builder = builder();
        builder.enable_all();
        let rt = builder.build().unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let out = rt.block_on(async move {
            let blocked = tempo::task::spawn_blocking(move || release_rx.recv().unwrap());
            // The runtime's thread is free: this task runs and releases it.
            let releaser = tempo::spawn(async move { release_tx.send(()).unwrap() });
            releaser.await.unwrap();
            blocked.await
        });
        out.unwrap();
    }
}

#[test]
#[should_panic(expected = "spawn_blocking called outside a Tempo runtime")]
fn spawn_blocking_outside_a_runtime_panics() {
    drop(tempo::task::spawn_blocking(|| ()));
}

#[test]
#[should_panic(expected = "max_blocking_threads must be at least 1")]
fn zero_blocking_threads_is_refused() {
    Builder::new_current_thread().max_blocking_threads(0);
}
