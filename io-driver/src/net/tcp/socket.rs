//! [`TcpSocket`]: a TCP socket before it connects or listens, to set the
//! options that must come first (tokio's `TcpSocket`). std and mio bind
//! and listen in one call with a backlog of 128, too small for a burst of
//! connections; [`TcpListener::bind`](crate::net::TcpListener::bind) goes
//! through this type with a backlog of 1,024, as tokio does. The FFI
//! calls are in `sys/socket.rs`; the socket is held in a
//! `std::net::TcpStream`, whose getters work on any TCP socket.

use crate::sys::socket as sys;
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
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{TcpSocket, TcpStream};
///
/// let socket = TcpSocket::new_v4()?;
/// socket.set_reuseaddr(true)?;
/// socket.set_reuseport(true)?; // several listeners share the port
/// socket.bind("127.0.0.1:0".parse().unwrap())?;
/// let listener = socket.listen(4096)?; // room for a burst of connections
///
/// let client = TcpStream::connect(listener.local_addr()?).await?;
/// let (stream, peer) = listener.accept().await?;
/// assert_eq!(peer, client.local_addr()?);
/// # drop(stream); Ok(()) }).unwrap();
/// ```
#[derive(Debug)]
pub struct TcpSocket {
    inner: std::net::TcpStream,
}

impl TcpSocket {
    /// A new IPv4 TCP socket (close-on-exec, non-blocking).
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(libc::AF_INET)
    }

    /// A new IPv6 TCP socket (close-on-exec, non-blocking).
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
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        TcpSocket { inner: stream }
    }

    /// Sets `SO_REUSEADDR`: bind to a port with connections of an earlier
    /// listener still in `TIME_WAIT` (what [`TcpListener::bind`] does).
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_REUSEADDR, reuseaddr)
    }

    /// Gets `SO_REUSEADDR`.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_REUSEADDR)
    }

    /// Sets `SO_REUSEPORT`: several sockets (of one user) bind the same
    /// port, and the kernel spreads connections over their listeners; one
    /// runtime per core, each with its own listener, is the usual use.
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_REUSEPORT, reuseport)
    }

    /// Gets `SO_REUSEPORT`.
    pub fn reuseport(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_REUSEPORT)
    }

    /// Sets `SO_KEEPALIVE`.
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.set_flag(libc::SOL_SOCKET, libc::SO_KEEPALIVE, keepalive)
    }

    /// Gets `SO_KEEPALIVE`.
    pub fn keepalive(&self) -> io::Result<bool> {
        self.flag(libc::SOL_SOCKET, libc::SO_KEEPALIVE)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes); the streams
    /// this socket becomes keep it.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_nodelay(nodelay)
    }

    /// Gets `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.nodelay()
    }

    /// Sets `SO_SNDBUF`, the kernel's send buffer size, in bytes (Linux
    /// doubles the value for its bookkeeping, and [`send_buffer_size`]
    /// reports the doubled value).
    ///
    /// [`send_buffer_size`]: TcpSocket::send_buffer_size
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.set_int(libc::SOL_SOCKET, libc::SO_SNDBUF, clamp(size))
    }

    /// Gets `SO_SNDBUF`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.int(libc::SOL_SOCKET, libc::SO_SNDBUF)
            .map(|size| size.max(0) as u32)
    }

    /// Sets `SO_RCVBUF`, the kernel's receive buffer size, in bytes (see
    /// [`set_send_buffer_size`](TcpSocket::set_send_buffer_size) on
    /// doubling).
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.set_int(libc::SOL_SOCKET, libc::SO_RCVBUF, clamp(size))
    }

    /// Gets `SO_RCVBUF`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.int(libc::SOL_SOCKET, libc::SO_RCVBUF)
            .map(|size| size.max(0) as u32)
    }

    /// Sets `SO_LINGER`: with `Some(d)`, closing the stream waits up to `d`
    /// (whole seconds) for unsent data; `Some(ZERO)` resets the
    /// connection on close; `None` (the default) closes in the background.
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        sys::set_linger(self.as_fd(), linger)
    }

    /// Gets `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sys::linger(self.as_fd())
    }

    /// The local address (after [`bind`](TcpSocket::bind); the unspecified
    /// address before).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Takes the pending `SO_ERROR`.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Binds to `addr`. A port in use fails with
    /// [`io::ErrorKind::AddrInUse`] (unless both sockets set
    /// [`set_reuseport`](TcpSocket::set_reuseport)).
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        sys::bind(self.as_fd(), addr)
    }

    /// Starts listening with room for `backlog` connections not yet
    /// accepted (the kernel caps it at `net.core.somaxconn`, 4,096 on
    /// recent Linux), and registers the listener with the current thread's
    /// I/O driver.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        sys::listen(self.as_fd(), clamp(backlog))?;
        TcpListener::from_std(std::net::TcpListener::from(OwnedFd::from(self.inner)))
    }

    /// Connects to `addr` and registers the stream with the current
    /// thread's I/O driver. A refused connection fails with
    /// [`io::ErrorKind::ConnectionRefused`].
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
