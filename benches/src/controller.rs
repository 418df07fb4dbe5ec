//! The controller thread that reads process-wide counters at the two ends of
//! a measured window.
//!
//! On an overloaded receiver (thousands of runnable threads on one CPU) a
//! plain thread can wait seconds for the scheduler, and would take its
//! "start" reading after the window is over. The controller therefore asks
//! for the highest CPU priority it is allowed (nice -20 when permitted,
//! ignored otherwise) and reports how late each reading was, so that a
//! result taken at the wrong time is visible instead of silently wrong.

use std::io;
use std::thread::JoinHandle;

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::window::MeasureWindow;

/// What the controller read, and when.
#[derive(Debug, Clone)]
pub struct Readings<A, B> {
    /// The reading at the start of the window.
    pub start: A,
    /// The reading at the end of the window.
    pub end: B,
    /// CLOCK_MONOTONIC nanoseconds of the start reading.
    pub start_ns: u64,
    /// CLOCK_MONOTONIC nanoseconds of the end reading.
    pub end_ns: u64,
    /// How late the later of the two readings was behind its due time.
    pub max_lateness_ns: u64,
}

impl<A, B> Readings<A, B> {
    /// Nanoseconds between the two readings (the measured wall time).
    pub fn wall_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Raises the calling thread's scheduling priority as far as permitted
/// (nice -20); returns whether it succeeded.
pub fn boost_current_thread() -> bool {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
    // SAFETY: setpriority on our own thread id only changes its nice value;
    // failure (not permitted) is reported through the return value.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, -20) == 0 }
}

/// Spawns the controller: at `window.start_ns` it calls `at_start`, at
/// `window.end_ns` `at_end`, and returns both readings with their times.
/// `at_start` should read CPU last and `at_end` read it first, so that the
/// controller's own work falls outside the CPU measurement.
pub fn spawn_controller<A, B>(
    window: MeasureWindow,
    at_start: impl FnOnce() -> io::Result<A> + Send + 'static,
    at_end: impl FnOnce() -> io::Result<B> + Send + 'static,
) -> io::Result<JoinHandle<io::Result<Readings<A, B>>>>
where
    A: Send + 'static,
    B: Send + 'static,
{
    std::thread::Builder::new()
        .name("controller".into())
        .spawn(move || {
            boost_current_thread();
            sleep_until_ns(window.start_ns);
            let start = at_start()?;
            let start_ns = monotonic_ns();
            sleep_until_ns(window.end_ns);
            let end_ns = monotonic_ns();
            let end = at_end()?;
            let max_lateness_ns = start_ns
                .saturating_sub(window.start_ns)
                .max(end_ns.saturating_sub(window.end_ns));
            Ok(Readings {
                start,
                end,
                start_ns,
                end_ns,
                max_lateness_ns,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn readings_come_in_order_around_the_window() {
        let window =
            MeasureWindow::after_warmup(Duration::from_millis(5), Duration::from_millis(10));
        let h = spawn_controller(window, || Ok(monotonic_ns()), || Ok(monotonic_ns())).unwrap();
        let r = h.join().unwrap().unwrap();
        assert!(r.start >= window.start_ns);
        assert!(r.end >= window.end_ns);
        assert!(r.end_ns >= r.start_ns);
        assert!(r.wall_ns() >= window.end_ns - r.start_ns.max(window.start_ns).min(window.end_ns));
    }
}
