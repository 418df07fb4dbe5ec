//! Re-arming a `Sleep` a million times allocates nothing (counting global
//! allocator; only allocations made on the test's thread while counting).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Sleep};
use tokio_test::task;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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

    COUNTING.with(|c| c.set(true));
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
    COUNTING.with(|c| c.set(false));
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0);
    assert_eq!(fired, 10);
}
