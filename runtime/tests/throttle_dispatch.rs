//! Every socket that is ready when a tick starts is served in that tick,
//! however many more there are than one reactor poll returns (issue 13,
//! item 1).
//!
//! The runtime's I/O driver is built with a small events buffer
//! (`io_events_capacity`), and three times as many sockets as it holds each
//! get a datagram while a task awaits `recv_from` on it. No timing is
//! asserted: the tests count turns, task completions and the I/O events a
//! turn reports.
//!
//! The first test runs on each flavor (`on_each_flavor!`): every ready
//! socket is served by one turn on both schedulers. The others are
//! throttling only: the tick budget, its overrun and the second look are
//! the throttling scheduler's (the basic scheduler has no tick).

use std::net::UdpSocket as StdUdpSocket;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::runtime::{Turn, MAX_THROTTLING};
use tempo_test_support::net::{sent_all_and_queued, wait_until_queued};

mod support;
use support::*;

/// Events one poll of the I/O driver returns at most, in these tests.
const CAPACITY: usize = 8;

/// The throttling period of these runtimes: the longest allowed, so that
/// no tick here (dozens of sockets, sends and waits in a debug build, on
/// a loaded machine) runs past its period. A tick then overruns only by
/// its budget, which is what these tests count; their turns never sleep,
/// so the long period costs no time.
const PERIOD: Duration = MAX_THROTTLING;

/// Ready sockets per test: three reactor polls' worth.
const SOCKETS: usize = 3 * CAPACITY;

/// `SOCKETS` receiving tasks on `rt`, all pending in `recv_from` after one
/// turn, then one datagram queued on each socket. Returns each task's
/// completion flag.
fn pending_receivers_then_datagrams(rt: &Runtime) -> Vec<Arc<AtomicBool>> {
    let (flags, sockets) = spawn_receivers(rt, SOCKETS, &[]);
    run_each_once(rt, SOCKETS);
    assert!(flags.iter().all(|done| !done.load(SeqCst)));
    send_one_to_each(&sockets);
    flags
}

/// One datagram to each socket, queued by the kernel when this returns.
fn send_one_to_each(sockets: &[(StdUdpSocket, std::net::SocketAddr)]) {
    let sender = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    for (peeker, addr) in sockets {
        sender.send_to(b"x", addr).unwrap();
        wait_until_queued(peeker);
    }
}

fn completed(flags: &[Arc<AtomicBool>]) -> usize {
    flags.iter().filter(|done| done.load(SeqCst)).count()
}

on_each_flavor! {
    /// Throttling: ONE tick (its I/O poll, then its task run) completes
    /// every receive. Basic: one park dispatches every event (its turn
    /// runs tasks before parking, so the woken tasks run in the next
    /// turn). With one buffer per park, the tick served `CAPACITY` sockets
    /// and left the rest to later ticks.
    #[test]
    fn every_ready_socket_is_served_in_one_tick() {
        let rt = FLAVOR.builder_with_period(PERIOD)
            .enable_io()
            .io_events_capacity(CAPACITY)
            .build()
            .unwrap();
        let flags = pending_receivers_then_datagrams(&rt);

        let tick = rt.turn(Duration::ZERO);
        assert_eq!(
            tick.io_events(),
            SOCKETS as u64,
            "one poll of the driver dispatches every ready socket"
        );
        let mut polled = tick.tasks_polled();
        if FLAVOR == Flavor::Basic {
            // The basic turn parked after running tasks: they are woken,
            // not yet run.
            assert_eq!(completed(&flags), 0);
            assert!(tick.tasks_remaining());
            let run = rt.turn(Duration::ZERO);
            assert_eq!(run.io_events(), 0, "nothing left to dispatch");
            polled += run.tasks_polled();
        } else {
            assert!(!tick.overrun());
        }
        assert_eq!(completed(&flags), SOCKETS, "every task completed");
        assert_eq!(polled, SOCKETS as u64, "each task polled once");
    }
}

