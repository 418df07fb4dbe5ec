//! UdpSocket on the I/O driver, driven by the test-support executor.

mod support;

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures::future::join_all;
use futures::task::noop_waker;
use support::{block_on, block_on_bounded, WakeCount};
use tempo_io::net::UdpSocket;
use tempo_io::Driver;
use tempo_park::{IoDriver, Park};
use tempo_test_support::fd::raise_fd_limit;
use tempo_test_support::net::{epoll_entry, sent_all_and_queued, sent_and_queued, EpollEntry};

#[test]
fn echo_over_loopback() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        client.connect(server.local_addr().unwrap()).await.unwrap();
        let server_task = async {
            let mut buf = [0u8; 64];
            for _ in 0..10 {
                let (n, from) = server.recv_from(&mut buf).await.unwrap();
                server.send_to(&buf[..n], from).await.unwrap();
            }
        };
        let client_task = async {
            let mut buf = [0u8; 64];
            for i in 0..10u8 {
                client.send(&[i, i + 1, i + 2]).await.unwrap();
                let n = client.recv(&mut buf).await.unwrap();
                assert_eq!(&buf[..n], &[i, i + 1, i + 2]);
            }
        };
        futures::join!(server_task, client_task);
    });
    assert!(driver.stats().io_events > 0);
}

#[test]
fn thousand_sockets_ten_datagrams_each_no_loss() {
    const SOCKETS: usize = 1000;
    const DATAGRAMS: u32 = 10;
    assert!(
        raise_fd_limit(SOCKETS as u64 + 200) > SOCKETS as u64 + 50,
        "fd limit too low for 1,000 sockets"
    );
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let sockets: Vec<UdpSocket> = (0..SOCKETS)
        .map(|_| UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        .collect();
    let addrs: Vec<SocketAddr> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
    let sender = std::thread::spawn(move || {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for seq in 0..DATAGRAMS {
            for addr in &addrs {
                socket.send_to(&seq.to_be_bytes(), addr).unwrap();
            }
        }
    });
    let received = block_on(
        &mut driver,
        join_all(sockets.iter().map(|socket| async move {
            let mut buf = [0u8; 16];
            let mut seen = Vec::new();
            for _ in 0..DATAGRAMS {
                let n = socket.recv(&mut buf).await.unwrap();
                assert_eq!(n, 4);
                seen.push(u32::from_be_bytes(buf[..4].try_into().unwrap()));
            }
            seen
        })),
    );
    sender.join().unwrap();
    for seen in received {
        assert_eq!(
            seen,
            (0..DATAGRAMS).collect::<Vec<_>>(),
            "datagrams lost or reordered"
        );
    }
}

#[test]
fn readable_then_try_recv_until_would_block_then_readable_again() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let socket = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap();
    // All three queued: the `try_recv` loop below must find them all.
    let mut i = 0u8;
    sent_all_and_queued(&socket, 3, || {
        sender.send_to(&[i], addr).unwrap();
        i += 1;
    });
    block_on(&mut driver, socket.readable()).unwrap();
    let mut buf = [0u8; 8];
    let mut got = Vec::new();
    for _ in 0..10 {
        match socket.try_recv(&mut buf) {
            Ok(n) => got.push(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!(got, vec![vec![0], vec![1], vec![2]]);
    // Readiness was cleared by the WouldBlock: readable() waits now ...
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(socket.poll_recv_ready(&mut cx).is_pending());
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(
        socket.poll_recv_ready(&mut cx).is_pending(),
        "no datagram, no readiness"
    );
    // ... until a new datagram arrives (a new edge).
    sender.send_to(&[9], addr).unwrap();
    block_on(&mut driver, socket.readable()).unwrap();
    assert_eq!(socket.try_recv(&mut buf).unwrap(), 1);
    assert_eq!(buf[0], 9);
}

#[test]
fn try_recv_attempts_the_syscall_even_without_cached_readiness() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let socket = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sent_and_queued(&socket, || {
        sender.send_to(b"x", socket.local_addr().unwrap()).unwrap()
    });
    // The driver has never been parked: no readiness is cached. tokio's
    // try_recv would return WouldBlock here; Tempo's reads the datagram.
    let mut buf = [0u8; 8];
    let n = socket.try_recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"x");
}

/// Bytes queued in the kernel for `socket` (`FIONREAD`): shows whether a
/// datagram is still in the kernel.
fn kernel_queued(socket: &impl AsRawFd) -> usize {
    let mut queued: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which is live.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::FIONREAD, &mut queued) };
    assert_eq!(rc, 0, "{}", io::Error::last_os_error());
    queued as usize
}

