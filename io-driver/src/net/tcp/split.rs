//! Halves of a [`TcpStream`]: borrowed ([`ReadHalf`], [`WriteHalf`]) and
//! owned ([`OwnedReadHalf`], [`OwnedWriteHalf`]).
//!
//! Any number of tasks may wait on a stream in each direction, so the
//! halves (and clones of an owned half's stream) can wait in different
//! tasks at the same time. Owned halves share the
//! stream through an `Arc` (one allocation per split, none per operation).

use std::error::Error;
use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::net::TcpStream;

/// The read half of a borrowed split ([`TcpStream::split`]).
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// The write half of a borrowed split ([`TcpStream::split`]).
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

/// The owned read half ([`TcpStream::into_split`]): `'static`, so it
/// can move into its own task.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// let stream = TcpStream::connect(listener.local_addr()?).await?;
/// let (peer, _) = listener.accept().await?;
///
/// let (reader, writer) = stream.into_split();
/// peer.write_all(b"hi").await?;
/// let mut buf = [0u8; 2];
/// let mut filled = 0;
/// while filled < buf.len() {
///     filled += reader.read(&mut buf[filled..]).await?;
/// }
/// assert_eq!(&buf, b"hi");
/// # drop(writer);
/// # Ok(()) }).unwrap();
/// ```
#[derive(Debug)]
pub struct OwnedReadHalf {
    inner: Arc<TcpStream>,
}

/// The owned write half ([`TcpStream::into_split`]). Dropping it shuts
/// down the write side, so the peer sees end of stream.
#[derive(Debug)]
pub struct OwnedWriteHalf {
    inner: Arc<TcpStream>,
    shutdown_on_drop: bool,
}

/// [`OwnedReadHalf::reunite`] was given halves of two different streams.
/// It hands both halves back.
#[derive(Debug)]
pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

impl fmt::Display for ReuniteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tried to reunite halves that are not from the same TcpStream")
    }
}

impl Error for ReuniteError {}

pub(crate) fn split(stream: &mut TcpStream) -> (ReadHalf<'_>, WriteHalf<'_>) {
    (ReadHalf(stream), WriteHalf(stream))
}

pub(crate) fn split_owned(stream: TcpStream) -> (OwnedReadHalf, OwnedWriteHalf) {
    let inner = Arc::new(stream);
    (
        OwnedReadHalf {
            inner: inner.clone(),
        },
        OwnedWriteHalf {
            inner,
            shutdown_on_drop: true,
        },
    )
}

impl ReadHalf<'_> {
    /// Reads some bytes; `Ok(0)` at end of stream ([`TcpStream::read`]).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).await
    }

    /// Polls a read ([`TcpStream::poll_read`]).
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.0.poll_read(cx, buf)
    }

    /// [`TcpStream::try_read`] on the stream.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    /// Reads without consuming ([`TcpStream::peek`]).
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.peek(buf).await
    }

    /// Waits until the stream may be readable ([`TcpStream::readable`]).
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// The local address of the stream.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }

    /// The address of the stream's peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }
}

impl WriteHalf<'_> {
    /// Writes some bytes ([`TcpStream::write`]).
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).await
    }

    /// Writes all of `buf` ([`TcpStream::write_all`]).
    pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).await
    }

    /// Polls a write ([`TcpStream::poll_write`]).
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.poll_write(cx, buf)
    }

    /// [`TcpStream::try_write`] on the stream.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    /// Waits until the stream may be writable ([`TcpStream::writable`]).
    pub async fn writable(&self) -> io::Result<()> {
        self.0.writable().await
    }

    /// Shuts down the write side ([`TcpStream::shutdown`]).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.0.shutdown().await
    }

    /// The local address of the stream.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }

    /// The address of the stream's peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The write side's shutdown for the I/O traits' `poll_shutdown`.
    #[cfg(any(feature = "futures-io", feature = "tokio-io"))]
    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.0.shutdown_write()
    }
}

impl OwnedReadHalf {
    /// Reads some bytes ([`TcpStream::read`]).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).await
    }

    /// Polls a read ([`TcpStream::poll_read`]).
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.inner.poll_read(cx, buf)
    }

    /// [`TcpStream::try_read`] on the stream.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.try_read(buf)
    }

    /// Reads without consuming ([`TcpStream::peek`]).
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }

    /// Waits until readable ([`TcpStream::readable`]).
    pub async fn readable(&self) -> io::Result<()> {
        self.inner.readable().await
    }

    /// The local address of the shared stream.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// The address of the shared stream's peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// Puts the halves back together; fails if from different streams.
    pub fn reunite(self, other: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
        reunite(self, other)
    }
}

impl OwnedWriteHalf {
    /// Writes some bytes to the shared stream ([`TcpStream::write`]).
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).await
    }

    /// Writes all of `buf` ([`TcpStream::write_all`]).
    pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf).await
    }

    /// Polls a write ([`TcpStream::poll_write`]).
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.inner.poll_write(cx, buf)
    }

    /// [`TcpStream::try_write`] on the stream.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.try_write(buf)
    }

    /// Waits until writable ([`TcpStream::writable`]).
    pub async fn writable(&self) -> io::Result<()> {
        self.inner.writable().await
    }

    /// Shuts down the write side now, not at drop ([`TcpStream::shutdown`]).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.inner.shutdown().await
    }

    /// The local address of the shared stream.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// The address of the shared stream's peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// The write side's shutdown for the I/O traits' `poll_shutdown`.
    #[cfg(any(feature = "futures-io", feature = "tokio-io"))]
    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.inner.shutdown_write()
    }

    /// Puts the halves back together; fails if from different streams.
    pub fn reunite(self, other: OwnedReadHalf) -> Result<TcpStream, ReuniteError> {
        reunite(other, self)
    }
}

fn reunite(read: OwnedReadHalf, mut write: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
    if !Arc::ptr_eq(&read.inner, &write.inner) {
        return Err(ReuniteError(read, write));
    }
    write.shutdown_on_drop = false;
    drop(write);
    Ok(Arc::try_unwrap(read.inner)
        .expect("both halves were given, so the read half holds the last reference"))
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            let _ = self.inner.shutdown_std(Shutdown::Write);
        }
    }
}
