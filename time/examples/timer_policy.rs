//! The two timer policies under a throttling scheduler, simulated with the
//! paused clock: T = 20 ms ticks (a fire pass with `park_timeout(ZERO)`,
//! then the clock moves T), window T/2, 10,000 timers with random deadlines.
//! Prints the error distribution (fire time - deadline) of each policy as a
//! text histogram in 2 ms buckets: the figure for the docs.
//!
//! Run: `cargo run --release -p tempo-time --example timer_policy`

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};

struct Noop;
impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

const T_MS: u64 = 20;
const TIMERS: usize = 10_000;

fn simulate(never_early: bool) -> Vec<f64> {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    driver.set_firing_window(Duration::from_millis(T_MS / 2));
    let handle = driver.handle();
    let start = handle.now();
    let waker = Waker::from(Arc::new(Noop));
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut timers: Vec<Option<Pin<Box<Sleep>>>> = (0..TIMERS)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let deadline = start + Duration::from_micros(1 + seed % 2_000_000);
            let mut s = Box::pin(Sleep::new(handle.clone(), deadline, never_early));
            let _ = s.as_mut().poll(&mut Context::from_waker(&waker));
            Some(s)
        })
        .collect();
    let mut errors = Vec::with_capacity(TIMERS);
    for _ in 0..(2_100 / T_MS + 2) {
        driver.park_timeout(Duration::ZERO).unwrap();
        let now = handle.now();
        for slot in timers.iter_mut() {
            if slot.as_ref().is_some_and(|s| s.is_elapsed()) {
                let deadline = slot.take().unwrap().deadline();
                let error = if now >= deadline {
                    (now - deadline).as_secs_f64()
                } else {
                    -(deadline - now).as_secs_f64()
                };
                errors.push(error * 1e3);
            }
        }
        handle.clock().advance(Duration::from_millis(T_MS));
    }
    errors
}

fn report(name: &str, errors: &[f64]) {
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let min = errors.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = errors.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    println!(
        "{name}: {} timers, error min {min:.2} ms, mean {mean:.2} ms, max {max:.2} ms",
        errors.len()
    );
    let mut buckets = [0usize; 16]; // [-12, 20) ms in 2 ms buckets
    for e in errors {
        let i = ((e + 12.0) / 2.0).floor().clamp(0.0, 15.0) as usize;
        buckets[i] += 1;
    }
    for (i, n) in buckets.iter().enumerate() {
        let low = i as i64 * 2 - 12;
        let bar = "#".repeat(n * 200 / errors.len());
        println!("  [{low:>3}, {:>3}) ms {n:>5} {bar}", low + 2);
    }
}

fn main() {
    report("nearest tick (default)", &simulate(false));
    report("never early (sleep_at_least)", &simulate(true));
}