/// Runs `test` with a driver entered (throttled or not), a bound socket,
/// a std sender and the socket's address.
fn with_pair_under(
    throttled: bool,
    test: impl FnOnce(&mut Driver, UdpSocket, std::net::UdpSocket, SocketAddr),
) {
    let mut driver = Driver::new().unwrap();
    driver.set_throttled(throttled);
    let handle = driver.handle();
    let _enter = handle.enter();
    let (socket, sender, to) = bound_pair();
    test(&mut driver, socket, sender, to);
}

/// [`with_pair_under`] not throttled: an edge-triggered socket that
/// drains until `WouldBlock` (the basic scheduler's rule).
fn with_pair(test: impl FnOnce(&mut Driver, UdpSocket, std::net::UdpSocket, SocketAddr)) {
    with_pair_under(false, test);
}

/// [`with_pair_under`] throttled: a level-triggered socket, one receive
/// per report.
fn with_level_pair(test: impl FnOnce(&mut Driver, UdpSocket, std::net::UdpSocket, SocketAddr)) {
    with_pair_under(true, test);
}

/// Sends `payload` to `socket` and dispatches its readiness event: the
/// datagram waits in the kernel and the socket's readiness reports it.
fn sent_and_dispatched(
    driver: &mut Driver,
    socket: &UdpSocket,
    sender: &std::net::UdpSocket,
    to: SocketAddr,
    payload: &[u8],
) {
    sent_and_queued(socket, || sender.send_to(payload, to).unwrap());
    driver.park_timeout(Duration::ZERO).unwrap();
}

/// Asserts that a receive on `socket` is ready at once with the one-byte
/// datagram `expected`.
fn assert_receives_now(socket: &UdpSocket, cx: &mut Context<'_>, expected: u8) {
    let mut buf = [0u8; 8];
    let got = socket.poll_recv(cx, &mut buf);
    assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
    assert_eq!(buf[0], expected);
}

fn bound_pair() -> (UdpSocket, std::net::UdpSocket, SocketAddr) {
    let socket = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = socket.local_addr().unwrap();
    (socket, sender, to)
}

