//! The process's open-file limit, for tests that hold thousands of
//! sockets.

/// Raises the soft `RLIMIT_NOFILE` to `want` (capped at the hard limit);
/// returns the new soft limit, which a test compares with what it needs.
pub fn raise_fd_limit(want: libc::rlim_t) -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for getrlimit to fill.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(rc, 0, "getrlimit failed");
    if lim.rlim_cur >= want {
        return lim.rlim_cur;
    }
    lim.rlim_cur = want.min(lim.rlim_max);
    // SAFETY: `lim` is a valid rlimit with cur <= max.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    assert_eq!(rc, 0, "setrlimit failed");
    lim.rlim_cur
}
