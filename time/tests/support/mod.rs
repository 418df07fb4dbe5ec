//! Test support: a `block_on` over `Driver<ParkThread>` and a seeded RNG.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tempo_park::{Park, ParkThread, Unpark, UnparkThread};
use tempo_time::Driver;

struct BlockOnWaker {
    woken: AtomicBool,
    unpark: UnparkThread,
}

impl Wake for BlockOnWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.unpark.unpark();
    }
}

/// Runs `future` to completion on the current thread, parking `driver`
/// between polls (with the driver's handle entered).
///
/// # Panics
///
/// After a million parks without completion (a hang in a test).
pub fn block_on<F: Future>(driver: &mut Driver<ParkThread>, future: F) -> F::Output {
    let _guard = driver.handle().enter();
    let state = Arc::new(BlockOnWaker {
        woken: AtomicBool::new(true),
        unpark: driver.unpark(),
    });
    let waker = Waker::from(state.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    for _ in 0..1_000_000 {
        if state.woken.swap(false, Ordering::SeqCst) {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
        driver.park().unwrap();
    }
    panic!("block_on: the future did not complete after a million parks");
}

/// splitmix64: a tiny seeded generator, enough for reproducible tests.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
