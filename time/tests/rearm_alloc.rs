//! Re-arming a `Sleep` a million times allocates nothing (counting global
//! allocator; only allocations made on the test's thread while counting).

use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_test_support::alloc::{CountingAllocator, ThreadCounter};
use tempo_time::{Clock, Driver, Sleep};
use tokio_test::task;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn rearming_a_sleep_a_million_times_allocates_nothing() {
    let mut driver = Driver::new(ParkThread::new(), Clock::paused());
    let handle = driver.handle();
    let start = handle.now();
    let mut sleep = task::spawn(Sleep::new(
        handle.clone(),
        start + Duration::from_secs(1),
        false,
    ));
    assert!(sleep.poll().is_pending()); // registers, clones the waker once

    let counter = ThreadCounter::start();
    let mut fired = 0;
    for i in 0..1_000_000u64 {
        // Deadlines over every level of the wheel.
        let deadline =
            handle.now() + Duration::from_millis(1 + (i * 7919) % (1 << (6 * (1 + i % 6))));
        sleep.enter(|_, s| s.reset(deadline));
        assert!(sleep.poll().is_pending());
        if i % 100_000 == 0 {
            // Fire one now and then: fire passes allocate nothing either.
            handle.clock().advance(Duration::from_millis(1));
            sleep.enter(|_, s| s.reset(handle.now()));
            driver.park_timeout(Duration::ZERO).unwrap();
            if sleep.poll().is_ready() {
                fired += 1;
            }
        }
    }
    assert_eq!(counter.stop(), 0);
    assert_eq!(fired, 10);
}
