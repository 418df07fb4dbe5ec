//! Allocations per received datagram after warm-up must be 0, in both the
//! ordinary mode and with the deferred drain retry. A counting global
//! allocator counts the allocations of this test's thread only.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use tempo_io::net::UdpSocket;
use tempo_io::Driver;
use tempo_park::Park;
use tempo_test_support::alloc::{count_on_this_thread, CountingAllocator, ThreadCounter};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

struct NoopWaker;
impl Wake for NoopWaker {
    fn wake(self: Arc<Self>) {}
}

/// Receives `rounds` datagrams on each of `sockets` sockets, one per socket
/// per round; returns the allocations counted after `warmup` rounds.
fn allocations_after_warmup(
    defer_drain_retry: bool,
    sockets: usize,
    warmup: u32,
    rounds: u32,
) -> (u64, u64) {
    let mut driver = Driver::new().unwrap();
    driver.set_defer_drain_retry(defer_drain_retry);
    let handle = driver.handle();
    let _enter = handle.enter();
    let received = Rc::new(Cell::new(0u64));
    let sockets: Vec<Rc<UdpSocket>> = (0..sockets)
        .map(|_| {
            Rc::new(UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        })
        .collect();
    let addrs: Vec<_> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
    // The tokio-style receive loop, one task per socket.
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()>>>> = sockets
        .iter()
        .map(|socket| {
            let socket = socket.clone();
            let received = received.clone();
            Box::pin(async move {
                let mut buf = [0u8; 1500];
                loop {
                    let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                    assert_eq!(n, 160);
                    received.set(received.get() + 1);
                }
            }) as Pin<Box<dyn Future<Output = ()>>>
        })
        .collect();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let payload = [7u8; 160];
    let waker = Waker::from(Arc::new(NoopWaker));
    let mut cx = Context::from_waker(&waker);
    let mut expected = 0;
    let mut counted_datagrams = 0;
    let mut counter = None;
    for round in 0..rounds {
        if round == warmup {
            counter = Some(ThreadCounter::start());
        }
        for addr in &addrs {
            sender.send_to(&payload, addr).unwrap();
        }
        expected += addrs.len() as u64;
        let mut turns = 0;
        while received.get() < expected {
            for task in &mut tasks {
                assert!(task.as_mut().poll(&mut cx).is_pending());
            }
            if received.get() < expected {
                driver.park_timeout(Duration::from_secs(5)).unwrap();
            }
            turns += 1;
            assert!(turns < 1000, "datagrams stranded");
        }
        if round >= warmup {
            counted_datagrams += addrs.len() as u64;
        }
    }
    let allocations = counter.map_or(0, ThreadCounter::stop);
    (allocations, counted_datagrams)
}

#[test]
fn zero_allocations_per_received_datagram_after_warmup() {
    // The counter works: one box, one allocation.
    let ((), allocations) = count_on_this_thread(|| drop(std::hint::black_box(Box::new(1u64))));
    assert_eq!(allocations, 1);

    for defer in [false, true] {
        let (allocations, datagrams) = allocations_after_warmup(defer, 100, 10, 60);
        println!("defer_drain_retry={defer}: {allocations} allocations for {datagrams} datagrams");
        assert_eq!(
            allocations, 0,
            "defer_drain_retry={defer}: allocations on the receive path"
        );
    }
}
