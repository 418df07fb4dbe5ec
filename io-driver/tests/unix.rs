//! Unix stream and datagram sockets on the I/O driver.

mod support;

use std::io;
use std::path::PathBuf;

use support::{block_on, TempDir};
use tempo_io::net::{UnixDatagram, UnixListener, UnixStream};
use tempo_io::Driver;
use tempo_park::IoDriver;

/// A temporary directory named after `name` and the paths of a server
/// and a client socket in it.
fn server_and_client_paths(name: &str) -> (TempDir, PathBuf, PathBuf) {
    let dir = TempDir::new(name);
    let server = dir.0.join("server.sock");
    let client = dir.0.join("client.sock");
    (dir, server, client)
}

#[test]
fn stream_echo_through_a_listener() {
    let dir = TempDir::new("stream");
    let path = dir.0.join("echo.sock");
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let listener = UnixListener::bind(&path).unwrap();
        assert_eq!(
            UnixListener::bind(&path).unwrap_err().kind(),
            io::ErrorKind::AddrInUse
        );
        let server = async {
            let (stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                stream.write_all(&buf[..n]).await.unwrap();
            }
        };
        let client = async {
            let stream = UnixStream::connect(&path).await.unwrap();
            let data: Vec<u8> = (0..200_000).map(|i| (i % 253) as u8).collect();
            let send = async {
                stream.write_all(&data).await.unwrap();
                stream.shutdown().await.unwrap();
            };
            let receive = async {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let n = stream.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break got;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
            };
            let ((), got) = futures::join!(send, receive);
            assert!(got == data);
        };
        futures::join!(server, client);
    });
}

#[test]
fn stream_pair_and_std_round_trip() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = UnixStream::pair().unwrap();
        a.write_all(b"hi").await.unwrap();
        let mut buf = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            got += b.read(&mut buf[got..]).await.unwrap();
        }
        assert_eq!(&buf, b"hi");
        let std_b = b.into_std().unwrap();
        let b = UnixStream::from_std(std_b).unwrap();
        assert_eq!(
            b.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    });
}

#[test]
fn datagram_echo_with_paths_and_pair() {
    let (_dir, server_path, client_path) = server_and_client_paths("dgram");
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let server = UnixDatagram::bind(&server_path).unwrap();
        let client = UnixDatagram::bind(&client_path).unwrap();
        let echo = async {
            let mut buf = [0u8; 64];
            for _ in 0..5 {
                let (n, from) = server.recv_from(&mut buf).await.unwrap();
                let from = from.as_pathname().unwrap().to_path_buf();
                server.send_to(&buf[..n], from).await.unwrap();
            }
        };
        let talk = async {
            let mut buf = [0u8; 64];
            for i in 0..5u8 {
                client.send_to(&[i; 3], &server_path).await.unwrap();
                let n = client.recv(&mut buf).await.unwrap();
                assert_eq!(&buf[..n], &[i; 3]);
            }
        };
        futures::join!(echo, talk);

        let (a, b) = UnixDatagram::pair().unwrap();
        a.send(b"pair").await.unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(b.recv(&mut buf).await.unwrap(), 4);
        assert_eq!(
            b.try_recv(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    });
}

/// The closure receives of a Unix datagram socket: the datagram and its
/// source path, then one without the source.
#[test]
fn datagram_closure_receives_see_the_datagram_and_its_source() {
    let (_dir, server_path, client_path) = server_and_client_paths("dgram-with");
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let server = UnixDatagram::bind(&server_path).unwrap();
        let client = UnixDatagram::bind(&client_path).unwrap();
        client.send_to(b"one", &server_path).await.unwrap();
        client.send_to(b"two", &server_path).await.unwrap();
        let (first, from) = server
            .recv_from_with(|d, from| (d.to_vec(), from))
            .await
            .unwrap();
        assert_eq!(first, b"one");
        assert_eq!(from.as_pathname(), Some(client_path.as_path()));
        let second = server.recv_with(|d| d.to_vec()).await.unwrap();
        assert_eq!(second, b"two");
    });
}

#[test]
fn a_waiting_send_on_a_level_triggered_socket_arms_write_interest_while_it_waits() {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};
    use std::time::Duration;
    use tempo_park::Park;
    use tempo_test_support::net::epoll_entry;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, SeqCst);
        }
    }

    let mut driver = Driver::new().unwrap();
    driver.set_throttled(true);
    let (a, b) = {
        let _enter = driver.handle().enter();
        UnixDatagram::pair().unwrap()
    };
    let write_interest = |driver: &Driver| {
        epoll_entry(driver.as_raw_fd(), a.as_raw_fd())
            .unwrap()
            .write
    };
    assert!(!write_interest(&driver));
    // Bounded: the peer's queue holds at most a few hundred datagrams.
    let mut queued = 0;
    while a.try_send(b"fill").is_ok() {
        queued += 1;
        assert!(queued < 100_000, "the peer's queue never filled");
    }
    let woken = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    assert!(a.poll_send(&mut cx, b"last").is_pending());
    assert!(write_interest(&driver), "armed while the send waits");

    // The peer reads everything (a single read may leave the sender
    // short of the space the kernel wants before it says writable).
    let mut buf = [0u8; 8];
    for _ in 0..queued {
        assert_eq!(b.try_recv(&mut buf).unwrap(), 4);
    }
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(woken.0.load(SeqCst), "woken by the space the peer made");
    assert!(a.poll_send(&mut cx, b"last").is_ready());
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(!write_interest(&driver), "no writer waits: disarmed");
}
