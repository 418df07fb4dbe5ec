//! A waker that panics while the driver wakes a batch (a foreign waker: a
//! user's own `Wake` impl here) must not stop the other wakers of that
//! batch: each path that wakes a batch (event dispatch, driver shutdown,
//! dropping a socket) wakes every waker, then re-raises the first panic.
//!
//! In each test the panicking waker comes *first* in its batch (socket A
//! is registered first and becomes ready first; within a socket the reader
//! is taken before the writer), so a batch that stopped at the panic would
//! leave the other waker unwoken.

mod support;

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::task::{Context, Poll};
use std::time::Duration;

use support::{counting, panicking, PANIC_MESSAGE};
use tempo_io::net::{UdpSocket, UnixStream};
use tempo_io::Driver;
use tempo_park::Park;
use tempo_test_support::net::sent_and_queued;

/// Asserts that `result` is the re-raised panic of a [`panicking`] waker.
fn assert_reraised<T>(result: std::thread::Result<T>) {
    let payload = match result {
        Ok(_) => panic!("the waker's panic was not re-raised"),
        Err(payload) => payload,
    };
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    assert_eq!(message, Some(PANIC_MESSAGE));
}

fn udp_socket() -> UdpSocket {
    UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap()
}

#[test]
fn dispatch_wakes_the_whole_batch_then_reraises() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let a = udp_socket();
    let b = udp_socket();
    // Take the registrations' initial writable events out of the way.
    driver.park_timeout(Duration::ZERO).unwrap();

    // Socket A: a foreign waker through `poll_*`. Socket B: a task's
    // async receive.
    let panicking = panicking();
    let mut buf_a = [0u8; 16];
    assert!(a
        .poll_recv_from(&mut Context::from_waker(&panicking), &mut buf_a)
        .is_pending());
    let (b_woken, b_waker) = counting();
    let mut b_cx = Context::from_waker(&b_waker);
    let mut buf_b = [0u8; 16];
    let mut recv_b = Box::pin(b.recv_from(&mut buf_b));
    assert!(recv_b.as_mut().poll(&mut b_cx).is_pending());

    // One readiness batch delivers both (both are queued before the park;
    // A's event comes first).
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sent_and_queued(&a, || {
        sender.send_to(b"to a", a.local_addr().unwrap()).unwrap()
    });
    sent_and_queued(&b, || {
        sender.send_to(b"to b", b.local_addr().unwrap()).unwrap()
    });
    let turn = panic::catch_unwind(AssertUnwindSafe(|| {
        driver.park_timeout(Duration::from_secs(10))
    }));
    assert_reraised(turn);
    assert_eq!(b_woken.0.load(SeqCst), 1, "B's task was not woken");
    match recv_b.as_mut().poll(&mut b_cx) {
        Poll::Ready(Ok((n, _))) => assert_eq!(n, 4),
        other => panic!("B should have its datagram, got {other:?}"),
    }

    // The driver goes on working after the re-raised panic.
    let (_, quiet) = counting();
    match a.poll_recv_from(&mut Context::from_waker(&quiet), &mut buf_a) {
        Poll::Ready(Ok((n, _))) => assert_eq!(&buf_a[..n], b"to a"),
        other => panic!("A should have its datagram, got {other:?}"),
    }
    driver.park_timeout(Duration::ZERO).unwrap();
}

#[test]
fn driver_shutdown_wakes_every_waiter_then_reraises() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let a = udp_socket();
    let b = udp_socket();

    let panicking = panicking();
    let mut buf_a = [0u8; 16];
    assert!(a
        .poll_recv_from(&mut Context::from_waker(&panicking), &mut buf_a)
        .is_pending());
    let (b_woken, b_waker) = counting();
    let mut b_cx = Context::from_waker(&b_waker);
    let mut buf_b = [0u8; 16];
    let mut recv_b = Box::pin(b.recv_from(&mut buf_b));
    assert!(recv_b.as_mut().poll(&mut b_cx).is_pending());

    assert_reraised(panic::catch_unwind(AssertUnwindSafe(|| drop(driver))));
    assert_eq!(b_woken.0.load(SeqCst), 1, "B's task was not woken");
    match recv_b.as_mut().poll(&mut b_cx) {
        Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down"), "{e}"),
        other => panic!("expected the shutdown error, got {other:?}"),
    }
}

#[test]
fn socket_drop_wakes_every_waiter_then_reraises() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let (stream, _peer) = UnixStream::pair().unwrap();

    // Fill the send buffer so that a write waits.
    let chunk = [0u8; 64 * 1024];
    let mut full = false;
    for _ in 0..10_000 {
        match stream.try_write(&chunk) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                full = true;
                break;
            }
            Err(e) => panic!("write failed: {e}"),
        }
    }
    assert!(full, "the send buffer never filled");

    // Reader: a foreign waker that panics. Writer: a task's waker.
    let panicking = panicking();
    let mut buf = [0u8; 16];
    assert!(stream
        .poll_read(&mut Context::from_waker(&panicking), &mut buf)
        .is_pending());
    let (writer_woken, writer_waker) = counting();
    assert!(stream
        .poll_write(&mut Context::from_waker(&writer_waker), &chunk)
        .is_pending());

    assert_reraised(panic::catch_unwind(AssertUnwindSafe(|| drop(stream))));
    assert_eq!(writer_woken.0.load(SeqCst), 1, "the writer was not woken");
    drop(driver);
}
