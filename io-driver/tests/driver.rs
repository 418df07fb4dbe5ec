//! The Driver against the Park contract, and registration from other
//! threads.

mod support;

use std::future::Future;
use std::time::Duration;

use support::block_on;
use tempo_io::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use tempo_io::{Driver, Handle};
use tempo_park::{Park, Unpark};
use tempo_test_support::net::wait_until_queued;

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
    assert_eq!(driver.dispatch_round(), 3);
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
fn small_event_buffer_delivers_every_datagram() {
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

/// A waker that records that it was woken.
struct WokenFlag(std::sync::atomic::AtomicBool);

impl std::task::Wake for WokenFlag {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Three times as many sockets as one poll returns, each with a pending
/// receive and then a datagram: ONE park (`timeout`: the throttled tick's
/// zero-timeout poll, or a blocking park) must wake every receive, and
/// count one I/O event per socket. A driver that dispatches one buffer per
/// park wakes only `CAPACITY` of them.
fn one_park_wakes_every_ready_socket(timeout: Option<Duration>) {
    const CAPACITY: usize = 4;
    const SOCKETS: usize = 3 * CAPACITY;
    let mut driver = Driver::with_capacity(CAPACITY).unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let mut peekers = Vec::new();
    let mut sockets = Vec::new();
    for _ in 0..SOCKETS {
        let std_socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        peekers.push(std_socket.try_clone().unwrap());
        sockets.push(UdpSocket::from_std(std_socket).unwrap());
    }
    let mut bufs = [[0u8; 4]; SOCKETS];
    let flags: Vec<_> = (0..SOCKETS)
        .map(|_| std::sync::Arc::new(WokenFlag(std::sync::atomic::AtomicBool::new(false))))
        .collect();
    let mut receives: Vec<_> = sockets
        .iter()
        .zip(bufs.iter_mut())
        .map(|(socket, buf)| Box::pin(socket.recv(buf)))
        .collect();
    for (receive, flag) in receives.iter_mut().zip(&flags) {
        let waker = std::task::Waker::from(flag.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(receive.as_mut().poll(&mut cx).is_pending());
    }

    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for socket in &sockets {
        sender.send_to(b"x", socket.local_addr().unwrap()).unwrap();
    }
    for peeker in &peekers {
        wait_until_queued(peeker);
    }

    let before = driver.stats().io_events;
    let round = driver.dispatch_round();
    match timeout {
        Some(timeout) => driver.park_timeout(timeout).unwrap(),
        None => driver.park().unwrap(),
    }
    assert_eq!(driver.dispatch_round(), round + 1, "one park, one round");
    let woken = flags
        .iter()
        .filter(|flag| flag.0.load(std::sync::atomic::Ordering::SeqCst))
        .count();
    assert_eq!(woken, SOCKETS, "every ready socket is woken by one park");
    assert_eq!(
        driver.stats().io_events - before,
        SOCKETS as u64,
        "one I/O event per ready socket"
    );
    for (receive, flag) in receives.iter_mut().zip(&flags) {
        let waker = std::task::Waker::from(flag.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        match receive.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(result) => assert_eq!(result.unwrap(), 1),
            std::task::Poll::Pending => panic!("a woken receive found no datagram"),
        }
    }
}

#[test]
fn a_zero_timeout_park_dispatches_more_events_than_the_buffer_holds() {
    one_park_wakes_every_ready_socket(Some(Duration::ZERO));
}

#[test]
fn a_blocking_park_dispatches_more_events_than_the_buffer_holds() {
    one_park_wakes_every_ready_socket(None);
}

#[test]
fn a_park_with_few_ready_sockets_stays_one_round_and_counts_each_event_once() {
    // Fewer ready sockets than the buffer holds: one poll (no way to count
    // epoll_wait calls here; the counts show nothing was dispatched twice).
    let mut driver = Driver::with_capacity(8).unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let sockets: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        .collect();
    // Registration reports each socket writable, once.
    let before = driver.stats().io_events;
    driver.park_timeout(Duration::ZERO).unwrap();
    assert_eq!(driver.stats().io_events - before, 3, "one event per socket");
    driver.park_timeout(Duration::ZERO).unwrap();
    assert_eq!(
        driver.stats().io_events - before,
        3,
        "no new readiness, no event"
    );
    drop(sockets);
}