/// Two datagrams queued: a drain loop receives both in the tick they were
/// queued in (no park: no added tick of latency, none stranded).
#[test]
fn a_drain_loop_receives_two_queued_datagrams_in_one_tick() {
    with_pair(|driver, socket, sender, to| {
        sent_and_queued(&socket, || sender.send_to(b"one", to).unwrap());
        sent_and_queued(&socket, || sender.send_to(b"two", to).unwrap());

        let outcome = block_on_bounded(driver, 10, async {
            let mut buf = [0u8; 8];
            let mut got = Vec::new();
            for _ in 0..2 {
                let n = socket.recv(&mut buf).await.unwrap();
                got.push(buf[..n].to_vec());
            }
            got
        });
        assert_eq!(outcome.output, vec![b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(outcome.parks, 0, "both in the tick they were queued in");
    });
}

/// A throttled receive that took the datagram of a report marks the
/// socket drained: the next receive, even in a later dispatch round,
/// waits for a readiness report *without a syscall* (a datagram sent
/// meanwhile stays in the kernel until the driver reports it), then gets it.
#[test]
fn drained_socket_waits_for_the_next_event_without_a_syscall() {
    with_level_pair(|driver, socket, sender, to| {
        sent_and_queued(&socket, || sender.send_to(b"a", to).unwrap());
        // Dispatch the socket's first events (writable, readable).
        driver.park_timeout(Duration::ZERO).unwrap();
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut buf = [0u8; 8];
        assert_receives_now(&socket, &mut cx, b'a');
        // A later round with no event changes nothing: still known drained.
        driver.park_timeout(Duration::ZERO).unwrap();
        sent_and_queued(&socket, || sender.send_to(b"b", to).unwrap());
        assert!(
            socket.poll_recv(&mut cx, &mut buf).is_pending(),
            "known drained: no syscall until the next event"
        );
        assert_eq!(kernel_queued(&socket), 1, "b is still in the kernel");
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_receives_now(&socket, &mut cx, b'b');
    });
}

/// Spends every unit of a fresh task budget (inside `coop::budget`).
fn spend_the_budget(cx: &mut Context<'_>) {
    for _ in 0..tempo_park::coop::INITIAL_BUDGET {
        let Poll::Ready(unit) = tempo_park::coop::poll_proceed(cx) else {
            panic!("the budget ran out early");
        };
        unit.made_progress();
    }
    assert!(!tempo_park::coop::has_budget_remaining());
}

/// A receive on a socket known drained waits for its event before it asks
/// the cooperative budget: with the budget spent it is `Pending` *without
/// a wake* (an exhausted budget would wake the task at once, for a poll
/// that could only wait again), and the datagram's event wakes it. Under
/// throttling every datagram's second receive takes this path, which
/// skips the budget, the operation and its error value.
#[test]
fn drained_receive_waits_for_its_event_not_for_the_budget() {
    with_level_pair(|driver, socket, sender, to| {
        sent_and_dispatched(driver, &socket, &sender, to, b"a");
        let mut buf = [0u8; 8];
        assert_eq!(block_on(driver, socket.recv(&mut buf)).unwrap(), 1);

        let wakes = Arc::new(WakeCount::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let woken = || wakes.0.load(std::sync::atomic::Ordering::SeqCst);
        let (n, from) = {
            let mut recv = std::pin::pin!(socket.recv_from(&mut buf));
            tempo_park::coop::budget(|| {
                spend_the_budget(&mut cx);
                assert!(recv.as_mut().poll(&mut cx).is_pending());
            });
            assert_eq!(woken(), 0, "drained: no wake for the spent budget");

            sent_and_dispatched(driver, &socket, &sender, to, b"b");
            assert_eq!(woken(), 1, "the datagram's event woke the receive");
            let Poll::Ready(Ok(got)) = recv.as_mut().poll(&mut cx) else {
                panic!("the woken receive got nothing");
            };
            got
        };
        assert_eq!((&buf[..n], from), (&b"b"[..], sender.local_addr().unwrap()));
    });
}

/// A drain loop empties a backlog in the tick it is found.
#[test]
fn a_drain_loop_empties_a_backlog_in_one_tick() {
    with_pair(|driver, socket, sender, to| {
        for i in 0..5u8 {
            sent_and_queued(&socket, || sender.send_to(&[i], to).unwrap());
        }
        let outcome = block_on_bounded(driver, 10, async {
            let mut buf = [0u8; 8];
            let mut got = Vec::new();
            for _ in 0..5 {
                let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            got
        });
        assert_eq!(outcome.output, vec![0, 1, 2, 3, 4]);
        assert_eq!(outcome.parks, 0, "the backlog is drained in its tick");
    });
}

#[test]
fn port_in_use_is_addr_in_use() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let err = UdpSocket::bind(a.local_addr().unwrap()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    });
}

#[test]
fn no_driver_gives_a_clear_error() {
    let err = futures::executor::block_on(UdpSocket::bind("127.0.0.1:0")).unwrap_err();
    assert!(err.to_string().contains("no Tempo I/O driver"), "{err}");
    assert!(err.to_string().contains("enable_io"), "{err}");
    let err = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap_err();
    assert!(err.to_string().contains("Runtime::block_on"), "{err}");
}

#[test]
fn moved_between_two_drivers_with_into_std_from_std() {
    let mut first = Driver::new().unwrap();
    let mut second = Driver::new().unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let socket = block_on(&mut first, async {
        UdpSocket::bind("127.0.0.1:0").await.unwrap()
    });
    let addr = socket.local_addr().unwrap();
    sender.send_to(b"1", addr).unwrap();
    block_on(&mut first, async {
        let mut buf = [0u8; 4];
        assert_eq!(socket.recv(&mut buf).await.unwrap(), 1);
    });
    assert_eq!(first.registered(), 1);
    let std_socket = socket.into_std().unwrap();
    assert_eq!(first.registered(), 0);
    let moved = block_on(&mut second, async {
        UdpSocket::from_std(std_socket).unwrap()
    });
    assert_eq!(second.registered(), 1);
    sender.send_to(b"22", addr).unwrap();
    block_on(&mut second, async {
        let mut buf = [0u8; 4];
        assert_eq!(moved.recv(&mut buf).await.unwrap(), 2);
        // Nothing more: the next receive waits on the second driver.
        sender.send_to(b"333", addr).unwrap();
        assert_eq!(moved.recv(&mut buf).await.unwrap(), 3);
    });
}

#[test]
fn dropping_a_waiting_task_deregisters_and_other_sockets_keep_working() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let waiting = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let other = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let waiting_addr = waiting.local_addr().unwrap();
    let mut task = Box::pin(async move {
        let mut buf = [0u8; 4];
        waiting.recv(&mut buf).await
    });
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(task.as_mut().poll(&mut cx).is_pending());
    assert_eq!(driver.registered(), 2);
    // A datagram for the socket is in flight while its task is dropped.
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sender.send_to(b"x", waiting_addr).unwrap();
    drop(task);
    assert_eq!(driver.registered(), 1);
    driver.park_timeout(Duration::ZERO).unwrap();
    sender.send_to(b"y", other.local_addr().unwrap()).unwrap();
    block_on(&mut driver, async {
        let mut buf = [0u8; 4];
        assert_eq!(other.recv(&mut buf).await.unwrap(), 1);
    });
}

#[test]
fn dropping_the_driver_wakes_waiters_with_an_error() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let socket = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let woken = Arc::new(std::sync::atomic::AtomicBool::new(false));
    struct Flag(Arc<std::sync::atomic::AtomicBool>);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let waker = Waker::from(Arc::new(Flag(woken.clone())));
    let mut cx = Context::from_waker(&waker);
    let mut buf = [0u8; 4];
    let mut recv = Box::pin(socket.recv(&mut buf));
    assert!(recv.as_mut().poll(&mut cx).is_pending());
    drop(driver);
    assert!(
        woken.load(std::sync::atomic::Ordering::SeqCst),
        "waiter woken on shutdown"
    );
    assert!(handle.is_shutdown());
    match recv.as_mut().poll(&mut cx) {
        Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down"), "{e}"),
        other => panic!("expected a shutdown error, got {other:?}"),
    }
    // A socket created on the dead driver's handle fails clearly too.
    let err = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");
}

