//! Waker behaviour checked precisely with tokio-test's mock task.

use std::future::Future;
use std::time::Duration;

use tokio_test::task;
use tokio_test::{assert_pending, assert_ready};

mod support;
use support::*;

on_each_flavor! {
    #[test]
    fn join_handle_is_woken_exactly_on_completion() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        use std::sync::{Arc, Mutex};

        let rt = builder().build().unwrap();
        let open = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None::<std::task::Waker>));
        let (o, s) = (open.clone(), slot.clone());
        let join = rt.spawn(std::future::poll_fn(move |cx| {
            if o.load(SeqCst) {
                return std::task::Poll::Ready(42);
            }
            *s.lock().unwrap() = Some(cx.waker().clone());
            std::task::Poll::Pending
        }));
        let mut join = task::spawn(join);
        assert_pending!(join.poll());
        assert_eq!(join.waker_ref_count(), 2, "the task keeps one clone");
        // The task runs and stays pending: the JoinHandle is not woken.
        rt.turn(Duration::ZERO);
        assert!(!join.is_woken());
        assert_pending!(join.poll());
        // The task completes: the JoinHandle is woken, once.
        open.store(true, SeqCst);
        slot.lock().unwrap().take().unwrap().wake();
        assert!(
            !join.is_woken(),
            "waking the task does not wake its JoinHandle"
        );
        rt.turn(Duration::ZERO);
        assert!(join.is_woken());
        assert_eq!(assert_ready!(join.poll()).unwrap(), 42);
    }

    #[test]
    fn repolling_with_the_same_waker_does_not_clone_it_again() {
        let rt = builder().build().unwrap();
        let join = rt.spawn(std::future::pending::<()>());
        let mut join = task::spawn(join);
        assert_pending!(join.poll());
        assert_pending!(join.poll());
        assert_pending!(join.poll());
        assert_eq!(join.waker_ref_count(), 2);
        join.abort();
        rt.turn(Duration::ZERO);
        assert!(join.is_woken());
        assert!(assert_ready!(join.poll()).unwrap_err().is_cancelled());
    }

    #[test]
    fn a_new_waker_replaces_the_old_one() {
        let rt = builder().build().unwrap();
        let join = rt.spawn(async {
            tempo::task::yield_now().await;
            1
        });
        let mut first = task::spawn(());
        let mut join = Box::pin(join);
        first.enter(|cx, _| assert!(join.as_mut().poll(cx).is_pending()));
        let mut second = task::spawn(());
        second.enter(|cx, _| assert!(join.as_mut().poll(cx).is_pending()));
        assert_eq!(first.waker_ref_count(), 1, "old waker released");
        rt.turn(Duration::ZERO);
        rt.turn(Duration::ZERO);
        assert!(second.is_woken());
        assert!(!first.is_woken());
    }

    #[test]
    fn dropping_an_unfinished_join_handle_releases_its_waker() {
        let rt = builder().build().unwrap();
        let mut join = Box::pin(rt.spawn(std::future::pending::<()>()));
        let mut holder = task::spawn(());
        holder.enter(|cx, _| assert!(join.as_mut().poll(cx).is_pending()));
        assert_eq!(holder.waker_ref_count(), 2);
        drop(join);
        assert_eq!(holder.waker_ref_count(), 1);
        assert!(!holder.is_woken());
    }

    #[test]
    fn task_waker_wakes_only_the_task() {
        // A task that stores its waker; waking it makes exactly one more poll.
        let rt = builder().build().unwrap();
        let slot = std::sync::Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
        let polls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (s, p) = (slot.clone(), polls.clone());
        let _join = rt.spawn(std::future::poll_fn(move |cx| {
            p.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            *s.lock().unwrap() = Some(cx.waker().clone());
            std::task::Poll::<()>::Pending
        }));
        rt.turn(Duration::ZERO);
        assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), 1);
        rt.turn(Duration::ZERO);
        assert_eq!(
            polls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "not woken: not polled"
        );
        let waker = slot.lock().unwrap().clone().unwrap();
        waker.wake_by_ref();
        waker.wake_by_ref(); // a second wake before the poll is absorbed
        let turn = rt.turn(Duration::ZERO);
        assert_eq!(turn.tasks_polled(), 1);
        assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
