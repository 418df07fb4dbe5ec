//! `UdpRingReceiver`: datagrams on its driver's io_uring, turned by the
//! driver's park. Every test also passes where io_uring is not available
//! (the receiver then falls back to epoll); the ones about the ring's own
//! rules say so and check only what the fallback shares.

mod support;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::Ordering::SeqCst;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use support::{block_on, counting, panicking, WakeCount};
use tempo_io::net::UdpRingReceiver;
use tempo_io::Driver;
use tempo_park::{coop, Park};
use tempo_test_support::net::sent_all_and_queued;

fn std_sender() -> std::net::UdpSocket {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap()
}

fn receiver(max_datagram: usize) -> UdpRingReceiver {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    UdpRingReceiver::from_std(socket, max_datagram).unwrap()
}

/// A receiver whose socket already holds `count` datagrams `[i; len]`
/// (all queued by the kernel before it is made), a second handle on its
/// socket (for `SO_MEMINFO`), and the sender.
fn receiver_with_queued(
    max_datagram: usize,
    count: usize,
    len: usize,
) -> (UdpRingReceiver, std::net::UdpSocket, std::net::UdpSocket) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = socket.local_addr().unwrap();
    let sender = std_sender();
    let mut i = 0u8;
    sent_all_and_queued(&socket, count, || {
        sender.send_to(&vec![i; len], to).unwrap();
        i = i.wrapping_add(1);
    });
    let clone = socket.try_clone().unwrap();
    let rx = UdpRingReceiver::from_std(socket, max_datagram).unwrap();
    (rx, clone, sender)
}

/// Parks `driver` without blocking until `woken` counts a wake (at most
/// 1,000 turns).
fn turn_until_woken(driver: &mut Driver, woken: &WakeCount) {
    for _ in 0..1000 {
        if woken.0.load(SeqCst) > 0 {
            return;
        }
        driver.park_timeout(Duration::from_millis(1)).unwrap();
    }
    panic!("the task was not woken in 1,000 turns");
}

/// Waits (at most 10 s) until `fd` is readable: `true` if it became so.
fn readable_within_10s(fd: std::os::fd::RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, alive across the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, 10_000) };
    rc == 1
}

/// Sends `payload` to `rx`, asserts that its arrival makes `driver`'s
/// poller readable (`rule` says why it must), and turns `driver` once
/// without blocking.
fn arrival_wakes(driver: &mut Driver, rx: &UdpRingReceiver, payload: &[u8], rule: &str) {
    use std::os::fd::AsRawFd;
    std_sender()
        .send_to(payload, rx.local_addr().unwrap())
        .unwrap();
    assert!(readable_within_10s(driver.as_raw_fd()), "{rule}");
    driver.park_timeout(Duration::ZERO).unwrap();
}

#[test]
fn datagrams_arrive_in_order_with_their_source() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (rx, _, sender) = receiver_with_queued(1500, 10, 100);
        let to = rx.local_addr().unwrap();
        for i in 0..10u8 {
            let (payload, from) = rx
                .recv_from_with(|datagram, from| (datagram.to_vec(), from))
                .await
                .unwrap();
            assert_eq!(payload, vec![i; 100]);
            assert_eq!(from, sender.local_addr().unwrap());
        }
        sender.send_to(b"last", to).unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = rx.recv_from(&mut buf).await.unwrap();
        assert_eq!(
            (&buf[..n], from),
            (&b"last"[..], sender.local_addr().unwrap())
        );
        if !rx.is_on_ring() {
            eprintln!("io_uring is not available here: the receiver used epoll");
        }
    });
}

#[test]
fn an_empty_datagram_is_received_as_one() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (rx, _, sender) = receiver_with_queued(64, 1, 0);
        let mut buf = [0u8; 8];
        let (n, from) = rx.recv_from(&mut buf).await.unwrap();
        assert_eq!((n, from), (0, sender.local_addr().unwrap()));
    });
}

#[test]
fn longer_datagrams_are_cut_to_max_datagram_and_to_the_buffer() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (rx, _, _sender) = receiver_with_queued(100, 2, 300);
        let len = rx.recv_from_with(|d, _| d.len()).await.unwrap();
        assert_eq!(len, 100, "cut to max_datagram");
        let mut small = [0u8; 10];
        let (n, _) = rx.recv_from(&mut small).await.unwrap();
        assert_eq!((n, small), (10, [1u8; 10]), "cut to the caller's buffer");
    });
}