#[test]
fn connected_socket_to_closed_port_is_refused_not_hung() {
    let mut driver = Driver::new().unwrap();
    let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    block_on(&mut driver, async {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        socket.connect(closed_addr).await.unwrap();
        socket.send(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        let err = socket.recv(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
    });
}

#[test]
fn five_thousand_sockets_on_one_driver() {
    const SOCKETS: usize = 5000;
    let limit = raise_fd_limit(SOCKETS as u64 + 256);
    if limit < SOCKETS as u64 + 100 {
        println!("skipping: RLIMIT_NOFILE hard limit {limit} is too low for {SOCKETS} sockets");
        return;
    }
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let sockets: Vec<UdpSocket> = (0..SOCKETS)
        .map(|_| UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        .collect();
    assert_eq!(driver.registered(), SOCKETS);
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for s in &sockets {
        sender.send_to(b"hi", s.local_addr().unwrap()).unwrap();
    }
    let total = block_on(
        &mut driver,
        join_all(sockets.iter().map(|s| async move {
            let mut buf = [0u8; 4];
            s.recv(&mut buf).await.unwrap()
        })),
    );
    assert_eq!(total.iter().sum::<usize>(), 2 * SOCKETS);
    drop(sockets);
    assert_eq!(driver.registered(), 0);
}

#[test]
fn peek_then_recv_and_options() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        socket.set_ttl(33).unwrap();
        assert_eq!(socket.ttl().unwrap(), 33);
        socket.set_broadcast(true).unwrap();
        assert!(socket.broadcast().unwrap());
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        sender
            .send_to(b"peek", socket.local_addr().unwrap())
            .await
            .unwrap();
        let mut buf = [0u8; 8];
        let (n, from) = socket.peek_from(&mut buf).await.unwrap();
        assert_eq!(
            (&buf[..n], from),
            (&b"peek"[..], sender.local_addr().unwrap())
        );
        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"peek");
        assert!(socket.try_recv_from(&mut buf).unwrap_err().kind() == io::ErrorKind::WouldBlock);
        let _ = poll_fn(|cx| socket.poll_send_ready(cx)).await;
    });
}

