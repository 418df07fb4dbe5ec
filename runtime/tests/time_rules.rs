//! Timer rules that hold on both schedulers (issues 10 and 11):
//!
//! * a timer whose deadline is in the future never completes in the poll
//!   that created it, so `loop { sleep(d).await }` (and the same loop over
//!   an interval or a timeout) costs at most one poll per tick instead of
//!   spinning through the firing window;
//! * a waker that panics while the driver wakes a batch of due timers does
//!   not lose the other wakers of the batch, and the panic still leaves
//!   `block_on`;
//! * `time::pause()` on a running runtime, then `sleep(Duration::MAX)`: the
//!   paused clock reaches the deadline in a bounded number of turns; on the
//!   real clock that sleep just stays pending.
//!
//! Every body runs on the basic scheduler and on the throttling one, on the
//! paused clock where time matters: counts, never wall-clock timings.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tempo::runtime::Runtime;
use tempo::time::{self, Instant};

mod support;
use support::{on_each_flavor, Flavor};

/// The throttling flavor's period here: the counts below (a 5 ms interval
/// falls due about four times per tick) are worked out for it.
const T: Duration = Duration::from_millis(20);
/// Turns each poll-count test drives.
const TURNS: u64 = 50;

/// `flavor`'s runtime (throttled at [`T`]) with I/O and time, its clock
/// paused if `paused`.
fn runtime(flavor: Flavor, paused: bool) -> Runtime {
    flavor
        .builder_with_period(T)
        .enable_all()
        .start_paused(paused)
        .build()
        .unwrap()
}

/// Counts the polls of a task, and records the most loop iterations (timer
/// completions) any single poll made.
struct PollStats {
    /// Completions one poll may make before the loop gives up.
    limit: u64,
    polls: AtomicU64,
    /// Completions counted by the loop, reset by each poll.
    in_this_poll: AtomicU64,
    max_in_one_poll: AtomicU64,
    completions: AtomicU64,
}

impl PollStats {
    fn new(limit: u64) -> PollStats {
        PollStats {
            limit,
            polls: AtomicU64::new(0),
            in_this_poll: AtomicU64::new(0),
            max_in_one_poll: AtomicU64::new(0),
            completions: AtomicU64::new(0),
        }
    }

    /// Called by the loop after each completion; `false` once a poll has
    /// completed more than `limit` timers, which only a spin can do (the
    /// loop stops so that spinning code fails instead of hanging).
    fn completed(&self) -> bool {
        self.completions.fetch_add(1, SeqCst);
        let n = self.in_this_poll.fetch_add(1, SeqCst) + 1;
        self.max_in_one_poll.fetch_max(n, SeqCst);
        n <= self.limit
    }
}

struct Counted<F> {
    stats: Arc<PollStats>,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.stats.polls.fetch_add(1, SeqCst);
        self.stats.in_this_poll.store(0, SeqCst);
        self.future.as_mut().poll(cx)
    }
}

/// Spawns `body(stats)` counted, drives `TURNS` turns, and returns the
/// stats; `limit`: see [`PollStats::completed`].
fn drive_loop<F, B>(flavor: Flavor, limit: u64, body: B) -> Arc<PollStats>
where
    B: FnOnce(Arc<PollStats>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let rt = runtime(flavor, true);
    let stats = Arc::new(PollStats::new(limit));
    let future = body(stats.clone());
    let _join = rt.spawn(Counted {
        stats: stats.clone(),
        future: Box::pin(future),
    });
    for _ in 0..TURNS {
        rt.turn(Duration::from_secs(1));
    }
    stats
}

/// At most one poll per turn (the first one included), progress made, and
/// no poll completed a timer it created.
fn assert_one_poll_per_tick(flavor: Flavor, what: &str, stats: &PollStats, max_in_one_poll: u64) {
    let polls = stats.polls.load(SeqCst);
    let max = stats.max_in_one_poll.load(SeqCst);
    let completions = stats.completions.load(SeqCst);
    assert!(
        max <= max_in_one_poll,
        "{flavor:?} {what}: a poll completed {max} timers (it spun on timers it created)"
    );
    assert!(
        polls <= TURNS,
        "{flavor:?} {what}: {polls} polls in {TURNS} turns"
    );
    assert!(
        completions >= TURNS / 2,
        "{flavor:?} {what}: only {completions} completions in {TURNS} turns"
    );
}

