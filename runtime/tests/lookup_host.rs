//! Host-name resolution off the runtime's thread: `tempo::net::lookup_host`
//! and names in `bind` / `connect` / `send_to`, on both schedulers.

mod support;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use support::*;
use tempo::net::{Resolve, Resolving, TcpListener, TcpStream, UdpSocket};

/// A resolver that blocks a blocking-pool thread until the test lets it
/// go, then answers 127.0.0.1 with the asked port: a slow DNS server.
struct GatedResolver {
    gate: Mutex<Option<mpsc::Receiver<()>>>,
    asked: AtomicU32,
}

impl Resolve for GatedResolver {
    fn resolve(&self, host_and_port: String) -> Resolving {
        self.asked.fetch_add(1, SeqCst);
        let gate = self.gate.lock().unwrap().take();
        let join = tempo::task::spawn_blocking(move || {
            if let Some(gate) = gate {
                // Bounded: a runtime that never lets the gate open fails
                // the test instead of hanging it.
                gate.recv_timeout(Duration::from_secs(30))
                    .expect("the runtime thread was blocked: nobody opened the gate");
            }
            let port: u16 = host_and_port.rsplit(':').next().unwrap().parse().unwrap();
            vec![SocketAddr::from((Ipv4Addr::LOCALHOST, port))]
        });
        Box::pin(async move { Ok(join.await.unwrap()) })
    }
}

on_each_flavor! {
    #[test]
    fn localhost_resolves_on_the_blocking_pool() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            assert_eq!(
                tempo::runtime::Handle::current().metrics().blocking_threads,
                0,
                "IP addresses never go to the pool"
            );

            let addrs: Vec<SocketAddr> = tempo::net::lookup_host(format!("localhost:{port}"))
                .await
                .unwrap()
                .collect();
            assert!(!addrs.is_empty());
            assert!(addrs.iter().all(|a| a.port() == port && a.ip().is_loopback()), "{addrs:?}");
            assert!(
                tempo::runtime::Handle::current().metrics().blocking_threads >= 1,
                "a name is resolved on a blocking pool thread"
            );

            // Names in connect, bind and send_to.
            let v4 = addrs.iter().any(SocketAddr::is_ipv4);
            if v4 {
                let (stream, accepted) = futures_join(
                    TcpStream::connect(("localhost", port)),
                    listener.accept(),
                )
                .await;
                stream.unwrap();
                accepted.unwrap();
            }
            let socket = UdpSocket::bind("localhost:0").await.unwrap();
            let peer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = format!("localhost:{}", peer.local_addr().unwrap().port());
            if socket.local_addr().unwrap().is_ipv4() {
                socket.send_to(b"hi", to.as_str()).await.unwrap();
                let mut buf = [0u8; 4];
                let (n, _) = peer.recv_from(&mut buf).await.unwrap();
                assert_eq!(&buf[..n], b"hi");
            }
        });
    }

    #[test]
    fn a_slow_resolution_does_not_stop_other_tasks() {
        let rt = builder().enable_all().build().unwrap();
        let (open, gate) = mpsc::channel();
        let resolver = Arc::new(GatedResolver {
            gate: Mutex::new(Some(gate)),
            asked: AtomicU32::new(0),
        });
        rt.block_on(async {
            tempo_io_handle().set_resolver(resolver.clone());
            let ticks = Arc::new(AtomicU32::new(0));
            // A task that keeps running while the resolution is blocked,
            // and opens the gate after 20 rounds: if the resolution
            // blocked the runtime's thread, it would never get there.
            let ticker = tempo::spawn({
                let ticks = ticks.clone();
                async move {
                    for _ in 0..20 {
                        ticks.fetch_add(1, SeqCst);
                        yield_once().await;
                    }
                    open.send(()).unwrap();
                }
            });
            let addrs: Vec<SocketAddr> =
                tempo::net::lookup_host("slow.example:4242").await.unwrap().collect();
            assert_eq!(addrs, [SocketAddr::from((Ipv4Addr::LOCALHOST, 4242))]);
            assert_eq!(ticks.load(SeqCst), 20, "the other task ran during the lookup");
            ticker.await.unwrap();

            // The same path serves bind: a name reaches the resolver, an
            // IP address does not.
            let socket = UdpSocket::bind("slow.example:0").await.unwrap();
            assert!(socket.local_addr().unwrap().ip().is_loopback());
            assert_eq!(resolver.asked.load(SeqCst), 2);
            UdpSocket::bind("127.0.0.1:0").await.unwrap();
            UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            assert_eq!(resolver.asked.load(SeqCst), 2, "IP addresses skip the resolver");
        });
    }

    #[test]
    fn an_unknown_name_is_an_error() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            // `.invalid` never resolves (RFC 6761).
            assert!(tempo::net::lookup_host("no-such-host.invalid:80").await.is_err());
            assert!(UdpSocket::bind("no-such-host.invalid:0").await.is_err());
        });
    }
}

/// The tempo-io handle of the current runtime's I/O driver.
fn tempo_io_handle() -> tempo::runtime::IoHandle {
    tempo::runtime::IoHandle::current()
}

/// Returns `Pending` once, waking itself (the task yields).
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

/// Polls two futures together until both are done.
async fn futures_join<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut out_a, mut out_b) = (None, None);
    std::future::poll_fn(|cx| {
        if out_a.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                out_a = Some(v);
            }
        }
        if out_b.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                out_b = Some(v);
            }
        }
        if out_a.is_some() && out_b.is_some() {
            std::task::Poll::Ready((out_a.take().unwrap(), out_b.take().unwrap()))
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}