/// A receiver made with timestamps hands over when each datagram
/// reached the socket (after it was sent, before it was read), and
/// whether it was cut; a plain one has no timestamp.
#[test]
fn a_timestamped_receiver_gives_each_datagram_its_arrival_time() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = socket.local_addr().unwrap();
        let rx = UdpRingReceiver::from_std_with_timestamps(socket, 100).unwrap();
        let plain = receiver(100);
        let sender = std_sender();
        let sent_after = SystemTime::now();
        sender.send_to(&[1; 50], to).unwrap();
        sender.send_to(&[2; 300], to).unwrap();
        sender
            .send_to(&[3; 50], plain.local_addr().unwrap())
            .unwrap();
        let first = rx.recv_with(|d| (d.payload.to_vec(), d.source, d.truncated, d.timestamp));
        let (payload, source, truncated, stamp) = first.await.unwrap();
        let read_after = SystemTime::now();
        assert_eq!(
            (payload, source, truncated),
            (vec![1; 50], sender.local_addr().unwrap(), false)
        );
        let stamp = stamp.expect("a kernel timestamp");
        assert!(sent_after <= stamp && stamp <= read_after, "{stamp:?}");
        let cut = rx.recv_with(|d| (d.payload.len(), d.truncated, d.timestamp.is_some()));
        assert_eq!(cut.await.unwrap(), (100, true, true));
        let unstamped = plain.recv_with(|d| (d.payload[0], d.timestamp));
        assert_eq!(unstamped.await.unwrap(), (3, None));
    });
}

#[test]
fn small_and_large_receivers_share_the_driver_s_ring() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (small, _, _a) = receiver_with_queued(212, 1, 200);
        let (large, _, _b) = receiver_with_queued(9000, 1, 9000);
        assert_eq!(large.recv_from_with(|d, _| d.len()).await.unwrap(), 9000);
        assert_eq!(small.recv_from_with(|d, _| d.len()).await.unwrap(), 200);
        assert_eq!(small.is_on_ring(), large.is_on_ring());
    });
}

#[test]
fn a_max_datagram_above_udp_s_limit_is_refused() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let err = UdpRingReceiver::from_std(socket, 70_000).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("65,507"), "{err}");
    });
}

#[test]
fn without_a_driver_the_error_says_what_to_do() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let err = UdpRingReceiver::from_std(socket, 1500).unwrap_err();
    assert!(err.to_string().contains("block_on"), "{err}");
}

/// A receiver armed while the driver would block: an arrival makes the
/// driver's fd readable (the ring's eventfd is in its poller), so a
/// blocked park returns and the next turn hands the datagram over.
#[test]
fn an_arrival_wakes_a_blocked_driver() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let rx = receiver(1500);
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    {
        let mut recv = pin!(rx.recv_from_with(|d, _| d.to_vec()));
        assert!(recv.as_mut().poll(&mut cx).is_pending());
        // The receive is queued: the park does not block, its turn arms it.
        driver.park_timeout(Duration::from_secs(10)).unwrap();
        assert!(recv.as_mut().poll(&mut cx).is_pending(), "nothing sent yet");
        let before = driver.stats().io_events;
        arrival_wakes(
            &mut driver,
            &rx,
            b"wake",
            "an arrival on an armed ring receive must wake the driver's poller",
        );
        assert!(
            driver.stats().io_events > before,
            "the completion counts as an I/O event"
        );
        assert_eq!(woken.0.load(SeqCst), 1, "the turn woke the task");
        match recv.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(payload)) => assert_eq!(payload, b"wake"),
            other => panic!("expected the datagram, got {other:?}"),
        }
    }
}

/// Dropping an armed receiver cancels its receive; the socket is closed
/// once the kernel confirmed it, within a few turns: its port is free
/// again.
#[test]
fn dropping_a_receiver_frees_its_port_after_the_cancel() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let (_, waker) = counting();
    let (keep, rx) = armed_receiver(&mut driver, &mut Context::from_waker(&waker));
    let addr = rx.local_addr().unwrap();
    drop(rx);
    let mut turns = 0;
    while std::net::UdpSocket::bind(addr).is_err() {
        turns += 1;
        assert!(turns < 100, "the port is still taken after {turns} turns");
        driver.park_timeout(Duration::ZERO).unwrap();
    }
    drop(keep);
}