/// The tick budget is the one limit on a tick: with fewer polls allowed
/// than sockets are ready, the tick serves as many as the budget allows,
/// overruns, and the next tick (started at once) serves the rest, though
/// every socket's event was dispatched by the first.
#[test]
fn the_tick_budget_is_the_only_limit_and_counts_an_overrun() {
    let rt = Flavor::Throttling
        .builder_with_period(PERIOD)
        .enable_io()
        .io_events_capacity(CAPACITY)
        .tick_budget((SOCKETS / 2) as u32)
        .build()
        .unwrap();
    let flags = pending_receivers_then_datagrams(&rt);
    let overruns = rt.metrics().overruns;

    let tick = rt.turn(Duration::ZERO);
    assert_eq!(tick.io_events(), SOCKETS as u64);
    assert_eq!(completed(&flags), SOCKETS / 2);
    assert!(tick.overrun());
    assert!(tick.tasks_remaining());
    assert_eq!(rt.metrics().overruns, overruns + 1);

    // The sockets whose tasks did not run still hold their datagrams:
    // level-triggered, they are reported again (their tasks were woken by
    // the first tick already; the reports find their waiters' entries, so
    // nothing is disarmed).
    let next = rt.turn(Duration::ZERO);
    assert_eq!(next.io_events(), (SOCKETS / 2) as u64);
    assert_eq!(completed(&flags), SOCKETS);
    assert!(!next.overrun());
    let idle = rt.turn(Duration::ZERO);
    assert_eq!(idle.io_events(), 0, "no event was left in the reactor");
}

/// `count` receiving tasks on `rt`, each on its own socket; the task of
/// socket `i`, once it has its datagram, sends one to `forward[i]` (if
/// any) and waits until the kernel has queued it. Returns the completion
/// flags, a peeking clone and the address of each socket.
fn spawn_receivers(
    rt: &Runtime,
    count: usize,
    forward: &[(StdUdpSocket, std::net::SocketAddr)],
) -> (
    Vec<Arc<AtomicBool>>,
    Vec<(StdUdpSocket, std::net::SocketAddr)>,
) {
    let mut flags = Vec::new();
    let mut sockets = Vec::new();
    for i in 0..count {
        let socket = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        sockets.push((socket.try_clone().unwrap(), socket.local_addr().unwrap()));
        let done = Arc::new(AtomicBool::new(false));
        flags.push(done.clone());
        let forward = forward
            .get(i)
            .map(|(peeker, addr)| (peeker.try_clone().unwrap(), *addr));
        rt.spawn(async move {
            let socket = tempo::net::UdpSocket::from_std(socket).unwrap();
            let mut buf = [0u8; 4];
            let (n, _) = socket.recv_from(&mut buf).await.unwrap();
            assert_eq!(n, 1);
            if let Some((peeker, addr)) = forward {
                // A plain socket: a send on `socket` would add a writable
                // event of its own.
                let sender = StdUdpSocket::bind("127.0.0.1:0").unwrap();
                sender.send_to(b"y", addr).unwrap();
                wait_until_queued(&peeker);
            }
            done.store(true, SeqCst);
        });
    }
    (flags, sockets)
}

/// Turns `rt` until `count` task polls were made (every spawned task has
/// run once and waits; several turns if the tick budget is smaller).
fn run_each_once(rt: &Runtime, count: usize) {
    let mut polled = 0;
    for _ in 0..count {
        polled += rt.turn(Duration::ZERO).tasks_polled();
        if polled >= count as u64 {
            break;
        }
    }
    assert_eq!(polled, count as u64);
}

