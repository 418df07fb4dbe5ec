//! What wake-up jitter does to period-`T` streams under a throttling
//! scheduler, with and without the tick's grid instant (issue 22 §3),
//! simulated on a paused clock so that the figures depend on nothing but
//! the seed: 2,500 `sleep_until(prev + T)` streams with seeded phases over
//! a period, `T` = 20 ms, window `T/2`, 250 ticks on a grid anchored off
//! the driver's milliseconds. Tick `k` is due at `g_k`, wakes up `δ_k`
//! late (seeded, uniform in `0..=J`), fires (`park_timeout(ZERO)`), runs
//! the woken streams, works 1 ms, then makes its end-of-tick pass. Prints
//! the intervals between consecutive fires of each stream (what a sink
//! measures, minus the position within the tick): mean, sd, min, max, and
//! how many are later than `T + T/2`.
//!
//! `grid`: the scheduler names each tick's grid instant
//! (`Handle::set_next_pass_grid`, what the throttling scheduler does);
//! `wake-up`: it does not, so the window is measured from the jittered
//! wake-up (`now + T/2`), as before.
//!
//! Run: `cargo run --release -p tempo-time --example grid_jitter [J_us ...]`
//! (default: 300 1000 3000).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Instant};
use tokio_test::task::{self, Spawn};

const T: Duration = Duration::from_millis(20);
const STREAMS: usize = 2_500;
const TICKS: u32 = 250;
const WORK: Duration = Duration::from_millis(1);

/// splitmix64: a tiny seeded generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

type Stream = Spawn<Pin<Box<dyn Future<Output = ()>>>>;

fn poll_woken(streams: &mut [Stream]) {
    for s in streams.iter_mut().filter(|s| s.is_woken()) {
        assert!(s.poll().is_pending());
    }
}

/// Intervals between consecutive fires of every stream, in ms.
fn simulate(jitter_us: u64, grid: bool) -> Vec<f64> {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    driver.set_firing_window(T / 2);
    let handle = driver.handle();
    let _guard = handle.enter();
    let g0 = handle.now() + T + Duration::from_micros(600);
    let mut rng = SplitMix64(7);
    let fires: Vec<Rc<RefCell<Vec<Instant>>>> = (0..STREAMS).map(|_| Rc::default()).collect();
    let mut streams: Vec<Stream> = fires
        .iter()
        .map(|fires| {
            let (fires, handle) = (fires.clone(), handle.clone());
            let mut deadline = g0 + T + Duration::from_micros(rng.below(20_000));
            let stream: Pin<Box<dyn Future<Output = ()>>> = Box::pin(async move {
                loop {
                    tempo_time::sleep_until(deadline).await;
                    fires.borrow_mut().push(handle.now());
                    deadline += T;
                }
            });
            task::spawn(stream)
        })
        .collect();
    for s in &mut streams {
        assert!(s.poll().is_pending());
    }
    for k in 0..TICKS {
        let due = g0 + T * k;
        let wake = due + Duration::from_micros(rng.below(jitter_us + 1));
        handle.clock().advance(wake - handle.now());
        if grid {
            handle.set_next_pass_grid(due);
        }
        driver.park_timeout(Duration::ZERO).unwrap();
        poll_woken(&mut streams);
        handle.clock().advance(WORK);
        while handle.fire_end_of_tick() != 0 {
            poll_woken(&mut streams);
        }
    }
    fires
        .iter()
        .flat_map(|f| {
            f.borrow()
                .windows(2)
                .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn main() {
    let jitters: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("jitter in µs"))
        .collect();
    let jitters = if jitters.is_empty() {
        vec![300, 1_000, 3_000]
    } else {
        jitters
    };
    println!("{STREAMS} streams, T = 20 ms, {TICKS} ticks; intervals between fires, ms");
    for jitter in jitters {
        for grid in [false, true] {
            let iv = simulate(jitter, grid);
            let n = iv.len() as f64;
            let mean = iv.iter().sum::<f64>() / n;
            let sd = (iv.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
            let min = iv.iter().copied().fold(f64::MAX, f64::min);
            let max = iv.iter().copied().fold(0.0, f64::max);
            let late = iv.iter().filter(|x| **x > 30.0).count();
            println!(
                "jitter 0-{jitter:>5} us, window from {:<7}: mean {mean:.3} sd {sd:.3} min {min:.3} max {max:.3} later than T + T/2: {late} of {}",
                if grid { "grid" } else { "wake-up" },
                iv.len()
            );
        }
    }
}
