//! `tempo::net` through a runtime: UDP and TCP echo on the basic and the
//! throttling scheduler, sockets created inside `block_on` and under
//! `Handle::enter` on another thread, the error outside a runtime, and
//! 1,000 UDP streams on a throttled runtime with no datagram lost.

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use tempo::net::{TcpListener, TcpStream, UdpSocket};
use tempo::runtime::Builder;
use tempo::time;

mod support;
use support::on_each_flavor;

const ROUNDS: usize = 50;

/// Echoes `ROUNDS` datagrams back to their sender.
async fn udp_echo_server(socket: UdpSocket) {
    let mut buf = [0u8; 1500];
    for _ in 0..ROUNDS {
        let (n, from) = socket.recv_from(&mut buf).await.unwrap();
        socket.send_to(&buf[..n], from).await.unwrap();
    }
}

/// Sends `ROUNDS` numbered datagrams to `server` one at a time and checks
/// each echo.
async fn udp_echo_client(server: SocketAddr) {
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client.connect(server).await.unwrap();
    let mut buf = [0u8; 1500];
    for i in 0..ROUNDS {
        let msg = format!("datagram {i}");
        client.send(msg.as_bytes()).await.unwrap();
        let n = client.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], msg.as_bytes());
    }
}

/// Echoes one connection until EOF.
async fn tcp_echo_server(listener: TcpListener) {
    let (stream, _) = listener.accept().await.unwrap();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        stream.write_all(&buf[..n]).await.unwrap();
    }
}

/// Writes `ROUNDS` lines and reads each echo back in full.
async fn tcp_echo_client(server: SocketAddr) {
    let stream = TcpStream::connect(server).await.unwrap();
    let mut buf = vec![0u8; 4096];
    for i in 0..ROUNDS {
        let msg = format!("line {i} {}\n", "x".repeat(i * 7));
        stream.write_all(msg.as_bytes()).await.unwrap();
        let mut got = 0;
        while got < msg.len() {
            let n = stream.read(&mut buf[got..msg.len()]).await.unwrap();
            assert!(n > 0, "early EOF");
            got += n;
        }
        assert_eq!(&buf[..got], msg.as_bytes());
    }
    stream.shutdown().await.unwrap();
}

/// Bounds a test's wait for the network (a hang fails instead of blocking
/// the test run).
const DEADLINE: Duration = Duration::from_secs(30);

on_each_flavor! {
    #[test]
    fn udp_echo_with_sockets_created_in_block_on() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let addr = server.local_addr().unwrap();
            let server = tempo::spawn(udp_echo_server(server));
            time::timeout(DEADLINE, udp_echo_client(addr))
                .await
                .unwrap_or_else(|_| panic!("{name}: UDP echo timed out"));
            server.await.unwrap();
        });
    }

    #[test]
    fn tcp_echo_with_sockets_created_in_block_on() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tempo::spawn(tcp_echo_server(listener));
            time::timeout(DEADLINE, tcp_echo_client(addr))
                .await
                .unwrap_or_else(|_| panic!("{name}: TCP echo timed out"));
            server.await.unwrap();
        });
    }

    #[test]
    fn sockets_created_under_handle_enter_on_another_thread() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let handle = rt.handle().clone();
        // A media framework's thread creates the element's sockets, then
        // hands them to tasks.
        let (udp, listener) = thread::spawn(move || {
            let _enter = handle.enter();
            let udp =
                UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
            let listener =
                TcpListener::from_std(std::net::TcpListener::bind("127.0.0.1:0").unwrap()).unwrap();
            (udp, listener)
        })
        .join()
        .unwrap();
        let udp_addr = udp.local_addr().unwrap();
        let tcp_addr = listener.local_addr().unwrap();
        let udp_server = rt.handle().spawn(udp_echo_server(udp));
        let tcp_server = rt.handle().spawn(tcp_echo_server(listener));
        rt.block_on(async {
            time::timeout(DEADLINE, async {
                udp_echo_client(udp_addr).await;
                tcp_echo_client(tcp_addr).await;
            })
            .await
            .unwrap_or_else(|_| panic!("{name}: echo timed out"));
            udp_server.await.unwrap();
            tcp_server.await.unwrap();
        });
    }
}

#[test]
fn socket_outside_a_runtime_is_a_clear_error() {
    let std = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let error = UdpSocket::from_std(std).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("enable_io"), "unclear error: {message}");

    // Inside a runtime built without I/O: the same error.
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    let error = rt
        .block_on(UdpSocket::bind("127.0.0.1:0"))
        .expect_err("a socket without an I/O driver");
    assert!(
        error.to_string().contains("enable_io"),
        "unclear error: {error}"
    );
    let error = rt
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect_err("a listener without an I/O driver");
    assert!(
        error.to_string().contains("enable_io"),
        "unclear error: {error}"
    );
}

#[test]
fn thousand_udp_streams_on_a_throttled_runtime_lose_nothing() {
    const STREAMS: usize = 1_000;
    const PER_STREAM: u32 = 10;
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(Duration::from_millis(5))
        .build()
        .unwrap();
    let (addrs, receivers) = rt.block_on(async {
        let mut addrs = Vec::with_capacity(STREAMS);
        let mut receivers = Vec::with_capacity(STREAMS);
        for _ in 0..STREAMS {
            let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            addrs.push(socket.local_addr().unwrap());
            receivers.push(tempo::spawn(async move {
                let mut buf = [0u8; 64];
                for expected in 0..PER_STREAM {
                    let n = socket.recv(&mut buf).await.unwrap();
                    assert_eq!(n, 4);
                    let seq = u32::from_be_bytes(buf[..4].try_into().unwrap());
                    assert_eq!(seq, expected, "out of order or lost");
                }
            }));
        }
        (addrs, receivers)
    });
    // One sender thread, one datagram per stream per round (each socket's
    // receive buffer holds a round's worth many times over).
    let sender = thread::spawn(move || {
        let out = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for seq in 0..PER_STREAM {
            for addr in &addrs {
                out.send_to(&seq.to_be_bytes(), addr).unwrap();
            }
        }
    });
    rt.block_on(async {
        time::timeout(DEADLINE, async {
            for receiver in receivers {
                receiver.await.unwrap();
            }
        })
        .await
        .expect("datagrams lost or stranded: receivers did not finish");
    });
    sender.join().unwrap();
    let metrics = rt.metrics();
    eprintln!(
        "1000 streams x 10 datagrams at T = 5 ms: {} ticks, {} overruns, {} I/O events, {} unparks",
        metrics.ticks, metrics.overruns, metrics.io_events, metrics.unparks
    );
    assert!(metrics.io_events >= STREAMS as u64);
}
