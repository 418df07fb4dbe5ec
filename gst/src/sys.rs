//! The socket calls std does not offer: binding with `SO_REUSEADDR` set
//! before `bind`, adopting a socket the application hands over by fd, and
//! turning on the kernel's receive timestamps (`SO_TIMESTAMPNS`) before
//! the first datagram arrives.

use std::io;
use std::mem;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A non-blocking UDP socket bound to `addr`, with `SO_REUSEADDR` (and
/// `SO_REUSEPORT`) set first if `reuse`.
pub(crate) fn bind_udp(addr: SocketAddr, reuse: bool) -> io::Result<UdpSocket> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    let flags = libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: socket(2) takes no pointers; the result is checked below.
    let fd = unsafe { libc::socket(family, flags, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket(2) and nothing else owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    if reuse {
        set_int_option(fd, libc::SO_REUSEADDR, 1)?;
        set_int_option(fd, libc::SO_REUSEPORT, 1)?;
    }
    let (storage, len) = sockaddr(addr);
    // SAFETY: `storage` is a sockaddr of the family of `fd`, `len` bytes
    // long, and lives across the call.
    let rc = unsafe { libc::bind(fd, (&raw const storage).cast(), len) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UdpSocket::from(owned))
}

fn set_int_option(fd: RawFd, option: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: `value` is a c_int that lives across the call, and the
    // length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&raw const value).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data for which all zeroes is valid.
    let mut storage: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for
            // every sockaddr type.
            unsafe { (&raw mut storage).cast::<libc::sockaddr_in>().write(sin) };
            mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { (&raw mut storage).cast::<libc::sockaddr_in6>().write(sin6) };
            mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Asks the kernel to stamp every datagram `socket` receives from now on.
pub(crate) fn enable_timestamps(socket: &UdpSocket) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    set_int_option(socket.as_raw_fd(), libc::SO_TIMESTAMPNS, 1)
}

/// A duplicate of the application's socket `fd` (the application keeps
/// its own), checked to be a datagram socket.
pub(crate) fn adopt_udp(fd: RawFd) -> io::Result<UdpSocket> {
    let mut kind: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `kind` and `len` live across the call and `len` is the size
    // of `kind`; an invalid `fd` makes the call fail with EBADF.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&raw mut kind).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if kind != libc::SOCK_DGRAM {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a datagram socket",
        ));
    }
    // SAFETY: getsockopt just succeeded on `fd`, so it is an open
    // descriptor; it is only borrowed for the duplication below.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let socket = UdpSocket::from(borrowed.try_clone_to_owned()?);
    socket.set_nonblocking(true)?;
    Ok(socket)
}