on_each_flavor! {
    #[test]
    fn a_short_sleep_loop_costs_at_most_one_poll_per_tick() {
        let flavor = FLAVOR;
        for d in [1, 5, 9] {
            let stats = drive_loop(flavor, 2, |stats| async move {
                loop {
                    time::sleep(Duration::from_millis(d)).await;
                    if !stats.completed() {
                        return;
                    }
                }
            });
            assert_one_poll_per_tick(flavor, &format!("sleep({d} ms)"), &stats, 1);
        }
    }

    #[test]
    fn a_short_interval_loop_costs_at_most_one_poll_per_tick() {
        let flavor = FLAVOR;
        // A 5 ms interval under a 20 ms throttle makes about four ticks per
        // poll (they fall due between two scheduler ticks): legitimate
        // completions, but each poll must come from a fire pass.
        let stats = drive_loop(flavor, 8, |stats| async move {
            let mut interval = time::interval(Duration::from_millis(5));
            interval.set_missed_tick_behavior(time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                if !stats.completed() {
                    return;
                }
            }
        });
        assert_one_poll_per_tick(flavor, "interval(5 ms)", &stats, 5);
    }

    #[test]
    fn a_short_timeout_loop_costs_at_most_one_poll_per_tick() {
        let flavor = FLAVOR;
        let stats = drive_loop(flavor, 2, |stats| async move {
            loop {
                let timed_out =
                    time::timeout(Duration::from_millis(1), std::future::pending::<()>()).await;
                assert!(timed_out.is_err());
                if !stats.completed() {
                    return;
                }
            }
        });
        assert_one_poll_per_tick(flavor, "timeout(1 ms)", &stats, 1);
    }

    #[test]
    fn a_future_deadline_never_completes_in_the_creating_poll() {
        let flavor = FLAVOR;
        let rt = runtime(flavor, true);
        rt.block_on(async {
            // Let the driver make a fire pass first, so that the firing
            // window of the throttling scheduler is open.
            time::sleep(Duration::from_millis(1)).await;
            let waker = Waker::from(Arc::new(CountingWaker::default()));
            let mut cx = Context::from_waker(&waker);
            for d in [1, 5, 9, 10, 11] {
                let mut sleep = Box::pin(time::sleep(Duration::from_millis(d)));
                assert!(
                    sleep.as_mut().poll(&mut cx).is_pending(),
                    "{flavor:?}: sleep({d} ms) completed in its first poll"
                );
            }
            // An elapsed deadline still completes at once, as in tokio.
            let mut zero = Box::pin(time::sleep(Duration::ZERO));
            assert!(zero.as_mut().poll(&mut cx).is_ready());
            let mut past = Box::pin(time::sleep_until(Instant::now() - Duration::from_millis(1)));
            assert!(past.as_mut().poll(&mut cx).is_ready());
            let mut interval = time::interval(Duration::from_millis(1));
            assert!(interval.poll_tick(&mut cx).is_ready(), "first tick is now");
            assert!(interval.poll_tick(&mut cx).is_pending());
        });
    }

    #[derive(Default)]
    struct CountingWaker(AtomicU64);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// A foreign waker (another executor's, a user's own `Wake`) that panics.
    struct PanickingWaker;

    impl Wake for PanickingWaker {
        fn wake(self: Arc<Self>) {
            panic!("foreign waker panicked");
        }
    }

    #[test]
    fn a_panicking_waker_does_not_lose_the_other_timers_of_its_batch() {
        let flavor = FLAVOR;
        let rt = runtime(flavor, true);
        let fired = Arc::new(AtomicU64::new(0));
        let spawn_sleepers = |n: usize| {
            (0..n)
                .map(|_| {
                    let fired = fired.clone();
                    rt.spawn(async move {
                        time::sleep(Duration::from_millis(5)).await;
                        fired.fetch_add(1, SeqCst);
                    })
                })
                .collect::<Vec<_>>()
        };
        let mut joins = spawn_sleepers(5);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            rt.block_on(async {
                // Let the first five register their timers.
                tempo::task::yield_now().await;
                let waker = Waker::from(Arc::new(PanickingWaker));
                let mut foreign = Box::pin(time::sleep(Duration::from_millis(5)));
                assert!(foreign
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending());
                joins.extend(spawn_sleepers(5));
                tempo::task::yield_now().await;
                time::sleep(Duration::from_millis(50)).await;
                drop(foreign);
            })
        }));
        let payload = outcome.expect_err("the waker's panic leaves block_on");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"foreign waker panicked"),
            "{flavor:?}"
        );
        rt.block_on(async {
            let all = async {
                for join in joins {
                    join.await.unwrap();
                }
            };
            time::timeout(Duration::from_secs(1), all)
                .await
                .unwrap_or_else(|_| {
                    panic!("{flavor:?}: only {} of 10 timers fired", fired.load(SeqCst))
                });
        });
        assert_eq!(fired.load(SeqCst), 10, "{flavor:?}");
    }

    #[test]
    fn pause_then_sleep_max_completes_in_bounded_turns() {
        let flavor = FLAVOR;
        let rt = runtime(flavor, false);
        let done = Arc::new(AtomicBool::new(false));
        let done2 = done.clone();
        let _join = rt.spawn(async move {
            time::pause();
            time::sleep(Duration::MAX).await;
            done2.store(true, SeqCst);
        });
        // Bounded waits, so that the turn after completion (nothing left to
        // wait for) returns too.
        let max_wait = Duration::from_secs(10 * 365 * 24 * 3600);
        let mut turns = 0;
        while !done.load(SeqCst) && turns < 1_000 {
            rt.turn(max_wait);
            turns += 1;
        }
        assert!(
        done.load(SeqCst),
        "{flavor:?}: sleep(Duration::MAX) still pending after {turns} turns on the paused clock"
    );
    }

    #[test]
    fn sleep_max_on_the_real_clock_stays_pending_while_work_proceeds() {
        let flavor = FLAVOR;
        let rt = runtime(flavor, false);
        let sleeper = rt.spawn(async { time::sleep(Duration::MAX).await });
        let polls_before = rt.metrics().tasks_polled;
        rt.block_on(async {
            // The sleeper registers first.
            tempo::task::yield_now().await;
            for _ in 0..3 {
                time::sleep(Duration::from_millis(1)).await;
            }
        });
        assert!(!sleeper.is_finished(), "{flavor:?}");
        // Every turn of an otherwise idle runtime parks instead of spinning.
        for _ in 0..3 {
            let turn = rt.turn(Duration::from_millis(2));
            assert!(turn.parked(), "{flavor:?}");
            assert_eq!(turn.tasks_polled(), 0, "{flavor:?}");
            assert_eq!(turn.timers_fired(), 0, "{flavor:?}");
        }
        assert!(!sleeper.is_finished(), "{flavor:?}");
        assert!(
            rt.metrics().tasks_polled - polls_before <= 1,
            "{flavor:?}: the sleeper was polled again"
        );
    }
}
