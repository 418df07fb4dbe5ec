//! `ready(Interest)` on every socket type, `readable`/`writable` on the same
//! types, and `UdpSocket::peek_sender`.

mod support;

use std::io;
use std::net::SocketAddr;

use support::{block_on, tcp_pair};
use tempo_io::net::{UdpSocket, UnixDatagram, UnixStream};
use tempo_io::{Driver, Interest, Ready};

/// Returns `Pending` once, waking itself: the other futures of a `join!`
/// run first.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

const BOTH: Interest = Interest::READABLE.add(Interest::WRITABLE);

#[test]
fn udp_ready_reports_writable_at_once_and_readable_after_a_datagram() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let ready = a.ready(BOTH).await.unwrap();
        assert!(ready.is_writable() && !ready.is_readable(), "{ready:?}");
        let ready = a.ready(Interest::WRITABLE).await.unwrap();
        assert!(ready.is_writable());
        a.writable().await.unwrap();

        b.send_to(b"x", a.local_addr().unwrap()).await.unwrap();
        let ready = a.ready(Interest::READABLE).await.unwrap();
        assert!(ready.is_readable(), "{ready:?}");
        assert!(
            !ready.is_writable(),
            "only the interest's states: {ready:?}"
        );
        a.readable().await.unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(a.try_recv_from(&mut buf).unwrap().0, 1);
        // Drained: try_recv's WouldBlock clears readable, so only
        // writability is left.
        assert_eq!(
            a.try_recv_from(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        let ready = a.ready(BOTH).await.unwrap();
        assert!(!ready.is_readable() && ready.is_writable(), "{ready:?}");
    });
}

#[test]
fn ready_waits_for_the_event_and_any_number_of_tasks_wait() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = a.local_addr().unwrap();
        // Three waiters on readability, then the datagram: all complete.
        let (r1, r2, r3, sent) = futures::join!(
            a.ready(Interest::READABLE),
            a.ready(BOTH.remove(Interest::WRITABLE).unwrap()),
            a.readable(),
            async {
                yield_once().await; // let the waiters register first
                b.send_to(b"x", to).await
            }
        );
        assert!(r1.unwrap().is_readable());
        assert!(r2.unwrap().is_readable());
        r3.unwrap();
        sent.unwrap();
    });
}

#[test]
fn tcp_stream_ready_and_read_closed() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (client, server) = tcp_pair().await;
        assert!(client
            .ready(Interest::WRITABLE)
            .await
            .unwrap()
            .is_writable());
        client.write_all(b"hi").await.unwrap();
        client.shutdown().await.unwrap();
        let ready = server.ready(Interest::READABLE).await.unwrap();
        assert!(ready.is_readable());
        let mut buf = [0u8; 8];
        let mut got = 0;
        loop {
            server.readable().await.unwrap();
            match server.try_read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(&buf[..got], b"hi");
        // End of stream seen: the read side stays ready (closed).
        let ready = server.ready(Interest::READABLE).await.unwrap();
        assert!(ready.is_readable() && ready.is_read_closed(), "{ready:?}");
        server.writable().await.unwrap();
    });
}

#[test]
fn unix_stream_and_datagram_ready() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = UnixStream::pair().unwrap();
        assert!(a.ready(BOTH).await.unwrap().is_writable());
        b.write_all(b"u").await.unwrap();
        assert!(a.ready(Interest::READABLE).await.unwrap().is_readable());
        a.writable().await.unwrap();
        a.readable().await.unwrap();

        let (c, d) = UnixDatagram::pair().unwrap();
        assert!(c.ready(Interest::WRITABLE).await.unwrap().is_writable());
        d.send(b"d").await.unwrap();
        let ready: Ready = c.ready(Interest::READABLE).await.unwrap();
        assert!(ready.is_readable(), "{ready:?}");
        // Both ways now: the readiness already seen is reported together.
        let ready = c.ready(BOTH).await.unwrap();
        assert!(ready.is_readable() && ready.is_writable(), "{ready:?}");
        c.readable().await.unwrap();
        c.writable().await.unwrap();
    });
}

#[test]
fn peek_sender_names_the_next_datagram_without_taking_it() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let first = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let second = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = receiver.local_addr().unwrap();

        assert_eq!(
            receiver.try_peek_sender().unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        first.send_to(b"one", to).await.unwrap();
        let from: SocketAddr = receiver.peek_sender().await.unwrap();
        assert_eq!(from, first.local_addr().unwrap());
        // Still queued, and peeking again gives the same sender.
        assert_eq!(receiver.try_peek_sender().unwrap(), from);
        let poll_from = std::future::poll_fn(|cx| receiver.poll_peek_sender(cx))
            .await
            .unwrap();
        assert_eq!(poll_from, from);

        second.send_to(b"two", to).await.unwrap();
        let mut buf = [0u8; 8];
        let (n, got_from) = receiver.recv_from(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], got_from), (&b"one"[..], from));
        assert_eq!(
            receiver.peek_sender().await.unwrap(),
            second.local_addr().unwrap()
        );
    });
}