/// Polls `wait` (a fresh readiness wait each time) inside one task poll's
/// budget until it is `Pending`; returns how many were ready and how many
/// times the task was woken.
fn ready_waits_in_one_budget(mut wait: impl FnMut(&mut Context<'_>) -> Poll<()>) -> (usize, usize) {
    let wakes = Arc::new(WakeCount::default());
    let waker = Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let ready =
        tempo_park::coop::budget(|| (0..1_000).take_while(|_| wait(&mut cx).is_ready()).count());
    (ready, wakes.0.load(std::sync::atomic::Ordering::SeqCst))
}

/// A ready readiness wait spends a unit of the cooperative budget:
/// `readable`, `ready(READABLE)` and `poll_recv_ready` are each ready
/// `INITIAL_BUDGET` times in one task poll, then `Pending` with the task
/// woken (to be polled again with a fresh budget).
#[test]
fn ready_readiness_spends_the_budget() {
    with_pair(|driver, socket, sender, to| {
        sent_and_dispatched(driver, &socket, &sender, to, b"b");

        let budget = usize::from(tempo_park::coop::INITIAL_BUDGET);
        let readable = ready_waits_in_one_budget(|cx| {
            std::pin::pin!(socket.readable())
                .poll(cx)
                .map(|r| r.unwrap())
        });
        assert_eq!(readable, (budget, 1), "readable: (ready, wakes)");
        let ready = ready_waits_in_one_budget(|cx| {
            std::pin::pin!(socket.ready(tempo_io::Interest::READABLE))
                .poll(cx)
                .map(|r| assert!(r.unwrap().is_readable()))
        });
        assert_eq!(ready, (budget, 1), "ready(READABLE): (ready, wakes)");
        let poll_recv_ready =
            ready_waits_in_one_budget(|cx| socket.poll_recv_ready(cx).map(|r| r.unwrap()));
        assert_eq!(
            poll_recv_ready,
            (budget, 1),
            "poll_recv_ready: (ready, wakes)"
        );

        // The readiness was the datagram's all along.
        let mut buf = [0u8; 8];
        let n = socket.try_recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"b");
    });
}

