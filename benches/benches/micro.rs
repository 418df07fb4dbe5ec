//! Criterion micro-benchmarks: each group measures one runtime operation,
//! with one function per runtime in the same group and the same run, so that
//! the report puts Tempo and tokio's current_thread runtime side by side.
//!
//! The tokio side is in `tokio_side`, the Tempo side in `tempo_side`, with
//! the same function names and signatures (`fn(&mut Bencher)`); `GROUPS`
//! lists, per group, the runtimes that have it.
//!
//! Run: `cargo bench -p tempo-benches --bench micro` (add `-- GROUP` to run
//! one group).

use criterion::{criterion_group, criterion_main, Criterion};

/// Tasks spawned per iteration in the spawn benchmarks.
const SPAWN_TASKS: usize = 1000;
/// Tasks and yields per task in `yield_many`.
const YIELD_TASKS: usize = 100;
const YIELDS_PER_TASK: usize = 100;
/// Round trips per iteration in `ping_pong`.
const PING_PONGS: usize = 1000;
/// Depth of the spawn chain in `chained_spawn`.
const CHAIN_DEPTH: usize = 1000;
/// Timers per iteration in the timer benchmarks.
const TIMERS: usize = 1000;
/// Datagrams per iteration in `udp_send_recv`.
const DATAGRAMS: usize = 100;
/// Messages per iteration in `mpsc_handoff`.
const MESSAGES: u64 = 1000;

mod tokio_side {
    use std::future::{poll_fn, Future};
    use std::hint::black_box;
    use std::pin::Pin;
    use std::sync::mpsc as std_mpsc;
    use std::task::Poll;
    use std::time::Duration;

    use criterion::Bencher;
    use tokio::runtime::{Builder, Runtime};
    use tokio::sync::{mpsc, oneshot};
    use tokio::task::JoinHandle;

    use super::*;

    fn runtime() -> Runtime {
        Builder::new_current_thread().enable_all().build().unwrap()
    }

    pub fn spawn_many_local(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> =
                    (0..SPAWN_TASKS).map(|_| tokio::spawn(async {})).collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    /// Tasks are spawned from another thread (through the runtime's handle)
    /// while the runtime thread waits, then run by `block_on`.
    pub fn spawn_many_remote(b: &mut Bencher) {
        let rt = runtime();
        let handle = rt.handle().clone();
        let (req_tx, req_rx) = std_mpsc::channel::<()>();
        let (resp_tx, resp_rx) = std_mpsc::channel::<Vec<JoinHandle<()>>>();
        let spawner = std::thread::spawn(move || {
            // Ends when the sender of requests is dropped.
            while req_rx.recv().is_ok() {
                let hs = (0..SPAWN_TASKS).map(|_| handle.spawn(async {})).collect();
                if resp_tx.send(hs).is_err() {
                    return;
                }
            }
        });
        b.iter(|| {
            req_tx.send(()).unwrap();
            let handles = resp_rx.recv().unwrap();
            rt.block_on(async {
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
        drop(req_tx);
        spawner.join().unwrap();
    }

    pub fn yield_many(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> = (0..YIELD_TASKS)
                    .map(|_| {
                        tokio::spawn(async {
                            for _ in 0..YIELDS_PER_TASK {
                                tokio::task::yield_now().await;
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    pub fn ping_pong(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (ping_tx, mut ping_rx) = mpsc::channel::<u32>(1);
                let (pong_tx, mut pong_rx) = mpsc::channel::<u32>(1);
                let ponger = tokio::spawn(async move {
                    while let Some(v) = ping_rx.recv().await {
                        pong_tx.send(v).await.unwrap();
                    }
                });
                for i in 0..PING_PONGS as u32 {
                    ping_tx.send(i).await.unwrap();
                    black_box(pong_rx.recv().await.unwrap());
                }
                drop(ping_tx);
                ponger.await.unwrap();
            })
        });
    }

    fn chain(done: oneshot::Sender<()>, left: usize) {
        if left == 0 {
            let _ = done.send(());
        } else {
            tokio::spawn(async move { chain(done, left - 1) });
        }
    }

    pub fn chained_spawn(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (tx, rx) = oneshot::channel();
                chain(tx, CHAIN_DEPTH);
                rx.await.unwrap();
            })
        });
    }

    pub fn block_on_ready(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| rt.block_on(async { black_box(1u64) }));
    }

    /// Registers TIMERS sleeps (first poll inserts them into the wheel), then
    /// drops them (cancel). Time never advances, so none fires.
    pub fn timer_insert_cancel(b: &mut Bencher) {
        let rt = Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        b.iter(|| {
            rt.block_on(async {
                let mut sleeps: Vec<Pin<Box<tokio::time::Sleep>>> = (0..TIMERS)
                    .map(|i| Box::pin(tokio::time::sleep(Duration::from_millis(10 + i as u64))))
                    .collect();
                poll_fn(|cx| {
                    for s in sleeps.iter_mut() {
                        assert!(s.as_mut().poll(cx).is_pending());
                    }
                    Poll::Ready(())
                })
                .await;
                drop(black_box(sleeps));
            })
        });
    }

    /// TIMERS tasks each sleep 1..=64 ms on a paused clock (auto-advanced):
    /// measures insert + fire + wake, not waiting.
    pub fn sleep_fire(b: &mut Bencher) {
        let rt = Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> = (0..TIMERS)
                    .map(|i| {
                        tokio::spawn(tokio::time::sleep(Duration::from_millis(
                            1 + (i % 64) as u64,
                        )))
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    pub fn udp_send_recv(b: &mut Bencher) {
        let rt = runtime();
        let (a, bsock) = rt.block_on(async {
            let a = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            (a, b)
        });
        let to = bsock.local_addr().unwrap();
        let payload = [7u8; 160];
        let mut buf = [0u8; 2048];
        b.iter(|| {
            rt.block_on(async {
                for _ in 0..DATAGRAMS {
                    a.send_to(&payload, to).await.unwrap();
                    let (n, _) = bsock.recv_from(&mut buf).await.unwrap();
                    black_box(n);
                }
            })
        });
    }

    pub fn mpsc_handoff(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (tx, mut rx) = mpsc::channel::<u64>(128);
                let consumer = tokio::spawn(async move {
                    let mut sum = 0u64;
                    while let Some(v) = rx.recv().await {
                        sum += v;
                    }
                    sum
                });
                let producer = tokio::spawn(async move {
                    for i in 0..MESSAGES {
                        tx.send(i).await.unwrap();
                    }
                });
                producer.await.unwrap();
                black_box(consumer.await.unwrap());
            })
        });
    }
}

/// Tempo's basic scheduler with I/O and timers enabled. Channels are
/// tokio's runtime-agnostic `sync` ones, the same code as on the tokio side.
mod tempo_side {
    use std::future::{poll_fn, Future};
    use std::hint::black_box;
    use std::pin::Pin;
    use std::sync::mpsc as std_mpsc;
    use std::task::Poll;
    use std::time::Duration;

