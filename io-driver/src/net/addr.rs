//! Address resolution shared by the `bind`/`connect` constructors.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

/// Calls `f` with each address `addr` resolves to, returning the first
/// success or the last error.
pub(crate) fn each_addr<A: ToSocketAddrs, T>(
    addr: A,
    mut f: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last_error = None;
    for addr in addr.to_socket_addrs()? {
        match f(addr) {
            Ok(value) => return Ok(value),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}

/// The single address `addr` resolves to first (for `send_to`).
pub(crate) fn first_addr<A: ToSocketAddrs>(addr: A) -> io::Result<SocketAddr> {
    addr.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    })
}