/// A readiness wait that is not ready waits for its event without asking
/// the budget: with the budget spent, `readable()` and `poll_recv_ready`
/// are `Pending` *without a wake* (an exhausted budget would wake the task
/// for a poll that could only wait again), and the datagram's event wakes
/// them. Ready, with the budget spent, they yield: the task is woken.
#[test]
fn an_unready_wait_waits_for_its_event_not_for_the_budget() {
    with_pair(|driver, socket, sender, to| {
        let wakes = Arc::new(WakeCount::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let woken = || wakes.0.load(std::sync::atomic::Ordering::SeqCst);
        let mut readable = std::pin::pin!(socket.readable());
        tempo_park::coop::budget(|| {
            spend_the_budget(&mut cx);
            assert!(readable.as_mut().poll(&mut cx).is_pending());
            assert!(socket.poll_recv_ready(&mut cx).is_pending());
        });
        assert_eq!(woken(), 0, "not ready: no wake for the spent budget");

        sent_and_dispatched(driver, &socket, &sender, to, b"a");
        let by_event = woken();
        assert!(by_event > 0, "the datagram's event woke the waits");
        tempo_park::coop::budget(|| {
            spend_the_budget(&mut cx);
            assert!(readable.as_mut().poll(&mut cx).is_pending(), "budget spent");
        });
        assert_eq!(woken(), by_event + 1, "the spent budget woke the task");
        let ready = tempo_park::coop::budget(|| readable.as_mut().poll(&mut cx));
        assert!(matches!(ready, Poll::Ready(Ok(()))), "{ready:?}");
    });
}

/// The socket's entry in `driver`'s epoll instance.
fn entry(driver: &Driver, socket: &UdpSocket) -> EpollEntry {
    epoll_entry(driver.as_raw_fd(), socket.as_raw_fd()).expect("registered")
}

const LEVEL_READ: EpollEntry = EpollEntry {
    read: true,
    write: false,
    edge: false,
};

/// Made while the rule is on, a datagram socket is level-triggered for
/// reading and takes one datagram per report: of three queued, the first
/// receive takes one and the next waits (no syscall) for the next report,
/// which the poller makes because two are left. Reported by two parks in
/// a row (a tick's poll and its look), the socket holds a backlog, which
/// the receives drain to `WouldBlock`. A socket first reported after a
/// park that did not report it takes one datagram again. None is
/// stranded, none is held in user space.
#[test]
fn level_triggered_socket_takes_one_datagram_per_report_and_drains_a_backlog() {
    with_level_pair(|driver, socket, sender, to| {
        assert_eq!(entry(driver, &socket), LEVEL_READ);
        for i in 0..3u8 {
            sent_and_queued(&socket, || sender.send_to(&[i], to).unwrap());
        }
        driver.park_timeout(Duration::ZERO).unwrap();
        let count = Arc::new(WakeCount(Default::default()));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert_receives_now(&socket, &mut cx, 0);
        let mut buf = [0u8; 8];
        assert!(
            socket.poll_recv(&mut cx, &mut buf).is_pending(),
            "one per report"
        );
        assert_ne!(kernel_queued(&socket), 0, "the rest wait in the kernel");

        // The next park reports it again: a backlog, drained at once.
        let before = driver.stats().io_events;
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_eq!(driver.stats().io_events, before + 1);
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_receives_now(&socket, &mut cx, 1);
        assert_receives_now(&socket, &mut cx, 2);
        assert!(socket.poll_recv(&mut cx, &mut buf).is_pending(), "drained");
        assert_eq!(kernel_queued(&socket), 0);

        // A park with nothing to report, then two datagrams: their first
        // report is no backlog (one datagram), the next park's is.
        driver.park_timeout(Duration::ZERO).unwrap();
        for i in 3..5u8 {
            sent_and_queued(&socket, || sender.send_to(&[i], to).unwrap());
        }
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_receives_now(&socket, &mut cx, 3);
        assert!(
            socket.poll_recv(&mut cx, &mut buf).is_pending(),
            "one per report"
        );
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_receives_now(&socket, &mut cx, 4);
        assert!(socket.poll_recv(&mut cx, &mut buf).is_pending(), "drained");
    });
}

/// A level-triggered socket that nobody reads is reported twice, not at
/// every poll (an idle runtime stays idle): the second report in a row
/// that finds no waiter (the first one's readiness unconsumed) drops its
/// read interest. A datagram that comes meanwhile is not reported, and
/// not lost: the receives drain what the two reports flagged as a
/// backlog, and the one that then waits arms the socket again, whose next
/// datagram is reported at the next poll.
#[test]
fn an_unread_level_triggered_socket_is_reported_once_and_rearmed_by_a_wait() {
    with_level_pair(|driver, socket, sender, to| {
        for i in 0..2u8 {
            sent_and_queued(&socket, || sender.send_to(&[i], to).unwrap());
        }
        let before = driver.stats().io_events;
        driver.park_timeout(Duration::ZERO).unwrap();
        driver.park_timeout(Duration::ZERO).unwrap();
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_eq!(driver.stats().io_events, before + 2, "reported twice");
        let disarmed = EpollEntry {
            read: false,
            write: false,
            edge: true,
        };
        assert_eq!(entry(driver, &socket), disarmed);
        // One more while disarmed: not reported, not lost.
        sent_and_queued(&socket, || sender.send_to(&[2], to).unwrap());
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_eq!(driver.stats().io_events, before + 2);

        // Reported twice in a row: a backlog, drained.
        let count = Arc::new(WakeCount(Default::default()));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        for i in 0..3u8 {
            assert_receives_now(&socket, &mut cx, i);
        }
        let mut buf = [0u8; 8];
        assert!(socket.poll_recv(&mut cx, &mut buf).is_pending());
        assert_eq!(entry(driver, &socket), LEVEL_READ, "re-armed by the wait");
        sent_and_queued(&socket, || sender.send_to(&[3], to).unwrap());
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_receives_now(&socket, &mut cx, 3);
    });
}

/// A level-triggered socket starts writable (its first send does not wait
/// for a report) and keeps no write interest: a datagram socket is nearly
/// always writable, and a level-triggered write interest would be
/// reported at every poll.
#[test]
fn a_level_triggered_socket_sends_at_once_without_write_interest() {
    with_level_pair(|driver, socket, _sender, to| {
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let sent = socket.poll_send_to(&mut cx, b"x", to);
        assert!(matches!(sent, Poll::Ready(Ok(1))), "{sent:?}");
        assert_eq!(entry(driver, &socket), LEVEL_READ);
    });
}

/// `recv_from_with` hands its closure the whole datagram (the thread's
/// buffer holds the largest, where a small buffer of the caller's would
/// cut it) and its source, then the next one.
#[test]
fn recv_from_with_sees_the_whole_datagram_and_its_source() {
    with_pair(|driver, socket, sender, to| {
        let big: Vec<u8> = (0..60_000u32).map(|i| i as u8).collect();
        sent_and_queued(&socket, || sender.send_to(&big, to).unwrap());
        sent_and_queued(&socket, || sender.send_to(b"small", to).unwrap());
        let got = block_on(driver, async {
            let first = socket.recv_from_with(|d, from| (d.to_vec(), from));
            let second = socket.recv_with(|d| d.to_vec());
            (first.await.unwrap(), second.await.unwrap())
        });
        assert_eq!(got.0 .0.len(), 60_000, "not cut");
        assert!(got.0 .0 == big);
        assert_eq!(got.0 .1, sender.local_addr().unwrap());
        assert_eq!(got.1, b"small");
    });
}

/// Polls `future` once with `cx`.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    future.poll(cx)
}

