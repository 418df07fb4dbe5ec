//! TcpSocket: options before bind, listen(backlog), connect; and the
//! backlog TcpListener::bind uses.

mod support;

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use support::block_on;
use tempo_io::net::{TcpListener, TcpSocket};
use tempo_io::Driver;
use tempo_test_support::fd::raise_fd_limit;

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn options_read_back_what_was_set() {
    let socket = TcpSocket::new_v4().unwrap();
    assert!(!socket.reuseaddr().unwrap());
    socket.set_reuseaddr(true).unwrap();
    assert!(socket.reuseaddr().unwrap());
    socket.set_reuseport(true).unwrap();
    assert!(socket.reuseport().unwrap());
    socket.set_keepalive(true).unwrap();
    assert!(socket.keepalive().unwrap());
    socket.set_nodelay(true).unwrap();
    assert!(socket.nodelay().unwrap());
    socket.set_send_buffer_size(100_000).unwrap();
    assert!(socket.send_buffer_size().unwrap() >= 100_000);
    socket.set_recv_buffer_size(100_000).unwrap();
    assert!(socket.recv_buffer_size().unwrap() >= 100_000);
    assert_eq!(socket.linger().unwrap(), None);
    socket.set_linger(Some(Duration::from_secs(3))).unwrap();
    assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
    socket.set_linger(None).unwrap();
    assert_eq!(socket.linger().unwrap(), None);
    assert!(socket.take_error().unwrap().is_none());
}

#[test]
fn listen_then_connect_then_exchange_bytes_v4_and_v6() {
    let mut driver = Driver::new().unwrap();
    let addrs = ["127.0.0.1:0", "[::1]:0"];
    for addr in addrs {
        let addr: SocketAddr = addr.parse().unwrap();
        let made = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4(),
            SocketAddr::V6(_) => TcpSocket::new_v6(),
        };
        let server = made.unwrap();
        if server.bind(addr).is_err() {
            assert!(addr.is_ipv6(), "binding {addr} failed");
            continue; // no IPv6 on this machine
        }
        block_on(&mut driver, async {
            let bound = server.local_addr().unwrap();
            assert_ne!(bound.port(), 0);
            let listener = server.listen(16).unwrap();
            assert_eq!(listener.local_addr().unwrap(), bound);
            let client = match bound {
                SocketAddr::V4(_) => TcpSocket::new_v4(),
                SocketAddr::V6(_) => TcpSocket::new_v6(),
            }
            .unwrap();
            client.set_nodelay(true).unwrap();
            let (connected, accepted) = futures::join!(client.connect(bound), listener.accept());
            let stream = connected.unwrap();
            let (peer, from) = accepted.unwrap();
            assert!(stream.nodelay().unwrap(), "the stream keeps the option");
            assert_eq!(from, stream.local_addr().unwrap());
            stream.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            let mut got = 0;
            while got < 4 {
                got += peer.read(&mut buf[got..]).await.unwrap();
            }
            assert_eq!(&buf, b"ping");
        });
    }
}

#[test]
fn connect_to_a_closed_port_is_refused() {
    let mut driver = Driver::new().unwrap();
    // A port that was just free: bound, then closed.
    let port = std::net::TcpListener::bind(localhost())
        .unwrap()
        .local_addr()
        .unwrap();
    let result = block_on(&mut driver, TcpSocket::new_v4().unwrap().connect(port));
    assert_eq!(result.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn bind_to_a_taken_port_fails_unless_both_reuse_the_port() {
    let first = TcpSocket::new_v4().unwrap();
    first.bind(localhost()).unwrap();
    let taken = first.local_addr().unwrap();
    let second = TcpSocket::new_v4().unwrap();
    assert_eq!(
        second.bind(taken).unwrap_err().kind(),
        io::ErrorKind::AddrInUse
    );

    let a = TcpSocket::new_v4().unwrap();
    a.set_reuseport(true).unwrap();
    a.bind(localhost()).unwrap();
    let b = TcpSocket::new_v4().unwrap();
    b.set_reuseport(true).unwrap();
    b.bind(a.local_addr().unwrap()).unwrap();
}

/// Connections the kernel queues for a listener nobody accepts on: the
/// backlog. With std's and mio's 128, the 130th connect of a burst gets no
/// SYN-ACK and waits for retries; with `bind`'s 1,024 all 200 complete.
/// Each connect is bounded, so the old backlog fails instead of hanging.
fn burst_completes_without_accepting(listener: &TcpListener, clients: usize) -> io::Result<()> {
    let addr = listener.local_addr().unwrap();
    let mut streams = Vec::with_capacity(clients);
    for _ in 0..clients {
        streams.push(std::net::TcpStream::connect_timeout(
            &addr,
            Duration::from_secs(5),
        )?);
    }
    Ok(())
}

#[test]
fn listener_bind_queues_a_burst_of_200_connections() {
    raise_fd_limit(1024);
    let mut driver = Driver::new().unwrap();
    let listener = block_on(&mut driver, TcpListener::bind("127.0.0.1:0")).unwrap();
    burst_completes_without_accepting(&listener, 200)
        .expect("a connect of the burst did not complete: backlog too small");
}

#[test]
fn listen_backlog_is_the_callers() {
    raise_fd_limit(1024);
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(localhost()).unwrap();
    let listener = socket.listen(512).unwrap();
    burst_completes_without_accepting(&listener, 200).unwrap();
    // The listener accepts them all, in order of arrival.
    let accepted = block_on(&mut driver, async {
        let mut n = 0;
        while n < 200 {
            listener.accept().await.unwrap();
            n += 1;
        }
        n
    });
    assert_eq!(accepted, 200);
}

#[test]
fn from_std_stream_keeps_the_socket() {
    let listener = std::net::TcpListener::bind(localhost()).unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let local = client.local_addr().unwrap();
    let socket = TcpSocket::from_std_stream(client);
    assert_eq!(socket.local_addr().unwrap(), local);
    socket.set_nodelay(true).unwrap();
    assert!(socket.nodelay().unwrap());
}
