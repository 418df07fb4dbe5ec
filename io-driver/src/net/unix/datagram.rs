//! [`UnixDatagram`]: a Unix datagram socket. Receives follow the same
//! rules as [`UdpSocket`](crate::net::UdpSocket)'s, deferred drain retry
//! included.

use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async Unix datagram socket.
pub struct UnixDatagram {
    io: PollIo<mio::net::UnixDatagram>,
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl UnixDatagram {
    fn from_mio(socket: mio::net::UnixDatagram, handle: Handle) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: PollIo::with_handle(socket, handle)?,
        })
    }

    /// Binds to `path`.
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixDatagram> {
        let handle = Handle::try_current()?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::bind(path)?, handle)
    }

    /// A socket bound to no address.
    pub fn unbound() -> io::Result<UnixDatagram> {
        let handle = Handle::try_current()?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::unbound()?, handle)
    }

    /// A connected pair, both registered with the current driver.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let handle = Handle::try_current()?;
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((
            UnixDatagram::from_mio(a, handle.clone())?,
            UnixDatagram::from_mio(b, handle)?,
        ))
    }

    /// Registers a std socket with the current driver.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        UnixDatagram::from_mio(
            mio::net::UnixDatagram::from_std(socket),
            Handle::try_current()?,
        )
    }

    /// Deregisters the socket and returns it as a std socket.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        self.io.into_inner().map(Into::into)
    }

    /// Sets the default destination.
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        self.io.connect(path)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr()
    }

    /// Takes the pending `SO_ERROR`.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }

    /// Shuts down part of the socket.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.shutdown(how)
    }

    /// Waits until the socket may be readable.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Read).await
    }

    /// Waits until the socket may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Write).await
    }

    /// Polls for read readiness.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Read)
    }

    /// Polls for write readiness.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Write)
    }

    /// Sends to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .registration
            .io(Direction::Write, || self.io.send(buf))
            .await
    }

    /// Polls a send to the connected peer.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || self.io.send(buf))
    }

    /// Sends now, or fails with `WouldBlock`.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send(buf))
    }

    /// Sends to the socket at `path`.
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, path))
            .await
    }

    /// Polls a send to `path`.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        path: &Path,
    ) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || self.io.send_to(buf, path))
    }

    /// Sends to `path` now, or fails with `WouldBlock`.
    pub fn try_send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send_to(buf, path))
    }

    /// Receives from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration.recv_io(|| self.io.recv(buf)).await
    }

    /// Polls a receive (subject to the deferred drain retry).
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io.registration.poll_recv_io(cx, || self.io.recv(buf))
    }

    /// Receives now (always one syscall), or fails with `WouldBlock`.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Read, || self.io.recv(buf))
    }

    /// Receives a datagram and its source address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .recv_io(|| self.io.recv_from(buf))
            .await
    }

    /// Polls a receive with source address (subject to the deferred drain
    /// retry).
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .registration
            .poll_recv_io(cx, || self.io.recv_from(buf))
    }

    /// Receives now (always one syscall), or fails with `WouldBlock`.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .try_io(Direction::Read, || self.io.recv_from(buf))
    }
}

impl AsRawFd for UnixDatagram {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixDatagram {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}