/// Under the rule, on a level-triggered socket, `recv_from_with` follows
/// `recv_from`'s: one datagram per report, the next receive waits without
/// a syscall (the rest stay in the kernel), and a backlog (reported by two
/// parks in a row) drains at once. Nothing is held in user space.
#[test]
fn recv_from_with_takes_one_datagram_per_report_and_drains_a_backlog() {
    with_level_pair(|driver, socket, sender, to| {
        for i in 0..3u8 {
            sent_and_queued(&socket, || sender.send_to(&[i], to).unwrap());
        }
        driver.park_timeout(Duration::ZERO).unwrap();
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let receive_now = |cx: &mut Context<'_>| {
            let future = std::pin::pin!(socket.recv_with(|d| d.to_vec()));
            poll_once(future, cx)
        };
        assert!(matches!(receive_now(&mut cx), Poll::Ready(Ok(d)) if d == [0]));
        assert!(receive_now(&mut cx).is_pending(), "one per report");
        assert_ne!(kernel_queued(&socket), 0, "the rest wait in the kernel");
        driver.park_timeout(Duration::ZERO).unwrap();
        assert!(matches!(receive_now(&mut cx), Poll::Ready(Ok(d)) if d == [1]));
        assert!(matches!(receive_now(&mut cx), Poll::Ready(Ok(d)) if d == [2]));
        assert!(receive_now(&mut cx).is_pending(), "drained");
        assert_eq!(kernel_queued(&socket), 0);
    });
}

