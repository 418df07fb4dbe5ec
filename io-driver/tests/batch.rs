//! `recv_many` / `send_many` (one `recvmmsg` / `sendmmsg`) on UDP and Unix
//! datagram sockets, their limits and errors, and how they meet the
//! throttled receive rule.

mod support;

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use futures::task::noop_waker;
use support::{block_on, TempDir};
use tempo_io::net::{RecvBatch, SendBatch, UdpSocket, UnixDatagram, MAX_BATCH};
use tempo_io::Driver;
use tempo_park::{IoDriver, Park};
use tempo_test_support::net::{sent_all_and_queued, sent_and_queued, BatchQueued};

fn udp_pair() -> (UdpSocket, UdpSocket) {
    let bind = || UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    (bind(), bind())
}

#[test]
fn send_many_then_recv_many_round_trip_in_order_with_sources() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let to = b.local_addr().unwrap();
        let mut out = SendBatch::with_capacity(8, 8 * 16);
        for i in 0..8u8 {
            out.push(&[i; 3], to).unwrap();
        }
        assert_eq!(out.len(), 8);
        let queued = BatchQueued::expect(&b, 8, 3);
        assert_eq!(a.send_many(&mut out).await.unwrap(), 8, "one sendmmsg");
        queued.wait(&b); // all eight there for the one `recvmmsg` below
        assert!(out.is_empty(), "sent datagrams leave the batch");

        let mut batch = RecvBatch::new(16, 64).unwrap();
        let n = b.recv_many(&mut batch).await.unwrap();
        assert_eq!((n, batch.len()), (8, 8), "one recvmmsg takes all eight");
        for i in 0..8 {
            assert_eq!(batch.payload(i), &[i as u8; 3]);
            assert_eq!(batch.source(i), Some(a.local_addr().unwrap()));
            assert!(!batch.truncated(i));
            assert_eq!(batch.timestamp(i), None, "not asked for");
        }
    });
}

#[test]
fn batches_larger_than_the_stack_arrays_receive_with_truncation_and_timestamps() {
    // More than 16 slots: the kernel's arrays are heap scratch, not stack.
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let to = b.local_addr().unwrap();
        let mut out = SendBatch::new();
        for i in 0..20u8 {
            out.push(&vec![i; usize::from(i) + 1], to).unwrap();
        }
        assert_eq!(a.send_many(&mut out).await.unwrap(), 20);

        let mut batch = RecvBatch::new(40, 8).unwrap().with_timestamps();
        let mut received = 0;
        while received < 20 {
            let n = b.recv_many(&mut batch).await.unwrap();
            for i in 0..n {
                let sent = received + i;
                let len = (sent + 1).min(8);
                assert_eq!(batch.payload(i), &vec![sent as u8; len][..]);
                assert_eq!(batch.truncated(i), sent + 1 > 8);
                assert_eq!(batch.source(i), Some(a.local_addr().unwrap()));
                assert!(batch.timestamp(i).is_some());
            }
            received += n;
        }
        assert_eq!(received, 20);
    });
}

#[test]
fn send_many_to_several_destinations_and_to_the_connected_peer() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let (c, _) = udp_pair();
        let mut out = SendBatch::new();
        out.push(b"to-b", b.local_addr().unwrap()).unwrap();
        out.push(b"to-c", c.local_addr().unwrap()).unwrap();
        assert_eq!(a.send_many(&mut out).await.unwrap(), 2);
        let mut buf = [0u8; 8];
        assert_eq!(b.recv(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf[..4], b"to-b");
        assert_eq!(c.recv(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf[..4], b"to-c");

        a.connect(b.local_addr().unwrap()).await.unwrap();
        out.push_connected(b"peer").unwrap();
        assert_eq!(a.try_send_many(&mut out).unwrap(), 1);
        assert_eq!(b.recv(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf[..4], b"peer");
    });
}

#[test]
fn timestamps_are_present_when_asked_for() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let before = SystemTime::now() - Duration::from_secs(1);
        a.send_to(b"t1", b.local_addr().unwrap()).await.unwrap();
        let mut batch = RecvBatch::new(4, 16).unwrap().with_timestamps();
        assert!(batch.wants_timestamps());
        // The first batch receive turns SO_TIMESTAMPNS on; a datagram
        // queued before that carries no timestamp, so send one after too.
        let n = b.recv_many(&mut batch).await.unwrap();
        assert_eq!(n, 1);
        a.send_to(b"t2", b.local_addr().unwrap()).await.unwrap();
        let n = b.recv_many(&mut batch).await.unwrap();
        assert_eq!((n, batch.payload(0)), (1, &b"t2"[..]));
        let stamp = batch.timestamp(0).expect("a kernel receive timestamp");
        assert!(stamp > before && stamp < SystemTime::now() + Duration::from_secs(1));
    });
}

