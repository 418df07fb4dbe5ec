//! Number of OS threads of this process, from `/proc/self/status`.
//!
//! "Threads used" is part of a runtime's cost: thread-per-stream needs one per
//! socket, a single-thread runtime one in all.

use std::io;

/// The `Threads:` field of `/proc/self/status`.
pub fn os_threads() -> io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    parse_threads(&status).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "no Threads: in /proc/self/status",
        )
    })
}

fn parse_threads(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_threads_line() {
        assert_eq!(
            parse_threads("Name:\tx\nThreads:\t12\nVmRSS: 1 kB\n"),
            Some(12)
        );
        assert_eq!(parse_threads("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_has_threads() {
        assert!(os_threads().unwrap() >= 1);
    }
}