/// On an edge-triggered socket `recv_with` takes one datagram: the second
/// stays in the kernel, and the next receive makes the syscall for it in
/// the same tick, without waiting for an event.
#[test]
fn recv_with_drains_an_edge_triggered_socket_in_one_tick() {
    with_pair(|driver, socket, sender, to| {
        sent_and_queued(&socket, || sender.send_to(b"a", to).unwrap());
        sent_and_queued(&socket, || sender.send_to(b"b", to).unwrap());
        let first = block_on_bounded(driver, 10, socket.recv_with(|d| d.to_vec()));
        assert_eq!(first.output.unwrap(), b"a");
        assert_eq!(kernel_queued(&socket), 1, "b is still in the kernel");
        let second = block_on_bounded(driver, 10, socket.recv_with(|d| d.to_vec()));
        assert_eq!(second.output.unwrap(), b"b");
        assert_eq!(first.parks + second.parks, 0, "both in one tick");
    });
}

/// The closure runs only with a datagram: a receive dropped while it waits
/// never calls it. One that panics unwinds out of the poll, and the socket
/// goes on receiving.
#[test]
fn recv_from_with_calls_its_closure_only_with_a_datagram() {
    with_pair(|driver, socket, sender, to| {
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut called = false;
        {
            let waiting = std::pin::pin!(socket.recv_with(|_| called = true));
            assert!(poll_once(waiting, &mut cx).is_pending());
        }
        assert!(!called, "dropped uncalled");

        sent_and_queued(&socket, || sender.send_to(b"boom", to).unwrap());
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            block_on(driver, socket.recv_with(|_| panic!("in the closure")))
        }));
        assert!(panicked.is_err());
        sent_and_queued(&socket, || sender.send_to(b"next", to).unwrap());
        let next = block_on(driver, socket.recv_with(|d| d.to_vec())).unwrap();
        assert_eq!(next, b"next");
    });
}

/// A receive's future holds what its poll reads and nothing more: a task
/// receiving from one of thousands of sockets polls it once per datagram,
/// cold, and every cache line it spans is a miss. As nested `async fn`s
/// (the public method, `DatagramIo`'s, the registration's loop), a closure
/// receive's future took 176 bytes and `recv_from`'s 224 (benches README,
/// 2026-11-26).
#[test]
fn a_receive_future_is_only_what_its_poll_reads() {
    with_pair(|_driver, socket, _sender, _to| {
        let mut buf = [0u8; 16];
        let closure = socket.recv_from_with(|datagram, _from| datagram.len());
        assert!(std::mem::size_of_val(&closure) <= 64);
        drop(closure);
        assert!(std::mem::size_of_val(&socket.recv_from(&mut buf)) <= 80);
        assert!(std::mem::size_of_val(&socket.recv(&mut buf)) <= 80);
        // And they are `Unpin` (the README's "Coming from tokio" says so):
        // polled in place without pinning.
        fn unpin<F: std::future::Future + Unpin>(_: &F) {}
        unpin(&socket.recv_from(&mut buf));
        unpin(&socket.recv_with(|datagram| datagram.len()));
    });
}