/// Item 4: a buffer too small cuts the datagram, as recvfrom does, and the
/// cut is reported per datagram.
#[test]
fn truncation_is_reported_per_datagram() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let to = b.local_addr().unwrap();
        sent_and_queued(&b, || a.try_send_to(b"short", to).unwrap());
        sent_and_queued(&b, || a.try_send_to(b"much longer than eight", to).unwrap());
        let mut batch = RecvBatch::new(2, 8).unwrap();
        assert_eq!(b.recv_many(&mut batch).await.unwrap(), 2);
        assert_eq!(
            (batch.payload(0), batch.truncated(0)),
            (&b"short"[..], false)
        );
        assert_eq!(
            (batch.payload(1), batch.truncated(1)),
            (&b"much lon"[..], true)
        );
    });
}

/// A one-slot batch (one `recvmsg`, where larger batches make a
/// `recvmmsg`) reports what a larger batch does: the length, the cut,
/// the source and the kernel's timestamp, on UDP and Unix sockets.
#[test]
fn a_one_slot_batch_reports_what_a_larger_batch_reports() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = udp_pair();
        let to = b.local_addr().unwrap();
        let mut batch = RecvBatch::new(1, 8).unwrap().with_timestamps();
        // The first receive turns SO_TIMESTAMPNS on.
        sent_and_queued(&b, || a.try_send_to(b"first", to).unwrap());
        assert_eq!(b.recv_many(&mut batch).await.unwrap(), 1);
        let before = SystemTime::now() - Duration::from_secs(1);
        for (sent, got, cut) in [
            (&b"short"[..], &b"short"[..], false),
            (b"much longer than eight", b"much lon", true),
        ] {
            sent_and_queued(&b, || a.try_send_to(sent, to).unwrap());
            assert_eq!(b.recv_many(&mut batch).await.unwrap(), 1);
            assert_eq!((batch.payload(0), batch.truncated(0)), (got, cut));
            assert_eq!(batch.source(0), Some(a.local_addr().unwrap()));
            let stamp = batch.timestamp(0).expect("a kernel receive timestamp");
            assert!(stamp > before && stamp < SystemTime::now() + Duration::from_secs(1));
        }

        let dir = TempDir::new("one-slot");
        let (ua, ub) = (dir.0.join("a.sock"), dir.0.join("b.sock"));
        let ua_sock = UnixDatagram::bind(&ua).unwrap();
        let ub_sock = UnixDatagram::bind(&ub).unwrap();
        ua_sock.send_to(b"over eight bytes", &ub).await.unwrap();
        let mut one = RecvBatch::new(1, 8).unwrap();
        assert_eq!(ub_sock.recv_many(&mut one).await.unwrap(), 1);
        assert_eq!((one.payload(0), one.truncated(0)), (&b"over eig"[..], true));
        assert_eq!(
            one.unix_source(0).unwrap().as_pathname(),
            Some(ua.as_path())
        );
    });
}

/// Item 4: empty batches and batches larger than UIO_MAXIOV.
#[test]
fn empty_and_oversized_batches_are_refused_or_free() {
    let err = RecvBatch::new(0, 1500).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("at least one"), "{err}");
    let err = RecvBatch::new(MAX_BATCH + 1, 16).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("1024"), "{err}");
    assert_eq!(
        RecvBatch::new(4, 0).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    assert_eq!(RecvBatch::new(MAX_BATCH, 1).unwrap().capacity(), MAX_BATCH);

    let mut full = SendBatch::new();
    let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for _ in 0..MAX_BATCH {
        full.push(b"x", to).unwrap();
    }
    let err = full.push(b"x", to).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(full.len(), MAX_BATCH);

    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, _) = udp_pair();
        let mut empty = SendBatch::new();
        assert_eq!(a.send_many(&mut empty).await.unwrap(), 0, "no syscall");
        assert_eq!(a.try_send_many(&mut empty).unwrap(), 0);
    });
}

/// A batch that came back short knows the socket is drained: the next
/// `recv_many` waits for a readiness event without a syscall, then gets
/// the new datagram: at most one `recvmmsg` per socket per tick.
#[test]
fn a_short_batch_waits_for_the_next_event() {
    let mut driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let (a, b) = udp_pair();
    let to = b.local_addr().unwrap();
    sent_and_queued(&b, || a.try_send_to(b"x", to).unwrap());
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut batch = RecvBatch::new(4, 8).unwrap();
    assert!(matches!(
        b.poll_recv_many(&mut cx, &mut batch),
        Poll::Ready(Ok(1))
    ));
    sent_and_queued(&b, || a.try_send_to(b"y", to).unwrap());
    assert!(b.poll_recv_many(&mut cx, &mut batch).is_pending());
    driver.park_timeout(Duration::ZERO).unwrap();
    assert!(matches!(
        b.poll_recv_many(&mut cx, &mut batch),
        Poll::Ready(Ok(1))
    ));
    assert_eq!(batch.payload(0), b"y");
}

