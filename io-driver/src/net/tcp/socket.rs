//! [`TcpSocket`]: a TCP socket before it connects or listens, to set the
//! options that must be set first (tokio's `TcpSocket`).
//!
//! # Why it exists
//!
//! `std` and mio create, bind and listen in one call, with a backlog of
//! 128 and no say over `SO_REUSEPORT` or the buffer sizes. A backlog of 128
//! is too small for a burst of connections: a 200-client burst overflowed
//! it and the refused SYNs were retried a second later. `TcpSocket` gives
//! the steps one by one (`new_v4`, options, `bind`, then `listen(backlog)`
//! or `connect(addr)`), and [`TcpListener::bind`](crate::net::TcpListener::bind)
//! goes through it with a backlog of 1,024, as tokio does.
//!
//! # The system calls
//!
//! Neither std nor mio has these steps, so this module calls `libc`
//! (already in the dependency tree through mio) directly; every `unsafe`
//! block lives in the `sys` module below, each a single FFI call on an fd
//! this socket owns, with pointers to locals that outlive the call. The
//! socket itself is held in a `std::net::TcpStream`, std's plain wrapper of
//! a TCP fd, whose getters (`local_addr`, `take_error`, `nodelay`) are
//! `getsockname`/`getsockopt` calls valid on any TCP socket, connected or
//! not.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::net::{TcpListener, TcpStream};
use crate::Handle;

/// A TCP socket that has not connected or started listening yet: set its
/// options, [`bind`](TcpSocket::bind) it, then turn it into a
/// [`TcpListener`] with [`listen`](TcpSocket::listen) or a [`TcpStream`]
/// with [`connect`](TcpSocket::connect).
///
/// Creating one and setting options needs no runtime; `listen` and
/// `connect` register with the current thread's I/O driver.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use tempo_io::net::TcpSocket;
///
/// let socket = TcpSocket::new_v4()?;
/// socket.set_reuseaddr(true)?;
/// socket.set_reuseport(true)?; // several listeners share the port
/// socket.bind("127.0.0.1:8080".parse().unwrap())?;
/// let listener = socket.listen(4096)?; // room for a burst of connections
/// let (stream, peer) = listener.accept().await?;
/// # drop((stream, peer)); Ok(()) }
/// ```
#[derive(Debug)]
pub struct TcpSocket {
    inner: std::net::TcpStream,
}

