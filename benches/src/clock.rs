//! CLOCK_MONOTONIC as plain nanoseconds.
//!
//! Sender and receiver are different processes on the same machine, so the
//! one-way latency of a datagram is "receiver's CLOCK_MONOTONIC at receipt
//! minus the sender's CLOCK_MONOTONIC at send". `std::time::Instant` reads the
//! same clock on Linux but does not expose its value, so both sides read it
//! through `clock_gettime` and carry it around as a `u64` of nanoseconds.

/// Nanoseconds on CLOCK_MONOTONIC (system-wide, shared by all processes).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_MONOTONIC is always
    // supported on Linux, so clock_gettime only writes into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps the calling thread until CLOCK_MONOTONIC reaches `deadline_ns`
/// (returns at once if it already has).
pub fn sleep_until_ns(deadline_ns: u64) {
    let now = monotonic_ns();
    if deadline_ns > now {
        std::thread::sleep(std::time::Duration::from_nanos(deadline_ns - now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_never_goes_back() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
        assert!(a > 0);
    }

    #[test]
    fn sleep_until_past_deadline_returns() {
        let now = monotonic_ns();
        sleep_until_ns(now.saturating_sub(1_000_000));
        assert!(monotonic_ns() >= now);
    }
}
