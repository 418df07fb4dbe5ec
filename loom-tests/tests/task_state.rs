//! Models of the task state machine, driven through the real runtime:
//! wakes from two threads, completion racing a JoinHandle drop, abort
//! racing completion, JoinHandle waker registration racing completion.
//! A lost wake-up shows as a loom deadlock; a double free or a missed drop
//! as a failed drop count.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo::runtime::Builder;
use tempo_loom_tests::block_on;

/// Completes once `count` reaches `target`; registers its waker first.
struct WaitFor {
    count: Arc<AtomicUsize>,
    target: usize,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Future for WaitFor {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.count.load(SeqCst) >= self.target {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Counts drops.
struct Probe(Arc<AtomicUsize>);
impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn waker_of(slot: &Arc<Mutex<Option<Waker>>>) -> Option<Waker> {
    slot.lock().unwrap().clone()
}

/// Two threads wake a task, which may be idle, scheduled or running at
/// the time; the runtime never loses the last wake.
#[test]
fn wakes_from_two_threads_while_idle_or_running() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let slot = Arc::new(Mutex::new(None));
        let join = rt.spawn(WaitFor {
            count: count.clone(),
            target: 2,
            waker: slot.clone(),
        });
        rt.turn(Duration::ZERO); // registers the waker
        let wakers: Vec<_> = (0..2)
            .map(|_| {
                let (count, slot) = (count.clone(), slot.clone());
                thread::spawn(move || {
                    count.fetch_add(1, SeqCst);
                    if let Some(w) = waker_of(&slot) {
                        w.wake();
                    }
                })
            })
            .collect();
        rt.block_on(join).unwrap();
        for w in wakers {
            w.join().unwrap();
        }
    });
}

/// The task completes while another thread drops its JoinHandle: the
/// output is dropped exactly once, by one side or the other.
#[test]
fn complete_vs_join_handle_drop() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let d = drops.clone();
        let join = rt.spawn(async move { Probe(d) });
        let t = thread::spawn(move || drop(join));
        rt.turn(Duration::ZERO);
        t.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1);
    });
}

/// Abort from another thread races the task's completion: the JoinHandle
/// sees the output or a cancellation, and the future is dropped once.
#[test]
fn abort_vs_complete() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let probe = Probe(drops.clone());
        let join = rt.spawn(async move {
            let _p = probe;
            5
        });
        let join = Arc::new(join);
        let j2 = join.clone();
        let t = thread::spawn(move || j2.abort());
        rt.turn(Duration::ZERO);
        t.join().unwrap();
        let join = Arc::try_unwrap(join).unwrap();
        match rt.block_on(join) {
            Ok(v) => assert_eq!(v, 5),
            Err(e) => assert!(e.is_cancelled()),
        }
        assert_eq!(drops.load(SeqCst), 1);
    });
}

/// Another thread awaits the JoinHandle (registering its waker) while the
/// runtime completes the task: the waiter is always woken.
#[test]
fn join_waker_registration_vs_completion() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let join = rt.spawn(async { 3 });
        let t = thread::spawn(move || block_on(join).unwrap());
        rt.turn(Duration::ZERO);
        assert_eq!(t.join().unwrap(), 3);
    });
}