impl TcpSocket {
    /// A new IPv4 TCP socket (close-on-exec, non-blocking).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.bind("127.0.0.1:0".parse().unwrap())?;
    /// assert!(socket.local_addr()?.is_ipv4());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(libc::AF_INET)
    }

    /// A new IPv6 TCP socket (close-on-exec, non-blocking).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v6()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(libc::AF_INET6)
    }

    /// A socket of the family of `addr`.
    pub(crate) fn new_for_addr(addr: SocketAddr) -> io::Result<TcpSocket> {
        match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4(),
            SocketAddr::V6(_) => TcpSocket::new_v6(),
        }
    }

    fn new(family: libc::c_int) -> io::Result<TcpSocket> {
        let inner = std::net::TcpStream::from(sys::socket(family)?);
        inner.set_nonblocking(true)?;
        Ok(TcpSocket { inner })
    }

    /// Wraps a std stream's socket, e.g. one made with other means, to set
    /// options, bind and listen or connect it here.
    ///
    /// ```
    /// use std::os::fd::AsRawFd;
    ///
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    /// let client = std::net::TcpStream::connect(listener.local_addr()?)?;
    /// let fd = client.as_raw_fd();
    /// let socket = tempo_io::net::TcpSocket::from_std_stream(client);
    /// assert_eq!(socket.as_raw_fd(), fd);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        TcpSocket { inner: stream }
    }

    /// Sets `SO_REUSEADDR`: bind to a port with connections of an earlier
    /// listener still in `TIME_WAIT` (what [`TcpListener::bind`] does).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_reuseaddr(true)?;
    /// assert!(socket.reuseaddr()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_REUSEADDR, reuseaddr)
    }

    /// Gets `SO_REUSEADDR`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(!socket.reuseaddr()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_REUSEADDR)
    }

    /// Sets `SO_REUSEPORT`: several sockets (of one user) bind the same
    /// port, and the kernel spreads connections over their listeners; one
    /// runtime per core, each with its own listener, is the usual use.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_reuseport(true)?;
    /// assert!(socket.reuseport()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_REUSEPORT, reuseport)
    }

    /// Gets `SO_REUSEPORT`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(!socket.reuseport()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn reuseport(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_REUSEPORT)
    }

    /// Sets `SO_KEEPALIVE`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_keepalive(true)?;
    /// assert!(socket.keepalive()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_KEEPALIVE, keepalive)
    }

    /// Gets `SO_KEEPALIVE`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(!socket.keepalive()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn keepalive(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_KEEPALIVE)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes); the streams
    /// this socket becomes keep it.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_nodelay(true)?;
    /// assert!(socket.nodelay()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_nodelay(nodelay)
    }

    /// Gets `TCP_NODELAY`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(!socket.nodelay()?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.nodelay()
    }

    /// Sets `SO_SNDBUF`, the kernel's send buffer size, in bytes (Linux
    /// doubles the value for its bookkeeping, and [`send_buffer_size`]
    /// reports the doubled value).
    ///
    /// [`send_buffer_size`]: TcpSocket::send_buffer_size
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_send_buffer_size(64 * 1024)?;
    /// assert!(socket.send_buffer_size()? >= 64 * 1024);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.set_int(libc::SOL_SOCKET, libc::SO_SNDBUF, clamp(size))
    }

    /// Gets `SO_SNDBUF`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(socket.send_buffer_size()? > 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.int(libc::SOL_SOCKET, libc::SO_SNDBUF)
            .map(|size| size.max(0) as u32)
    }

    /// Sets `SO_RCVBUF`, the kernel's receive buffer size, in bytes (see
    /// [`set_send_buffer_size`](TcpSocket::set_send_buffer_size) on
    /// doubling).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_recv_buffer_size(64 * 1024)?;
    /// assert!(socket.recv_buffer_size()? >= 64 * 1024);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.set_int(libc::SOL_SOCKET, libc::SO_RCVBUF, clamp(size))
    }

    /// Gets `SO_RCVBUF`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(socket.recv_buffer_size()? > 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.int(libc::SOL_SOCKET, libc::SO_RCVBUF)
            .map(|size| size.max(0) as u32)
    }

    /// Sets `SO_LINGER`: with `Some(d)`, closing the stream waits up to `d`
    /// (whole seconds) for unsent data; `Some(ZERO)` resets the
    /// connection on close; `None` (the default) closes in the background.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_linger(Some(Duration::from_secs(2)))?;
    /// assert_eq!(socket.linger()?, Some(Duration::from_secs(2)));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        sys::set_linger(self.as_fd(), linger)
    }

    /// Gets `SO_LINGER`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert_eq!(socket.linger()?, None);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sys::linger(self.as_fd())
    }

    /// The local address (after [`bind`](TcpSocket::bind); the unspecified
    /// address before).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.bind("127.0.0.1:0".parse().unwrap())?;
    /// assert_ne!(socket.local_addr()?.port(), 0); // the port the OS chose
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Takes the pending `SO_ERROR`.
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// assert!(socket.take_error()?.is_none());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Binds to `addr`. A port in use fails with
    /// [`io::ErrorKind::AddrInUse`] (unless both sockets set
    /// [`set_reuseport`](TcpSocket::set_reuseport)).
    ///
    /// ```
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.bind("127.0.0.1:0".parse().unwrap())?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        sys::bind(self.as_fd(), addr)
    }

    /// Starts listening with room for `backlog` connections not yet
    /// accepted (the kernel caps it at `net.core.somaxconn`, 4,096 on
    /// recent Linux), and registers the listener with the current thread's
    /// I/O driver.
    ///
    /// ```no_run
    /// # async fn demo() -> std::io::Result<()> {
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.bind("127.0.0.1:0".parse().unwrap())?;
    /// let listener = socket.listen(1024)?;
    /// # drop(listener); Ok(()) }
    /// ```
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        sys::listen(self.as_fd(), clamp(backlog))?;
        TcpListener::from_std(std::net::TcpListener::from(OwnedFd::from(self.inner)))
    }

    /// Connects to `addr` and registers the stream with the current
    /// thread's I/O driver. A refused connection fails with
    /// [`io::ErrorKind::ConnectionRefused`].
    ///
    /// ```no_run
    /// # async fn demo() -> std::io::Result<()> {
    /// let socket = tempo_io::net::TcpSocket::new_v4()?;
    /// socket.set_nodelay(true)?;
    /// let stream = socket.connect("127.0.0.1:8080".parse().unwrap()).await?;
    /// # drop(stream); Ok(()) }
    /// ```
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        let handle = Handle::try_current()?;
        match sys::connect(self.as_fd(), addr) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        TcpStream::connected(mio::net::TcpStream::from_std(self.inner), handle).await
    }

    fn set_flag(&self, level: libc::c_int, name: libc::c_int, on: bool) -> io::Result<()> {
        self.set_int(level, name, libc::c_int::from(on))
    }

    fn flag(&self, level: libc::c_int, name: libc::c_int) -> io::Result<bool> {
        self.int(level, name).map(|value| value != 0)
    }

    fn set_int(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        sys::setsockopt(self.as_fd(), level, name, value)
    }

    fn int(&self, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
        sys::getsockopt(self.as_fd(), level, name)
    }
}

