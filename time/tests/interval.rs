//! `Interval` with each `MissedTickBehavior` under the paused clock, and
//! under a firing window (a simulated throttling scheduler).

use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Instant, Interval, MissedTickBehavior};
use tokio_test::task;

const MS: Duration = Duration::from_millis(1);

struct Fixture {
    driver: Driver<ParkThread>,
    start: Instant,
}

impl Fixture {
    fn new() -> Fixture {
        let driver = Driver::new(ParkThread::new(), Clock::paused());
        let start = driver.clock().now();
        Fixture { driver, start }
    }

    fn interval(&self, period_ms: u64, behavior: MissedTickBehavior) -> Interval {
        let mut i = Interval::new(
            self.driver.handle(),
            self.start,
            MS * period_ms as u32,
            false,
        );
        i.set_missed_tick_behavior(behavior);
        i
    }

    /// Advances the clock and runs a fire pass.
    fn advance(&mut self, ms: u64) {
        self.driver.clock().advance(MS * ms as u32);
        self.driver.park_timeout(Duration::ZERO).unwrap();
    }

    /// The ticks ready now, as ms since start.
    fn ready_ticks(&self, interval: &mut Interval) -> Vec<u64> {
        let mut t = task::spawn(());
        let mut out = Vec::new();
        for _ in 0..1_000 {
            match t.enter(|cx, _| interval.poll_tick(cx)) {
                std::task::Poll::Ready(at) => out.push((at - self.start).as_millis() as u64),
                std::task::Poll::Pending => return out,
            }
        }
        panic!("an interval produced a thousand ready ticks at once");
    }
}

#[test]
fn burst_catches_up_back_to_back() {
    let mut f = Fixture::new();
    let mut i = f.interval(10, MissedTickBehavior::Burst);
    assert_eq!(i.missed_tick_behavior(), MissedTickBehavior::Burst);
    assert_eq!(f.ready_ticks(&mut i), [0], "the first tick is immediate");
    f.advance(35);
    assert_eq!(f.ready_ticks(&mut i), [10, 20, 30]);
    f.advance(5);
    assert_eq!(f.ready_ticks(&mut i), [40]);
}

#[test]
fn delay_shifts_the_schedule() {
    let mut f = Fixture::new();
    let mut i = f.interval(10, MissedTickBehavior::Delay);
    assert_eq!(f.ready_ticks(&mut i), [0]);
    f.advance(35);
    assert_eq!(f.ready_ticks(&mut i), [10]);
    f.advance(9);
    assert_eq!(f.ready_ticks(&mut i), Vec::<u64>::new());
    f.advance(1);
    assert_eq!(f.ready_ticks(&mut i), [45]);
    f.advance(10);
    assert_eq!(f.ready_ticks(&mut i), [55]);
}

#[test]
fn skip_drops_missed_ticks_and_keeps_the_grid() {
    let mut f = Fixture::new();
    let mut i = f.interval(10, MissedTickBehavior::Skip);
    assert_eq!(f.ready_ticks(&mut i), [0]);
    f.advance(35);
    assert_eq!(f.ready_ticks(&mut i), [10]);
    f.advance(4);
    assert_eq!(f.ready_ticks(&mut i), Vec::<u64>::new());
    f.advance(1);
    assert_eq!(f.ready_ticks(&mut i), [40]);
    f.advance(10);
    assert_eq!(f.ready_ticks(&mut i), [50]);
}

#[test]
fn reset_restarts_the_schedule() {
    let mut f = Fixture::new();
    let mut i = f.interval(10, MissedTickBehavior::Burst);
    assert_eq!(f.ready_ticks(&mut i), [0]);
    f.advance(5);
    i.reset(); // next tick at 15
    f.advance(9);
    assert_eq!(f.ready_ticks(&mut i), Vec::<u64>::new());
    f.advance(1);
    assert_eq!(f.ready_ticks(&mut i), [15]);
    i.reset_immediately();
    assert_eq!(f.ready_ticks(&mut i), [15]);
    assert_eq!(i.period(), MS * 10);
}

#[test]
#[should_panic(expected = "period must be non-zero")]
fn zero_period_panics() {
    let f = Fixture::new();
    let _ = f.interval(0, MissedTickBehavior::Burst);
}

/// A throttling scheduler with T = 20 ms (window 10 ms) and an interval of
/// period T whose phase is off the tick grid: ticks fire early or late
/// within the window, and a `Delay` interval must neither drift nor skip.
#[test]
fn delay_interval_does_not_drift_under_a_firing_window() {
    for at_least in [false, true] {
        let mut f = Fixture::new();
        f.driver.set_firing_window(MS * 10);
        let mut i = Interval::new(f.driver.handle(), f.start + MS * 7, MS * 20, at_least);
        i.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // Registered before the first fire pass: a timer first polled
        // after a pass whose window covers its deadline waits for the next
        // pass instead (it never completes in the poll that created it).
        assert_eq!(f.ready_ticks(&mut i), Vec::<u64>::new());
        let mut scheduled = Vec::new();
        for tick in 0..100u64 {
            f.driver.park_timeout(Duration::ZERO).unwrap();
            for at in f.ready_ticks(&mut i) {
                let error = tick as i64 * 20 - at as i64;
                if at_least {
                    assert!(
                        (0..=20).contains(&error),
                        "at-least tick {at} fired at {}",
                        tick * 20
                    );
                } else {
                    assert!(
                        (-10..=10).contains(&error),
                        "tick {at} fired at {}",
                        tick * 20
                    );
                }
                scheduled.push(at);
            }
            f.driver.clock().advance(MS * 20);
        }
        let expected: Vec<u64> = (0..scheduled.len() as u64).map(|k| 7 + 20 * k).collect();
        assert_eq!(scheduled, expected, "at_least = {at_least}");
        assert!(scheduled.len() >= 98);
    }
}
