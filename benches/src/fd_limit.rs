//! Raising the open-files limit: thousands of sockets need thousands of fds.
//!
//! A receiver of N streams holds N sockets plus a few descriptors of its
//! own (epoll, eventfd, stdio, `/proc` reads). The soft `RLIMIT_NOFILE`
//! is often 1024 while the hard limit is much higher, so the benchmark
//! raises the soft limit itself; if even the hard limit is too low (8,000
//! streams on a machine whose hard limit is 4096), it tries to raise the
//! hard limit too (which needs privileges) and otherwise stops with a
//! message that says what to run, instead of failing later with EMFILE
//! half-way through binding its sockets.

use std::io;

/// Descriptors a receiver needs beyond one per stream.
pub const SPARE_FDS: u64 = 64;

fn get() -> io::Result<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lim)
}

fn set(lim: &libc::rlimit) -> io::Result<()> {
    // SAFETY: `lim` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the new soft
/// limit.
pub fn raise_open_files_limit() -> io::Result<u64> {
    let mut lim = get()?;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        set(&lim)?;
    }
    Ok(lim.rlim_cur)
}

/// Makes sure this process may open `streams` sockets plus [`SPARE_FDS`]:
/// raises the soft limit, and the hard one if needed and permitted.
/// Returns the limit now in force, or a message saying what is missing and
/// how to fix it.
pub fn ensure_open_files_for(streams: usize) -> Result<u64, String> {
    let needed = streams as u64 + SPARE_FDS;
    let soft = raise_open_files_limit().map_err(|e| format!("raise RLIMIT_NOFILE: {e}"))?;
    if soft >= needed {
        return Ok(soft);
    }
    // The hard limit is too low: raising it needs CAP_SYS_RESOURCE.
    let raised = set(&libc::rlimit {
        rlim_cur: needed,
        rlim_max: needed,
    });
    match raised {
        Ok(()) => Ok(needed),
        Err(e) => Err(format!(
            "{streams} streams need {needed} open files, but the hard limit of open files \
             (RLIMIT_NOFILE) is {soft} and raising it failed ({e}). Raise it before running, \
             e.g. `ulimit -Hn {needed}; ulimit -n {needed}` as root or in \
             /etc/security/limits.conf (`* hard nofile {needed}`), or measure fewer streams"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_at_least_the_default() {
        assert!(raise_open_files_limit().unwrap() >= 256);
    }

    #[test]
    fn a_small_count_fits_and_an_impossible_one_says_what_to_do() {
        assert!(ensure_open_files_for(10).unwrap() >= 10 + SPARE_FDS);
        // More than any kernel allows (fs.nr_open is at most 2^30 - 64),
        // so even a privileged process cannot raise the limit that far.
        let err = ensure_open_files_for(1 << 31).unwrap_err();
        assert!(err.contains("ulimit"), "{err}");
        assert!(err.contains("RLIMIT_NOFILE"), "{err}");
    }
}
