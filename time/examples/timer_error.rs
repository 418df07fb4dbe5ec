//! Measures the timer driver on an idle thread with the real clock and a
//! zero firing window:
//!
//! 1. the error (completion time - deadline) of 1,000 concurrent sleeps of
//!    random length 1..50 ms: p50 / p99 / max, and the earliest (must never
//!    be negative);
//! 2. the cost of an insert + cancel pair (create a `Sleep`, poll it once so
//!    it registers, drop it) and of a re-arm (`Sleep::reset` + poll), with
//!    10,000 other timers in the wheel.
//!
//! Run: `cargo run --release -p tempo-time --example timer_error`

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Instant, Sleep};

struct QueueWaker {
    index: usize,
    queue: Arc<Mutex<Vec<usize>>>,
}

impl Wake for QueueWaker {
    fn wake(self: Arc<Self>) {
        self.queue.lock().unwrap().push(self.index);
    }
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut driver = Driver::new(ParkThread::new(), Clock::real());
    let handle = driver.handle();

    // 1. Timer error.
    const SLEEPS: usize = 1_000;
    let queue = Arc::new(Mutex::new(Vec::new()));
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut sleeps: Vec<Pin<Box<Sleep>>> = Vec::with_capacity(SLEEPS);
    let mut wakers = Vec::with_capacity(SLEEPS);
    let start = handle.now();
    for index in 0..SLEEPS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let length = Duration::from_micros(1_000 + seed % 49_000);
        let mut sleep = Box::pin(Sleep::new(handle.clone(), start + length, false));
        let waker = Waker::from(Arc::new(QueueWaker {
            index,
            queue: queue.clone(),
        }));
        assert!(sleep
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        sleeps.push(sleep);
        wakers.push(waker);
    }
    let mut errors_us = Vec::with_capacity(SLEEPS);
    let mut parks = 0;
    while errors_us.len() < SLEEPS {
        driver.park().unwrap();
        parks += 1;
        let woken = std::mem::take(&mut *queue.lock().unwrap());
        for index in woken {
            let cx = &mut Context::from_waker(&wakers[index]);
            if sleeps[index].as_mut().poll(cx).is_ready() {
                let now = Instant::now();
                let deadline = sleeps[index].deadline();
                let error = if now >= deadline {
                    (now - deadline).as_micros() as i64
                } else {
                    -((deadline - now).as_micros() as i64)
                };
                errors_us.push(error);
            }
        }
    }
    errors_us.sort_unstable();
    println!(
        "timer error over {SLEEPS} sleeps of 1..50 ms (real clock, window 0, {parks} parks): \
         min {} us, p50 {} us, p99 {} us, max {} us",
        errors_us[0],
        percentile(&errors_us, 0.50),
        percentile(&errors_us, 0.99),
        errors_us[SLEEPS - 1]
    );
    println!("driver histogram: {:?}", driver.timer_error_histogram());

    // 2. Insert + cancel, and re-arm, with 10,000 other timers present.
    let background: Vec<Pin<Box<Sleep>>> = (0..10_000u64)
        .map(|i| {
            let mut s = Box::pin(Sleep::new(
                handle.clone(),
                handle.now() + Duration::from_millis(100 + i * 37 % 100_000),
                false,
            ));
            let _ = s.as_mut().poll(&mut Context::from_waker(&wakers[0]));
            s
        })
        .collect();
    let waker = &wakers[0];
    const PAIRS: u32 = 1_000_000;
    let now = handle.now();
    let t = std::time::Instant::now();
    for i in 0..PAIRS {
        let mut sleep = pin!(Sleep::new(
            handle.clone(),
            now + Duration::from_millis(1 + u64::from(i % 10_000)),
            false
        ));
        let _ = sleep.as_mut().poll(&mut Context::from_waker(waker));
    }
    let pair = t.elapsed() / PAIRS;
    let mut sleep = pin!(Sleep::new(
        handle.clone(),
        now + Duration::from_secs(1),
        false
    ));
    let _ = sleep.as_mut().poll(&mut Context::from_waker(waker));
    let t = std::time::Instant::now();
    for i in 0..PAIRS {
        sleep
            .as_mut()
            .reset(now + Duration::from_millis(1 + u64::from(i % 10_000)));
        let _ = sleep.as_mut().poll(&mut Context::from_waker(waker));
    }
    let rearm = t.elapsed() / PAIRS;
    println!("insert+cancel pair: {pair:?}; re-arm (reset + poll): {rearm:?} (10,000 timers in the wheel)");
    drop(background);
}