/// A receiver whose receive is armed (polled once, then the driver
/// turned), and another one that keeps the ring in use.
fn armed_receiver(driver: &mut Driver, cx: &mut Context<'_>) -> (UdpRingReceiver, UdpRingReceiver) {
    let keep = receiver(1500);
    let rx = receiver(1500);
    {
        let mut recv = pin!(rx.recv_from_with(|d, _| d.len()));
        assert!(recv.as_mut().poll(cx).is_pending());
    }
    driver.park_timeout(Duration::ZERO).unwrap();
    (keep, rx)
}

/// `poll_close` is ready once the socket is closed: while the armed
/// receive is being cancelled it is pending, the port taken and a receive
/// refused; the port is free as soon as it is ready.
#[test]
fn close_is_ready_once_the_port_is_free() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let (keep, mut rx) = armed_receiver(&mut driver, &mut cx);
    let addr = rx.local_addr().unwrap();
    if rx.is_on_ring() {
        assert!(rx.poll_close(&mut cx).is_pending(), "the cancel is due");
        assert!(std::net::UdpSocket::bind(addr).is_err());
        let mut recv = pin!(rx.recv_from_with(|d, _| d.len()));
        let refused = recv.as_mut().poll(&mut cx);
        assert!(
            matches!(&refused, Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::NotConnected),
            "{refused:?}"
        );
        turn_until_woken(&mut driver, &woken);
    }
    assert!(rx.poll_close(&mut cx).is_ready());
    std::net::UdpSocket::bind(addr).expect("the port is free once closed");
    drop((rx, keep));
}

/// A receiver that is not read stops receiving once it holds a few dozen
/// datagrams (past the turn that found them); later ones stay in its
/// socket's kernel buffer, and every one arrives, in order, once the task
/// reads.
#[test]
fn an_unread_receiver_pauses_and_loses_none() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let (rx, socket, sender) = armed_with_queued(&mut driver, 1, 64, 200).remove(0);
    for _ in 0..15 {
        driver.park_timeout(Duration::ZERO).unwrap();
    }
    let to = rx.local_addr().unwrap();
    let mut i = 200usize;
    sent_all_and_queued(&socket, 200, || {
        sender.send_to(&[i as u8; 16], to).unwrap();
        i += 1;
    });
    for _ in 0..20 {
        driver.park_timeout(Duration::ZERO).unwrap();
    }
    if rx.is_on_ring() {
        assert!(
            tempo_test_support::net::rmem_alloc(&socket) > 0,
            "the paused receive left the later datagrams in the socket"
        );
    }
    block_on(&mut driver, async {
        for i in 0..400usize {
            let first = rx.recv_from_with(|d, _| d[0]).await.unwrap();
            assert_eq!(first, i as u8, "datagram {i}");
        }
    });
    assert_eq!(tempo_test_support::net::rmem_alloc(&socket), 0, "all taken");
}

/// Every ready receive takes a unit of the task's budget: with the budget
/// spent, the receive wakes the task and returns `Pending`, and the
/// datagram stays for the next poll.
#[test]
fn a_ready_receive_spends_the_task_s_budget() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let (rx, _, _sender) = receiver_with_queued(64, 2, 8);
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let mut recv = pin!(rx.recv_from_with(|d, _| d[0]));
    assert!(recv.as_mut().poll(&mut cx).is_pending());
    turn_until_woken(&mut driver, &woken);
    coop::budget(|| {
        while let Poll::Ready(progress) = coop::poll_proceed(&mut cx) {
            progress.made_progress();
        }
        let before = woken.0.load(SeqCst);
        assert!(recv.as_mut().poll(&mut cx).is_pending(), "no budget left");
        assert_eq!(
            woken.0.load(SeqCst),
            before + 1,
            "a spent budget wakes the task"
        );
    });
    assert!(matches!(recv.as_mut().poll(&mut cx), Poll::Ready(Ok(0))));
    let mut second = pin!(rx.recv_from_with(|d, _| d[0]));
    assert!(matches!(second.as_mut().poll(&mut cx), Poll::Ready(Ok(1))));
}

