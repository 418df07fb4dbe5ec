//! Model: a level-triggered registration's interest (`ScheduledIo`'s
//! "Level-triggered registrations"). Read was disarmed by a report nobody
//! waited for; a datagram arrives while the driver polls and a reader,
//! finding the old readiness stale, waits for it: its store must re-arm
//! read before it re-checks. Whatever the order, the datagram is not
//! stranded: the reader gets it, or it is woken by a later poll and gets
//! it then.
//!
//! The poller is a fake with level-triggered semantics (a poll reports
//! the registration while read is armed and a datagram is queued), its
//! interest changed through the registration's `LevelInterest`, as
//! `epoll_ctl` does for the real one.
#![cfg(loom)]

use std::io;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo_io::loom_model::{Arming, Direction, LevelInterest, Ready, ScheduledIo, Waiter};

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.store(true, SeqCst);
    }
}

/// The fake poller's view of one socket.
#[derive(Debug, Default)]
struct FakeEpoll {
    /// (a datagram is queued, the registration's interest)
    state: Mutex<(bool, Arming)>,
}

impl FakeEpoll {
    fn arrive(&self) {
        self.state.lock().unwrap().0 = true;
    }

    /// One poll: level-triggered, it reports while read is armed and a
    /// datagram is queued.
    fn reports(&self) -> bool {
        let state = self.state.lock().unwrap();
        state.0 && state.1.level
    }

    /// A receive: takes the datagram if one is queued.
    fn take(&self) -> bool {
        std::mem::replace(&mut self.state.lock().unwrap().0, false)
    }
}

#[derive(Debug)]
struct FakeInterest(Arc<FakeEpoll>);

impl LevelInterest for FakeInterest {
    fn set(&self, arming: Arming) -> io::Result<()> {
        self.0.state.lock().unwrap().1 = arming;
        Ok(())
    }

    fn edge(&self) -> io::Result<()> {
        unreachable!("the model stays level-triggered")
    }
}

/// One poll of the driver (dispatch round `round`).
fn poll(epoll: &FakeEpoll, io: &ScheduledIo, round: u64) {
    if epoll.reports() {
        let mut wakers = Vec::new();
        io.dispatch(Ready::READABLE, round, &mut wakers);
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// Polls `waiter` and receives, at most twice (a receive that finds
/// nothing clears the readiness it saw, as the operation loop does).
/// Returns whether it got the datagram.
fn receive(io: &ScheduledIo, epoll: &FakeEpoll, waiter: &mut Waiter<'_>, waker: &Waker) -> bool {
    for _ in 0..2 {
        match waiter.poll_ready(&mut Context::from_waker(waker)) {
            Poll::Ready(seen) => {
                let seen = seen.unwrap();
                if epoll.take() {
                    return true;
                }
                io.clear_readiness(seen, Direction::Read);
            }
            Poll::Pending => return false,
        }
    }
    false
}

#[test]
fn a_disarming_report_racing_a_waiting_reader_strands_no_datagram() {
    loom::model(|| {
        let epoll = Arc::new(FakeEpoll::default());
        let io = Arc::new(ScheduledIo::new());
        io.make_level_triggered(Box::new(FakeInterest(epoll.clone())))
            .unwrap();
        // A first datagram was reported twice while nobody waited (read
        // is disarmed, the readiness stays set) and then taken by a
        // `try_recv`: the reader below finds the readiness stale, clears
        // it and must re-arm read as it waits.
        epoll.arrive();
        poll(&epoll, &io, 1);
        poll(&epoll, &io, 2);
        assert!(!epoll.state.lock().unwrap().1.level, "disarmed");
        assert!(epoll.take());
        let sender = {
            let epoll = epoll.clone();
            thread::spawn(move || epoll.arrive())
        };
        let driver = {
            let (epoll, io) = (epoll.clone(), io.clone());
            thread::spawn(move || poll(&epoll, &io, 3))
        };
        let flag = StdArc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut waiter = Waiter::new(&io, Direction::Read);
        let mut got = receive(&io, &epoll, &mut waiter, &waker);
        sender.join().unwrap();
        driver.join().unwrap();
        if !got {
            // The reader waits: the next poll must report and wake it.
            poll(&epoll, &io, 4);
            assert!(flag.0.load(SeqCst), "a waiting reader was never woken");
            got = receive(&io, &epoll, &mut waiter, &waker);
        }
        assert!(got, "the datagram was stranded");
    });
}
