//! The cooperative budget (`tempo_park::coop`): one task looping on an
//! always-ready resource must not starve the others, on both schedulers.
//!
//! Every test is count-based, never time-based: a busy loop counts its
//! *streak*, the most iterations it ran in a row while the other side (a
//! task or the `block_on` future, bumping a counter on every poll) did not
//! run. Without a budget the streak is the whole loop; with one it is
//! bounded by the budget (128 units per poll).

use std::future::{poll_fn, Future};
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::Context;
use std::time::Duration;

use tempo::net::{TcpListener, TcpStream, UdpSocket};
use tempo::runtime::Runtime;
use tempo::task::{consume_budget, unconstrained, yield_now};

mod support;
use support::{on_each_flavor, Flavor};

/// Iterations of each busy loop.
const BUSY: u64 = 2_000;
/// The longest streak a budgeted busy task may run without another task
/// running: the budget (128 units, at least one per iteration) plus slack.
const MAX_STREAK: u64 = 200;
/// The same when the other side is the `block_on` future.
const MAX_STREAK_VS_BLOCK_ON: u64 = EVENT_INTERVAL as u64 * 128 + 200;
/// Bound of the other side's loop (it normally stops at the busy loop's
/// signal long before).
const OTHER_BOUND: u64 = 50_000_000;

/// Task polls between two polls of a woken `block_on` future, in the
/// runtimes of these tests: a busy task may run `EVENT_INTERVAL` full
/// budgets before the `block_on` future gets its turn.
const EVENT_INTERVAL: u32 = 4;

/// `flavor`'s runtime with I/O, time and the short event interval, and
/// the flavor's name.
fn runtime(flavor: Flavor) -> (&'static str, Runtime) {
    let rt = flavor
        .builder()
        .enable_all()
        .event_interval(EVENT_INTERVAL)
        .build()
        .unwrap();
    (flavor.name(), rt)
}

/// The other side of a contest: counts its polls until told to stop.
#[derive(Default)]
struct Progress {
    other_runs: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Yields in a loop, counting, until the busy side is done.
    async fn other(&self) {
        for _ in 0..OTHER_BOUND {
            if self.stop.load(Relaxed) {
                return;
            }
            self.other_runs.fetch_add(1, Relaxed);
            yield_now().await;
        }
    }
}

/// Tracks the busy loop's longest streak without the other side running.
struct Streak<'a> {
    progress: &'a Progress,
    last_seen: u64,
    current: u64,
    longest: u64,
}

impl<'a> Streak<'a> {
    fn new(progress: &'a Progress) -> Streak<'a> {
        Streak {
            progress,
            last_seen: progress.other_runs.load(Relaxed),
            current: 0,
            longest: 0,
        }
    }

    /// One busy iteration done.
    fn step(&mut self) {
        let seen = self.progress.other_runs.load(Relaxed);
        if seen == self.last_seen {
            self.current += 1;
            self.longest = self.longest.max(self.current);
        } else {
            self.last_seen = seen;
            self.current = 0;
        }
    }

    /// Ends the contest; returns the longest streak.
    fn finish(self) -> u64 {
        self.progress.stop.store(true, Relaxed);
        self.longest
    }
}

/// A UDP socket that always has a datagram queued: `BUSY` receives, each
/// followed by a (blocking, budget-free) std send that refills it.
async fn busy_udp(progress: Arc<Progress>) -> u64 {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let target = socket.local_addr().unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..4 {
        sender.send_to(b"flood", target).unwrap();
    }
    let mut streak = Streak::new(&progress);
    let mut buf = [0u8; 64];
    for _ in 0..BUSY {
        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"flood");
        sender.send_to(b"flood", target).unwrap();
        streak.step();
    }
    streak.finish()
}

/// A TCP stream that always has bytes to read: `BUSY` reads, each followed
/// by a (blocking, budget-free) std write of what was read.
async fn busy_tcp(progress: Arc<Progress>) -> u64 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut writer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (reader, _) = listener.accept().await.unwrap();
    writer.write_all(&[7u8; 256]).unwrap();
    let mut streak = Streak::new(&progress);
    let mut buf = [0u8; 16];
    for _ in 0..BUSY {
        let n = reader.read(&mut buf).await.unwrap();
        assert!(n > 0);
        writer.write_all(&buf[..n]).unwrap();
        streak.step();
    }
    streak.finish()
}