/// A waker that panics in a turn does not keep the turn's other tasks
/// from being woken; the park re-raises the panic afterwards.
#[test]
fn a_panicking_waker_does_not_strand_the_turn_s_others() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let (a, b) = (receiver(64), receiver(64));
    if !a.is_on_ring() {
        return; // the epoll driver's own rule, tested in panicking_waker.rs
    }
    let panicking = panicking();
    let (woken, counting) = counting();
    let mut recv_a = pin!(a.recv_from_with(|d, _| d.len()));
    let mut recv_b = pin!(b.recv_from_with(|d, _| d.len()));
    assert!(recv_a
        .as_mut()
        .poll(&mut Context::from_waker(&panicking))
        .is_pending());
    assert!(recv_b
        .as_mut()
        .poll(&mut Context::from_waker(&counting))
        .is_pending());
    driver.park_timeout(Duration::ZERO).unwrap(); // both armed
    let sender = std_sender();
    sender.send_to(b"a", a.local_addr().unwrap()).unwrap();
    sender.send_to(b"b", b.local_addr().unwrap()).unwrap();
    let mut turns = 0;
    while woken.0.load(SeqCst) == 0 {
        turns += 1;
        assert!(turns < 1000, "b's task was never woken");
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            driver.park_timeout(Duration::from_millis(10))
        }));
    }
    let mut cx = Context::from_waker(&counting);
    assert!(matches!(recv_b.as_mut().poll(&mut cx), Poll::Ready(Ok(1))));
    assert!(matches!(recv_a.as_mut().poll(&mut cx), Poll::Ready(Ok(1))));
}

/// The driver owns its ring: dropping the driver closes it once its last
/// receiver is gone, draining the cancelled receive at once, so the port
/// is free when the drop returns. A new driver makes a new ring, and it
/// works.
#[test]
fn dropping_the_driver_closes_its_ring_and_the_socket_at_once() {
    let driver = Driver::new().unwrap();
    let rx = {
        let _enter = driver.handle().enter();
        receiver(1500)
    };
    let addr = rx.local_addr().unwrap();
    let (_, waker) = counting();
    {
        let mut recv = pin!(rx.recv_from_with(|d, _| d.len()));
        assert!(recv
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
    }
    let mut driver = driver;
    driver.park_timeout(Duration::ZERO).unwrap(); // armed
    drop(rx);
    drop(driver);
    std::net::UdpSocket::bind(addr).expect("the port is free");
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (rx, _, _sender) = receiver_with_queued(64, 1, 3);
        assert_eq!(rx.recv_from_with(|d, _| d.len()).await.unwrap(), 3);
    });
}

/// A receiver that outlives its driver is not stranded: the drop wakes
/// its waiting task, whose receive then fails as a socket's does, and
/// the ring (with the socket) closes when the receiver goes.
#[test]
fn a_receiver_whose_driver_is_dropped_fails_and_then_frees_its_port() {
    let mut driver = Driver::new().unwrap();
    let rx = {
        let _enter = driver.handle().enter();
        receiver(1500)
    };
    let addr = rx.local_addr().unwrap();
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    {
        let mut recv = pin!(rx.recv_from_with(|d, _| d.len()));
        assert!(recv.as_mut().poll(&mut cx).is_pending());
        driver.park_timeout(Duration::ZERO).unwrap(); // armed
        drop(driver);
        if rx.is_on_ring() {
            assert_eq!(woken.0.load(SeqCst), 1, "the drop woke the task");
        }
        match recv.as_mut().poll(&mut cx) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down"), "{e}"),
            other => panic!("expected the shutdown error, got {other:?}"),
        }
    }
    drop(rx);
    std::net::UdpSocket::bind(addr).expect("the port is free");
}

/// `receivers` receivers for datagrams of up to `max_datagram` bytes on
/// `driver`'s thread (entered), `queued` datagrams `[i; 8]` on each
/// (as [`receiver_with_queued`]), armed, and turned until their receives
/// took what their buffers hold; none is read.
fn armed_with_queued(
    driver: &mut Driver,
    receivers: usize,
    max_datagram: usize,
    queued: usize,
) -> Vec<(UdpRingReceiver, std::net::UdpSocket, std::net::UdpSocket)> {
    let receivers: Vec<_> = (0..receivers)
        .map(|_| receiver_with_queued(max_datagram, queued, 8))
        .collect();
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    for (rx, _, _) in &receivers {
        let mut recv = pin!(rx.recv_from_with(|d, _| d[0]));
        assert!(recv.as_mut().poll(&mut cx).is_pending());
    }
    turn_until_woken(driver, &woken);
    for _ in 0..5 {
        driver.park_timeout(Duration::ZERO).unwrap();
    }
    receivers
}

