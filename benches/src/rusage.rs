//! Process CPU time (user + system, all threads) from `getrusage`.
//!
//! The receiver's CPU load is the CPU time the whole process consumed over the
//! measured window divided by the window's wall time: with `RUSAGE_SELF` that
//! includes every thread, so thread-per-stream and single-thread runtimes are
//! measured the same way, and it includes the kernel's share (`recvfrom`,
//! `epoll_wait`, context switches), which is most of the cost here.

use std::time::Duration;

/// CPU time consumed so far by this process (all threads), user + system.
pub fn process_cpu_time() -> Duration {
    cpu_time(libc::RUSAGE_SELF)
}

/// CPU time consumed so far by the calling thread, user + system.
pub fn thread_cpu_time() -> Duration {
    cpu_time(libc::RUSAGE_THREAD)
}

fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage and `who` is RUSAGE_SELF or
    // RUSAGE_THREAD, both supported on Linux.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
}

/// CPU load in percent of one core: `cpu` consumed over `wall`.
pub fn cpu_percent(cpu: Duration, wall: Duration) -> f64 {
    if wall.is_zero() {
        return 0.0;
    }
    cpu.as_secs_f64() * 100.0 / wall.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = thread_cpu_time();
        let mut x = 0u64;
        let mut i = 0u64;
        // Bounded busy work until the thread's CPU clock moves (rusage has
        // scheduler-tick or microsecond granularity).
        while thread_cpu_time() == before && i < 50_000_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            i += 1;
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time() >= before);
        assert!(process_cpu_time() >= thread_cpu_time());
    }

    #[test]
    fn percent_of_one_core() {
        assert_eq!(
            cpu_percent(Duration::from_millis(250), Duration::from_secs(1)),
            25.0
        );
        assert_eq!(cpu_percent(Duration::from_secs(1), Duration::ZERO), 0.0);
    }
}