    use criterion::Bencher;
    use tempo::runtime::Runtime;
    use tempo::task::JoinHandle;
    use tempo_benches::tempo_runtime::{build, build_paused};
    use tokio::sync::{mpsc, oneshot};

    use super::*;

    fn runtime() -> Runtime {
        build(None).unwrap()
    }

    pub fn timer_insert_cancel(b: &mut Bencher) {
        let rt = build_paused().unwrap();
        b.iter(|| {
            rt.block_on(async {
                let mut sleeps: Vec<Pin<Box<tempo::time::Sleep>>> = (0..TIMERS)
                    .map(|i| Box::pin(tempo::time::sleep(Duration::from_millis(10 + i as u64))))
                    .collect();
                poll_fn(|cx| {
                    for s in sleeps.iter_mut() {
                        assert!(s.as_mut().poll(cx).is_pending());
                    }
                    Poll::Ready(())
                })
                .await;
                drop(black_box(sleeps));
            })
        });
    }

    pub fn sleep_fire(b: &mut Bencher) {
        let rt = build_paused().unwrap();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> = (0..TIMERS)
                    .map(|i| {
                        tempo::spawn(tempo::time::sleep(Duration::from_millis(
                            1 + (i % 64) as u64,
                        )))
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    pub fn udp_send_recv(b: &mut Bencher) {
        let rt = runtime();
        let (a, bsock) = rt.block_on(async {
            let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            (a, b)
        });
        let to = bsock.local_addr().unwrap();
        let payload = [7u8; 160];
        let mut buf = [0u8; 2048];
        b.iter(|| {
            rt.block_on(async {
                for _ in 0..DATAGRAMS {
                    a.send_to(&payload, to).await.unwrap();
                    let (n, _) = bsock.recv_from(&mut buf).await.unwrap();
                    black_box(n);
                }
            })
        });
    }

    pub fn spawn_many_local(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> =
                    (0..SPAWN_TASKS).map(|_| tempo::spawn(async {})).collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    pub fn spawn_many_remote(b: &mut Bencher) {
        let rt = runtime();
        let handle = rt.handle().clone();
        let (req_tx, req_rx) = std_mpsc::channel::<()>();
        let (resp_tx, resp_rx) = std_mpsc::channel::<Vec<JoinHandle<()>>>();
        let spawner = std::thread::spawn(move || {
            // Ends when the sender of requests is dropped.
            while req_rx.recv().is_ok() {
                let hs = (0..SPAWN_TASKS).map(|_| handle.spawn(async {})).collect();
                if resp_tx.send(hs).is_err() {
                    return;
                }
            }
        });
        b.iter(|| {
            req_tx.send(()).unwrap();
            let handles = resp_rx.recv().unwrap();
            rt.block_on(async {
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
        drop(req_tx);
        spawner.join().unwrap();
    }

    pub fn yield_many(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let handles: Vec<JoinHandle<()>> = (0..YIELD_TASKS)
                    .map(|_| {
                        tempo::spawn(async {
                            for _ in 0..YIELDS_PER_TASK {
                                tempo::task::yield_now().await;
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
        });
    }

    pub fn ping_pong(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (ping_tx, mut ping_rx) = mpsc::channel::<u32>(1);
                let (pong_tx, mut pong_rx) = mpsc::channel::<u32>(1);
                let ponger = tempo::spawn(async move {
                    while let Some(v) = ping_rx.recv().await {
                        pong_tx.send(v).await.unwrap();
                    }
                });
                for i in 0..PING_PONGS as u32 {
                    ping_tx.send(i).await.unwrap();
                    black_box(pong_rx.recv().await.unwrap());
                }
                drop(ping_tx);
                ponger.await.unwrap();
            })
        });
    }

    fn chain(done: oneshot::Sender<()>, left: usize) {
        if left == 0 {
            let _ = done.send(());
        } else {
            tempo::spawn(async move { chain(done, left - 1) });
        }
    }

    pub fn chained_spawn(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (tx, rx) = oneshot::channel();
                chain(tx, CHAIN_DEPTH);
                rx.await.unwrap();
            })
        });
    }

    pub fn block_on_ready(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| rt.block_on(async { black_box(1u64) }));
    }

    pub fn mpsc_handoff(b: &mut Bencher) {
        let rt = runtime();
        b.iter(|| {
            rt.block_on(async {
                let (tx, mut rx) = mpsc::channel::<u64>(128);
                let consumer = tempo::spawn(async move {
                    let mut sum = 0u64;
                    while let Some(v) = rx.recv().await {
                        sum += v;
                    }
                    sum
                });
                let producer = tempo::spawn(async move {
                    for i in 0..MESSAGES {
                        tx.send(i).await.unwrap();
                    }
                });
                producer.await.unwrap();
                black_box(consumer.await.unwrap());
            })
        });
    }
}

type BenchFn = fn(&mut criterion::Bencher);

/// Every group with its runtimes; a Tempo entry is one more pair per row.
const GROUPS: &[(&str, &[(&str, BenchFn)])] = &[
    (
        "spawn_many_local",
        &[
            ("tempo", tempo_side::spawn_many_local),
            ("tokio", tokio_side::spawn_many_local),
        ],
    ),
    (
        "spawn_many_remote",
        &[
            ("tempo", tempo_side::spawn_many_remote),
            ("tokio", tokio_side::spawn_many_remote),
        ],
    ),
    (
        "yield_many",
        &[
            ("tempo", tempo_side::yield_many),
            ("tokio", tokio_side::yield_many),
        ],
    ),
    (
        "ping_pong",
        &[
            ("tempo", tempo_side::ping_pong),
            ("tokio", tokio_side::ping_pong),
        ],
    ),
    (
        "chained_spawn",
        &[
            ("tempo", tempo_side::chained_spawn),
            ("tokio", tokio_side::chained_spawn),
        ],
    ),
    (
        "block_on_ready",
        &[
            ("tempo", tempo_side::block_on_ready),
            ("tokio", tokio_side::block_on_ready),
        ],
    ),
    (
        "timer_insert_cancel",
        &[
            ("tempo", tempo_side::timer_insert_cancel),
            ("tokio", tokio_side::timer_insert_cancel),
        ],
    ),
    (
        "sleep_fire",
        &[
            ("tempo", tempo_side::sleep_fire),
            ("tokio", tokio_side::sleep_fire),
        ],
    ),
    (
        "udp_send_recv",
        &[
            ("tempo", tempo_side::udp_send_recv),
            ("tokio", tokio_side::udp_send_recv),
        ],
    ),
    (
        "mpsc_handoff",
        &[
            ("tempo", tempo_side::mpsc_handoff),
            ("tokio", tokio_side::mpsc_handoff),
        ],
    ),
];

fn micro(c: &mut Criterion) {
    for (group, runtimes) in GROUPS {
        let mut g = c.benchmark_group(*group);
        for (runtime, f) in *runtimes {
            g.bench_function(*runtime, f);
        }
        g.finish();
    }
}

criterion_group!(benches, micro);
criterion_main!(benches);