/// `first` receivers whose tasks each make one of `CAPACITY` late
/// receivers ready while the tick runs; one tick after their datagrams
/// were queued. Returns the runtime, the tick and the completion flags of
/// both groups.
///
/// The runtime has timers too, and the last of the `first` tasks, once it
/// has its datagram, sleeps 1 ms before it completes. A second look must
/// not fire that timer (timers fire at the start of a tick only): the
/// task is still sleeping after the tick.
fn tick_that_readies_more_sockets(
    first: usize,
) -> (Runtime, Turn, Vec<Arc<AtomicBool>>, Vec<Arc<AtomicBool>>) {
    let rt = Flavor::Throttling
        .builder_with_period(PERIOD)
        .enable_all()
        .io_events_capacity(CAPACITY)
        .build()
        .unwrap();
    let (late, late_sockets) = spawn_receivers(&rt, CAPACITY, &[]);
    let (mut early, mut early_sockets) = spawn_receivers(&rt, first - 1, &late_sockets);
    let sleeper = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    early_sockets.push((sleeper.try_clone().unwrap(), sleeper.local_addr().unwrap()));
    let slept = Arc::new(AtomicBool::new(false));
    early.push(slept.clone());
    rt.spawn(async move {
        let socket = tempo::net::UdpSocket::from_std(sleeper).unwrap();
        socket.recv_from(&mut [0u8; 4]).await.unwrap();
        tempo::time::sleep(Duration::from_millis(1)).await;
        slept.store(true, SeqCst);
    });
    run_each_once(&rt, CAPACITY + first);
    // Each socket's first event (writable, from its registration) is
    // dispatched here, so that the tick below dispatches datagrams only.
    let settle = rt.turn(Duration::ZERO);
    assert_eq!(settle.tasks_polled(), 0);

    send_one_to_each(&early_sockets);
    let tick = rt.turn(Duration::ZERO);
    assert!(
        !early.last().unwrap().load(SeqCst),
        "a second look fired a timer"
    );
    (rt, tick, early, late)
}

/// A tick that dispatched more events than one reactor poll returns takes
/// a second look after running its tasks: sockets that became ready while
/// it worked are served in the same tick, not a period later.
#[test]
fn sockets_ready_during_a_large_tick_are_served_by_a_second_look() {
    let (_rt, tick, early, late) = tick_that_readies_more_sockets(SOCKETS);
    assert_eq!(completed(&early), SOCKETS - 1, "all but the sleeping one");
    assert_eq!(
        completed(&late),
        CAPACITY,
        "the sockets made ready during the tick were served in it"
    );
    assert_eq!(tick.io_events(), (SOCKETS + CAPACITY) as u64);
    assert_eq!(tick.tasks_polled(), (SOCKETS + CAPACITY) as u64);
    assert!(!tick.overrun());
}

/// A tick that dispatched fewer events than one reactor poll returns
/// still takes one look after running its tasks, for backlogs (the
/// datagram sockets of a throttled runtime are level-triggered and take
/// one datagram per report: the look reports those with one left). The
/// look also serves the sockets that became ready while the tick ran;
/// it finds nothing more, so it is the only one.
#[test]
fn a_small_tick_takes_one_look_which_serves_what_became_ready_meanwhile() {
    let (rt, tick, early, late) = tick_that_readies_more_sockets(CAPACITY - 1);
    assert_eq!(completed(&early), CAPACITY - 2, "all but the sleeping one");
    // The first `CAPACITY - 2` made one late socket ready each.
    assert_eq!(completed(&late), CAPACITY - 2, "served by the look");
    assert_eq!(tick.io_events(), (2 * CAPACITY - 3) as u64);

    let next = rt.turn(Duration::ZERO);
    assert_eq!(next.io_events(), 0);
}

/// A datagram socket with a backlog found by a tick is drained in that
/// tick: the tick's poll reports it and its task takes one datagram; the
/// tick's look reports it again, with a backlog, and the task drains it
/// to `WouldBlock`. None waits for a later tick.
#[test]
fn a_backlog_is_drained_in_the_tick_that_finds_it() {
    const BACKLOG: usize = 20;
    let rt = Flavor::Throttling
        .builder_with_period(PERIOD)
        .enable_io()
        .build()
        .unwrap();
    let socket = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    let peeker = socket.try_clone().unwrap();
    let to = socket.local_addr().unwrap();
    let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = received.clone();
    rt.spawn(async move {
        let socket = tempo::net::UdpSocket::from_std(socket).unwrap();
        let mut buf = [0u8; 4];
        // Bounded: the test stops turning the runtime.
        loop {
            socket.recv_from(&mut buf).await.unwrap();
            count.fetch_add(1, SeqCst);
        }
    });
    run_each_once(&rt, 1);
    let sender = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    sent_all_and_queued(&peeker, BACKLOG, || {
        sender.send_to(b"x", to).unwrap();
    });

    let tick = rt.turn(Duration::ZERO);
    assert_eq!(received.load(SeqCst), BACKLOG, "all in the tick");
    assert_eq!(tick.io_events(), 2, "the tick's poll and its look");
    let next = rt.turn(Duration::ZERO);
    assert_eq!(next.io_events(), 0, "nothing left");
}
