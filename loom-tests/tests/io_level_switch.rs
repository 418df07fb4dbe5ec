//! Model: the level-triggered receive without a lock against the switch
//! to edge-triggered (`net/recv_rule.rs`, the level-triggered
//! receive).
//!
//! A level-triggered receive reads the registration's readiness, then the
//! socket's `level` flag, makes one `recvfrom` and, if the flag was set,
//! marks the socket drained at the event sequence number it saw (the skip
//! word), then clears the readiness it saw. Meanwhile the socket's first
//! batch receive switches it to edge-triggered: the flag is cleared, then
//! the poller's interest changes (the kernel reports the socket if it
//! holds a datagram). A driver dispatches that edge-triggered report.
//! Whatever the order, no datagram is stranded: when the dust settles, a
//! datagram left in the socket has a report on its way, or the next
//! receive makes its syscall (its skip does not match).
//!
//! The receive state is reduced to its two words (`DrainedMark` and `RecvRule` use
//! std's atomics around a syscall); the readiness is the real
//! `ScheduledIo`. The fake kernel's lock stands for epoll's, which orders
//! the interest change before any report made after it. A receive that
//! reads the flag *before* its snapshot fails this model: it reads the
//! flag still set, then sees the edge-triggered report, takes one of two
//! datagrams there and marks the socket drained at it.
#![cfg(loom)]

use std::io;

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo_io::loom_model::{Arming, Direction, LevelInterest, Ready, ScheduledIo};

/// The fake kernel's view of one socket.
#[derive(Debug, Default)]
struct FakeSocket {
    /// (datagrams queued, an edge-triggered report is pending)
    state: Mutex<(usize, bool)>,
}

impl FakeSocket {
    /// `recvfrom`: takes one datagram if one is queued.
    fn take(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        if state.0 == 0 {
            return false;
        }
        state.0 -= 1;
        true
    }
}

#[derive(Debug)]
struct FakeInterest(Arc<FakeSocket>);

impl LevelInterest for FakeInterest {
    fn set(&self, _arming: Arming) -> io::Result<()> {
        Ok(())
    }

    /// `epoll_ctl(EPOLL_CTL_MOD)` to edge-triggered: the kernel checks the
    /// socket and reports it if it holds a datagram.
    fn edge(&self) -> io::Result<()> {
        let mut state = self.0.state.lock().unwrap();
        if state.0 > 0 {
            state.1 = true;
        }
        Ok(())
    }
}

/// The skip word of `event_seq` (as `DrainedMark` in `readiness/registration.rs`).
fn skip_word(event_seq: usize) -> usize {
    (event_seq << 1) | 1
}

/// The receive state's two words (the drained mark, the level flag).
struct Ahead {
    skip: AtomicUsize,
    level: AtomicBool,
}

/// One receive as `recv_rule::recv_one` and `Registration::poll_op` make it on
/// a socket registered level-triggered.
fn receive(io: &ScheduledIo, socket: &FakeSocket, ahead: &Ahead) {
    let seen = io.snapshot();
    if ahead.skip.load(Ordering::Acquire) == skip_word(seen.event_seq()) {
        return; // skipped: waits for the next report
    }
    // After the snapshot: read before it, this model fails.
    let level = ahead.level.load(Ordering::Acquire);
    if !socket.take() {
        io.clear_readiness(seen, Direction::Read); // WouldBlock
        return;
    }
    if level {
        ahead
            .skip
            .store(skip_word(seen.event_seq()), Ordering::Release);
        io.clear_readiness(seen, Direction::Read);
    }
}

#[test]
fn a_receive_racing_the_switch_to_edge_triggered_strands_no_datagram() {
    loom::model(|| {
        let socket = Arc::new(FakeSocket::default());
        let io = Arc::new(ScheduledIo::new());
        io.make_level_triggered(Box::new(FakeInterest(socket.clone())))
            .unwrap();
        let ahead = Arc::new(Ahead {
            skip: AtomicUsize::new(0),
            level: AtomicBool::new(true),
        });
        // Two datagrams queued, reported level-triggered.
        socket.state.lock().unwrap().0 = 2;
        io.dispatch(Ready::READABLE, 1, &mut Vec::new());

        let switch = {
            let (io, ahead) = (io.clone(), ahead.clone());
            thread::spawn(move || {
                // `RecvRule::leave_level`, then its `make_edge_triggered`.
                ahead.level.store(false, Ordering::Relaxed);
                io.make_edge_triggered().unwrap();
            })
        };
        let driver = {
            let (io, socket) = (io.clone(), socket.clone());
            thread::spawn(move || {
                let pending = std::mem::take(&mut socket.state.lock().unwrap().1);
                if pending {
                    io.dispatch(Ready::READABLE, 2, &mut Vec::new());
                }
            })
        };
        receive(&io, &socket, &ahead);
        switch.join().unwrap();
        driver.join().unwrap();

        let (queued, report_pending) = *socket.state.lock().unwrap();
        let skips = ahead.skip.load(Ordering::Acquire) == skip_word(io.snapshot().event_seq());
        assert!(
            queued == 0 || report_pending || !skips,
            "a datagram is left, no report is coming and the next receive skips"
        );
    });
}
