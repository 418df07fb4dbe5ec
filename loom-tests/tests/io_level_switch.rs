//! Model: the level-triggered receive without a lock against the switch
//! to edge-triggered, on tempo-io's own code: the receive rule
//! (`RecvRule::receive`, `RecvRule::leave_level` in `net/recv_rule.rs`),
//! the drained mark and one attempt of the receive loop (`DrainedMark`,
//! `attempt_at` in `readiness/registration.rs`) and the readiness
//! (`ScheduledIo`). Only the kernel is fake.
//!
//! A level-triggered receive takes a readiness snapshot, reads the rule's
//! `level` flag, makes one `recvfrom` and, if the flag was set, marks the
//! socket drained at the event it saw, then clears that readiness.
//! Meanwhile the socket's first batch receive switches it to
//! edge-triggered: the flag is cleared, then the poller's interest changes
//! (the kernel reports the socket if it holds a datagram), and a driver
//! dispatches that report. Whatever the order, no datagram is stranded:
//! when the dust settles, a datagram left in the socket has a report on
//! its way, or the next receive makes its syscall (the mark does not hold).
//!
//! The fake kernel's lock stands for epoll's, which orders the interest
//! change before any report made after it. Mutant: the switch changing
//! the interest before it clears the flag (`RuleMutant::EdgeBeforeFlag`);
//! a receive then reads the flag still set, sees the edge-triggered
//! report, takes one of two datagrams and marks the socket drained at it.
//! The receive runs on a thread of its own: on the model's main thread,
//! loom never scheduled the switch before the receive's first operation
//! and missed that mutant.
#![cfg(loom)]

use std::io;

use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo_io::loom_model::{
    attempt_at, Arming, Direction, DrainedMark, IoOp, LevelInterest, Ready, ReadyEvent, RecvRule,
    RuleMutant, ScheduledIo,
};

/// The fake kernel's view of one socket.
#[derive(Debug, Default)]
struct FakeSocket {
    /// (datagrams queued, an edge-triggered report is pending)
    state: Mutex<(usize, bool)>,
}

impl FakeSocket {
    /// `recvfrom`: one datagram, or `WouldBlock`.
    fn recv(&self) -> io::Result<()> {
        let mut state = self.state.lock().unwrap();
        if state.0 == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        state.0 -= 1;
        Ok(())
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

/// `recv_from` under the throttled rule, as `recv_rule.rs` makes it, on
/// the fake socket.
struct Receive<'a> {
    rule: &'a RecvRule,
    socket: &'a FakeSocket,
}

impl IoOp for Receive<'_> {
    type Output = ();

    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<((), bool)> {
        self.rule.receive(seen, true, || self.socket.recv())
    }
}

/// The driver: dispatches the socket's pending edge-triggered report.
fn dispatch_pending(io: &ScheduledIo, socket: &FakeSocket) {
    let pending = std::mem::take(&mut socket.state.lock().unwrap().1);
    if pending {
        io.dispatch(Ready::READABLE, 2, &mut Vec::new());
    }
}

fn run(mutant: Option<RuleMutant>) {
    loom::model(move || {
        let socket = Arc::new(FakeSocket::default());
        let io = Arc::new(ScheduledIo::new());
        io.make_level_triggered(Box::new(FakeInterest(socket.clone())))
            .unwrap();
        let rule = Arc::new(RecvRule::level_triggered(mutant));
        let mark = Arc::new(DrainedMark::default());
        // Two datagrams queued, reported level-triggered.
        socket.state.lock().unwrap().0 = 2;
        io.dispatch(Ready::READABLE, 1, &mut Vec::new());

        // The driver dispatches the edge-triggered report on its own
        // thread, or at once after the interest change (whichever takes it).
        let switch = {
            let (io, rule, socket) = (io.clone(), rule.clone(), socket.clone());
            thread::spawn(move || {
                rule.leave_level(|| {
                    io.make_edge_triggered()?;
                    dispatch_pending(&io, &socket);
                    Ok(())
                })
                .unwrap()
            })
        };
        let driver = {
            let (io, socket) = (io.clone(), socket.clone());
            thread::spawn(move || dispatch_pending(&io, &socket))
        };
        // One attempt of the receive loop, from its readiness snapshot.
        let receiver = {
            let (io, rule, socket, mark) = (io.clone(), rule.clone(), socket.clone(), mark.clone());
            thread::spawn(move || {
                let mut op = Receive {
                    rule: &rule,
                    socket: &socket,
                };
                let _ = attempt_at(&io, io.snapshot(), Some(&mark), &mut op, Direction::Read);
            })
        };
        receiver.join().unwrap();
        switch.join().unwrap();
        driver.join().unwrap();

        let (queued, report_pending) = *socket.state.lock().unwrap();
        let skips = mark.skips(io.snapshot());
        assert!(
            queued == 0 || report_pending || !skips,
            "a datagram is left, no report is coming and the next receive skips"
        );
    });
}

#[test]
fn a_receive_racing_the_switch_to_edge_triggered_strands_no_datagram() {
    run(None);
}

/// The model catches a switch that changes the interest before it clears
/// the flag.
#[test]
#[should_panic(expected = "a datagram is left")]
fn mutant_edge_before_flag_strands_a_datagram() {
    run(Some(RuleMutant::EdgeBeforeFlag));
}
