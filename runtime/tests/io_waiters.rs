//! Any number of tasks may await one socket in the same direction, on both
//! schedulers: two receivers on one `Arc<UdpSocket>`, fifty acceptors on one
//! `Arc<TcpListener>`, two `readable()` on one `Arc<TcpStream>`. Each test
//! first makes every waiter `Pending` (a task counts itself, then awaits in
//! the same poll), then makes the socket ready once, and requires every
//! waiter to complete. A waiter that is never woken makes the test fail
//! through its timeout instead of hanging.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::net::{TcpListener, UdpSocket};
use tempo::task::JoinHandle;

mod support;
use support::on_each_flavor;

/// Generous bound on a test's wait: reached only when a waiter is lost.
const LOST_WAITER: Duration = Duration::from_secs(10);

/// Upper bound on the yields the main task makes while the waiters start.
const MAX_YIELDS: usize = 10_000;

/// Yields until `started` reaches `count`: every waiter task has then been
/// polled once, and so waits on its socket.
async fn until_started(started: &AtomicUsize, count: usize) {
    for _ in 0..MAX_YIELDS {
        if started.load(SeqCst) == count {
            return;
        }
        tempo::task::yield_now().await;
    }
    panic!(
        "only {} of {count} waiter tasks started",
        started.load(SeqCst)
    );
}

/// Awaits every handle, failing (not hanging) if one is never woken.
async fn join_all<T>(flavor: &str, what: &str, handles: Vec<JoinHandle<T>>) -> Vec<T> {
    let total = handles.len();
    let mut outputs = Vec::with_capacity(total);
    for (i, handle) in handles.into_iter().enumerate() {
        match tempo::time::timeout(LOST_WAITER, handle).await {
            Ok(output) => outputs.push(output.expect("waiter task panicked")),
            Err(_) => panic!("{flavor}: {what} {i} of {total} was never woken"),
        }
    }
    outputs
}

on_each_flavor! {
    #[test]
    fn two_tasks_recv_from_one_udp_socket_both_complete() {
        let (flavor, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            let addr = socket.local_addr().unwrap();
            let started = Arc::new(AtomicUsize::new(0));
            let receivers: Vec<_> = (0..2)
                .map(|_| {
                    let (socket, started) = (socket.clone(), started.clone());
                    tempo::spawn(async move {
                        let mut buf = [0u8; 64];
                        started.fetch_add(1, SeqCst);
                        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                        buf[..n].to_vec()
                    })
                })
                .collect();
            until_started(&started, 2).await;

            let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sender.send_to(b"one", addr).unwrap();
            sender.send_to(b"two", addr).unwrap();

            let mut got = join_all(flavor, "receiver", receivers).await;
            got.sort();
            assert_eq!(got, [b"one".to_vec(), b"two".to_vec()], "{flavor}");
        });
    }

    #[test]
    fn fifty_tasks_accept_on_one_listener_all_complete() {
        const ACCEPTORS: usize = 50;
        let (flavor, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await.unwrap());
            let addr = listener.local_addr().unwrap();
            let started = Arc::new(AtomicUsize::new(0));
            let acceptors: Vec<_> = (0..ACCEPTORS)
                .map(|_| {
                    let (listener, started) = (listener.clone(), started.clone());
                    tempo::spawn(async move {
                        started.fetch_add(1, SeqCst);
                        let (stream, _) = listener.accept().await.unwrap();
                        stream.peer_addr().unwrap()
                    })
                })
                .collect();
            until_started(&started, ACCEPTORS).await;

            // Blocking connects complete through the listen backlog; the
            // clients stay open until every connection is accepted.
            let clients: Vec<_> = (0..ACCEPTORS)
                .map(|_| std::net::TcpStream::connect(addr).unwrap())
                .collect();

            let mut peers = join_all(flavor, "acceptor", acceptors).await;
            let mut expected: Vec<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
            peers.sort();
            expected.sort();
            assert_eq!(peers, expected, "{flavor}: each connection accepted once");
        });
    }

    #[test]
    fn two_tasks_readable_on_one_tcp_stream_both_complete() {
        let (flavor, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            let stream = Arc::new(stream);
            let started = Arc::new(AtomicUsize::new(0));
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let (stream, started) = (stream.clone(), started.clone());
                    tempo::spawn(async move {
                        started.fetch_add(1, SeqCst);
                        stream.readable().await.unwrap();
                    })
                })
                .collect();
            until_started(&started, 2).await;

            peer.write_all(b"x").unwrap();
            join_all(flavor, "readable() waiter", waiters).await;
            let mut buf = [0u8; 8];
            assert_eq!(stream.read(&mut buf).await.unwrap(), 1, "{flavor}");
        });
    }

    #[test]
    fn a_receiver_aborted_while_waiting_leaves_the_other_working() {
        // A receive future dropped while registered (its task aborted) leaves
        // nothing behind: the remaining receiver still gets its datagram.
        let (flavor, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            let addr = socket.local_addr().unwrap();
            let started = Arc::new(AtomicUsize::new(0));
            let spawn_receiver = || {
                let (socket, started) = (socket.clone(), started.clone());
                tempo::spawn(async move {
                    let mut buf = [0u8; 64];
                    started.fetch_add(1, SeqCst);
                    let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                })
            };
            let kept = spawn_receiver();
            until_started(&started, 1).await;
            let aborted = spawn_receiver();
            until_started(&started, 2).await;
            aborted.abort();
            assert!(aborted.await.unwrap_err().is_cancelled(), "{flavor}");

            let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sender.send_to(b"kept", addr).unwrap();
            let got = join_all(flavor, "receiver", vec![kept]).await;
            assert_eq!(got, [b"kept".to_vec()], "{flavor}");
        });
    }
}
