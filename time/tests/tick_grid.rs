//! Issue 22 §3: a throttling scheduler's ticks wake up late by a jitter
//! (the OS, the previous tick's work), but each tick's fire window is the
//! grid slot's, `[g - T/2, g + T/2)`, not the wake-up's. Simulated here on
//! a paused clock, as the throttling scheduler drives the timer driver:
//! each tick `k` is due at `g_k = g_0 + k T`, begins `δ_k` late (0.1 to
//! 3 ms, alternating), tells the driver its grid instant
//! ([`Handle::set_next_pass_grid`]), fires with `park_timeout(ZERO)`, polls
//! the woken streams, works 1 ms, then makes its end-of-tick pass.
//!
//! Streams of period `T` whose deadlines sit near the `T/2` boundary of
//! the grid must fire on the same grid phase every time: consecutive fires
//! exactly one tick apart (never-early streams too, for deadlines past the
//! wake-up jitter after a grid instant).
//! With the window measured from the wake-up (`now + T/2`), a deadline
//! `T/2 + 1 ms` after a grid instant fired on its tick when that tick woke
//! 3 ms late and on the next one when it woke 0.1 ms late, and the re-arm
//! after a late fire landed in the already processed window (fired at the
//! end of the same tick): intervals of about 0 and `2T` at the sink.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Handle, Instant, Interval, MissedTickBehavior};
use tokio_test::task::{self, Spawn};

const T: Duration = Duration::from_millis(20);
const TICKS: u32 = 60;
/// Task work per tick, between the tick's pass and its end-of-tick pass.
const WORK: Duration = Duration::from_millis(1);

/// How late each tick wakes up, cycled: alternating small and large.
fn jitter(k: u32) -> Duration {
    const MICROS: [u64; 7] = [100, 3_000, 500, 2_500, 1_000, 200, 2_900];
    Duration::from_micros(MICROS[k as usize % MICROS.len()])
}

/// How a stream re-arms each period.
#[derive(Debug, Clone, Copy)]
enum Rearm {
    /// `interval_at(first, T)` with this missed-tick behavior.
    Interval(MissedTickBehavior),
    /// `interval_at` that is never early (`at_least`).
    IntervalAtLeast,
    /// `sleep_until(deadline)`, then `deadline += T`.
    SleepUntilLoop,
}

/// `(deadline, index of the tick that completed it)` of each fire.
type Fires = Rc<RefCell<Vec<(Instant, u32)>>>;

type Stream = Spawn<Pin<Box<dyn Future<Output = ()>>>>;

fn stream(
    handle: &Handle,
    rearm: Rearm,
    first: Instant,
    tick: Rc<Cell<u32>>,
    fires: Fires,
) -> Stream {
    let handle = handle.clone();
    let fut: Pin<Box<dyn Future<Output = ()>>> = Box::pin(async move {
        match rearm {
            Rearm::Interval(_) | Rearm::IntervalAtLeast => {
                let at_least = matches!(rearm, Rearm::IntervalAtLeast);
                let mut interval = Interval::new(handle, first, T, at_least);
                if let Rearm::Interval(behavior) = rearm {
                    interval.set_missed_tick_behavior(behavior);
                }
                loop {
                    let scheduled = interval.tick().await;
                    fires.borrow_mut().push((scheduled, tick.get()));
                }
            }
            Rearm::SleepUntilLoop => {
                let _guard = handle.enter();
                let mut deadline = first;
                loop {
                    tempo_time::sleep_until(deadline).await;
                    fires.borrow_mut().push((deadline, tick.get()));
                    deadline += T;
                }
            }
        }
    });
    task::spawn(fut)
}

/// Polls every woken stream once; returns how many were woken.
fn poll_woken(streams: &mut [Stream]) -> usize {
    let mut woken = 0;
    for s in streams.iter_mut().filter(|s| s.is_woken()) {
        woken += 1;
        assert!(s.poll().is_pending());
    }
    woken
}

/// Runs `rearm` streams whose first deadlines are `g_1 + phase` for each
/// phase, over [`TICKS`] jittered ticks; returns each stream's fires and
/// the grid instant of each tick.
fn run(rearm: Rearm, phases: &[Duration]) -> (Vec<Vec<(Instant, u32)>>, Vec<Instant>) {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    driver.set_firing_window(T / 2);
    let handle = driver.handle();
    // A grid off the driver's whole milliseconds, as a running scheduler's
    // (its anchor is wherever its first tick began).
    let g0 = handle.now() + T + Duration::from_micros(600);
    let grid: Vec<Instant> = (0..TICKS).map(|k| g0 + T * k).collect();
    let tick = Rc::new(Cell::new(0));
    let all: Vec<Fires> = phases.iter().map(|_| Fires::default()).collect();
    let mut streams: Vec<Stream> = phases
        .iter()
        .zip(&all)
        .map(|(phase, fires)| {
            stream(
                &handle,
                rearm,
                grid[1] + *phase,
                tick.clone(),
                fires.clone(),
            )
        })
        .collect();
    for s in &mut streams {
        assert!(
            s.poll().is_pending(),
            "a future deadline never completes on its first poll"
        );
    }
    for (k, g) in grid.iter().enumerate() {
        let k = u32::try_from(k).unwrap();
        tick.set(k);
        // The tick wakes up late; the scheduler names its grid slot.
        let wake = *g + jitter(k);
        handle.clock().advance(wake - handle.now());
        handle.set_next_pass_grid(*g);
        driver.park_timeout(Duration::ZERO).unwrap();
        poll_woken(&mut streams);
        handle.clock().advance(WORK);
        while handle.fire_end_of_tick() != 0 {
            poll_woken(&mut streams);
        }
    }
    let fires = all.iter().map(|f| f.borrow().clone()).collect();
    (fires, grid)
}