/// 130 receivers of the 256-byte class with 40 datagrams each, armed:
/// their receives hold every buffer of the class's group (4,096).
fn exhaust_the_256_byte_class(
    driver: &mut Driver,
) -> Vec<(UdpRingReceiver, std::net::UdpSocket, std::net::UdpSocket)> {
    armed_with_queued(driver, 130, 64, 40)
}

/// More datagrams held than a size class has buffers (130 receivers x 40
/// queued, 4,096 buffers of 256 bytes): receives starve (`ENOBUFS`), are
/// armed again as buffers come back, and every datagram of every
/// receiver arrives, in order.
#[test]
fn starved_receives_go_on_when_buffers_come_back() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let receivers = exhaust_the_256_byte_class(&mut driver);
    support::block_on_bounded(&mut driver, 3000, async {
        for (n, (rx, _, _)) in receivers.iter().enumerate() {
            for i in 0..40u8 {
                let first = rx.recv_from_with(|d, _| d[0]).await.unwrap();
                assert_eq!(first, i, "receiver {n}");
            }
        }
    });
    for (_, socket, _) in &receivers {
        assert_eq!(tempo_test_support::net::rmem_alloc(socket), 0);
    }
}

/// A size class's buffers grow with its receivers: 100 receivers of the
/// largest class (groups of 64 buffers of 128 KiB, a group per 32
/// receivers) with 2 datagrams queued each take all 200 in one turn, none
/// left waiting in a socket for a buffer, and read them in order.
#[test]
fn a_class_has_buffers_for_two_datagrams_of_each_receiver() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let receivers = armed_with_queued(&mut driver, 100, 65_507, 2);
    if receivers[0].0.is_on_ring() {
        for (n, (_, socket, _)) in receivers.iter().enumerate() {
            let queued = tempo_test_support::net::rmem_alloc(socket);
            assert_eq!(queued, 0, "receiver {n}'s datagrams wait for buffers");
        }
    }
    support::block_on_bounded(&mut driver, 1000, async {
        for (n, (rx, _, _)) in receivers.iter().enumerate() {
            for i in 0..2u8 {
                assert_eq!(
                    rx.recv_from_with(|d, _| d[0]).await.unwrap(),
                    i,
                    "receiver {n}"
                );
            }
        }
    });
}

/// A receiver whose size class has no buffer left (other receivers hold
/// them all, unread) still gets its next datagram: its empty socket is
/// looked at every turn, and the datagram is received directly.
#[test]
fn a_reader_of_an_exhausted_class_gets_its_next_datagram() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let holders = exhaust_the_256_byte_class(&mut driver);
    let late = receiver(64);
    let to = late.local_addr().unwrap();
    let sender = std_sender();
    let got = support::block_on_bounded(&mut driver, 1000, async {
        let mut recv = pin!(late.recv_from_with(|d, _| d.to_vec()));
        // Waits (or, on epoll, would wait) before the datagram is sent.
        std::future::poll_fn(|cx| match recv.as_mut().poll(cx) {
            Poll::Pending => Poll::Ready(()),
            Poll::Ready(r) => panic!("nothing was sent yet: {r:?}"),
        })
        .await;
        sender.send_to(b"late", to).unwrap();
        recv.await.unwrap()
    })
    .output;
    assert_eq!(got, b"late");
    drop(holders);
}

/// The direct receive of an exhausted class keeps a timestamped
/// receiver's timestamps.
#[test]
fn a_direct_receive_keeps_the_arrival_time() {
    let mut driver = Driver::new().unwrap();
    let _enter = driver.handle().enter();
    let holders = exhaust_the_256_byte_class(&mut driver);
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let late = UdpRingReceiver::from_std_with_timestamps(socket, 64).unwrap();
    let sender = std_sender();
    let sent_after = SystemTime::now();
    sender.send_to(b"late", late.local_addr().unwrap()).unwrap();
    let got = support::block_on_bounded(&mut driver, 1000, async {
        late.recv_with(|d| (d.payload.to_vec(), d.timestamp))
            .await
            .unwrap()
    })
    .output;
    assert_eq!(got.0, b"late");
    assert!(
        got.1.is_some_and(|stamp| stamp >= sent_after),
        "{:?}",
        got.1
    );
    drop(holders);
}

