//! `tempo::net::UdpRingReceiver` on both schedulers: local tasks receive
//! their streams, and a runtime with nothing else to do wakes for an
//! arrival on the ring.

use std::time::Duration;

use tempo::net::{UdpRingReceiver, UdpSocket};

mod support;
use support::*;

on_each_flavor! {
    /// Twenty receivers, each in a `spawn_local` task, five datagrams each
    /// from one sender task: every datagram reaches its receiver, in
    /// order.
    #[test]
    fn local_tasks_receive_a_stream_each() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let mut addrs = Vec::new();
            let mut tasks = Vec::new();
            for stream in 0..20u8 {
                let rx = UdpRingReceiver::bind("127.0.0.1:0", 64).await.unwrap();
                addrs.push(rx.local_addr().unwrap());
                tasks.push(tempo::spawn_local(async move {
                    for seq in 0..5u8 {
                        let got = rx.recv_from_with(|d, _| d.to_vec()).await.unwrap();
                        assert_eq!(got, [stream, seq], "stream {stream}");
                    }
                }));
            }
            let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            for seq in 0..5u8 {
                for (stream, addr) in addrs.iter().enumerate() {
                    sender.send_to(&[stream as u8, seq], addr).await.unwrap();
                }
                tempo::task::yield_now().await;
            }
            for task in tasks {
                task.await.unwrap();
            }
        });
    }

    /// Nothing to do but wait for a datagram that another thread sends
    /// later: the ring's arrival wakes the runtime (the timeout only turns
    /// a lost wake-up into a failure instead of a hang).
    #[test]
    fn an_idle_runtime_wakes_for_a_ring_arrival() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let rx = UdpRingReceiver::bind("127.0.0.1:0", 64).await.unwrap();
            let to = rx.local_addr().unwrap();
            let sender = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                socket.send_to(b"late", to).unwrap();
            });
            let got = tempo::time::timeout(
                Duration::from_secs(30),
                rx.recv_from_with(|d, _| d.to_vec()),
            )
            .await
            .expect("the arrival did not wake the runtime")
            .unwrap();
            assert_eq!(got, b"late");
            sender.join().unwrap();
        });
    }
}
