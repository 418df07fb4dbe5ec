//! Pinning a process to one CPU with `sched_setaffinity`.
//!
//! On a 2-core machine a receiver that falls behind takes the whole machine,
//! the sender gets starved, and overload then looks like a slow sender
//! instead of loss. Pinning sender and receiver to different CPUs keeps the
//! sender on schedule, so overload shows where it belongs: as receive loss.

use std::io;

/// Restricts the calling thread (and threads it creates later) to `cpu`.
/// Call it first thing in `main` to pin the whole process.
pub fn pin_current_thread_to(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cpu {cpu} is out of range"),
        ));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` < CPU_SETSIZE, checked above, so CPU_SET stays in bounds.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the caller.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Number of CPUs this process may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_a_thread_to_cpu_zero_works() {
        // In a thread of its own so the test harness's other threads keep
        // their affinity.
        std::thread::spawn(|| pin_current_thread_to(0).unwrap())
            .join()
            .unwrap();
    }

    #[test]
    fn out_of_range_cpu_is_rejected() {
        assert!(pin_current_thread_to(1 << 20).is_err());
    }
}
