//! Binding the receiver's N sockets with a modest receive buffer.
//!
//! The kernel default receive buffer (~200 KiB) queues about a second of a
//! stream at these rates, so a receiver that cannot keep up looks fine for a
//! while and then shows huge latency. A small buffer (32 KiB requested, which
//! the kernel doubles) makes overload show up as loss within a few intervals.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

/// Default requested SO_RCVBUF in bytes.
pub const DEFAULT_RCVBUF: usize = 32 * 1024;

/// Binds `count` blocking sockets on 127.0.0.1, ports `base_port..base_port +
/// count`, each with SO_RCVBUF set to `rcvbuf` bytes (0 keeps the default).
pub fn bind_streams(base_port: u16, count: usize, rcvbuf: usize) -> io::Result<Vec<UdpSocket>> {
    check_port_range(base_port, count)?;
    (0..count)
        .map(|i| {
            let port = base_port + i as u16;
            let sock = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
                .map_err(|e| io::Error::new(e.kind(), format!("bind 127.0.0.1:{port}: {e}")))?;
            if rcvbuf > 0 {
                set_recv_buffer(&sock, rcvbuf)?;
            }
            Ok(sock)
        })
        .collect()
}

/// Checks that ports `base_port..base_port + count` all exist (the last
/// one is at most 65535).
pub fn check_port_range(base_port: u16, count: usize) -> io::Result<()> {
    let end = base_port as usize + count;
    if end > u16::MAX as usize + 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("ports {base_port}..{end} run past port 65535"),
        ));
    }
    Ok(())
}

/// Requests a receive buffer of `bytes` on `sock` (SO_RCVBUF).
pub fn set_recv_buffer(sock: &UdpSocket, bytes: usize) -> io::Result<()> {
    let value = libc::c_int::try_from(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "SO_RCVBUF too large"))?;
    // SAFETY: the fd is a valid socket owned by `sock`; the option value
    // points at a c_int whose size is passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The receive buffer size the kernel actually uses for `sock` (SO_RCVBUF as
/// read back: twice the request, for bookkeeping overhead).
pub fn recv_buffer(sock: &UdpSocket) -> io::Result<usize> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the fd is a valid socket; `value` and `len` are valid and writable
    // and `len` holds the size of `value`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_receive_buffer_is_applied() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_recv_buffer(&sock, DEFAULT_RCVBUF).unwrap();
        let effective = recv_buffer(&sock).unwrap();
        assert!(
            (DEFAULT_RCVBUF..=4 * DEFAULT_RCVBUF).contains(&effective),
            "{effective}"
        );
    }

    #[test]
    fn binding_zero_streams_binds_nothing() {
        assert!(bind_streams(20000, 0, DEFAULT_RCVBUF).unwrap().is_empty());
    }

    #[test]
    fn port_range_overflow_is_rejected() {
        assert!(bind_streams(65535, 2, 0).is_err());
        assert!(check_port_range(65535, 2).is_err());
        assert!(check_port_range(65535, 1).is_ok());
        assert!(check_port_range(65000, 536).is_ok());
    }
}
