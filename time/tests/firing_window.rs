//! Issue 5's timer policy under a simulated throttling scheduler: T = 20 ms,
//! window T/2, paused clock. Each tick fires with `park_timeout(ZERO)`, then
//! the clock moves 20 ms. 1,000 timers with random deadlines all fire within
//! ±10 ms (nearest tick), or within [0, 20] ms (never early: per timer with
//! `at_least`, or driver-wide with `set_never_early`).

mod support;

use std::time::Duration;

use support::SplitMix64;
use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};
use tokio_test::task;

const T_MS: u64 = 20;
const TIMERS: usize = 1_000;

#[derive(Clone, Copy, Debug)]
enum Policy {
    Nearest,
    AtLeastPerTimer,
    NeverEarlyDriverWide,
}

/// Returns every timer's error in µs (fire time - deadline).
fn run(policy: Policy, seed: u64) -> Vec<i64> {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    driver.set_firing_window(Duration::from_millis(T_MS / 2));
    if let Policy::NeverEarlyDriverWide = policy {
        driver.set_never_early(true);
    }
    let handle = driver.handle();
    let start = handle.now();
    let mut rng = SplitMix64(seed);
    let at_least = matches!(policy, Policy::AtLeastPerTimer);
    let mut timers: Vec<_> = (0..TIMERS)
        .map(|_| {
            let deadline = start + Duration::from_micros(1 + rng.below(2_000_000));
            let mut t = task::spawn(Sleep::new(handle.clone(), deadline, at_least));
            assert!(t.poll().is_pending());
            Some((t, deadline))
        })
        .collect();
    let mut errors = Vec::with_capacity(TIMERS);
    for _tick in 0..(2_100 / T_MS + 2) {
        driver.park_timeout(Duration::ZERO).unwrap();
        let now = handle.now();
        for slot in timers.iter_mut() {
            if let Some((t, deadline)) = slot {
                if t.is_woken() {
                    assert!(t.poll().is_ready());
                    let error = if now >= *deadline {
                        (now - *deadline).as_micros() as i64
                    } else {
                        -((*deadline - now).as_micros() as i64)
                    };
                    errors.push(error);
                    *slot = None;
                } else {
                    assert!(
                        *deadline > now - Duration::from_millis(T_MS),
                        "{policy:?}: a due timer did not fire"
                    );
                }
            }
        }
        handle.clock().advance(Duration::from_millis(T_MS));
    }
    assert_eq!(errors.len(), TIMERS, "{policy:?}: every timer fired");
    let histogram = driver.timer_error_histogram();
    assert_eq!(histogram.count(), TIMERS as u64);
    if !matches!(policy, Policy::Nearest) {
        assert_eq!(histogram.early().iter().sum::<u64>(), 0);
    }
    errors
}

#[test]
fn nearest_tick_error_is_within_half_a_period() {
    let errors = run(Policy::Nearest, 1);
    let half = (T_MS / 2 * 1000) as i64;
    assert!(
        errors.iter().all(|e| (-half..=half).contains(e)),
        "{:?}",
        errors.iter().minmax()
    );
    // Nearest tick is centred: some early, some late.
    assert!(errors.iter().any(|&e| e < 0) && errors.iter().any(|&e| e > 0));
}

#[test]
fn never_early_error_is_within_one_period() {
    for policy in [Policy::AtLeastPerTimer, Policy::NeverEarlyDriverWide] {
        let errors = run(policy, 2);
        let period = (T_MS * 1000) as i64;
        assert!(
            errors.iter().all(|e| (0..=period).contains(e)),
            "{policy:?}: {:?}",
            errors.iter().minmax()
        );
    }
}

trait MinMax {
    fn minmax(self) -> (Option<i64>, Option<i64>);
}

impl<'a, I: Iterator<Item = &'a i64> + Clone> MinMax for I {
    fn minmax(self) -> (Option<i64>, Option<i64>) {
        (self.clone().min().copied(), self.max().copied())
    }
}
