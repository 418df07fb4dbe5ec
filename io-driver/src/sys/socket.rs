//! The socket calls `TcpSocket` needs that std and mio lack (options,
//! `bind`, `listen` with a backlog, a non-blocking `connect`), each on a
//! borrowed fd that is open for the call.

use std::io;
use std::mem::size_of;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::mmsg::RawAddr;

/// `-1` as the OS error.
fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// A new close-on-exec TCP socket of `family`.
pub(crate) fn socket(family: libc::c_int) -> io::Result<OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let kind = libc::SOCK_STREAM;
    // SAFETY: `socket` takes no pointers; any arguments are sound.
    let fd = check(unsafe { libc::socket(family, kind, 0) })?;
    // SAFETY: `fd` was just returned by `socket`, is open, and nothing
    // else owns it: the `OwnedFd` becomes its only owner.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    // SAFETY: `fcntl(F_SETFD)` takes no pointers; `fd` is open.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) })?;
    Ok(fd)
}

/// `setsockopt` of an `int` option.
pub(crate) fn setsockopt(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    set_raw(fd, level, name, &value)
}

/// `getsockopt` of an `int` option.
pub(crate) fn getsockopt(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    get_raw(fd, level, name, &mut value)?;
    Ok(value)
}

pub(crate) fn set_linger(fd: BorrowedFd<'_>, linger: Option<Duration>) -> io::Result<()> {
    let value = libc::linger {
        l_onoff: libc::c_int::from(linger.is_some()),
        l_linger: linger.map_or(0, |d| {
            libc::c_int::try_from(d.as_secs()).unwrap_or(libc::c_int::MAX)
        }),
    };
    set_raw(fd, libc::SOL_SOCKET, libc::SO_LINGER, &value)
}

pub(crate) fn linger(fd: BorrowedFd<'_>) -> io::Result<Option<Duration>> {
    let mut value = libc::linger {
        l_onoff: 0,
        l_linger: 0,
    };
    get_raw(fd, libc::SOL_SOCKET, libc::SO_LINGER, &mut value)?;
    Ok((value.l_onoff != 0).then(|| Duration::from_secs(value.l_linger.max(0) as u64)))
}

/// `setsockopt` with `value` as the option's bytes. `T` must be the
/// plain C type the option takes (`c_int`, `linger`).
fn set_raw<T>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: the pointer and length describe `*value`, a live local
    // of the option's C type, which the kernel only reads.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `getsockopt` into `value`. `T` must be the plain C type the option
/// is (`c_int`, `linger`): every bit pattern the kernel writes is valid.
fn get_raw<T>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: &mut T,
) -> io::Result<()> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: the pointer and `len` describe `*value`, a live, writable
    // local of the option's C type; the kernel writes at most `len`
    // bytes and every bit pattern of that integer type is valid.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *mut T).cast(),
            &mut len,
        )
    })
    .map(drop)
}

pub(crate) fn bind(fd: BorrowedFd<'_>, addr: SocketAddr) -> io::Result<()> {
    let addr = RawAddr::from_inet(addr);
    let (raw, len) = addr.as_sockaddr();
    // SAFETY: `raw`/`len` describe the sockaddr of `addr`'s family held
    // in `addr`, a live local, which the kernel only reads.
    check(unsafe { libc::bind(fd.as_raw_fd(), raw, len) }).map(drop)
}

/// A connect of a non-blocking socket: `EINPROGRESS` is the usual
/// answer.
pub(crate) fn connect(fd: BorrowedFd<'_>, addr: SocketAddr) -> io::Result<()> {
    let addr = RawAddr::from_inet(addr);
    let (raw, len) = addr.as_sockaddr();
    // SAFETY: as in `bind`.
    check(unsafe { libc::connect(fd.as_raw_fd(), raw, len) }).map(drop)
}

pub(crate) fn listen(fd: BorrowedFd<'_>, backlog: libc::c_int) -> io::Result<()> {
    // SAFETY: `listen` takes no pointers; `fd` is open.
    check(unsafe { libc::listen(fd.as_raw_fd(), backlog) }).map(drop)
}