#[test]
fn try_recv_many_on_an_empty_socket_would_block() {
    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let (_, b) = udp_pair();
    let mut batch = RecvBatch::new(4, 8).unwrap();
    let err = b.try_recv_many(&mut batch).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    assert!(batch.is_empty());
}

#[test]
#[should_panic(expected = "out of range")]
fn reading_past_the_received_datagrams_panics() {
    let batch = RecvBatch::new(4, 8).unwrap();
    let _ = batch.payload(0);
}

#[test]
fn unix_datagram_batches_round_trip_with_paths() {
    let dir = TempDir::new("batch");
    let (pa, pb) = (dir.0.join("a.sock"), dir.0.join("b.sock"));
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UnixDatagram::bind(&pa).unwrap();
        let b = UnixDatagram::bind(&pb).unwrap();
        let mut out = SendBatch::new();
        out.push_to_path(b"u1", &pb).unwrap();
        out.push_to_path(b"u2", &pb).unwrap();
        assert_eq!(a.send_many(&mut out).await.unwrap(), 2);
        let mut batch = RecvBatch::new(4, 16).unwrap();
        assert_eq!(b.recv_many(&mut batch).await.unwrap(), 2);
        assert_eq!(
            (batch.payload(0), batch.payload(1)),
            (&b"u1"[..], &b"u2"[..])
        );
        let from = batch.unix_source(0).unwrap();
        assert_eq!(from.as_pathname(), Some(pa.as_path()));
        assert_eq!(batch.source(0), None, "not an IP address");

        let too_long = dir.0.join("x".repeat(200));
        let err = out.push_to_path(b"x", too_long).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    });

    // A connected pair: unnamed sources, and the throttled recv_from.
    let mut driver = Driver::new().unwrap();
    driver.set_throttled(true);
    block_on(&mut driver, async {
        let (a, b) = UnixDatagram::pair().unwrap();
        let mut out = SendBatch::new();
        for payload in [b"p1", b"p2"] {
            out.push_connected(payload).unwrap();
        }
        assert_eq!(a.send_many(&mut out).await.unwrap(), 2);
        let mut buf = [0u8; 8];
        let (n, from) = b.recv_from(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], from.is_unnamed()), (&b"p1"[..], true));
        let (n, from) = b.try_recv_from(&mut buf).unwrap();
        assert_eq!((&buf[..n], from.is_unnamed()), (&b"p2"[..], true));
    });
}

/// Each `recv_many` call that returns datagrams spends one unit of the
/// task's cooperative budget, however many datagrams it returns: with more
/// datagrams queued than the budget has units, exactly `INITIAL_BUDGET`
/// calls succeed before the budget makes one return `Pending`.
#[test]
fn recv_many_spends_one_budget_unit_per_call() {
    use tempo_park::coop;

    let driver = Driver::new().unwrap();
    let handle = driver.handle();
    let _enter = handle.enter();
    let (a, b) = udp_pair();
    let queued = 2 * coop::INITIAL_BUDGET as usize + 10;
    let big: libc::c_int = 4 << 20;
    // SAFETY: SO_RCVBUF reads one c_int through the pointer, which is live.
    let rc = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&b),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&big as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0);
    let to = b.local_addr().unwrap();
    sent_all_and_queued(&b, queued, || {
        a.try_send_to(b"d", to).unwrap();
    });
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut batch = RecvBatch::new(2, 8).unwrap();
    let (calls, datagrams) = coop::budget(|| {
        let (mut calls, mut datagrams) = (0, 0);
        while let Poll::Ready(n) = b.poll_recv_many(&mut cx, &mut batch) {
            calls += 1;
            datagrams += n.unwrap();
            assert!(calls <= queued, "the budget never ran out");
        }
        (calls, datagrams)
    });
    assert_eq!(calls, coop::INITIAL_BUDGET as usize);
    assert_eq!(
        datagrams,
        2 * calls,
        "two datagrams per call, one unit each"
    );
}

