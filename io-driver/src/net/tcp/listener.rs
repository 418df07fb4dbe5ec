//! [`TcpListener`]: accepts connections; each accepted stream is
//! registered with the listener's driver.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use crate::net::addr::each_addr;
use crate::net::{TcpSocket, TcpStream, ToSocketAddrs};
use crate::poll_io::PollIo;
use crate::Handle;

/// The backlog of [`TcpListener::bind`]: 1,024 pending connections, as
/// tokio (the kernel caps it at `net.core.somaxconn`).
const DEFAULT_BACKLOG: u32 = 1024;

/// An async TCP listener. Each accepted [`TcpStream`] is registered with
/// the listener's driver. Several tasks may accept on one listener (an
/// `Arc<TcpListener>`).
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// let client = TcpStream::connect(listener.local_addr()?).await?;
///
/// let (stream, peer) = listener.accept().await?;
/// println!("connection from {peer}");
/// stream.write_all(b"hello\n").await?;
/// stream.shutdown().await?;
///
/// let mut reply = Vec::new();
/// let mut buf = [0u8; 1024];
/// loop {
///     let n = client.read(&mut buf).await?;
///     if n == 0 {
///         break;
///     }
///     reply.extend_from_slice(&buf[..n]);
/// }
/// assert_eq!(reply, b"hello\n");
/// # Ok(()) }).unwrap();
/// ```
pub struct TcpListener {
    io: PollIo<mio::net::TcpListener>,
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for TcpListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl TcpListener {
    /// Binds to the first address of `addr` that works and listens, with
    /// `SO_REUSEADDR` and a backlog of 1,024 as tokio (use
    /// [`TcpSocket::listen`](crate::net::TcpSocket::listen) for another). A
    /// port in use gives [`io::ErrorKind::AddrInUse`].
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        let handle = Handle::try_current()?;
        each_addr(&addr, handle.settings(), |addr| {
            let socket = TcpSocket::new_for_addr(addr)?;
            socket.set_reuseaddr(true)?;
            socket.bind(addr)?;
            socket.listen(DEFAULT_BACKLOG)
        })
        .await
    }

    /// Registers a std listener with the current driver (and makes it
    /// non-blocking).
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener {
            io: PollIo::new(mio::net::TcpListener::from_std(listener))?,
        })
    }

    /// Deregisters the listener and returns it as a std listener.
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        self.io.into_inner().map(Into::into)
    }

    /// Accepts a connection. Running out of file descriptors fails with
    /// the OS error (`EMFILE`, "Too many open files"); the pending
    /// connection stays queued and a later `accept` can take it.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        self.io.accept().await
    }

    /// Polls an accept.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        self.io.poll_accept(cx)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// Sets `IP_TTL` for accepted connections.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// Gets `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
    }
}
