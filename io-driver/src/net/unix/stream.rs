//! [`UnixStream`]: a connected Unix stream socket.

use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::poll_io::PollIo;
use crate::ready::{Direction, Interest, Ready};
use crate::Handle;
use std::task::{Context, Poll};

/// An async Unix stream socket: a [`TcpStream`](crate::net::TcpStream)
/// between processes of one machine, with the same I/O trait features
/// (example: [`UnixListener`](crate::net::UnixListener)).
pub struct UnixStream {
    io: PollIo<mio::net::UnixStream>,
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl UnixStream {
    pub(crate) fn from_mio(stream: mio::net::UnixStream, handle: Handle) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the socket at `path`. Nothing listening there fails
    /// with [`io::ErrorKind::ConnectionRefused`] or
    /// [`io::ErrorKind::NotFound`].
    pub async fn connect<P: AsRef<Path>>(path: P) -> io::Result<UnixStream> {
        let stream =
            UnixStream::from_mio(mio::net::UnixStream::connect(path)?, Handle::try_current()?)?;
        stream
            .io
            .registration
            .io(Direction::Write, || match stream.io.take_error()? {
                Some(e) => Err(e),
                None => Ok(()),
            })
            .await?;
        Ok(stream)
    }

    /// A connected pair, both registered with the current driver.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let handle = Handle::try_current()?;
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((
            UnixStream::from_mio(a, handle.clone())?,
            UnixStream::from_mio(b, handle)?,
        ))
    }

    /// Registers a std stream with the current driver.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        UnixStream::from_mio(
            mio::net::UnixStream::from_std(stream),
            Handle::try_current()?,
        )
    }

    /// Deregisters the stream and returns it as a std stream.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        self.io.into_inner().map(Into::into)
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

    /// Waits until the socket may be readable. A `try_*` read that
    /// returns `WouldBlock` makes the next call wait for a new event.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Read).await
    }

    /// Polls for read readiness without reading.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Read)
    }

    /// Waits until the socket may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Write).await
    }

    /// Polls for write readiness without writing.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Write)
    }

    /// Reads some bytes; `Ok(0)` at end of stream. A reset by the
    /// peer fails with [`io::ErrorKind::ConnectionReset`].
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read(buf).await
    }

    /// Polls [`read`](Self::read).
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io.poll_read(cx, buf)
    }

    /// [`read`](Self::read) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_read(buf)
    }

    /// Writes some bytes and returns how many were written: maybe
    /// fewer than `buf.len()` (see [`write_all`](Self::write_all)).
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.write(buf).await
    }

    /// Polls [`write`](Self::write).
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }

    /// [`write`](Self::write) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_write(buf)
    }

    /// Writes all of `buf`, in as many writes as it takes.
    pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        self.io.write_all(buf).await
    }

    /// Shuts down the write side (the peer reads end of stream).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.shutdown_write()
    }

    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.io.shutdown(Shutdown::Write)
    }

    /// Waits until the socket is ready for any part of `interest` and
    /// returns the readiness found, as tokio's `ready`; follow with `try_*`
    /// operations, whose `WouldBlock` makes the next `ready` wait.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.registration.ready_for(interest).await
    }

    /// Reads into `buf`'s spare capacity now (always one syscall; at
    /// most its current `chunk_mut`), or fails with `WouldBlock`;
    /// `Ok(0)` at end of stream. Available with feature `bytes`.
    #[cfg(feature = "bytes")]
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.io.try_read_buf(buf)
    }
}
