//! Helpers of the throttling scheduler's test files (`throttle_*.rs`): the
//! period they run at, seeded timer batches and their error statistics, a
//! driver that always has an event, a settable future and a registered UDP
//! socket.

use std::future::Future;
use std::net::UdpSocket as StdUdpSocket;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use tempo::runtime::{Builder, IoReactor, Runtime, TimerPolicy};
use tempo::time::{self, Instant};
use tempo_park::{DriverStats, Park, ParkThread};

/// The throttling period of these tests.
pub const T: Duration = Duration::from_millis(20);

/// `T / 2` in microseconds: the nearest-tick policy's error bound.
pub const HALF_T_US: i64 = 10_000;

/// `T` in microseconds: the never-early policy's lateness bound.
pub const T_US: i64 = 20_000;

/// splitmix64: a tiny, seeded, reproducible generator.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `a - b` in signed microseconds.
pub fn signed_us(a: Instant, b: Instant) -> i64 {
    match a.checked_duration_since(b) {
        Some(late) => i64::try_from(late.as_micros()).unwrap(),
        None => -i64::try_from(b.duration_since(a).as_micros()).unwrap(),
    }
}

/// Min, mean and max of timer errors, in microseconds.
pub fn summary(errors: &[i64]) -> (i64, f64, i64) {
    let min = *errors.iter().min().unwrap();
    let max = *errors.iter().max().unwrap();
    let mean = errors.iter().sum::<i64>() as f64 / errors.len() as f64;
    (min, mean, max)
}

pub fn throttled(policy: TimerPolicy) -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .max_throttling(T)
        .timer_policy(policy)
        .build()
        .unwrap()
}

/// Spawns 1,000 timer tasks with seeded random deadlines within 2 s and
/// returns each one's error (`fire time - deadline`, µs).
pub fn thousand_timers(rt: &Runtime, at_least: bool) -> Vec<i64> {
    thousand_timers_with_offsets(rt, at_least)
        .into_iter()
        .map(|(_, error)| error)
        .collect()
}

/// Like [`thousand_timers`], with each deadline's offset from the start
/// (µs): `(offset, error)`.
pub fn thousand_timers_with_offsets(rt: &Runtime, at_least: bool) -> Vec<(i64, i64)> {
    rt.block_on(async move {
        let mut rng = SplitMix64(0x7E4D0);
        let start = Instant::now();
        let joins: Vec<_> = (0..1_000)
            .map(|_| {
                let offset = rng.next() % 2_000_000;
                let deadline = start + Duration::from_micros(offset);
                let offset = i64::try_from(offset).unwrap();
                tempo::spawn(async move {
                    if at_least {
                        time::sleep_at_least(deadline - Instant::now()).await;
                    } else {
                        time::sleep_until(deadline).await;
                    }
                    (offset, signed_us(Instant::now(), deadline))
                })
            })
            .collect();
        let mut errors = Vec::with_capacity(joins.len());
        for join in joins {
            errors.push(join.await.unwrap());
        }
        errors
    })
}

/// A driver with no events of its own that reports one (fake) I/O event on
/// every park, the way a busy host framework's poll loop always has
/// something: a throttled runtime on it never blocks idle, it ticks and
/// sleeps. It counts its zero-timeout polls and its blocking parks.
pub struct BusyPark {
    inner: ParkThread,
    polls: Arc<AtomicU64>,
    blocking: Arc<AtomicU64>,
    report_events: bool,
}

impl BusyPark {
    pub fn new(report_events: bool) -> (BusyPark, Arc<AtomicU64>, Arc<AtomicU64>) {
        let polls = Arc::new(AtomicU64::new(0));
        let blocking = Arc::new(AtomicU64::new(0));
        let park = BusyPark {
            inner: ParkThread::new(),
            polls: polls.clone(),
            blocking: blocking.clone(),
            report_events,
        };
        (park, polls, blocking)
    }
}

impl Park for BusyPark {
    type Unpark = <ParkThread as Park>::Unpark;
    type Error = std::convert::Infallible;

    fn unpark(&self) -> Self::Unpark {
        self.inner.unpark()
    }
    fn park(&mut self) -> Result<(), Self::Error> {
        self.blocking.fetch_add(1, SeqCst);
        self.inner.park()
    }
    fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
        if d.is_zero() {
            self.polls.fetch_add(1, SeqCst);
        } else {
            self.blocking.fetch_add(1, SeqCst);
        }
        self.inner.park_timeout(d)
    }
    fn stats(&self) -> DriverStats {
        DriverStats {
            io_events: if self.report_events {
                self.polls.load(SeqCst) + self.blocking.load(SeqCst)
            } else {
                0
            },
            timers_fired: 0,
        }
    }
}

/// Reports when a runtime blocks on its driver with no time-out (an idle
/// runtime's park): [`wrap`](Self::wrap) it around the I/O driver with
/// `Builder::with_park_fn`, and [`wait_until_blocked`](Self::wait_until_blocked)
/// from another thread.
#[derive(Clone, Default)]
pub struct BlockProbe {
    blocked: Arc<(Mutex<bool>, Condvar)>,
}

impl BlockProbe {
    /// The probe around `io`, for `with_park_fn`.
    pub fn wrap(self, io: IoReactor) -> ProbedPark {
        ProbedPark { io, probe: self }
    }

    /// Blocks until the runtime entered a park with no time-out (panics
    /// after a minute: the runtime never went idle).
    pub fn wait_until_blocked(&self) {
        let (lock, cond) = &*self.blocked;
        let (blocked, timeout) = cond
            .wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(60), |b| !*b)
            .unwrap();
        assert!(
            *blocked && !timeout.timed_out(),
            "the idle runtime never blocked on its driver without a time-out"
        );
    }

    fn announce(&self) {
        let (lock, cond) = &*self.blocked;
        *lock.lock().unwrap() = true;
        cond.notify_all();
    }
}

/// The I/O driver under a [`BlockProbe`].
pub struct ProbedPark {
    io: IoReactor,
    probe: BlockProbe,
}

impl Park for ProbedPark {
    type Unpark = <IoReactor as Park>::Unpark;
    type Error = <IoReactor as Park>::Error;

    fn unpark(&self) -> Self::Unpark {
        self.io.unpark()
    }
    fn park(&mut self) -> Result<(), Self::Error> {
        // Announced before blocking: an unpark made in answer arrives
        // either before the block (which then returns at once) or during it.
        self.probe.announce();
        self.io.park()
    }
    fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
        if d == Duration::MAX {
            self.probe.announce();
        }
        self.io.park_timeout(d)
    }
    fn stats(&self) -> DriverStats {
        self.io.stats()
    }
}

/// A future that completes once `flag` is set; the setter wakes the waker
/// stored in `slot`.
#[derive(Clone, Default)]
pub struct Signal {
    flag: Arc<AtomicBool>,
    slot: Arc<Mutex<Option<Waker>>>,
}

impl Signal {
    pub fn set(&self) {
        self.flag.store(true, SeqCst);
        if let Some(waker) = self.slot.lock().unwrap().take() {
            waker.wake();
        }
    }
}

impl Future for Signal {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        if self.flag.load(SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// A UDP socket bound to loopback, registered with `rt`'s I/O driver.
pub fn tempo_udp(rt: &Runtime) -> (tempo::net::UdpSocket, std::net::SocketAddr) {
    let std = StdUdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = std.local_addr().unwrap();
    let _enter = rt.handle().enter();
    (tempo::net::UdpSocket::from_std(std).unwrap(), addr)
}
