//! `tempo::net::UdpRingReceiver` on both schedulers: local tasks receive
//! their streams, and a runtime with nothing else to do wakes for an
//! arrival on the ring.

use std::time::Duration;

use tempo::net::{UdpRingReceiver, UdpSocket};

mod support;
use support::*;

on_each_flavor! {
    /// Twenty receivers, each in a `spawn_local` task, five datagrams each
    /// from one sender task: every datagram reaches its receiver, in
    /// order.
    #[test]
    fn local_tasks_receive_a_stream_each() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let mut addrs = Vec::new();
            let mut tasks = Vec::new();
            for stream in 0..20u8 {
                let rx = UdpRingReceiver::bind("127.0.0.1:0", 64).await.unwrap();
                addrs.push(rx.local_addr().unwrap());
                tasks.push(tempo::spawn_local(async move {
                    for seq in 0..5u8 {
                        let got = rx.recv_from_with(|d, _| d.to_vec()).await.unwrap();
                        assert_eq!(got, [stream, seq], "stream {stream}");
                    }
                }));
            }
            let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            for seq in 0..5u8 {
                for (stream, addr) in addrs.iter().enumerate() {
                    sender.send_to(&[stream as u8, seq], addr).await.unwrap();
                }
                tempo::task::yield_now().await;
            }
            for task in tasks {
                task.await.unwrap();
            }
        });
    }

    /// Nothing to do but wait for a datagram that another thread sends
    /// later: the ring's arrival wakes the runtime (the timeout only turns
    /// a lost wake-up into a failure instead of a hang).
    #[test]
    fn an_idle_runtime_wakes_for_a_ring_arrival() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let rx = UdpRingReceiver::bind("127.0.0.1:0", 64).await.unwrap();
            let to = rx.local_addr().unwrap();
            let sender = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                socket.send_to(b"late", to).unwrap();
            });
            let got = tempo::time::timeout(
                Duration::from_secs(30),
                rx.recv_from_with(|d, _| d.to_vec()),
            )
            .await
            .expect("the arrival did not wake the runtime")
            .unwrap();
            assert_eq!(got, b"late");
            sender.join().unwrap();
        });
    }
}

/// More than the (1 + 4 second looks) x 512 datagrams a tick would serve
/// without continuing the ring's dispatch (a turn asks for 256, the
/// kernel runs up to twice that).
const RING_RECEIVERS: usize = 4_000;

/// `RING_RECEIVERS` ring receivers on `rt`, each in a task that counts
/// its datagram in the returned cell (the first one to arrive runs
/// `on_first` first), armed, then one datagram sent to each, oldest
/// first. `None` where the fd limit is too low or io_uring is missing.
fn ring_receivers_with_a_datagram_each(
    rt: &Runtime,
    on_first: impl std::future::Future<Output = ()> + 'static,
) -> Option<std::rc::Rc<std::cell::Cell<usize>>> {
    let limit = tempo_test_support::fd::raise_fd_limit(RING_RECEIVERS as u64 + 256);
    if limit < RING_RECEIVERS as u64 + 100 {
        eprintln!("skipping: RLIMIT_NOFILE {limit} is too low for {RING_RECEIVERS} sockets");
        return None;
    }
    let _enter = rt.enter();
    let served = std::rc::Rc::new(std::cell::Cell::new(0usize));
    let mut on_first = Some(on_first);
    let mut addrs = Vec::new();
    for _ in 0..RING_RECEIVERS {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        addrs.push(socket.local_addr().unwrap());
        let rx = UdpRingReceiver::from_std(socket, 64).unwrap();
        if !rx.is_on_ring() {
            eprintln!("io_uring is not available here: nothing to check");
            return None;
        }
        let (served, first) = (served.clone(), on_first.take());
        drop(tempo::spawn_local(async move {
            rx.recv_from_with(|d, _| assert_eq!(d, b"x")).await.unwrap();
            if let Some(first) = first {
                first.await;
            }
            served.set(served.get() + 1);
        }));
    }
    // The tasks wait, and the next driver turn arms their receives.
    let mut polled = 0;
    while polled < RING_RECEIVERS as u64 {
        polled += rt.turn(Duration::ZERO).tasks_polled();
    }
    let arm = rt.turn(Duration::ZERO);
    assert_eq!((arm.io_events(), served.get()), (0, 0));
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for addr in &addrs {
        sender.send_to(b"x", addr).unwrap();
    }
    Some(served)
}

/// More arrivals than the tick's poll and its second looks hand out at
/// one ring chunk each: the tick continues the ring's dispatch until it
/// is done, so every receiver is served in the tick that found its
/// datagram. No timing: one `turn` is one tick.
#[test]
fn a_tick_serves_every_ring_arrival_however_many_chunks_they_take() {
    let rt = Flavor::Throttling
        .builder_with_period(tempo::runtime::MAX_THROTTLING)
        .enable_io()
        .build()
        .unwrap();
    let Some(served) = ring_receivers_with_a_datagram_each(&rt, async {}) else {
        return;
    };
    let tick = rt.turn(Duration::ZERO);
    assert_eq!(served.get(), RING_RECEIVERS, "every receiver in one tick");
    // The ring's completions, and its eventfd's readiness once a look.
    assert!(tick.io_events() >= RING_RECEIVERS as u64);
    assert!(!tick.overrun());
}

/// A tick continues the ring's dispatch only while it has not worked a
/// period (by the runtime's clock: here a paused one, which the first
/// task pushes past the period): the rest is served by the next ticks.
#[test]
fn a_tick_that_has_worked_a_period_leaves_the_ring_s_rest_to_the_next() {
    const PERIOD: Duration = Duration::from_millis(20);
    let rt = Flavor::Throttling
        .builder_with_period(PERIOD)
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let work_a_period = tempo::time::advance(2 * PERIOD);
    let Some(served) = ring_receivers_with_a_datagram_each(&rt, work_a_period) else {
        return;
    };
    rt.turn(Duration::ZERO);
    let first = served.get();
    assert!(
        (1..RING_RECEIVERS).contains(&first),
        "the tick stopped continuing once it had worked a period: {first}"
    );
    for _ in 0..100 {
        if served.get() == RING_RECEIVERS {
            break;
        }
        rt.turn(Duration::ZERO);
    }
    assert_eq!(
        served.get(),
        RING_RECEIVERS,
        "the next ticks serve the rest"
    );
}
