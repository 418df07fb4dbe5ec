//! Allocations per received datagram after warm-up must be 0, in both the
//! ordinary mode and throttled, with `recv_from` and with
//! `recv_from_with` (the thread's buffer), and per `recv_many` /
//! `send_many` call once their batches are built. A counting global
//! allocator counts the allocations of this test's thread only.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Context;
use std::time::Duration;

use futures::task::noop_waker;
use tempo_io::net::{RecvBatch, SendBatch, UdpSocket};
use tempo_io::Driver;
use tempo_park::{IoDriver, Park};
use tempo_test_support::alloc::{count_on_this_thread, CountingAllocator, ThreadCounter};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// A driver in the ordinary mode or `throttled`.
fn driver(throttled: bool) -> Driver {
    let mut driver = Driver::new().unwrap();
    driver.set_throttled(throttled);
    driver
}

/// A task per bound socket (`sockets` of them), the tokio-style receive
/// loop with `recv_from` or (`closure`) `recv_from_with`, counting the
/// 160-byte datagrams it takes in `received`; and the sockets' addresses.
fn receive_tasks(
    sockets: usize,
    closure: bool,
    received: &Rc<Cell<u64>>,
) -> (Vec<std::net::SocketAddr>, Vec<Task>) {
    let sockets: Vec<Rc<UdpSocket>> = (0..sockets)
        .map(|_| {
            Rc::new(UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap())
        })
        .collect();
    let addrs: Vec<_> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
    let tasks = sockets
        .iter()
        .map(|socket| {
            let socket = socket.clone();
            let received = received.clone();
            Box::pin(async move {
                let mut buf = [0u8; 1500];
                loop {
                    let n = if closure {
                        socket.recv_from_with(|d, _| d.len()).await.unwrap()
                    } else {
                        socket.recv_from(&mut buf).await.unwrap().0
                    };
                    assert_eq!(n, 160);
                    received.set(received.get() + 1);
                }
            }) as Task
        })
        .collect();
    (addrs, tasks)
}

/// Polls every task, parking `driver` between rounds, until `received`
/// reaches `expected`.
fn receive_until(driver: &mut Driver, tasks: &mut [Task], received: &Cell<u64>, expected: u64) {
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    for _ in 0..1000 {
        for task in tasks.iter_mut() {
            assert!(task.as_mut().poll(&mut cx).is_pending());
        }
        if received.get() >= expected {
            return;
        }
        driver.park_timeout(Duration::from_secs(5)).unwrap();
    }
    panic!("datagrams stranded");
}

/// Receives `rounds` datagrams on each of `sockets` sockets, one per socket
/// per round, with `recv_from` or (`closure`) `recv_from_with`; returns
/// the allocations counted after `warmup` rounds.
fn allocations_after_warmup(
    throttled: bool,
    closure: bool,
    sockets: usize,
    warmup: u32,
    rounds: u32,
) -> (u64, u64) {
    let mut driver = driver(throttled);
    let handle = driver.handle();
    let _enter = handle.enter();
    let received = Rc::new(Cell::new(0u64));
    let (addrs, mut tasks) = receive_tasks(sockets, closure, &received);
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let payload = [7u8; 160];
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
        receive_until(&mut driver, &mut tasks, &received, expected);
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

    for throttled in [false, true] {
        for closure in [false, true] {
            let (allocations, datagrams) =
                allocations_after_warmup(throttled, closure, 100, 10, 60);
            println!(
                "throttled={throttled} closure={closure}: {allocations} allocations for {datagrams} datagrams"
            );
            assert_eq!(
                allocations, 0,
                "throttled={throttled} closure={closure}: allocations on the receive path"
            );
        }
    }
}

/// A poll that reports every socket at once allocates nothing, even when
/// no poll before reported more than one: the driver keeps room for a
/// waker per registered socket. Warm-up: one socket at a time; counted:
/// a datagram to every socket before one park.
#[test]
fn a_poll_reporting_every_socket_at_once_allocates_nothing() {
    const SOCKETS: usize = 64;
    for throttled in [false, true] {
        let mut driver = driver(throttled);
        let handle = driver.handle();
        let _enter = handle.enter();
        let received = Rc::new(Cell::new(0u64));
        let (addrs, mut tasks) = receive_tasks(SOCKETS, false, &received);
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut until =
            |driver: &mut Driver, expected| receive_until(driver, &mut tasks, &received, expected);
        until(&mut driver, 0);
        let mut expected = 0;
        for _ in 0..2 {
            for addr in &addrs {
                sender.send_to(&[7u8; 160], addr).unwrap();
                expected += 1;
                until(&mut driver, expected);
            }
        }
        let counter = ThreadCounter::start();
        for addr in &addrs {
            sender.send_to(&[7u8; 160], addr).unwrap();
        }
        until(&mut driver, expected + SOCKETS as u64);
        let allocations = counter.stop();
        assert_eq!(
            allocations, 0,
            "throttled={throttled}: the burst grew a buffer"
        );
    }
}

/// `send_many` / `recv_many` allocate nothing per call once their batches
/// are built and warmed up: one sender socket sends a `SendBatch` of one
/// datagram per receiving socket each round (cleared and refilled), one
/// `recv_many` task per socket takes them.
#[test]
fn zero_allocations_per_batch_call_after_warmup() {
    let (sockets, warmup, rounds) = (50, 5u32, 30u32);
    let mut driver = driver(true);
    let handle = driver.handle();
    let _enter = handle.enter();
    let received = Rc::new(Cell::new(0u64));
    let bind = || UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let receivers: Vec<Rc<UdpSocket>> = (0..sockets).map(|_| Rc::new(bind())).collect();
    let addrs: Vec<_> = receivers.iter().map(|s| s.local_addr().unwrap()).collect();
    let mut tasks: Vec<Task> = receivers
        .iter()
        .map(|socket| {
            let socket = socket.clone();
            let received = received.clone();
            Box::pin(async move {
                let mut batch = RecvBatch::new(8, 1500).unwrap().with_timestamps();
                loop {
                    let n = socket.recv_many(&mut batch).await.unwrap();
                    for i in 0..n {
                        assert_eq!(batch.payload(i).len(), 160);
                    }
                    received.set(received.get() + n as u64);
                }
            }) as Task
        })
        .collect();
    let sender = bind();
    let mut out = SendBatch::with_capacity(sockets, sockets * 160);
    let payload = [7u8; 160];
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut expected = 0;
    let mut counter = None;
    for round in 0..rounds {
        if round == warmup {
            counter = Some(ThreadCounter::start());
        }
        for addr in &addrs {
            out.push(&payload, *addr).unwrap();
        }
        let mut sends = 0;
        while !out.is_empty() {
            match out_poll(&sender, &mut cx, &mut out) {
                Some(_) => {}
                None => driver.park_timeout(Duration::from_millis(100)).unwrap(),
            }
            sends += 1;
            assert!(sends < 1000, "send_many made no progress");
        }
        expected += addrs.len() as u64;
        receive_until(&mut driver, &mut tasks, &received, expected);
    }
    let allocations = counter.map_or(0, ThreadCounter::stop);
    println!("batch calls: {allocations} allocations after warm-up");
    assert_eq!(allocations, 0, "allocations on the batch paths");
}

/// One `poll_send_many`: `Some(sent)` or `None` if it must wait.
fn out_poll(sender: &UdpSocket, cx: &mut Context<'_>, out: &mut SendBatch) -> Option<usize> {
    match sender.poll_send_many(cx, out) {
        std::task::Poll::Ready(result) => Some(result.unwrap()),
        std::task::Poll::Pending => None,
    }
}