/// A loop of pure CPU work that calls `consume_budget` each iteration.
async fn busy_cpu(progress: Arc<Progress>) -> u64 {
    let mut streak = Streak::new(&progress);
    for _ in 0..BUSY {
        consume_budget().await;
        streak.step();
    }
    streak.finish()
}

/// Which side of the contest runs as the `block_on` future.
#[derive(Clone, Copy, Debug)]
enum BusyIn {
    /// The busy loop is a spawned task; the other side runs in `block_on`.
    Task,
    /// The busy loop is the `block_on` future; the other side is a task.
    BlockOn,
}

/// Runs `busy` against a yielding counter on `flavor` and returns nothing:
/// asserts the busy loop's streak is bounded.
fn contest<B, F>(flavor: Flavor, busy: B, busy_in: BusyIn)
where
    B: Fn(Arc<Progress>) -> F,
    F: Future<Output = u64> + Send + 'static,
{
    let (flavor, rt) = runtime(flavor);
    let progress = Arc::new(Progress::default());
    let busy_future = busy(progress.clone());
    let longest = rt.block_on(async move {
        match busy_in {
            BusyIn::Task => {
                let busy = tempo::spawn(busy_future);
                progress.other().await;
                busy.await.unwrap()
            }
            BusyIn::BlockOn => {
                let other = progress.clone();
                let other = tempo::spawn(async move { other.other().await });
                let longest = busy_future.await;
                other.await.unwrap();
                longest
            }
        }
    });
    let max = match busy_in {
        BusyIn::Task => MAX_STREAK_VS_BLOCK_ON,
        BusyIn::BlockOn => MAX_STREAK,
    };
    assert!(
        longest <= max,
        "{flavor}, busy loop in {busy_in:?}: it ran {longest} iterations in a row \
         (of {BUSY}) while the other side never ran"
    );
}

/// Runs `busy` as a task next to a yielding task (the `block_on` future
/// only waits for both) on `flavor`: the tasks' contest.
fn task_contest<B, F>(flavor: Flavor, busy: B)
where
    B: Fn(Arc<Progress>) -> F,
    F: Future<Output = u64> + Send + 'static,
{
    let (flavor, rt) = runtime(flavor);
    let progress = Arc::new(Progress::default());
    let busy_future = busy(progress.clone());
    let longest = rt.block_on(async move {
        let other = tempo::spawn(async move { progress.other().await });
        let longest = tempo::spawn(busy_future).await.unwrap();
        other.await.unwrap();
        longest
    });
    assert!(
        longest <= MAX_STREAK,
        "{flavor}: the busy task ran {longest} iterations in a row (of {BUSY}) \
         while the other task never ran"
    );
}

/// Counts how many times the inner future was polled.
struct CountPolls<F> {
    inner: Pin<Box<F>>,
    polls: u64,
}

impl<F: Future> CountPolls<F> {
    fn new(inner: F) -> CountPolls<F> {
        CountPolls {
            inner: Box::pin(inner),
            polls: 0,
        }
    }

    /// Runs the inner future to completion; returns its output and the
    /// number of polls it took.
    async fn run(mut self) -> (F::Output, u64) {
        let output = poll_fn(|cx| {
            self.polls += 1;
            self.inner.as_mut().poll(cx)
        })
        .await;
        (output, self.polls)
    }
}

/// `n` calls of `consume_budget`.
async fn consume(n: u64) -> u64 {
    for _ in 0..n {
        consume_budget().await;
    }
    n
}

/// A future that spends the whole budget on every poll and never completes.
async fn always_exhausts_budget() {
    for _ in 0..OTHER_BOUND {
        consume_budget().await;
    }
}

/// `n` receives on a tokio `mpsc` channel that always has a message (each
/// receive is preceded by a send), calling Tempo's `consume_budget` after
/// each receive if `cooperative`.
async fn tokio_mpsc_loop(n: u64, cooperative: bool) -> u64 {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut received = 0;
    for i in 0..n {
        tx.send(i).unwrap();
        received += u64::from(rx.recv().await == Some(i));
        if cooperative {
            consume_budget().await;
        }
    }
    received
}

