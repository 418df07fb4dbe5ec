//! Model: several async waiters on one registration (`ScheduledIo`'s
//! waiter list). Two waiters register on two threads while the driver, on
//! a third, delivers one readiness event: each waiter must observe it,
//! either at once (`Ready`) or by being woken and then finding it. A
//! waiter dropped while the event is dispatched must not take the other's
//! wake-up with it.
#![cfg(loom)]

use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use tempo_io::loom_model::{Direction, Ready, ScheduledIo, Waiter};

/// A waker that records that it was woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.store(true, SeqCst);
    }
}

fn new_flag() -> (StdArc<Flag>, Waker) {
    let flag = StdArc::new(Flag(AtomicBool::new(false)));
    (flag.clone(), Waker::from(flag))
}

/// The driver's side of one event: readiness in, every waker out, woken
/// after the lock is released (as `Driver::turn` does).
fn dispatch(io: &ScheduledIo) {
    io.set_readiness(Ready::READABLE);
    let mut wakers = Vec::new();
    io.take_wakers(Ready::READABLE, &mut wakers);
    wakers.into_iter().for_each(Waker::wake);
}

/// Checks, once the event was dispatched, that a waiter whose first poll
/// returned `first` has observed it.
fn assert_observed(waiter: &mut Waiter<'_>, first: Poll<()>, flag: &Flag, waker: &Waker) {
    if first.is_pending() {
        assert!(flag.0.load(SeqCst), "a waiter was never woken by the event");
        let again = waiter.poll_ready(&mut Context::from_waker(waker));
        assert!(
            matches!(again, Poll::Ready(Ok(_))),
            "a woken waiter found no readiness"
        );
    }
}

fn first_poll(waiter: &mut Waiter<'_>, waker: &Waker) -> Poll<()> {
    match waiter.poll_ready(&mut Context::from_waker(waker)) {
        Poll::Ready(result) => {
            result.unwrap();
            Poll::Ready(())
        }
        Poll::Pending => Poll::Pending,
    }
}

#[test]
fn two_waiters_both_observe_one_readiness_event() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let driver = {
            let io = io.clone();
            thread::spawn(move || dispatch(&io))
        };
        // The other waiter joins the driver before its final check, so
        // that its entry lives until the event was dispatched.
        let other = {
            let io = io.clone();
            thread::spawn(move || {
                let (flag, waker) = new_flag();
                let mut waiter = Waiter::new(&io, Direction::Read);
                let first = first_poll(&mut waiter, &waker);
                driver.join().unwrap();
                assert_observed(&mut waiter, first, &flag, &waker);
            })
        };
        let (flag, waker) = new_flag();
        let mut waiter = Waiter::new(&io, Direction::Read);
        let first = first_poll(&mut waiter, &waker);
        other.join().unwrap();
        assert_observed(&mut waiter, first, &flag, &waker);
    });
}

#[test]
fn a_waiter_dropped_during_dispatch_leaves_the_other_woken() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let (flag, waker) = new_flag();
        let mut waiter = Waiter::new(&io, Direction::Read);
        let first = first_poll(&mut waiter, &waker);

        let dropping = {
            let io = io.clone();
            thread::spawn(move || {
                let (_flag, waker) = new_flag();
                let mut gone = Waiter::new(&io, Direction::Read);
                let _ = first_poll(&mut gone, &waker);
                drop(gone);
            })
        };
        let driver = {
            let io = io.clone();
            thread::spawn(move || dispatch(&io))
        };
        dropping.join().unwrap();
        driver.join().unwrap();
        assert_observed(&mut waiter, first, &flag, &waker);
    });
}
