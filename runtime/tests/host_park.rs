//! A host's `Park` driver that wraps Tempo's I/O driver
//! (`Builder::with_park_fn`): sockets work under it on both schedulers, and
//! the runtime, not the host, applies the throttled receive-ahead rule.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::net::UdpSocket;
use tempo::park::{DriverStats, Park};
use tempo::runtime::{Builder, IoDriver, Runtime};

mod support;
use support::{on_each_flavor, Flavor};

/// The host's driver: forwards to the I/O driver, counts its parks and
/// publishes the I/O driver's dispatch round before each park returns.
struct WrappingPark {
    io: IoDriver,
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
    type Unpark = <IoDriver as Park>::Unpark;
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
}

/// `flavor`'s runtime over a `WrappingPark`, with `enable_io` and timers.
fn wrapped(flavor: Flavor) -> Wrapped {
    let parks = Arc::new(AtomicU64::new(0));
    let round = Arc::new(AtomicU64::new(0));
    let (p, r) = (parks.clone(), round);
    let rt = flavor
        .builder()
        .enable_all()
        .with_park_fn(move |io| WrappingPark {
            io,
            parks: p,
            round: r,
        })
        .build()
        .expect("with_park_fn combines with enable_io");
    Wrapped {
        rt,
        parks,
        throttled: flavor == Flavor::Throttling,
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

    /// Under throttling the runtime turns the receive-ahead rule on in the I/O
    /// driver it hands to the host: of two datagrams already queued, the first
    /// receive takes both from the kernel (the second is held, the kernel queue
    /// is empty). The basic scheduler leaves it off: the second stays in the
    /// kernel until its own receive.
    #[test]
    fn runtime_applies_the_recv_ahead_rule_under_a_host_park() {
        let wrapped = wrapped(FLAVOR);
        let kernel_empty_after_first = wrapped.rt.block_on(async move {
            let receiver = UdpSocket::bind("127.0.0.1:0").await?;
            let sender = UdpSocket::bind("127.0.0.1:0").await?;
            // Loopback UDP queues a datagram before `send_to` returns.
            for payload in [b"one", b"two"] {
                sender.send_to(payload, receiver.local_addr()?).await?;
            }
            let mut buf = [0u8; 8];
            let (n, _) = receiver.recv_from(&mut buf).await?;
            assert_eq!(&buf[..n], b"one");
            // A peek on a duplicate of the fd sees the kernel queue only.
            let dup = std::net::UdpSocket::from(receiver.as_fd().try_clone_to_owned()?);
            let kernel_empty = dup
                .peek_from(&mut buf)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock);
            let (n, _) = receiver.recv_from(&mut buf).await?;
            assert_eq!(&buf[..n], b"two");
            Ok::<_, std::io::Error>(kernel_empty)
        });
        assert_eq!(
            kernel_empty_after_first.unwrap(),
            wrapped.throttled,
            "receive-ahead on under throttling only"
        );
    }
}
