//! `Runtime::metrics()` / `Handle::metrics()`: each counter moves with the
//! work that it counts, on both schedulers.

use std::future::{poll_fn, Future};
use std::net::UdpSocket as StdUdpSocket;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tempo::runtime::Runtime;
use tempo::time::{self, Instant};

mod support;
use support::{on_each_flavor, Flavor};

/// The throttling flavor's period in these tests.
const T: Duration = Duration::from_millis(20);

/// `flavor`'s runtime (throttled at [`T`]) with I/O, time and the paused
/// clock.
fn paused(flavor: Flavor) -> Runtime {
    flavor
        .builder_with_period(T)
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Spawns 10 tasks that yield twice each: 30 task polls.
fn spawn_yielders(rt: &Runtime) -> Vec<tempo::task::JoinHandle<()>> {
    (0..10)
        .map(|_| {
            rt.spawn(async {
                tempo::task::yield_now().await;
                tempo::task::yield_now().await;
            })
        })
        .collect()
}

on_each_flavor! {
    #[test]
    fn a_fresh_runtime_reports_zeroes() {
        let rt = paused(FLAVOR);
        let m = rt.metrics();
        assert_eq!(
            (
                m.ticks,
                m.overruns,
                m.tasks_polled,
                m.io_events,
                m.timers_fired,
                m.unparks
            ),
            (0, 0, 0, 0, 0, 0)
        );
        assert_eq!(m.timer_error.unwrap().count(), 0);
        assert_eq!(m.parked_ratio(), 1.0);
        let no_time = builder().build().unwrap();
        assert!(no_time.metrics().timer_error.is_none());
    }

    #[test]
    fn tasks_polled_and_ticks_count_turns_and_polls() {
        let rt = paused(FLAVOR);
        let joins = spawn_yielders(&rt);
        let mut turns = 0;
        while joins.iter().any(|j| !j.is_finished()) {
            rt.turn(Duration::ZERO);
            turns += 1;
            assert!(turns < 100);
        }
        let m = rt.metrics();
        assert_eq!(m.tasks_polled, 30);
        assert_eq!(m.ticks, turns);
        // The same counts through block_on; the block_on future itself is
        // not a task.
        let before = rt.metrics();
        let joins = spawn_yielders(&rt);
        rt.block_on(async {
            for join in joins {
                join.await.unwrap();
            }
        });
        let delta = rt.metrics().since(&before);
        assert_eq!(delta.tasks_polled, 30);
        assert!(delta.ticks >= 1);
    }

    #[test]
    fn io_events_count_a_datagram() {
        let flavor = FLAVOR.name();
        let rt = builder().enable_all().build().unwrap();
        let before = rt.metrics();
        let n = rt.block_on(async {
            let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let addr = socket.local_addr().unwrap();
            // The datagram is sent only once the receive has found the
            // socket empty and waits for readiness: then only the driver's
            // readiness event can complete it, whatever the thread timing.
            // (Sent earlier, the receive's first syscall would read it and
            // no event would be needed, or counted.)
            let waiting = Arc::new(AtomicBool::new(false));
            let receiver = tempo::spawn(pending_once_flagged(waiting.clone(), async move {
                let mut buf = [0u8; 16];
                socket.recv(&mut buf).await.unwrap()
            }));
            for _ in 0..10_000 {
                if waiting.load(SeqCst) {
                    break;
                }
                tempo::task::yield_now().await;
            }
            assert!(waiting.load(SeqCst), "{flavor}: the receive never waited");
            StdUdpSocket::bind("127.0.0.1:0")
                .unwrap()
                .send_to(b"ping", addr)
                .unwrap();
            time::timeout(Duration::from_secs(30), receiver)
                .await
                .expect("datagram not received")
                .unwrap()
        });
        assert_eq!(n, 4);
        let delta = rt.metrics().since(&before);
        assert!(delta.io_events >= 1, "{flavor}: no I/O event counted");
    }

    /// Runs `future`, setting `flag` the first time it returns `Pending`.
    async fn pending_once_flagged<F: Future>(flag: Arc<AtomicBool>, future: F) -> F::Output {
        let mut future = pin!(future);
        poll_fn(|cx| {
            let poll = future.as_mut().poll(cx);
            if poll.is_pending() {
                flag.store(true, SeqCst);
            }
            poll
        })
        .await
    }

    #[test]
    fn timers_fired_and_the_error_histogram_agree() {
        let rt = paused(FLAVOR);
        let before = rt.metrics();
        rt.block_on(async {
            // Deadlines well past the firing window, so the driver fires
            // each one (rather than the sleep finding itself due at once).
            for ms in [50u64, 120, 75, 300, 33] {
                time::sleep(Duration::from_millis(ms)).await;
            }
            // Three concurrent ones.
            let joins: Vec<_> = [40u64, 60, 80]
                .into_iter()
                .map(|ms| tempo::spawn(time::sleep(Duration::from_millis(ms))))
                .collect();
            for join in joins {
                join.await.unwrap();
            }
        });
        let delta = rt.metrics().since(&before);
        assert_eq!(delta.timers_fired, 8);
        let histogram = delta.timer_error.unwrap();
        assert_eq!(histogram.count(), delta.timers_fired);
        assert_eq!(
            histogram.early().iter().sum::<u64>() + histogram.late().iter().sum::<u64>(),
            8
        );
    }

    #[test]
    fn busy_parked_and_the_parked_ratio() {
        // Real clock: the thread really parks while sleeping.
        let flavor = FLAVOR.name();
        let rt = builder().enable_time().build().unwrap();
        rt.block_on(async {
            for _ in 0..3 {
                time::sleep(Duration::from_millis(15)).await;
            }
            let spin_until = Instant::now() + Duration::from_millis(2);
            let mut spins = 0u64;
            while Instant::now() < spin_until && spins < 100_000_000 {
                spins += 1;
            }
        });
        let m = rt.metrics();
        assert!(m.parked > Duration::ZERO, "{flavor}: never parked");
        assert!(m.busy > Duration::ZERO, "{flavor}: never busy");
        let ratio = m.parked_ratio();
        assert!((0.0..=1.0).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn unparks_and_remote_snapshots() {
        let rt = FLAVOR.builder_with_period(T).enable_all().build().unwrap();
        let handle = rt.handle().clone();
        let remote = handle.clone();
        // An idle runtime is unparked by a remote spawn: counted.
        let waiter = thread::spawn(move || {
            // No way to know from here that the runtime is parked yet; whether
            // this spawn unparks it or not, the counters must agree.
            remote.spawn(async { 1 })
        });
        let join = waiter.join().unwrap();
        assert_eq!(rt.block_on(join).unwrap(), 1);
        let m = rt.metrics();
        assert_eq!(m.unparks, rt.handle().unpark_count());
        let remote = handle.clone();
        let seen = thread::spawn(move || remote.metrics()).join().unwrap();
        assert_eq!(seen, rt.metrics(), "a snapshot is the same from any thread");
        assert!(seen.ticks >= 1);
    }

    #[test]
    fn explicit_unparks_count_only_when_they_wake_an_idle_runtime() {
        let rt = FLAVOR.builder_with_period(T).enable_time().build().unwrap();
        // A running (here: not parked) runtime: the unpark is remembered for
        // the next sleep, no driver unpark.
        rt.handle().unpark();
        assert_eq!(rt.metrics().unparks, 0);
        // An idle runtime blocked in the driver: the unpark wakes it, counted.
        let handle = rt.handle().clone();
        let waker = thread::spawn(move || {
            for _ in 0..10_000_000 {
                if handle.unpark_count() > 0 {
                    break;
                }
                handle.unpark();
                thread::yield_now();
            }
        });
        // Returns once an unpark reached the parked driver.
        let mut turns = 0;
        while rt.metrics().unparks == 0 {
            rt.turn(Duration::from_millis(100));
            turns += 1;
            assert!(turns < 10_000, "no unpark reached the idle runtime");
        }
        waker.join().unwrap();
        assert!(rt.metrics().unparks >= 1);
    }
}
