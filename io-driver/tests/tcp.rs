//! TcpListener / TcpStream on the I/O driver, driven by the test-support
//! executor.

mod support;

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use futures::future::join_all;
use futures::{SinkExt, StreamExt};
use support::{block_on, tcp_pair};
use tempo_io::net::{TcpListener, TcpStream};
use tempo_io::Driver;
use tempo_test_support::fd::raise_fd_limit;
use tokio_util::codec::{Framed, LinesCodec};

fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 7 + seed) % 251) as u8).collect()
}

async fn echo_connection(stream: TcpStream) {
    let (reader, writer) = stream.into_split();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        writer.write_all(&buf[..n]).await.unwrap();
    }
    // Dropping the owned write half shuts down the write side.
}

/// 100 concurrent connections, 1 MiB each way, checked byte for byte.
#[test]
fn echo_100_connections_of_1_mib() {
    const CONNECTIONS: usize = 100;
    const BYTES: usize = 1024 * 1024;
    raise_fd_limit(4 * CONNECTIONS as libc::rlim_t + 100);
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = async {
            let mut connections = Vec::new();
            for _ in 0..CONNECTIONS {
                let (stream, _) = listener.accept().await.unwrap();
                connections.push(echo_connection(stream));
            }
            join_all(connections).await;
        };
        let clients = join_all((0..CONNECTIONS).map(|seed| async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let data = pattern(BYTES, seed);
            let (reader, writer) = stream.split();
            let send = async {
                writer.write_all(&data).await.unwrap();
                writer.shutdown().await.unwrap();
            };
            let receive = async {
                let mut received = Vec::with_capacity(BYTES);
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = reader.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break received;
                    }
                    received.extend_from_slice(&buf[..n]);
                }
            };
            let ((), received) = futures::join!(send, receive);
            assert_eq!(received.len(), BYTES);
            assert!(received == data, "connection {seed}: echoed bytes differ");
        }));
        futures::join!(server, clients);
    });
}

fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[test]
fn connection_refused_is_an_error_not_a_hang() {
    let mut driver = Driver::new().unwrap();
    let addr = closed_port();
    let err = block_on(&mut driver, TcpStream::connect(addr)).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn peer_reset_is_an_error_not_a_hang() {
    let mut driver = Driver::new().unwrap();
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    block_on(&mut driver, async {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (peer, _) = std_listener.accept().unwrap();
        // SO_LINGER with a zero timeout: close() sends RST.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: valid fd, and a pointer/length pair describing `linger`.
        let rc = unsafe {
            libc::setsockopt(
                peer.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0);
        drop(peer);
        let mut buf = [0u8; 16];
        let err = stream.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    });
}

#[test]
fn listener_port_in_use_is_addr_in_use() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let err = TcpListener::bind(a.local_addr().unwrap())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    });
}

#[test]
fn futures_io_copy_runs_on_tempo() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = async {
            let (stream, _) = listener.accept().await.unwrap();
            let (reader, mut writer) = stream.into_split();
            let copied = futures::io::copy(reader, &mut writer).await.unwrap();
            assert_eq!(copied, 100_000);
        };
        let client = async {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let data = pattern(100_000, 3);
            let (mut reader, writer) = stream.split();
            let send = async {
                writer.write_all(&data).await.unwrap();
                writer.shutdown().await.unwrap();
            };
            let mut echoed = Vec::new();
            // Fully qualified: futures' `AsyncReadExt::split` (by value) would
            // shadow `TcpStream::split` (by `&mut`) if the trait were imported.
            let receive = futures::AsyncReadExt::read_to_end(&mut reader, &mut echoed);
            let ((), n) = futures::join!(send, receive);
            assert_eq!(n.unwrap(), data.len());
            assert!(echoed == data);
        };
        futures::join!(server, client);
    });
}

#[test]
fn tokio_util_framed_lines_codec_runs_on_tempo() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = async {
            let (stream, _) = listener.accept().await.unwrap();
            let mut framed = Framed::new(stream, LinesCodec::new());
            while let Some(line) = framed.next().await {
                let line = line.unwrap();
                framed.send(line.to_uppercase()).await.unwrap();
            }
        };
        let client = async {
            let stream = TcpStream::connect(addr).await.unwrap();
            let mut framed = Framed::new(stream, LinesCodec::new());
            for word in ["hello", "tempo", "lines"] {
                framed.send(word).await.unwrap();
                let reply = framed.next().await.unwrap().unwrap();
                assert_eq!(reply, word.to_uppercase());
            }
            // Closing shuts down the write side: the server's stream ends.
            SinkExt::<&str>::close(&mut framed).await.unwrap();
        };
        futures::join!(server, client);
    });
}

#[test]
fn owned_halves_reunite_and_options() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, accepted) = futures::join!(TcpStream::connect(addr), listener.accept());
        let (a, b) = (client.unwrap(), accepted.unwrap().0);
        a.set_nodelay(true).unwrap();
        assert!(a.nodelay().unwrap());
        assert_eq!(a.peer_addr().unwrap(), addr);
        let (ra, wa) = a.into_split();
        let (rb, wb) = b.into_split();
        let (ra, wb) = match ra.reunite(wb) {
            Err(e) => (e.0, e.1),
            Ok(_) => panic!("halves of different streams must not reunite"),
        };
        let a = ra.reunite(wa).unwrap();
        let b = rb.reunite(wb).unwrap();
        a.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            got += b.read(&mut buf[got..]).await.unwrap();
        }
        assert_eq!(&buf, b"ping");
        assert_eq!(
            b.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    });
}

#[test]
fn moved_between_two_drivers_with_into_std_from_std() {
    let mut first = Driver::new().unwrap();
    let mut second = Driver::new().unwrap();
    let (stream, peer) = block_on(&mut first, async { tcp_pair().await });
    let std_stream = stream.into_std().unwrap();
    assert_eq!(first.registered(), 1); // the peer only
    block_on(&mut second, async {
        let stream = TcpStream::from_std(std_stream).unwrap();
        peer.write_all(b"moved").await.unwrap_or(());
        let mut buf = [0u8; 5];
        let mut got = 0;
        while got < 5 {
            got += stream.read(&mut buf[got..]).await.unwrap();
        }
        assert_eq!(&buf, b"moved");
    });
}
