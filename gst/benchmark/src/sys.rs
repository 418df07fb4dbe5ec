//! The three OS calls the benchmark makes: pinning the process to a CPU,
//! the process's CPU time, and CLOCK_MONOTONIC (the sender's clock).

use std::io;
use std::mem;
use std::time::Duration;

/// Pins the calling thread (and the threads it starts later) to `cpu`.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data for which all zeroes is valid.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: CPU_SET writes bit `cpu` of `set`; it checks the bound.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` lives across the call and its size is passed.
    let rc = unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// User plus system CPU time of the whole process (every thread).
pub fn process_cpu() -> Duration {
    // SAFETY: rusage is plain data for which all zeroes is valid.
    let mut usage: libc::rusage = unsafe { mem::zeroed() };
    // SAFETY: `usage` lives across the call; RUSAGE_SELF cannot fail.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CLOCK_MONOTONIC in nanoseconds: the clock of the sender's timestamps
/// and of GStreamer's system clock.
pub fn monotonic_ns() -> u64 {
    // SAFETY: timespec is plain data for which all zeroes is valid.
    let mut ts: libc::timespec = unsafe { mem::zeroed() };
    // SAFETY: `ts` lives across the call; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Raises the open-files soft limit to the hard limit (each stream is a
/// socket, and udpsrc adds a few descriptors per element); returns the
/// new limit.
pub fn raise_open_files() -> io::Result<u64> {
    // SAFETY: rlimit is plain data for which all zeroes is valid.
    let mut lim: libc::rlimit = unsafe { mem::zeroed() };
    // SAFETY: `lim` lives across the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } < 0 {
        return Err(io::Error::last_os_error());
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: `lim` lives across the call and holds a valid limit pair.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lim.rlim_cur as u64)
}
