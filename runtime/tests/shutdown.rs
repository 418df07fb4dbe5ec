//! Runtime shutdown: every future dropped on the owning thread, JoinHandles
//! resolve cancelled, later spawns too, panicking destructors are contained.

use std::future::{pending, Future};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::Duration;

use tempo::runtime::Runtime;

mod support;
use support::*;

/// Counts its drops, and records the thread it was dropped on.
struct Probe {
    drops: Arc<AtomicUsize>,
    dropped_on: Arc<std::sync::Mutex<Vec<ThreadId>>>,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
        self.dropped_on.lock().unwrap().push(thread::current().id());
    }
}

fn probe() -> (
    Probe,
    Arc<AtomicUsize>,
    Arc<std::sync::Mutex<Vec<ThreadId>>>,
) {
    let drops = Arc::new(AtomicUsize::new(0));
    let on = Arc::new(std::sync::Mutex::new(Vec::new()));
    (
        Probe {
            drops: drops.clone(),
            dropped_on: on.clone(),
        },
        drops,
        on,
    )
}

async fn parked_forever(p: Probe) {
    let _p = p;
    pending::<()>().await;
}

on_each_flavor! {
    fn rt() -> Runtime {
        builder().build().unwrap()
    }

    #[test]
    fn dropping_the_runtime_drops_every_future_on_its_thread() {
        let rt = rt();
        let drops = Arc::new(AtomicUsize::new(0));
        let on = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut joins = Vec::new();
        for i in 0..100 {
            let p = Probe {
                drops: drops.clone(),
                dropped_on: on.clone(),
            };
            joins.push(rt.spawn(parked_forever(p)));
            if i % 2 == 0 {
                // Half of them have run once (bound), half never ran.
                rt.turn(Duration::ZERO);
            }
        }
        // Plus one spawned from another thread, still in the injection queue.
        let handle = rt.handle().clone();
        let (p, _, _) = probe();
        let (remote_drops, remote_on) = (p.drops.clone(), p.dropped_on.clone());
        let remote = thread::spawn(move || handle.spawn(parked_forever(p)))
            .join()
            .unwrap();
        assert_eq!(drops.load(SeqCst), 0);
        drop(rt);
        assert_eq!(drops.load(SeqCst), 100);
        assert_eq!(remote_drops.load(SeqCst), 1);
        let me = thread::current().id();
        assert!(on.lock().unwrap().iter().all(|t| *t == me));
        assert!(remote_on.lock().unwrap().iter().all(|t| *t == me));
        // Every JoinHandle resolves cancelled; awaited on another runtime.
        let other = rt_other();
        other.block_on(async {
            for j in joins {
                assert!(j.await.unwrap_err().is_cancelled());
            }
            assert!(remote.await.unwrap_err().is_cancelled());
        });
    }

    fn rt_other() -> Runtime {
        rt()
    }

    #[test]
    fn join_handle_awaited_after_shutdown_is_cancelled() {
        let rt = rt();
        let (p, drops, _) = probe();
        let j = rt.spawn(parked_forever(p));
        rt.turn(Duration::ZERO);
        rt.shutdown_timeout(Duration::from_secs(1));
        assert_eq!(drops.load(SeqCst), 1);
        assert!(j.is_finished());
        let id = j.id();
        let err = futures_lite_block_on(j).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(err.to_string(), format!("task {id} was cancelled"));
    }

    /// Polls a future to completion on this thread without a runtime: only for
    /// futures that are already ready.
    fn futures_lite_block_on<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: Arc<Self>) {}
        }
        let waker = std::task::Waker::from(Arc::new(Noop));
        match f.as_mut().poll(&mut std::task::Context::from_waker(&waker)) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("future not ready"),
        }
    }

    #[test]
    fn spawn_after_shutdown_is_cancelled_and_dropped() {
        let rt = rt();
        let handle = rt.handle().clone();
        drop(rt);
        let (p, drops, _) = probe();
        let j = handle.spawn(parked_forever(p));
        assert_eq!(drops.load(SeqCst), 1);
        assert!(futures_lite_block_on(j).unwrap_err().is_cancelled());
        // From another thread too.
        let (p, drops, _) = probe();
        let j = thread::spawn(move || handle.spawn(parked_forever(p)))
            .join()
            .unwrap();
        assert_eq!(drops.load(SeqCst), 1);
        assert!(futures_lite_block_on(j).unwrap_err().is_cancelled());
    }

    #[test]
    fn completed_outputs_not_joined_are_dropped_at_shutdown() {
        let rt = rt();
        let (p, drops, _) = probe();
        let j = rt.spawn(async move { p });
        rt.turn(Duration::ZERO);
        assert_eq!(drops.load(SeqCst), 0, "the output waits for its JoinHandle");
        drop(rt);
        drop(j);
        assert_eq!(drops.load(SeqCst), 1);
    }

    struct PanicOnDrop;

    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("destructor panicked");
        }
    }

    #[test]
    fn panicking_destructor_at_shutdown_is_contained() {
        let rt = rt();
        let (p, drops, _) = probe();
        let a = rt.spawn(async move {
            let _bomb = PanicOnDrop;
            pending::<()>().await;
        });
        let b = rt.spawn(parked_forever(p));
        rt.turn(Duration::ZERO);
        drop(rt);
        assert_eq!(drops.load(SeqCst), 1, "the other task is dropped too");
        let a = futures_lite_block_on(a).unwrap_err();
        assert!(a.is_panic(), "a panic while cancelling is reported: {a}");
        assert!(futures_lite_block_on(b).unwrap_err().is_cancelled());
    }

    #[test]
    fn destructors_that_spawn_and_wake_during_shutdown() {
        struct SpawnOnDrop(Arc<AtomicUsize>);
        impl Drop for SpawnOnDrop {
            fn drop(&mut self) {
                let count = Count(self.0.clone());
                // Runs during shutdown: the new task is cancelled too.
                drop(tempo::spawn_local(async move {
                    let _p = count;
                    pending::<()>().await;
                }));
            }
        }
        struct Count(Arc<AtomicUsize>);
        impl Drop for Count {
            fn drop(&mut self) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        let rt = rt();
        let drops = Arc::new(AtomicUsize::new(0));
        let d = drops.clone();
        let j = rt.spawn(async move {
            let _s = SpawnOnDrop(d);
            pending::<()>().await;
        });
        rt.turn(Duration::ZERO);
        drop(rt);
        assert_eq!(drops.load(SeqCst), 1);
        assert!(futures_lite_block_on(j).unwrap_err().is_cancelled());
    }

    #[test]
    fn join_handle_awaiting_a_task_of_a_dropped_runtime_wakes() {
        // A task on runtime B awaits a JoinHandle of runtime A; dropping A
        // must wake B's task with a cancelled error.
        let a = rt();
        let b = rt();
        let (p, _, _) = probe();
        let ja = a.spawn(parked_forever(p));
        a.turn(Duration::ZERO);
        let jb = b.spawn(async move { ja.await.unwrap_err().is_cancelled() });
        b.turn(Duration::ZERO); // registers its waker on A's task
        drop(a);
        assert!(b.block_on(jb).unwrap());
    }

    #[test]
    fn runtime_dropped_by_a_thread_local_destructor() {
        struct Holder(std::cell::RefCell<Option<Runtime>>);
        thread_local! {
            static HELD: Holder = const { Holder(std::cell::RefCell::new(None)) };
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let d = drops.clone();
        thread::spawn(move || {
            let rt = rt();
            let (p, _, _) = probe();
            let counted = Probe {
                drops: d,
                dropped_on: p.dropped_on.clone(),
            };
            drop(rt.spawn(async move {
                let _c = counted;
                pending::<()>().await;
            }));
            rt.turn(Duration::ZERO);
            HELD.with(|h| *h.0.borrow_mut() = Some(rt));
            // The runtime is dropped during thread-local destruction.
        })
        .join()
        .unwrap();
        assert_eq!(drops.load(SeqCst), 1);
    }
}
