//! Property test: 100,000 timers inserted, re-armed and cancelled in random
//! order against a `BTreeMap` model, with clock jumps small and huge so that
//! entries cascade through every level of the wheel and past its span.

mod support;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use support::SplitMix64;
use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};

struct IndexWaker {
    index: usize,
    fired: Arc<Mutex<Vec<usize>>>,
}

impl Wake for IndexWaker {
    fn wake(self: Arc<Self>) {
        self.fired.lock().unwrap().push(self.index);
    }
}

/// A delay in ms whose order of magnitude is uniform over the wheel's
/// levels, and beyond its 2^36 ms span (up to 2^40 ms, 35 years: the test's
/// virtual time stays under the century at which `Instant` saturates).
fn random_delay(rng: &mut SplitMix64) -> u64 {
    let bits = [6, 12, 18, 24, 30, 36, 40][rng.below(7) as usize];
    1 + rng.below(1 << bits)
}

struct Live {
    sleep: Pin<Box<Sleep>>,
    deadline_ms: u64,
    position: usize, // in `order`
}

#[test]
fn random_inserts_cancels_and_resets_match_a_btreemap() {
    const TIMERS: usize = 100_000;
    let mut rng = SplitMix64(0x5EED);
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    let handle = driver.handle();
    let start = handle.now();
    let fired = Arc::new(Mutex::new(Vec::new()));
    let mut timers: Vec<Option<Live>> = Vec::with_capacity(TIMERS);
    let mut order: Vec<usize> = Vec::new(); // live indices, for random picks
    let mut model: BTreeMap<(u64, usize), ()> = BTreeMap::new();
    let mut now_ms = 0u64;
    let mut cascade_levels_seen = [false; 7];

    let check_fired = |now_ms: u64,
                       timers: &mut Vec<Option<Live>>,
                       order: &mut Vec<usize>,
                       model: &mut BTreeMap<(u64, usize), ()>| {
        let mut got = std::mem::take(&mut *fired.lock().unwrap());
        got.sort_unstable();
        let mut expected: Vec<usize> = model
            .range(..(now_ms + 1, 0))
            .map(|(&(_, i), _)| i)
            .collect();
        expected.sort_unstable();
        assert_eq!(
            got, expected,
            "fired set differs from the model at {now_ms} ms"
        );
        for i in expected {
            let live = timers[i].take().unwrap();
            assert!(live.sleep.is_elapsed());
            model.remove(&(live.deadline_ms, i));
            remove_from_order(order, timers, live.position);
        }
    };

    let mut inserted = 0;
    let mut steps = 0;
    while inserted < TIMERS {
        steps += 1;
        assert!(steps < 10 * TIMERS, "bounded");
        match rng.below(100) {
            0..=59 => {
                let index = timers.len();
                let deadline_ms = now_ms + random_delay(&mut rng);
                let mut sleep = Box::pin(Sleep::new(
                    handle.clone(),
                    start + Duration::from_millis(deadline_ms),
                    false,
                ));
                let waker = Waker::from(Arc::new(IndexWaker {
                    index,
                    fired: fired.clone(),
                }));
                assert!(sleep
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending());
                order.push(index);
                timers.push(Some(Live {
                    sleep,
                    deadline_ms,
                    position: order.len() - 1,
                }));
                model.insert((deadline_ms, index), ());
                inserted += 1;
            }
            60..=84 if !order.is_empty() => {
                let index = order[rng.below(order.len() as u64) as usize];
                let live = timers[index].take().unwrap();
                model.remove(&(live.deadline_ms, index));
                remove_from_order(&mut order, &mut timers, live.position);
                drop(live); // cancels
            }
            85..=89 if !order.is_empty() => {
                let index = order[rng.below(order.len() as u64) as usize];
                let live = timers[index].as_mut().unwrap();
                model.remove(&(live.deadline_ms, index));
                live.deadline_ms = now_ms + random_delay(&mut rng);
                live.sleep
                    .as_mut()
                    .reset(start + Duration::from_millis(live.deadline_ms));
                model.insert((live.deadline_ms, index), ());
            }
            _ => {
                let mut step = random_delay(&mut rng) / (1 + rng.below(64));
                if now_ms > 1 << 39 {
                    step %= 1 << 24; // keep the virtual time under 60 years
                }
                cascade_levels_seen[level_of(step)] = true;
                now_ms += step;
                handle.clock().advance(Duration::from_millis(step));
                driver.park_timeout(Duration::ZERO).unwrap();
                check_fired(now_ms, &mut timers, &mut order, &mut model);
            }
        }
    }
    // Drain: jump to each remaining deadline in turn (bounded by the count).
    for _ in 0..TIMERS {
        let Some((&(deadline_ms, _), _)) = model.iter().next() else {
            break;
        };
        handle
            .clock()
            .advance(Duration::from_millis(deadline_ms - now_ms));
        now_ms = deadline_ms;
        driver.park_timeout(Duration::ZERO).unwrap();
        check_fired(now_ms, &mut timers, &mut order, &mut model);
    }
    assert!(model.is_empty());
    assert!(
        cascade_levels_seen.iter().all(|&s| s),
        "every level exercised: {cascade_levels_seen:?}"
    );
}

fn level_of(step_ms: u64) -> usize {
    ((63 - (step_ms | 1).leading_zeros()) / 6).min(6) as usize
}

fn remove_from_order(order: &mut Vec<usize>, timers: &mut [Option<Live>], position: usize) {
    order.swap_remove(position);
    if let Some(&moved) = order.get(position) {
        timers[moved].as_mut().unwrap().position = position;
    }
}
