//! `tempo_io::unix::AsyncFd` on a bare driver: the registration's life
//! (dropping deregisters without closing, `into_inner` gives the object
//! back), many waiters woken by one edge, and a restricted interest.

mod support;

use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use support::block_on;
use tempo_io::unix::AsyncFd;
use tempo_io::{Driver, Interest};

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

#[test]
fn drop_deregisters_without_closing() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, mut b) = pair();
        // A `BorrowedFd` owns nothing: dropping the AsyncFd must leave the
        // socket open and unregistered, so it can be registered again
        // (epoll refuses a second registration of one fd with EEXIST).
        for _ in 0..3 {
            let fd = AsyncFd::new(a.as_fd())?;
            fd.writable().await?.retain_ready();
            drop(fd);
        }
        b.write_all(b"open")?;
        let fd = AsyncFd::new(a.as_fd())?;
        let mut buf = [0u8; 4];
        let mut guard = fd.readable().await?;
        let n = guard.try_io(|_| (&a).read(&mut buf)).unwrap()?;
        assert_eq!(&buf[..n], b"open");
        Ok::<_, io::Error>(())
    })
    .unwrap();
}

#[test]
fn into_inner_deregisters_and_returns_the_object_open() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, mut b) = pair();
        let a = AsyncFd::new(a)?.into_inner();
        b.write_all(b"x")?;
        let mut byte = [0u8; 1];
        (&a).read_exact(&mut byte)?;
        // Unregistered: it can be registered again.
        let a = AsyncFd::new(a)?;
        a.writable().await?.retain_ready();
        Ok::<_, io::Error>(())
    })
    .unwrap();
}

#[test]
fn one_edge_wakes_every_waiting_task() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, mut b) = pair();
        let a = AsyncFd::new(a)?;
        let waits = futures::future::join_all((0..5).map(|_| async {
            let guard = a.readable().await?;
            Ok::<_, io::Error>(guard.ready().is_readable())
        }));
        let writer = async {
            b.write_all(b"x")?;
            Ok::<_, io::Error>(())
        };
        let (results, written) = futures::join!(waits, writer);
        written?;
        for result in results {
            assert!(result?);
        }
        Ok::<_, io::Error>(())
    })
    .unwrap();
}

#[test]
fn waits_outside_the_registered_interest_fail() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, _b) = pair();
        let a = AsyncFd::with_interest(a, Interest::READABLE)?;
        let e = a.writable().await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        // A combined wait is restricted to what is registered: it reports
        // no writability although the socket has room.
        let (mut c, d) = pair();
        let d = AsyncFd::with_interest(d, Interest::READABLE)?;
        c.write_all(b"x")?;
        let guard = d.ready(Interest::READABLE | Interest::WRITABLE).await?;
        assert!(guard.ready().is_readable() && !guard.ready().is_writable());
        Ok::<_, io::Error>(())
    })
    .unwrap();
}

#[test]
fn outside_a_driver_is_the_sockets_error() {
    let (a, _b) = pair();
    let e = AsyncFd::new(a).unwrap_err();
    let (s, _t) = pair();
    let socket_error = tempo_io::net::UnixStream::from_std(s).unwrap_err();
    assert_eq!(e.to_string(), socket_error.to_string());
    assert!(e.to_string().contains("no Tempo I/O driver"), "{e}");
}