on_each_flavor! {
    #[test]
    fn flooded_udp_socket_does_not_starve_other_tasks() {
        task_contest(FLAVOR, busy_udp);
    }

    #[test]
    fn always_ready_tcp_read_does_not_starve_other_tasks() {
        task_contest(FLAVOR, busy_tcp);
    }

    #[test]
    fn busy_block_on_future_does_not_starve_tasks() {
        contest(FLAVOR, busy_udp, BusyIn::BlockOn);
        contest(FLAVOR, busy_tcp, BusyIn::BlockOn);
    }

    #[test]
    fn busy_task_does_not_starve_the_block_on_future() {
        contest(FLAVOR, busy_udp, BusyIn::Task);
        contest(FLAVOR, busy_tcp, BusyIn::Task);
    }

    #[test]
    fn consume_budget_makes_a_cpu_loop_yield() {
        task_contest(FLAVOR, busy_cpu);
        contest(FLAVOR, busy_cpu, BusyIn::Task);
        contest(FLAVOR, busy_cpu, BusyIn::BlockOn);
    }

    /// The case: a flooded UDP socket next to an `interval`. Timers
    /// fire only when the scheduler polls its driver (every `event_interval`
    /// polls on the basic scheduler, at the start of a tick when throttled),
    /// so the busy task must yield *and* the scheduler must get back to the
    /// driver. The clock is real (a paused clock never advances while tasks
    /// are busy), but nothing is timed: the busy loop stops when the interval
    /// has ticked `TICKS` times, and must get there within `BOUND` receives.
    /// A receive plus a send (two syscalls) costs well over the 70 ns that
    /// would make `BOUND` of them shorter than `TICKS` periods, so a slow machine
    /// only makes the test easier; before the fix the interval never ticked
    /// (basic) or ticked once per tick budget, millions of receives (throttled).
    #[test]
    fn flooded_udp_socket_does_not_starve_an_interval() {
        const TICKS: u64 = 2;
        // Longer than half the throttling period: a shorter interval fires
        // within the timer driver's firing window, without waiting for a tick.
        const PERIOD: Duration = Duration::from_millis(10);
        const BOUND: u64 = 300_000;
        let (flavor, rt) = runtime(FLAVOR);
        let received = rt.block_on(async {
            let ticks = Arc::new(AtomicU64::new(0));
            let ticker = {
                let ticks = ticks.clone();
                tempo::spawn(async move {
                    let mut interval = tempo::time::interval(PERIOD);
                    for _ in 0..=TICKS {
                        interval.tick().await;
                        ticks.fetch_add(1, Relaxed);
                    }
                })
            };
            let busy = tempo::spawn(async move {
                let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let target = socket.local_addr().unwrap();
                let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                sender.send_to(b"flood", target).unwrap();
                let mut buf = [0u8; 64];
                let mut received = 0;
                // The first tick of an interval is immediate: wait for
                // TICKS more.
                while ticks.load(Relaxed) <= TICKS && received < BOUND {
                    socket.recv_from(&mut buf).await.unwrap();
                    sender.send_to(b"flood", target).unwrap();
                    received += 1;
                }
                received
            });
            let received = busy.await.unwrap();
            ticker.await.unwrap();
            received
        });
        assert!(
            received < BOUND,
            "{flavor}: the interval did not tick {TICKS} times in {BOUND} receives"
        );
    }

    #[test]
    fn budget_is_128_units_per_poll_for_tasks_and_block_on() {
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            let in_task = tempo::spawn(CountPolls::new(consume(1_000)).run())
                .await
                .unwrap()
                .1;
            let in_block_on = CountPolls::new(consume(1_000)).run().await.1;
            (in_task, in_block_on)
        });
        // ceil(1000 / 128) = 8 polls: 7 that spend 128 units, 1 that ends.
        assert_eq!(polls, (8, 8), "{flavor}");
    }

    #[test]
    fn unconstrained_future_never_yields_for_budget() {
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            let in_task = tempo::spawn(CountPolls::new(unconstrained(consume(1_000))).run())
                .await
                .unwrap()
                .1;
            let in_block_on = CountPolls::new(unconstrained(consume(1_000))).run().await.1;
            (in_task, in_block_on)
        });
        assert_eq!(polls, (1, 1), "{flavor}");
        // The budget outside the unconstrained future is untouched by it.
        let polls = rt.block_on(async {
            CountPolls::new(async {
                unconstrained(consume(1_000)).await;
                consume(1_000).await
            })
            .run()
            .await
            .1
        });
        assert_eq!(polls, 8, "{flavor}");
    }

    #[test]
    fn join_handles_spend_budget() {
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            let handles: Vec<_> = (0..300u64)
                .map(|i| tempo::spawn(async move { i }))
                .collect();
            // Let every task finish, so each join below is ready at once.
            for _ in 0..1_000 {
                if handles.iter().all(|h| h.is_finished()) {
                    break;
                }
                yield_now().await;
            }
            assert!(handles.iter().all(|h| h.is_finished()));
            CountPolls::new(async move {
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            })
            .run()
            .await
        });
        assert_eq!(polls.0, 300 * 299 / 2, "{flavor}");
        // ceil(300 / 128) = 3 polls.
        assert_eq!(polls.1, 3, "{flavor}");
    }

    #[test]
    fn elapsed_timers_spend_budget() {
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            CountPolls::new(async {
                for _ in 0..300 {
                    tempo::time::sleep(Duration::ZERO).await;
                }
            })
            .run()
            .await
            .1
        });
        assert_eq!(polls, 3, "{flavor}");
    }

    #[test]
    fn timeout_fires_even_if_the_inner_future_spends_the_budget() {
        let (flavor, rt) = runtime(FLAVOR);
        let (result, polls) = rt.block_on(async {
            // A zero timeout has elapsed already: the first poll must see
            // it, although the inner future leaves no budget for the timer.
            CountPolls::new(tempo::time::timeout(
                Duration::ZERO,
                always_exhausts_budget(),
            ))
            .run()
            .await
        });
        assert!(result.is_err(), "{flavor}: the timeout must elapse");
        assert_eq!(polls, 1, "{flavor}");
    }

    #[test]
    fn try_methods_and_outside_runtime_do_not_spend_budget() {
        // Outside any runtime the budget is unconstrained.
        assert!(tempo::task::coop::has_budget_remaining());
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let target = socket.local_addr().unwrap();
            CountPolls::new(async move {
                let mut buf = [0u8; 16];
                for _ in 0..300 {
                    socket.try_send_to(b"x", target).unwrap();
                    socket.try_recv_from(&mut buf).unwrap();
                }
                tempo::task::coop::has_budget_remaining()
            })
            .run()
            .await
        });
        assert_eq!(polls, (true, 1), "{flavor}");
    }

    /// The same busy TCP reader, but through `poll_fn` on `poll_read`, as a
    /// codec would call it: the budget is in the poll path, not the async fn.
    #[test]
    fn poll_read_spends_budget() {
        let (flavor, rt) = runtime(FLAVOR);
        let polls = rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let writer = TcpStream::connect(addr).await.unwrap();
            let (reader, _) = listener.accept().await.unwrap();
            writer.write_all(&[1u8; 300]).await.unwrap();
            CountPolls::new(async move {
                let mut buf = [0u8; 1];
                for _ in 0..300 {
                    let n = poll_fn(|cx: &mut Context<'_>| reader.poll_read(cx, &mut buf)).await;
                    assert_eq!(n.unwrap(), 1);
                }
            })
            .run()
            .await
            .1
        });
        // The 300 bytes may arrive in more than one segment, but at most
        // 128 reads complete per poll: at least ceil(300 / 128) = 3 polls.
        assert!(polls >= 3, "{flavor}: {polls} polls");
    }

    /// tokio's channels spend *tokio's* cooperative budget, which only a
    /// tokio runtime sets (tokio has no public way to set it), so inside a
    /// Tempo task they never run out: a loop on a busy tokio `mpsc` channel
    /// runs 1,000 receives in one poll and never yields. The workaround the
    /// README's "Coming from tokio" table gives, `tempo::task::consume_budget()`
    /// in the loop, makes it yield every 128 receives: ceil(1000 / 128) = 8
    /// polls.
    #[test]
    fn tokio_mpsc_loop_yields_with_consume_budget() {
        let rt = builder().build().unwrap();
        let polls = rt.block_on(async {
            let plain = tempo::spawn(CountPolls::new(tokio_mpsc_loop(1_000, false)).run());
            let cooperative = tempo::spawn(CountPolls::new(tokio_mpsc_loop(1_000, true)).run());
            (plain.await.unwrap(), cooperative.await.unwrap())
        });
        assert_eq!(
            polls.0,
            (1_000, 1),
            "{}: tokio's budget is not Tempo's",
            FLAVOR.name()
        );
        assert_eq!(
            polls.1,
            (1_000, 8),
            "{}: with consume_budget",
            FLAVOR.name()
        );
    }

    /// The same loop, with `consume_budget`, next to another task: the
    /// other task runs at least every 128 receives or so.
    #[test]
    fn tokio_mpsc_loop_with_consume_budget_does_not_starve_other_tasks() {
        let rt = builder()
            .enable_all()
            .event_interval(EVENT_INTERVAL)
            .build()
            .unwrap();
        let progress = Arc::new(Progress::default());
        let busy = {
            let progress = progress.clone();
            async move {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let mut streak = Streak::new(&progress);
                for i in 0..BUSY {
                    tx.send(i).unwrap();
                    assert_eq!(rx.recv().await, Some(i));
                    consume_budget().await;
                    streak.step();
                }
                streak.finish()
            }
        };
        let longest = rt.block_on(async move {
            let other = tempo::spawn(async move { progress.other().await });
            let longest = tempo::spawn(busy).await.unwrap();
            other.await.unwrap();
            longest
        });
        assert!(
            longest <= MAX_STREAK,
            "{}: the busy task ran {longest} receives in a row (of {BUSY}) \
         while the other task never ran",
            FLAVOR.name()
        );
    }
}

