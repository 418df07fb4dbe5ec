//! Datagram receives through a runtime, on both schedulers: each
//! scheduler's receive rule strands nothing when a task takes one datagram
//! per turn, and the batch forms (`recv_many` / `send_many`) round-trip.

use std::future::poll_fn;
use std::net::UdpSocket as StdUdpSocket;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use tempo::net::{RecvBatch, SendBatch, UdpSocket};
use tempo_test_support::net::sent_and_queued;

mod support;
use support::*;

/// A permit per turn, handed out by the host loop: lets a task do exactly
/// one thing per turn without a timer.
#[derive(Default)]
struct TurnGate {
    state: Mutex<(u64, Option<Waker>)>,
}

impl TurnGate {
    fn open_once(&self) {
        let mut state = self.state.lock().unwrap();
        state.0 += 1;
        if let Some(waker) = state.1.take() {
            waker.wake();
        }
    }

    async fn pass(&self) {
        poll_fn(|cx| {
            let mut state = self.state.lock().unwrap();
            if state.0 > 0 {
                state.0 -= 1;
                Poll::Ready(())
            } else {
                state.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

on_each_flavor! {
    /// Two datagrams queued before the task starts, one receive per turn,
    /// no new traffic: both are received, in order, by the second turn
    /// (under throttling the socket is level-triggered: the turn-1 look
    /// reports the datagram left, though nobody waits on the socket then,
    /// and the second turn's poll reports it again), and the third turn
    /// finds none.
    #[test]
    fn one_recv_per_turn_strands_no_queued_datagram() {
        let rt = builder().enable_all().build().unwrap();
        let std_socket = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = std_socket.local_addr().unwrap();
        let socket = {
            let _enter = rt.enter();
            UdpSocket::from_std(std_socket).unwrap()
        };
        let out = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        // Both queued before the first turn, whatever the loopback's
        // softirq does.
        sent_and_queued(&socket, || out.send_to(b"one", addr).unwrap());
        sent_and_queued(&socket, || out.send_to(b"two", addr).unwrap());

        let gate = Arc::new(TurnGate::default());
        let turn_no = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (g, t, l) = (gate.clone(), turn_no.clone(), log.clone());
        drop(rt.spawn(async move {
            let mut buf = [0u8; 64];
            loop {
                g.pass().await;
                let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                l.lock().unwrap().push((buf[..n].to_vec(), t.load(SeqCst)));
            }
        }));
        for turn in 1..=3 {
            turn_no.store(turn, SeqCst);
            gate.open_once();
            rt.turn(Duration::from_millis(20));
        }
        let log = log.lock().unwrap().clone();
        assert_eq!(
            log,
            vec![(b"one".to_vec(), 1), (b"two".to_vec(), 2)],
            "{}",
            FLAVOR.name()
        );
    }

    #[test]
    fn send_many_and_recv_many_round_trip() {
        let rt = builder().enable_all().build().unwrap();
        let got = rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await?;
            let b = UdpSocket::bind("127.0.0.1:0").await?;
            let mut out = SendBatch::with_capacity(5, 64);
            for i in 0..5u8 {
                out.push(&[b'0' + i], b.local_addr()?)?;
            }
            while !out.is_empty() {
                a.send_many(&mut out).await?;
            }
            let mut batch = RecvBatch::new(8, 16)?;
            let mut got = Vec::new();
            while got.len() < 5 {
                let n = b.recv_many(&mut batch).await?;
                for i in 0..n {
                    assert_eq!(batch.source(i), Some(a.local_addr()?));
                    got.extend_from_slice(batch.payload(i));
                }
            }
            Ok::<_, std::io::Error>(got)
        });
        assert_eq!(got.unwrap(), b"01234", "{}", FLAVOR.name());
    }
}