/// A `u32` count as the `c_int` the kernel takes (saturating).
fn clamp(value: u32) -> libc::c_int {
    libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX)
}

impl AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl AsFd for TcpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

impl From<TcpSocket> for OwnedFd {
    fn from(socket: TcpSocket) -> OwnedFd {
        OwnedFd::from(socket.inner)
    }
}

/// The `libc` calls, each on a borrowed fd that is open for the call.
mod sys {
    use std::io;
    use std::mem::size_of;
    use std::net::SocketAddr;
    use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
    use std::time::Duration;

    /// `-1` as the OS error.
    fn check(result: libc::c_int) -> io::Result<libc::c_int> {
        if result == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(result)
        }
    }

    /// A new close-on-exec TCP socket of `family`.
    pub(super) fn socket(family: libc::c_int) -> io::Result<OwnedFd> {
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
    pub(super) fn setsockopt(
        fd: BorrowedFd<'_>,
        level: libc::c_int,
        name: libc::c_int,
        value: libc::c_int,
    ) -> io::Result<()> {
        set_raw(fd, level, name, &value)
    }

    /// `getsockopt` of an `int` option.
    pub(super) fn getsockopt(
        fd: BorrowedFd<'_>,
        level: libc::c_int,
        name: libc::c_int,
    ) -> io::Result<libc::c_int> {
        let mut value: libc::c_int = 0;
        get_raw(fd, level, name, &mut value)?;
        Ok(value)
    }

    pub(super) fn set_linger(fd: BorrowedFd<'_>, linger: Option<Duration>) -> io::Result<()> {
        let value = libc::linger {
            l_onoff: libc::c_int::from(linger.is_some()),
            l_linger: linger.map_or(0, |d| {
                libc::c_int::try_from(d.as_secs()).unwrap_or(libc::c_int::MAX)
            }),
        };
        set_raw(fd, libc::SOL_SOCKET, libc::SO_LINGER, &value)
    }

    pub(super) fn linger(fd: BorrowedFd<'_>) -> io::Result<Option<Duration>> {
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

    /// Calls `f` with `addr` as a C `sockaddr` pointer and length.
    fn with_sockaddr<R>(
        addr: SocketAddr,
        f: impl FnOnce(*const libc::sockaddr, libc::socklen_t) -> R,
    ) -> R {
        match addr {
            SocketAddr::V4(addr) => {
                // SAFETY: `sockaddr_in` is a plain C struct: all zeroes is a
                // valid value (and the required padding).
                let mut raw: libc::sockaddr_in = unsafe { std::mem::zeroed() };
                raw.sin_family = libc::AF_INET as libc::sa_family_t;
                raw.sin_port = addr.port().to_be();
                raw.sin_addr = libc::in_addr {
                    s_addr: u32::from_ne_bytes(addr.ip().octets()),
                };
                f(
                    (&raw as *const libc::sockaddr_in).cast(),
                    size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            }
            SocketAddr::V6(addr) => {
                // SAFETY: `sockaddr_in6` is a plain C struct: all zeroes is
                // a valid value.
                let mut raw: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
                raw.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                raw.sin6_port = addr.port().to_be();
                raw.sin6_flowinfo = addr.flowinfo();
                raw.sin6_addr = libc::in6_addr {
                    s6_addr: addr.ip().octets(),
                };
                raw.sin6_scope_id = addr.scope_id();
                f(
                    (&raw as *const libc::sockaddr_in6).cast(),
                    size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                )
            }
        }
    }

    pub(super) fn bind(fd: BorrowedFd<'_>, addr: SocketAddr) -> io::Result<()> {
        with_sockaddr(addr, |raw, len| {
            // SAFETY: `raw`/`len` describe a live sockaddr of `addr`'s
            // family (see `with_sockaddr`), which the kernel only reads.
            check(unsafe { libc::bind(fd.as_raw_fd(), raw, len) })
        })
        .map(drop)
    }

    /// A connect of a non-blocking socket: `EINPROGRESS` is the usual
    /// answer.
    pub(super) fn connect(fd: BorrowedFd<'_>, addr: SocketAddr) -> io::Result<()> {
        with_sockaddr(addr, |raw, len| {
            // SAFETY: as in `bind`.
            check(unsafe { libc::connect(fd.as_raw_fd(), raw, len) })
        })
        .map(drop)
    }

    pub(super) fn listen(fd: BorrowedFd<'_>, backlog: libc::c_int) -> io::Result<()> {
        // SAFETY: `listen` takes no pointers; `fd` is open.
        check(unsafe { libc::listen(fd.as_raw_fd(), backlog) }).map(drop)
    }
}
