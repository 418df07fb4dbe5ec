//! [`UnixListener`]: accepts Unix stream connections; each accepted stream
//! is registered with the listener's driver.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::net::UnixStream;
use crate::poll_io::PollIo;
use crate::ready::Direction;

/// An async Unix stream listener.
pub struct UnixListener {
    io: PollIo<mio::net::UnixListener>,
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl UnixListener {
    /// Binds to `path` (which must not exist: [`io::ErrorKind::AddrInUse`]).
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixListener> {
        Ok(UnixListener {
            io: PollIo::new(mio::net::UnixListener::bind(path)?)?,
        })
    }

    /// Registers a std listener with the current driver.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            io: PollIo::new(mio::net::UnixListener::from_std(listener))?,
        })
    }

    /// Deregisters the listener and returns it as a std listener.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        self.io.into_inner().map(Into::into)
    }

    /// Accepts a connection.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .registration
            .io(Direction::Read, || self.io.accept())
            .await?;
        let handle = self.io.registration.handle().clone();
        UnixStream::from_mio(stream, handle).map(|stream| (stream, addr))
    }

    /// Polls an accept.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
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
        Poll::Ready(UnixStream::from_mio(stream, handle).map(|stream| (stream, addr)))
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }
}

impl AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}
