//! [`TcpListener`]: accepts connections; each accepted stream is
//! registered with the listener's driver.

use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use crate::net::addr::each_addr;
use crate::net::TcpStream;
use crate::poll_io::PollIo;
use crate::ready::Direction;

/// An async TCP listener.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// let listener = tempo_io::net::TcpListener::bind("127.0.0.1:0").await?;
/// let (stream, peer) = listener.accept().await?;
/// # Ok(()) }
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

impl TcpListener {
    /// Binds to the first address of `addr` that works (`SO_REUSEADDR` is
    /// set, as mio and tokio do). A port in use gives
    /// [`io::ErrorKind::AddrInUse`].
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |addr| {
            Ok(TcpListener {
                io: PollIo::new(mio::net::TcpListener::bind(addr)?)?,
            })
        })
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

    /// Accepts a connection. Running out of file descriptors fails with the
    /// OS error (`EMFILE`, "Too many open files"); the pending connection
    /// stays queued and a later `accept` can take it.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .registration
            .io(Direction::Read, || self.io.accept())
            .await?;
        let handle = self.io.registration.handle().clone();
        TcpStream::from_mio(stream, handle).map(|stream| (stream, addr))
    }

    /// Polls an accept.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let (stream, addr) = match self
            .io
            .registration
            .poll_io(cx, Direction::Read, || self.io.accept())
        {
            Poll::Ready(Ok(accepted)) => accepted,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        };
        let handle = self.io.registration.handle().clone();
        Poll::Ready(TcpStream::from_mio(stream, handle).map(|stream| (stream, addr)))
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