/// A batch receive knows by itself when the socket is drained, so a
/// socket made level-triggered by the throttled rule goes back to
/// edge-triggered (read and write) at its first `recv_many`, for good;
/// datagrams queued before the switch are received all the same.
#[test]
fn recv_many_makes_a_level_triggered_socket_edge_triggered() {
    use std::os::fd::AsRawFd;
    use tempo_test_support::net::{epoll_entry, EpollEntry};

    let mut driver = Driver::new().unwrap();
    driver.set_throttled(true);
    let handle = driver.handle();
    let _enter = handle.enter();
    let (a, b) = udp_pair();
    let epoll = driver.as_raw_fd();
    let entry = || epoll_entry(epoll, b.as_raw_fd()).unwrap();
    assert!(!entry().edge, "made under the rule: level-triggered");
    let to = b.local_addr().unwrap();
    sent_all_and_queued(&b, 2, || {
        a.try_send_to(b"x", to).unwrap();
    });
    driver.park_timeout(Duration::ZERO).unwrap();

    let mut batch = RecvBatch::new(4, 8).unwrap();
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let got = b.poll_recv_many(&mut cx, &mut batch);
    assert!(matches!(got, Poll::Ready(Ok(2))), "{got:?}");
    let edge = EpollEntry {
        read: true,
        write: true,
        edge: true,
    };
    assert_eq!(entry(), edge);
    assert!(b.poll_recv_many(&mut cx, &mut batch).is_pending());
    sent_and_queued(&b, || a.try_send_to(b"y", to).unwrap());
    driver.park_timeout(Duration::ZERO).unwrap();
    let got = b.poll_recv_many(&mut cx, &mut batch);
    assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
    assert_eq!(batch.payload(0), b"y");
}

/// After a batch receive made a level-triggered socket edge-triggered,
/// its plain receives drain a backlog one `recvfrom` each: the second
/// datagram stays in the kernel until the next receive takes it, and a
/// receive that finds the socket empty waits for the next datagram's
/// event.
#[test]
fn plain_receives_after_the_switch_strand_nothing() {
    let mut driver = Driver::new().unwrap();
    driver.set_throttled(true);
    let handle = driver.handle();
    let _enter = handle.enter();
    let (a, b) = udp_pair();
    let to = b.local_addr().unwrap();
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut batch = RecvBatch::new(4, 8).unwrap();
    assert!(b.poll_recv_many(&mut cx, &mut batch).is_pending());

    let mut payloads = [b"p", b"q"].into_iter();
    sent_all_and_queued(&b, 2, || {
        a.try_send_to(payloads.next().unwrap(), to).unwrap();
    });
    driver.park_timeout(Duration::ZERO).unwrap();
    let mut buf = [0u8; 8];
    for expected in [b'p', b'q'] {
        let got = b.poll_recv(&mut cx, &mut buf);
        assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
        assert_eq!(buf[0], expected);
    }
    assert!(b.poll_recv(&mut cx, &mut buf).is_pending(), "drained");
    sent_and_queued(&b, || a.try_send_to(b"r", to).unwrap());
    driver.park_timeout(Duration::ZERO).unwrap();
    let got = b.poll_recv(&mut cx, &mut buf);
    assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
    assert_eq!(buf[0], b'r');
}

/// A one-slot batch is a receive under the throttled rule: the socket
/// stays level-triggered, each report gives one receive (with the
/// datagram's kernel timestamp) and the next receive waits for the next
/// report without a syscall; a socket reported by two parks in a row
/// holds a backlog, which the receives drain.
#[test]
fn a_one_slot_batch_takes_one_datagram_per_report_and_drains_a_backlog() {
    use std::os::fd::AsRawFd;
    use tempo_test_support::net::epoll_entry;

    let mut driver = Driver::new().unwrap();
    driver.set_throttled(true);
    let handle = driver.handle();
    let _enter = handle.enter();
    let (a, b) = udp_pair();
    let epoll = driver.as_raw_fd();
    let to = b.local_addr().unwrap();
    let mut payloads = [b"0", b"1", b"2"].into_iter();
    sent_all_and_queued(&b, 3, || {
        a.try_send_to(payloads.next().unwrap(), to).unwrap();
    });
    driver.park_timeout(Duration::ZERO).unwrap();

    let mut batch = RecvBatch::new(1, 8).unwrap().with_timestamps();
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut receives_now = |expected: u8| {
        let got = b.poll_recv_many(&mut cx, &mut batch);
        assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
        assert_eq!(batch.payload(0), [expected]);
        assert!(batch.timestamp(0).is_some(), "the kernel's receive time");
    };
    receives_now(b'0');
    let mut cx = Context::from_waker(&waker);
    let mut one = RecvBatch::new(1, 8).unwrap();
    assert!(
        b.poll_recv_many(&mut cx, &mut one).is_pending(),
        "one per report, the rest wait in the kernel"
    );
    assert!(
        !epoll_entry(epoll, b.as_raw_fd()).unwrap().edge,
        "still level"
    );

    // Reported by the next park again: a backlog, drained at once.
    driver.park_timeout(Duration::ZERO).unwrap();
    for expected in [b'1', b'2'] {
        let got = b.poll_recv_many(&mut cx, &mut one);
        assert!(matches!(got, Poll::Ready(Ok(1))), "{got:?}");
        assert_eq!(one.payload(0), [expected]);
    }
    assert!(b.poll_recv_many(&mut cx, &mut one).is_pending(), "drained");
}