/// A readiness wait that completes at once because a datagram waits in
/// the kernel spends a unit, as every readiness wait does: `readable`,
/// `ready(READABLE)` and `poll_recv_ready`, 1,000 times each in a task,
/// take ceil(1000 / 128) = 8 polls each. (Without it, a task looping on
/// `readable` plus a `try_recv` that the loop never calls would never
/// yield.)
///
/// Throttling: the socket is level-triggered, and nobody receives, so
/// the report of the datagram finds no waiter and disarms the socket's
/// read interest; its readiness stays set all the same.
#[test]
fn readiness_of_a_queued_datagram_spends_budget() {
    use tempo::io::Interest;
    use tempo_test_support::net::sent_and_queued;

    const WAITS: u64 = 1_000;
    let rt = support::Flavor::Throttling
        .builder()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = socket.local_addr().unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sent_and_queued(&socket, || sender.send_to(b"two", to).unwrap());
        // The report of the datagram, before the counted waits.
        socket.readable().await.unwrap();
        let mut buf = [0u8; 16];

        let (socket, polls) = tempo::spawn(async move {
            // Each loop starts on a fresh poll (a fresh budget).
            yield_now().await;
            let readable = CountPolls::new(async {
                for _ in 0..WAITS {
                    socket.readable().await.unwrap();
                }
            })
            .run()
            .await
            .1;
            yield_now().await;
            let ready = CountPolls::new(async {
                for _ in 0..WAITS {
                    let ready = socket.ready(Interest::READABLE).await.unwrap();
                    assert!(ready.is_readable());
                }
            })
            .run()
            .await
            .1;
            yield_now().await;
            let poll_recv_ready = CountPolls::new(async {
                for _ in 0..WAITS {
                    poll_fn(|cx| socket.poll_recv_ready(cx)).await.unwrap();
                }
            })
            .run()
            .await
            .1;
            (socket, [readable, ready, poll_recv_ready])
        })
        .await
        .unwrap();
        // 7 polls that spend 128 units, 1 that ends.
        assert_eq!(
            polls,
            [8, 8, 8],
            "polls of readable, ready(READABLE), poll_recv_ready"
        );
        // The readiness was the queued datagram's all along.
        let n = socket.try_recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"two");
    });
}
