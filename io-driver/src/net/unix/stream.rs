//! [`UnixStream`]: a connected Unix stream socket.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async Unix stream socket.
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

impl UnixStream {
    pub(crate) fn from_mio(stream: mio::net::UnixStream, handle: Handle) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the socket at `path`.
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

    /// Waits until the stream may be readable.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Read).await
    }

    /// Waits until the stream may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Write).await
    }

    /// Polls for read readiness.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Read)
    }

    /// Polls for write readiness.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Write)
    }

    /// Reads some bytes; `Ok(0)` at end of stream.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .registration
            .io(Direction::Read, || (&*self.io).read(buf))
            .await
    }

    /// Polls a read.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Read, || (&*self.io).read(buf))
    }

    /// Reads now (always one syscall), or fails with `WouldBlock`.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Read, || (&*self.io).read(buf))
    }

    /// Writes some bytes.
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .registration
            .io(Direction::Write, || (&*self.io).write(buf))
            .await
    }

    /// Writes all of `buf`.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.write(buf).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = &buf[n..];
        }
        Ok(())
    }

    /// Polls a write.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || (&*self.io).write(buf))
    }

    /// Writes now (always one syscall), or fails with `WouldBlock`.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || (&*self.io).write(buf))
    }

    /// Shuts down the write side (the peer reads end of stream).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.shutdown_write()
    }

    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.io.shutdown(Shutdown::Write)
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
