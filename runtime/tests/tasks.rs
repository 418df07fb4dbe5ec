//! Spawning, joining, aborting, panics, spawn_local, yield_now, contexts.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tempo::runtime::{Builder, Handle, Runtime};
use tempo::task::{self, JoinError};

mod support;
use support::*;

/// Pending until `open` is set, registering its waker in `waker`.
struct Gate {
    open: Arc<std::sync::atomic::AtomicBool>,
    waker: Arc<std::sync::Mutex<Option<std::task::Waker>>>,
}

impl Future for Gate {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.open.load(SeqCst) {
            return Poll::Ready(());
        }
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

on_each_flavor! {
    fn rt() -> Runtime {
        builder().build().unwrap()
    }

    #[test]
    fn ten_thousand_tasks_all_complete() {
        let rt = rt();
        let done = Arc::new(AtomicUsize::new(0));
        let sum = rt.block_on(async {
            let handles: Vec<_> = (0..10_000u64)
                .map(|i| {
                    let done = done.clone();
                    tempo::spawn(async move {
                        task::yield_now().await;
                        done.fetch_add(1, SeqCst);
                        i
                    })
                })
                .collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            sum
        });
        assert_eq!(done.load(SeqCst), 10_000);
        assert_eq!(sum, (0..10_000u64).sum::<u64>());
    }

    #[test]
    fn join_handle_returns_output_and_is_finished() {
        let rt = rt();
        let h = rt.spawn(async { String::from("out") });
        assert!(!h.is_finished());
        rt.turn(Duration::ZERO);
        assert!(h.is_finished());
        assert_eq!(rt.block_on(h).unwrap(), "out");
    }

    #[test]
    fn abort_before_first_poll() {
        let rt = rt();
        let polled = Arc::new(AtomicUsize::new(0));
        let p = polled.clone();
        let h = rt.spawn(async move {
            p.fetch_add(1, SeqCst);
        });
        h.abort();
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(polled.load(SeqCst), 0);
    }

    #[test]
    fn abort_from_another_thread_while_running() {
        let rt = rt();
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let after = Arc::new(AtomicUsize::new(0));
        let (b, a) = (barrier.clone(), after.clone());
        let h = rt.spawn(async move {
            b.wait(); // running: let the other thread abort us
            b.wait(); // aborted
            task::yield_now().await;
            a.fetch_add(1, SeqCst);
        });
        let t = std::thread::spawn(move || {
            barrier.wait();
            h.abort();
            barrier.wait();
            h
        });
        rt.turn(Duration::ZERO); // the poll during which the abort happens
        let h = t.join().unwrap();
        assert!(h.is_finished(), "cancelled as soon as the poll returned");
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(after.load(SeqCst), 0);
    }

    #[test]
    fn abort_while_pending() {
        let rt = rt();
        let gate = Gate {
            open: Default::default(),
            waker: Default::default(),
        };
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = DropCounter(dropped.clone());
        let h = rt.spawn(async move {
            let _d = d;
            gate.await;
        });
        rt.turn(Duration::ZERO);
        assert!(!h.is_finished());
        h.abort();
        assert_eq!(
            dropped.load(SeqCst),
            0,
            "the future is dropped by the runtime"
        );
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(dropped.load(SeqCst), 1);
    }

    #[test]
    fn abort_after_completion_keeps_output() {
        let rt = rt();
        let h = rt.spawn(async { 5 });
        rt.turn(Duration::ZERO);
        h.abort();
        assert_eq!(rt.block_on(h).unwrap(), 5);
    }

    #[test]
    fn dropping_join_handle_detaches() {
        let rt = rt();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        drop(rt.spawn(async move {
            task::yield_now().await;
            r.fetch_add(1, SeqCst);
        }));
        rt.block_on(async {
            for _ in 0..3 {
                task::yield_now().await;
            }
        });
        assert_eq!(ran.load(SeqCst), 1);
    }

    #[test]
    fn detached_output_is_dropped_on_completion() {
        let rt = rt();
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        drop(rt.spawn(async move { DropCounter(d) }));
        rt.turn(Duration::ZERO);
        assert_eq!(dropped.load(SeqCst), 1);
    }

    #[test]
    fn panics_are_isolated() {
        let rt = rt();
        let out = rt.block_on(async {
            let bad = tempo::spawn(async { panic!("task exploded") });
            let good = tempo::spawn(async { 1 });
            let err: JoinError = bad.await.unwrap_err();
            assert!(err.is_panic());
            assert_eq!(
                *err.into_panic().downcast::<&str>().unwrap(),
                "task exploded"
            );
            good.await.unwrap()
        });
        assert_eq!(out, 1);
        // The runtime still works.
        assert_eq!(
            rt.block_on(async { tempo::spawn(async { 2 }).await.unwrap() }),
            2
        );
    }

    #[test]
    fn spawn_local_with_rc() {
        let rt = rt();
        let counter = Rc::new(RefCell::new(0));
        rt.block_on(async {
            let mut handles = Vec::new();
            for _ in 0..10 {
                let c = counter.clone();
                handles.push(tempo::spawn_local(async move {
                    task::yield_now().await;
                    *c.borrow_mut() += 1;
                    Rc::strong_count(&c)
                }));
            }
            for h in handles {
                assert!(h.await.unwrap() >= 2);
            }
        });
        assert_eq!(*counter.borrow(), 10);
        assert_eq!(Rc::strong_count(&counter), 1);
    }

    #[test]
    fn spawn_local_after_enter() {
        let rt = rt();
        let h = {
            let _g = rt.enter();
            tempo::spawn_local(async { Rc::new(3) })
        };
        assert_eq!(*rt.block_on(h).unwrap(), 3);
    }

    #[test]
    #[should_panic(expected = "spawn_local must be called on the thread that runs a Tempo runtime")]
    fn spawn_local_outside_runtime_panics() {
        drop(tempo::spawn_local(async {}));
    }

    #[test]
    fn spawn_local_from_another_thread_panics() {
        let rt = rt();
        let handle = rt.handle().clone();
        let result = std::thread::spawn(move || {
            let _ = handle;
            std::panic::catch_unwind(|| drop(tempo::spawn_local(async {}))).is_err()
        })
        .join()
        .unwrap();
        assert!(result);
    }

    #[test]
    #[should_panic(expected = "Cannot call block_on from inside a Tempo runtime")]
    fn nested_block_on_panics() {
        let rt = rt();
        let inner = rt_no_drop();
        rt.block_on(async move {
            inner.block_on(async {});
        });
    }

    fn rt_no_drop() -> Runtime {
        rt()
    }

    #[test]
    fn nested_block_on_same_runtime_panics_with_message() {
        let rt = Rc::new(rt());
        let rt2 = rt.clone();
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                rt2.block_on(async {});
            })
        }))
        .unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(
            msg.contains("Cannot call block_on from inside a Tempo runtime"),
            "{msg}"
        );
        assert!(msg.contains("Use .await or spawn"), "{msg}");
        // After the panic the runtime can run again.
        assert_eq!(rt.block_on(async { 1 }), 1);
    }

    #[test]
    fn block_on_inside_a_task_panics_and_is_isolated() {
        let rt = rt();
        let other = rt_no_drop();
        let h = rt.spawn_local_helper(other);
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_panic());
    }

    trait SpawnLocalHelper {
        fn spawn_local_helper(&self, other: Runtime) -> tempo::task::JoinHandle<()>;
    }

    impl SpawnLocalHelper for Runtime {
        fn spawn_local_helper(&self, other: Runtime) -> tempo::task::JoinHandle<()> {
            let _g = self.enter();
            tempo::spawn_local(async move {
                other.block_on(async {});
            })
        }
    }

    #[test]
    fn yield_now_is_fair() {
        let rt = rt();
        let log = Rc::new(RefCell::new(Vec::new()));
        rt.block_on(async {
            let handles: Vec<_> = (0..3)
                .map(|id| {
                    let log = log.clone();
                    tempo::spawn_local(async move {
                        for round in 0..3 {
                            log.borrow_mut().push((round, id));
                            task::yield_now().await;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
        });
        let log = log.borrow();
        // Round-robin: every task runs round r before any runs round r + 1.
        let expected: Vec<_> = (0..3).flat_map(|r| (0..3).map(move |id| (r, id))).collect();
        assert_eq!(*log, expected);
    }

    #[test]
    fn handle_current_and_try_current() {
        assert!(Handle::try_current().is_err());
        let err = Handle::try_current().unwrap_err();
        assert!(err.to_string().contains("no Tempo runtime"));
        let rt = rt();
        rt.block_on(async {
            let h = Handle::current();
            assert_eq!(h.spawn(async { 4 }).await.unwrap(), 4);
        });
        {
            let _g = rt.enter();
            assert!(Handle::try_current().is_ok());
        }
        assert!(Handle::try_current().is_err());
    }
}

#[test]
#[should_panic(expected = "no Tempo runtime")]
fn handle_current_outside_panics() {
    let _ = Handle::current();
}

#[test]
#[should_panic(expected = "tempo::spawn called outside a Tempo runtime")]
fn spawn_outside_panics() {
    drop(tempo::spawn(async {}));
}

#[test]
fn event_interval_is_the_budget() {
    let rt = Builder::new_current_thread()
        .event_interval(2)
        .build()
        .unwrap();
    for _ in 0..5 {
        drop(rt.spawn(async {}));
    }
    let turn = rt.turn(Duration::ZERO);
    assert_eq!(turn.tasks_polled(), 2);
    assert!(turn.tasks_remaining());
}

#[test]
fn runtime_handle_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Handle>();
    fn send<T: Send + Sync>() {}
    send::<tempo::task::JoinHandle<u8>>();
    send::<JoinError>();
}
