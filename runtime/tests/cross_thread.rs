//! Spawns and wakes from other threads: none lost, and the runtime's thread
//! is unparked only when it is parked.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;

mod support;
use support::*;

on_each_flavor! {
    /// Completes once `counter` reaches `target`; parks its waker in `slot`
    /// each time it is polled short of that.
    struct CountTo {
        counter: Arc<AtomicU64>,
        target: u64,
        slot: Arc<Mutex<Option<Waker>>>,
        polls: u64,
    }

    impl Future for CountTo {
        type Output = u64;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
            self.polls += 1;
            // Register first, then check: a wake between the two is not lost.
            *self.slot.lock().unwrap() = Some(cx.waker().clone());
            if self.counter.load(SeqCst) >= self.target {
                Poll::Ready(self.polls)
            } else {
                Poll::Pending
            }
        }
    }

    #[test]
    fn wakes_from_four_threads_none_lost() {
        const THREADS: u64 = 4;
        const WAKES: u64 = 25_000;
        let rt = builder().build().unwrap();
        let counter = Arc::new(AtomicU64::new(0));
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let task = rt.spawn(CountTo {
            counter: counter.clone(),
            target: THREADS * WAKES,
            slot: slot.clone(),
            polls: 0,
        });
        // First poll registers the waker.
        rt.turn(std::time::Duration::ZERO);
        let wakers: Vec<_> = (0..THREADS)
            .map(|_| {
                let counter = counter.clone();
                let slot = slot.clone();
                thread::spawn(move || {
                    for _ in 0..WAKES {
                        counter.fetch_add(1, SeqCst);
                        let waker = slot.lock().unwrap().clone();
                        if let Some(w) = waker {
                            w.wake();
                        }
                    }
                })
            })
            .collect();
        let polls = rt.block_on(task).unwrap();
        for t in wakers {
            t.join().unwrap();
        }
        assert_eq!(counter.load(SeqCst), THREADS * WAKES);
        let unparks = rt.handle().unpark_count();
        eprintln!(
            "{} wakes from {THREADS} threads: {polls} polls, {unparks} unparks",
            THREADS * WAKES
        );
        assert!(unparks <= polls, "at most one unpark per park");
    }

    #[test]
    fn remote_spawns_from_four_threads_all_run() {
        let rt = builder().build().unwrap();
        let handle = rt.handle().clone();
        let ran = Arc::new(AtomicUsize::new(0));
        let spawners: Vec<_> = (0..4)
            .map(|_| {
                let handle = handle.clone();
                let ran = ran.clone();
                thread::spawn(move || {
                    (0..1000)
                        .map(|i| {
                            let ran = ran.clone();
                            handle.spawn(async move {
                                ran.fetch_add(1, SeqCst);
                                i
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let joins: Vec<_> = spawners
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let sum = rt.block_on(async {
            let mut sum = 0;
            for j in joins {
                sum += j.await.unwrap();
            }
            sum
        });
        assert_eq!(ran.load(SeqCst), 4000);
        assert_eq!(sum, 4 * (0..1000).sum::<i32>());
    }

    #[test]
    fn remote_spawn_wakes_a_parked_runtime() {
        let rt = builder().build().unwrap();
        let handle = rt.handle().clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let (d, s) = (done.clone(), slot.clone());
        let t = thread::spawn(move || {
            // Spawn once block_on is waiting (parked, or about to park): the
            // spawn must unpark it, or block_on never returns.
            rx.recv().unwrap();
            drop(handle.spawn(async move {
                d.store(true, SeqCst);
                if let Some(w) = s.lock().unwrap().take() {
                    w.wake();
                }
            }));
        });
        rt.block_on(std::future::poll_fn(|cx| {
            *slot.lock().unwrap() = Some(cx.waker().clone());
            if done.load(SeqCst) {
                return Poll::Ready(());
            }
            let _ = tx.send(());
            Poll::Pending
        }));
        t.join().unwrap();
        assert!(rt.handle().unpark_count() <= 1);
    }

    #[test]
    fn same_thread_wakes_cause_no_unpark() {
        let rt = builder().build().unwrap();
        rt.block_on(async {
            let handles: Vec<_> = (0..100)
                .map(|_| {
                    tempo::spawn(async {
                        for _ in 0..100 {
                            tempo::task::yield_now().await;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
        });
        assert_eq!(rt.handle().unpark_count(), 0);
    }

    #[test]
    fn spawn_local_task_woken_from_another_thread_runs_on_owner() {
        let rt = builder().build().unwrap();
        let owner = thread::current().id();
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let counter = Arc::new(AtomicU64::new(0));
        let s = slot.clone();
        let c = counter.clone();
        let polled_on = rt.block_on(async move {
            let h = tempo::spawn_local(async move {
                let rc = std::rc::Rc::new(()); // !Send
                CountTo {
                    counter: c,
                    target: 1,
                    slot: s,
                    polls: 0,
                }
                .await;
                drop(rc);
                thread::current().id()
            });
            tempo::task::yield_now().await; // let it register
            let t = thread::spawn(move || {
                counter.fetch_add(1, SeqCst);
                slot.lock().unwrap().take().unwrap().wake();
            });
            let id = h.await.unwrap();
            t.join().unwrap();
            id
        });
        assert_eq!(polled_on, owner);
    }
}
