//! The throttling scheduler's I/O: a datagram that arrives after a tick's
//! I/O poll waits for the next tick, and a second queued datagram is
//! received in the same tick (the backlog drain: no added tick of latency).
//!
//! Throttling scheduler only: a tick boundary for I/O and the
//! level-triggered receive rule exist only there (the basic scheduler polls
//! I/O whenever it runs out of work and drains until `WouldBlock`); I/O on
//! both schedulers is tested in
//! `net.rs`, `datagram.rs` and `io_waiters.rs`.
//!
//! Timing is observed through the paused clock, `Turn` reports and counters,
//! never asserted on the real clock. The helpers these files share are in
//! `support/throttle.rs`.

use std::net::UdpSocket as StdUdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use tempo::runtime::Builder;
use tempo_test_support::net::sent_and_queued;

mod support;
use support::throttle::*;

#[test]
fn datagram_arriving_after_the_io_poll_waits_for_the_next_tick() {
    // Real clock (the I/O driver needs real time), host-driven turns. The
    // first tick waits for another thread's send: a period of 200 ms, not
    // `T`, so that a loaded machine cannot make it overrun.
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(Duration::from_millis(200))
        .build()
        .unwrap();
    let (socket, addr) = tempo_udp(&rt);
    // Turn 0, before any task runs: nothing to dispatch (a datagram
    // socket of a throttled runtime is level-triggered for reading and
    // starts writable, with no first writable event), so it returns at
    // once.
    rt.turn(Duration::ZERO);
    let ticks_before = rt.metrics().ticks;
    let turn_no = Arc::new(AtomicU64::new(0));
    let received_in = Arc::new(AtomicU64::new(0));

    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (sent_tx, sent_rx) = mpsc::channel::<()>();
    // The socket lives (in its task) until the datagram is received, which
    // is after the sender's wait.
    let receiver_fd = socket.as_raw_fd();
    let sender = thread::spawn(move || {
        let out = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        go_rx.recv().unwrap();
        sent_and_queued(&receiver_fd, || out.send_to(b"mid-sleep", addr).unwrap());
        sent_tx.send(()).unwrap();
    });

    let (t, r) = (turn_no.clone(), received_in.clone());
    drop(rt.spawn(async move {
        let mut buf = [0u8; 64];
        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"mid-sleep");
        r.store(t.load(SeqCst), SeqCst);
    }));
    // Runs after the receiver in turn 1, i.e. after that tick polled the
    // driver: the datagram is in the socket before the tick's sleep starts.
    drop(rt.spawn(async move {
        go_tx.send(()).unwrap();
        sent_rx.recv().unwrap();
    }));

    turn_no.store(1, SeqCst);
    let first = rt.turn(Duration::MAX);
    assert_eq!(first.tasks_polled(), 2);
    assert_eq!(first.io_events(), 0);
    assert!(first.parked(), "the tick slept until the next grid point");
    assert!(!first.overrun());
    assert_eq!(received_in.load(SeqCst), 0, "handled before the next tick");

    turn_no.store(2, SeqCst);
    let second = rt.turn(Duration::MAX);
    assert!(second.io_events() >= 1);
    assert_eq!(received_in.load(SeqCst), 2, "handled at the next tick");
    assert_eq!(rt.metrics().ticks - ticks_before, 2);
    assert_eq!(rt.handle().unpark_count(), 0);
    sender.join().unwrap();
}

#[test]
fn second_queued_datagram_is_received_in_the_same_tick() {
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(T)
        .build()
        .unwrap();
    let (socket, addr) = tempo_udp(&rt);
    let out = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    // Both queued before the tick, whatever the loopback's softirq does.
    sent_and_queued(&socket, || out.send_to(b"one", addr).unwrap());
    sent_and_queued(&socket, || out.send_to(b"two", addr).unwrap());

    let turn_no = Arc::new(AtomicU64::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (t, l) = (turn_no.clone(), log.clone());
    drop(rt.spawn(async move {
        let mut buf = [0u8; 64];
        for _ in 0..2 {
            let (n, _) = socket.recv_from(&mut buf).await.unwrap();
            l.lock().unwrap().push((buf[..n].to_vec(), t.load(SeqCst)));
        }
    }));
    for turn in 1..=3 {
        turn_no.store(turn, SeqCst);
        rt.turn(T);
    }
    let log = log.lock().unwrap().clone();
    // The first receive takes both (one recvmmsg), the second returns the
    // held one: both in the first tick, none stranded.
    assert_eq!(log, vec![(b"one".to_vec(), 1), (b"two".to_vec(), 1)]);
}