/// A receive error (ICMP port unreachable on a connected socket) reaches
/// the task as the receive's error, and the receiver goes on receiving.
#[test]
fn a_receive_error_is_returned_and_the_receiver_goes_on() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let nobody = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let closed = nobody.local_addr().unwrap();
        drop(nobody);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.connect(closed).unwrap();
        let probe = socket.try_clone().unwrap();
        let rx = UdpRingReceiver::from_std(socket, 64).unwrap();
        probe.send(b"anyone?").unwrap(); // answered by ICMP port unreachable
        let err = rx.recv_from_with(|d, _| d.len()).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused, "{err}");
        // A datagram from the connected peer still arrives afterwards.
        let peer = std::net::UdpSocket::bind(closed).unwrap();
        peer.send_to(b"late", rx.local_addr().unwrap()).unwrap();
        let got = rx.recv_from_with(|d, _| d.to_vec()).await.unwrap();
        assert_eq!(got, b"late");
    });
}

/// Two drivers on one thread each make and turn their own ring: each
/// driver's park hands its own receiver's datagram over, and an arrival
/// wakes the driver whose receiver it is for.
#[test]
fn two_drivers_on_one_thread_each_turn_their_own_ring() {
    let mut first = Driver::new().unwrap();
    let mut second = Driver::new().unwrap();
    let (a, _, _a_sender) = {
        let _enter = first.handle().enter();
        receiver_with_queued(64, 1, 1)
    };
    let b = {
        let _enter = second.handle().enter();
        receiver(64)
    };
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let mut recv_a = pin!(a.recv_from_with(|d, _| d.len()));
    let mut recv_b = pin!(b.recv_from_with(|d, _| d.to_vec()));
    assert!(recv_a.as_mut().poll(&mut cx).is_pending());
    assert!(recv_b.as_mut().poll(&mut cx).is_pending());
    turn_until_woken(&mut first, &woken);
    assert!(matches!(recv_a.as_mut().poll(&mut cx), Poll::Ready(Ok(1))));
    if !b.is_on_ring() {
        return;
    }
    second.park_timeout(Duration::ZERO).unwrap(); // armed
    arrival_wakes(
        &mut second,
        &b,
        b"b",
        "an arrival wakes the driver of its receiver",
    );
    assert!(matches!(recv_b.as_mut().poll(&mut cx), Poll::Ready(Ok(ref d)) if d == b"b"));
    drop(first);
}

/// A dropped driver does not strand another on the same thread: after a
/// newer driver made a receiver and was dropped, an arrival for the older
/// driver's receiver wakes the older driver's poller.
#[test]
fn an_arrival_wakes_its_driver_after_a_newer_one_went() {
    let mut older = Driver::new().unwrap();
    let rx = {
        let _enter = older.handle().enter();
        receiver(64)
    };
    {
        let newer = Driver::new().unwrap();
        let _enter = newer.handle().enter();
        let _on_newer = receiver(64);
    }
    let (woken, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let mut recv = pin!(rx.recv_from_with(|d, _| d.to_vec()));
    assert!(recv.as_mut().poll(&mut cx).is_pending());
    // Arms the receive and takes up the completions' own signals of the
    // eventfd.
    for _ in 0..3 {
        older.park_timeout(Duration::ZERO).unwrap();
    }
    if !rx.is_on_ring() {
        return;
    }
    arrival_wakes(
        &mut older,
        &rx,
        b"late",
        "an arrival must wake its receiver's driver",
    );
    assert_eq!(woken.0.load(SeqCst), 1, "the turn woke the task");
    assert!(matches!(recv.as_mut().poll(&mut cx), Poll::Ready(Ok(ref d)) if d == b"late"));
}

/// A driver's ring belongs to the thread of its first receiver: a
/// receiver made for the same driver on another thread receives through
/// the epoll driver instead.
#[test]
fn a_receiver_on_another_thread_than_the_ring_falls_back_to_epoll() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let here = {
        let _enter = handle.enter();
        receiver(64)
    };
    let there = std::thread::spawn(move || {
        let _enter = handle.enter();
        receiver(64).is_on_ring()
    });
    let on_ring_there = there.join().unwrap();
    assert!(!on_ring_there, "the ring is its first receiver's thread's");
    drop(here);
}
