//! [`TcpStream`]: a connected TCP socket.

use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use crate::net::addr::{no_address, resolve};
use crate::net::tcp::split::{split, split_owned};
use crate::net::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ToSocketAddrs, WriteHalf};
use crate::poll_io::PollIo;
use crate::ready::{Direction, Interest, Ready};
use crate::Handle;
use std::task::{Context, Poll};

/// An async TCP stream.
///
/// Reading and writing take `&self`, so one task may read while another
/// writes (see [`into_split`](TcpStream::into_split)).
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// let stream = TcpStream::connect(listener.local_addr()?).await?;
/// let (server, _) = listener.accept().await?;
///
/// stream.write_all(b"ping").await?;
/// let mut buf = [0u8; 4];
/// let mut filled = 0;
/// while filled < buf.len() {
///     filled += server.read(&mut buf[filled..]).await?;
/// }
/// assert_eq!(&buf, b"ping");
/// # Ok(()) }).unwrap();
/// ```
///
/// With the `futures-io` feature (default) it implements
/// `futures_io::AsyncRead` / `AsyncWrite`; with `tokio-io`, tokio's.
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

impl TcpStream {
    pub(crate) fn from_mio(stream: mio::net::TcpStream, handle: Handle) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the first address of `addr` that accepts (a host name
    /// is resolved off the runtime's thread, see [`ToSocketAddrs`]). A
    /// refused connection fails with [`io::ErrorKind::ConnectionRefused`].
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let handle = Handle::try_current()?;
        let mut last_error = None;
        for addr in resolve(&addr, Some(handle.settings())).await? {
            let connected = match mio::net::TcpStream::connect(addr) {
                Ok(stream) => TcpStream::connected(stream, handle.clone()).await,
                Err(e) => Err(e),
            };
            match connected {
                Ok(stream) => return Ok(stream),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(no_address))
    }

    /// Registers a stream whose non-blocking connect is under way and
    /// waits for the outcome.
    pub(crate) async fn connected(
        stream: mio::net::TcpStream,
        handle: Handle,
    ) -> io::Result<TcpStream> {
        let stream = TcpStream::from_mio(stream, handle)?;
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

    /// Waits until the socket may be readable. A `try_*` read that
    /// returns `WouldBlock` makes the next call wait for a new event.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::{TcpListener, TcpStream};
    ///
    /// let listener = TcpListener::bind("127.0.0.1:0").await?;
    /// let a = TcpStream::connect(listener.local_addr()?).await?;
    /// let (b, _) = listener.accept().await?;
    ///
    /// a.write_all(b"hello").await?;
    /// let mut buf = [0u8; 1024];
    /// let n = loop {
    ///     b.readable().await?;
    ///     match b.try_read(&mut buf) {
    ///         Ok(n) => break n,
    ///         // a spurious wake-up: wait for the next event
    ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///         Err(e) => return Err(e),
    ///     }
    /// };
    /// assert!(n > 0);
    /// # Ok(()) }).unwrap();
    /// ```
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

    /// Reads without consuming.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = || self.io.peek(buf);
        self.io.registration.io(Direction::Read, op).await
    }

    /// Polls [`peek`](Self::peek).
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let op = || self.io.peek(buf);
        self.io.registration.poll_io(cx, Direction::Read, op)
    }

    /// [`peek`](Self::peek) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = || self.io.peek(buf);
        self.io.registration.try_io(Direction::Read, op)
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

    /// Splits into halves that borrow the stream, to read and write in
    /// one task at once (with `join!` or `select!`).
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        split(self)
    }

    /// Splits into owned halves that can move to different tasks; dropping
    /// the write half shuts down the write side.
    /// [`reunite`](OwnedReadHalf::reunite) puts them back together.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
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
