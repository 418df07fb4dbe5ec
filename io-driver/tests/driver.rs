//! The Driver against the Park contract, and registration from other
//! threads.

mod support;

use std::time::Duration;

use support::block_on;
use tempo_io::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use tempo_io::{Driver, Handle};
use tempo_park::{Park, Unpark};

#[test]
fn unpark_before_park_returns_at_once_and_is_not_an_io_event() {
    let mut driver = Driver::new().unwrap();
    let before = driver.stats();
    driver.unpark().unpark();
    driver.park().unwrap();
    driver.handle().unpark();
    driver.park_timeout(Duration::MAX).unwrap(); // no overflow, returns on the unpark
    driver.park_timeout(Duration::ZERO).unwrap(); // never blocks
    assert_eq!(driver.stats(), before, "waker events are not I/O events");
    assert_eq!(driver.stats().timers_fired, 0);
    assert_eq!(driver.tick(), 3);
}

#[test]
fn unpark_from_another_thread_wakes_a_blocking_park() {
    let mut driver = Driver::new().unwrap();
    let unpark = driver.unpark();
    // Before or during the park: either way the park returns.
    let t = std::thread::spawn(move || unpark.unpark());
    driver.park().unwrap();
    t.join().unwrap();
}

#[test]
fn sockets_registered_from_another_thread_get_events() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    // Another thread enters the handle and creates the socket while the
    // driver's thread is (or is about to be) parked.
    let t = std::thread::spawn(move || {
        let _enter = handle.enter();
        let socket =
            UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sender
            .send_to(b"cross", socket.local_addr().unwrap())
            .unwrap();
        socket
    });
    let socket = t.join().unwrap();
    let before = driver.stats().io_events;
    block_on(&mut driver, async {
        let mut buf = [0u8; 8];
        assert_eq!(socket.recv(&mut buf).await.unwrap(), 5);
        // The next receive waits (WouldBlock, Pending) before the datagram
        // is sent, so it needs an event dispatched by this driver.
        let send_later = async {
            yield_once().await;
            let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sender
                .send_to(b"again", socket.local_addr().unwrap())
                .unwrap();
        };
        let (n, ()) = futures::join!(socket.recv(&mut buf), send_later);
        assert_eq!(n.unwrap(), 5);
    });
    assert!(driver.stats().io_events > before);
}

/// Returns `Pending` once (waking itself), then `Ready`.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}

#[test]
fn a_task_on_another_thread_is_woken_by_the_driver() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let socket = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done2 = done.clone();
    // The receiving task runs on another thread (futures' executor); the
    // driver runs here and wakes it.
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 8];
        let n = futures::executor::block_on(socket.recv(&mut buf)).unwrap();
        done2.store(true, std::sync::atomic::Ordering::SeqCst);
        n
    });
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut parks = 0;
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        sender.send_to(b"x", addr).unwrap();
        driver.park_timeout(Duration::from_millis(20)).unwrap();
        parks += 1;
        assert!(parks < 500, "remote task never woken");
    }
    assert_eq!(t.join().unwrap(), 1);
}

#[test]
fn handles_and_sockets_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Handle>();
    check::<UdpSocket>();
    check::<TcpStream>();
    check::<TcpListener>();
    check::<UnixStream>();
    check::<UnixListener>();
    check::<UnixDatagram>();
    check::<tempo_io::UnparkDriver>();
    fn check_send<T: Send>() {}
    check_send::<Driver>(); // a runtime may build its driver on one thread and run it on another
}

#[test]
fn small_event_buffer_dispatches_the_rest_next_park() {
    let mut driver = Driver::with_capacity(2).unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let sockets: Vec<UdpSocket> = (0..10)
        .map(|_| UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        .collect();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for s in &sockets {
        sender.send_to(b"z", s.local_addr().unwrap()).unwrap();
    }
    let got = block_on(
        &mut driver,
        futures::future::join_all(sockets.iter().map(|s| async move {
            let mut buf = [0u8; 2];
            s.recv(&mut buf).await.unwrap()
        })),
    );
    assert_eq!(got, vec![1; 10]);
}
