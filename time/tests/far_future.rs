//! The far future: `sleep(Duration::MAX)` saturates to
//! [`Instant::FAR_FUTURE`] from *now*, which is later than the driver's
//! origin plus `FAR_FUTURE` once the clock has moved. Auto-advance on a
//! paused clock must still reach that deadline, in a bounded number of
//! parks (one per wheel cascade), instead of spinning below it.

use std::time::Duration;

use tempo_park::{Park, ParkThread};
use tempo_time::{Clock, Driver, Instant, Sleep};
use tokio_test::task;

#[test]
fn a_clock_paused_late_reaches_a_duration_max_sleep() {
    let clock = Clock::real();
    let mut driver = Driver::new(ParkThread::new(), clock.clone());
    // The clock moves past the driver's origin before it is paused (as
    // `time::pause()` on a running runtime).
    clock.pause();
    clock.advance(Duration::from_millis(3));
    let handle = driver.handle();
    let deadline = handle.now() + Duration::MAX;
    assert_eq!(deadline, handle.now() + Instant::FAR_FUTURE);
    let mut sleep = task::spawn(Sleep::new(handle.clone(), deadline, false));
    assert!(sleep.poll().is_pending());
    let mut parks = 0;
    while !sleep.is_woken() && parks < 100 {
        driver.park().unwrap();
        parks += 1;
    }
    assert!(sleep.is_woken(), "not fired after {parks} parks");
    assert!(sleep.poll().is_ready());
    assert!(handle.now() >= deadline);
    assert!(handle.now() < deadline + Duration::from_millis(2));
}
