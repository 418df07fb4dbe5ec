//! A host's `Park` driver that wraps Tempo's I/O driver
//! (`Builder::with_park_fn`): sockets work under it on both schedulers, and
//! the runtime, not the host, applies the throttled receive rule.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::net::UdpSocket;
use tempo::park::{DriverStats, Park};
use tempo::runtime::{Builder, IoReactor, Runtime};

mod support;
use support::{on_each_flavor, Flavor};

/// The host's driver: forwards to the I/O driver, counts its parks and
/// publishes the I/O driver's dispatch round before each park returns.
struct WrappingPark {
    io: IoReactor,
    parks: Arc<AtomicU64>,
    round: Arc<AtomicU64>,
}

impl WrappingPark {
    fn after_park(&self) {
        self.parks.fetch_add(1, SeqCst);
        self.round.store(self.io.dispatch_round(), SeqCst);
    }
}

impl Park for WrappingPark {
    type Unpark = <IoReactor as Park>::Unpark;
    type Error = std::io::Error;

    fn unpark(&self) -> Self::Unpark {
        self.io.unpark()
    }
    fn park(&mut self) -> std::io::Result<()> {
        let result = self.io.park();
        self.after_park();
        result
    }
    fn park_timeout(&mut self, d: Duration) -> std::io::Result<()> {
        let result = self.io.park_timeout(d);
        self.after_park();
        result
    }
    fn stats(&self) -> DriverStats {
        self.io.stats()
    }
}

struct Wrapped {
    rt: Runtime,
    parks: Arc<AtomicU64>,
    throttled: bool,
    /// The I/O driver's epoll instance.
    epoll: std::os::fd::RawFd,
}

/// `flavor`'s runtime over a `WrappingPark`, with `enable_io` and timers.
fn wrapped(flavor: Flavor) -> Wrapped {
    let parks = Arc::new(AtomicU64::new(0));
    let round = Arc::new(AtomicU64::new(0));
    let epoll = Arc::new(std::sync::atomic::AtomicI32::new(-1));
    let (p, r, e) = (parks.clone(), round, epoll.clone());
    let rt = flavor
        .builder()
        .enable_all()
        .with_park_fn(move |io| {
            e.store(std::os::fd::AsRawFd::as_raw_fd(&io), SeqCst);
            WrappingPark {
                io,
                parks: p,
                round: r,
            }
        })
        .build()
        .expect("with_park_fn combines with enable_io");
    Wrapped {
        rt,
        parks,
        throttled: flavor == Flavor::Throttling,
        epoll: epoll.load(SeqCst),
    }
}

#[test]
fn with_park_fn_alone_implies_io() {
    let rt = Builder::new_current_thread()
        .with_park_fn(|io| io)
        .build()
        .unwrap();
    let local = rt.block_on(async { UdpSocket::bind("127.0.0.1:0").await?.local_addr() });
    assert!(local.unwrap().ip().is_loopback());
}

/// The first build takes the host's driver: building again without giving
/// a new one is an error, not a runtime that silently lacks it.
#[test]
fn a_second_build_without_a_new_host_driver_is_an_error() {
    let mut builder = Builder::new_current_thread();
    builder.with_park_fn(|io| io);
    let first = builder.build().unwrap();
    let second = builder.build().unwrap_err();
    assert_eq!(second.kind(), std::io::ErrorKind::InvalidInput);
    assert!(second.to_string().contains("taken by an earlier build"));
    builder.with_park_fn(|io| io);
    let third = builder.build().unwrap();
    drop((first, third));
}

on_each_flavor! {
    #[test]
    fn host_park_wrapping_the_io_driver_receives_a_datagram() {
        let wrapped = wrapped(FLAVOR);
        let got = wrapped.rt.block_on(async {
            let receiver = UdpSocket::bind("127.0.0.1:0").await?;
            let sender = UdpSocket::bind("127.0.0.1:0").await?;
            let to = receiver.local_addr()?;
            // The receive waits in the driver: the datagram is sent by a
            // task that runs after the receiver is pending.
            let send = tempo::spawn(async move { sender.send_to(b"via host", to).await });
            let mut buf = [0u8; 32];
            let (n, _) = receiver.recv_from(&mut buf).await?;
            send.await.expect("sender task")?;
            Ok::<_, std::io::Error>(buf[..n].to_vec())
        });
        assert_eq!(
            got.unwrap(),
            b"via host",
            "throttled: {}",
            wrapped.throttled
        );
        assert!(
            wrapped.parks.load(SeqCst) > 0,
            "the scheduler parks through the host's driver (throttled: {})",
            wrapped.throttled
        );
    }

    /// Under throttling the runtime sets the I/O driver it hands to the host
    /// throttled: a datagram socket made on it is
    /// registered level-triggered for reading (one receive per report),
    /// which the host's epoll instance shows. The basic scheduler leaves
    /// the rule off: edge-triggered, read and write. Both receive what was
    /// queued, in order.
    #[test]
    fn runtime_applies_the_throttled_receive_rule_under_a_host_park() {
        use std::os::fd::AsRawFd;
        use tempo_test_support::net::{epoll_entry, EpollEntry};

        let wrapped = wrapped(FLAVOR);
        let epoll = wrapped.epoll;
        let entry = wrapped.rt.block_on(async move {
            let receiver = UdpSocket::bind("127.0.0.1:0").await?;
            let sender = UdpSocket::bind("127.0.0.1:0").await?;
            let entry = epoll_entry(epoll, receiver.as_raw_fd());
            // Loopback UDP queues a datagram before `send_to` returns.
            for payload in [b"one", b"two"] {
                sender.send_to(payload, receiver.local_addr()?).await?;
            }
            let mut buf = [0u8; 8];
            for payload in [b"one", b"two"] {
                let (n, _) = receiver.recv_from(&mut buf).await?;
                assert_eq!(&buf[..n], payload);
            }
            Ok::<_, std::io::Error>(entry)
        });
        let expected = if wrapped.throttled {
            EpollEntry { read: true, write: false, edge: false }
        } else {
            EpollEntry { read: true, write: true, edge: true }
        };
        assert_eq!(
            entry.unwrap(),
            Some(expected),
            "level-triggered datagram sockets under throttling only"
        );
    }
}

/// Under a host's driver that wraps the I/O driver, a throttled tick's
/// look is the host's zero-timeout park, not the I/O driver's own `look`:
/// a backlog still drains in the tick that finds it (a datagram socket
/// reported by two parks in a row holds a backlog, whoever makes them).
#[test]
fn a_backlog_drains_in_one_tick_under_a_host_park() {
    use std::sync::atomic::AtomicUsize;
    use tempo_test_support::net::sent_all_and_queued;

    const BACKLOG: usize = 20;
    let wrapped = wrapped(Flavor::Throttling);
    let rt = &wrapped.rt;
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let peeker = socket.try_clone().unwrap();
    let to = socket.local_addr().unwrap();
    let received = Arc::new(AtomicUsize::new(0));
    let count = received.clone();
    rt.spawn(async move {
        let socket = UdpSocket::from_std(socket).unwrap();
        let mut buf = [0u8; 4];
        // Bounded: the test stops turning the runtime.
        loop {
            socket.recv_from(&mut buf).await.unwrap();
            count.fetch_add(1, SeqCst);
        }
    });
    rt.turn(Duration::ZERO);
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sent_all_and_queued(&peeker, BACKLOG, || {
        sender.send_to(b"x", to).unwrap();
    });
    rt.turn(Duration::ZERO);
    assert_eq!(received.load(SeqCst), BACKLOG, "all in the tick");
}
