//! [`TcpStream`]: a connected TCP socket.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use crate::net::tcp::split::{split, split_owned};
use crate::net::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async TCP stream.
///
/// Reading and writing take `&self`, so one task may read while another
/// writes (see [`into_split`](TcpStream::into_split)). With the default
/// `futures-io` feature it implements `futures_io::AsyncRead`/`AsyncWrite`;
/// with `tokio-io`, tokio's traits.
pub struct TcpStream {
    io: PollIo<mio::net::TcpStream>,
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl TcpStream {
    pub(crate) fn from_mio(stream: mio::net::TcpStream, handle: Handle) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the first address of `addr` that accepts. A refused
    /// connection fails with [`io::ErrorKind::ConnectionRefused`].
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let mut last_error = None;
        for addr in addr.to_socket_addrs()? {
            match TcpStream::connect_addr(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "could not resolve to any address",
            )
        }))
    }

    async fn connect_addr(addr: SocketAddr) -> io::Result<TcpStream> {
        let stream =
            TcpStream::from_mio(mio::net::TcpStream::connect(addr)?, Handle::try_current()?)?;
        stream
            .io
            .registration
            .io(Direction::Write, || stream.connect_result())
            .await?;
        Ok(stream)
    }

    /// The outcome of a non-blocking connect once writable: `SO_ERROR`,
    /// then `getpeername` (mio's documented sequence); `WouldBlock` while
    /// still in progress.
    fn connect_result(&self) -> io::Result<()> {
        if let Some(e) = self.io.take_error()? {
            return Err(e);
        }
        match self.io.peer_addr() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                Err(io::ErrorKind::WouldBlock.into())
            }
            Err(e) => Err(e),
        }
    }

    /// Registers a connected std stream with the current driver (and makes
    /// it non-blocking).
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::from_mio(
            mio::net::TcpStream::from_std(stream),
            Handle::try_current()?,
        )
    }

    /// Deregisters the stream and returns it as a std stream.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
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

    /// Sets `TCP_NODELAY`.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.set_nodelay(nodelay)
    }

    /// Gets `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.nodelay()
    }

    /// Sets `IP_TTL`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// Gets `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
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

    /// Reads some bytes; `Ok(0)` at end of stream. A reset by the peer
    /// fails with [`io::ErrorKind::ConnectionReset`].
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

    /// Reads without consuming.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .registration
            .io(Direction::Read, || self.io.peek(buf))
            .await
    }

    /// Polls a peek.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Read, || self.io.peek(buf))
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
        self.shutdown_std(Shutdown::Write)
    }

    pub(crate) fn shutdown_std(&self, how: Shutdown) -> io::Result<()> {
        self.io.shutdown(how)
    }

    #[allow(dead_code)] // used by the I/O trait features only
    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.shutdown_std(Shutdown::Write)
    }

    /// Splits into halves that borrow the stream.
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        split(self)
    }

    /// Splits into owned halves that can move to different tasks; dropping
    /// the write half shuts down the write side.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }
}

impl AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for TcpStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}