/// `a - b` in µs, signed.
fn signed_us(a: Instant, b: Instant) -> i64 {
    if a >= b {
        i64::try_from((a - b).as_micros()).unwrap()
    } else {
        -i64::try_from((b - a).as_micros()).unwrap()
    }
}

/// Every stream fires once per tick, consecutive fires exactly one tick
/// apart, each at a grid error within `[low, high]` µs.
fn assert_same_phase(rearm: Rearm, phases: &[Duration], low: i64, high: i64) {
    let (fires, grid) = run(rearm, phases);
    for (phase, fires) in phases.iter().zip(&fires) {
        let what = format!("{rearm:?}, deadlines {phase:?} after a grid instant");
        let ticks: Vec<u32> = fires.iter().map(|f| f.1).collect();
        assert!(
            fires.len() + 3 >= TICKS as usize,
            "{what}: {} fires in {TICKS} ticks (ticks {ticks:?})",
            fires.len()
        );
        for pair in fires.windows(2) {
            assert_eq!(
                pair[1].1,
                pair[0].1 + 1,
                "{what}: consecutive fires not one tick apart (fire ticks {ticks:?})"
            );
        }
        for (deadline, k) in fires {
            let error = signed_us(grid[*k as usize], *deadline);
            assert!(
                (low..=high).contains(&error),
                "{what}: fired at tick {k}, {error} us from its deadline in grid terms"
            );
        }
    }
}

/// Phases around the `T/2` boundary between two ticks' windows.
fn boundary_phases() -> Vec<Duration> {
    [
        9_000, 9_500, 9_900, 10_000, 10_100, 10_500, 11_000, 11_900, 12_500, 13_000,
    ]
    .into_iter()
    .map(Duration::from_micros)
    .collect()
}

const HALF_T_US: i64 = 10_000;
/// The latest a nearest-tick fire may be in grid terms: `T/2`, plus up to
/// one wheel tick (1 ms) for a grid instant off the driver's milliseconds
/// (the window ends at the grid instant's millisecond plus `T/2`).
const LATE_US: i64 = HALF_T_US + 1_000;
const T_US: i64 = 20_000;

#[test]
fn nearest_tick_intervals_keep_their_grid_phase_under_wake_up_jitter() {
    for behavior in [
        MissedTickBehavior::Burst,
        MissedTickBehavior::Delay,
        MissedTickBehavior::Skip,
    ] {
        assert_same_phase(
            Rearm::Interval(behavior),
            &boundary_phases(),
            -HALF_T_US,
            LATE_US,
        );
    }
}

#[test]
fn streams_of_every_phase_keep_their_grid_phase_under_wake_up_jitter() {
    // 400 seeded phases over a whole period, as the streams of a pipeline.
    let mut seed = 0x5EED_u64;
    let phases: Vec<Duration> = (0..400)
        .map(|_| {
            // splitmix64
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            Duration::from_micros((z ^ (z >> 31)) % 20_000)
        })
        .collect();
    assert_same_phase(Rearm::SleepUntilLoop, &phases, -HALF_T_US, LATE_US);
    assert_same_phase(
        Rearm::Interval(MissedTickBehavior::Burst),
        &phases,
        -HALF_T_US,
        LATE_US,
    );
}

#[test]
fn sleep_until_loops_keep_their_grid_phase_under_wake_up_jitter() {
    assert_same_phase(
        Rearm::SleepUntilLoop,
        &boundary_phases(),
        -HALF_T_US,
        LATE_US,
    );
}

#[test]
fn never_early_intervals_keep_their_grid_phase_under_wake_up_jitter() {
    // Never early, a timer fires at the first tick that wakes up after its
    // deadline (tokio's rule, and a deadline that has passed completes at
    // once): deadlines within the wake-up jitter after a grid instant (or
    // the wheel's 1 ms before it) follow the jitter by design. Elsewhere
    // the phase is kept.
    let phases: Vec<Duration> = [3_500, 5_000, 9_900, 10_100, 15_000, 18_000, 18_900]
        .into_iter()
        .map(Duration::from_micros)
        .collect();
    assert_same_phase(Rearm::IntervalAtLeast, &phases, 0, T_US + 1_000);
}
