//! [`UnixDatagram`]: a Unix datagram socket. Receives follow the same
//! rules as [`UdpSocket`](crate::net::UdpSocket)'s.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::net::datagram::DatagramIo;
use crate::net::{RecvBatch, SendBatch};
use crate::poll_io::PollIo;
use crate::ready::{Direction, Interest, Ready};
use crate::Handle;

/// An async Unix datagram socket: a [`UdpSocket`](crate::net::UdpSocket)
/// (see its example) between processes of one machine, addressed by a
/// path (or unnamed, as [`pair`](Self::pair)'s).
pub struct UnixDatagram {
    io: DatagramIo<mio::net::UnixDatagram>,
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("fd", &self.as_raw_fd())
            .finish()
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

impl UnixDatagram {
    fn from_mio(socket: mio::net::UnixDatagram, handle: Handle) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: DatagramIo::new(PollIo::with_handle(socket, handle)?)?,
        })
    }

    /// Binds to `path` (which must not exist:
    /// [`io::ErrorKind::AddrInUse`]).
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixDatagram> {
        let handle = Handle::try_current()?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::bind(path)?, handle)
    }

    /// A socket bound to no address: it can send, and receive replies
    /// only once [`connect`](Self::connect)ed or through a [`pair`](Self::pair).
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

    /// Sets the default destination (for [`send`](Self::send)) and
    /// filters received datagrams to it.
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

    /// Waits until the socket may be readable. A `try_*` receive that
    /// returns `WouldBlock` makes the next call wait for a new event.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.readable().await
    }

    /// Polls for read readiness without reading.
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_recv_ready(cx)
    }

    /// Waits until the socket may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Write).await
    }

    /// Polls for write readiness without writing.
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Write)
    }

    /// Sends to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.send(buf).await
    }

    /// Polls [`send`](Self::send).
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_send(cx, buf)
    }

    /// [`send`](Self::send) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_send(buf)
    }

    /// Receives from the connected peer; a datagram longer than `buf` is
    /// truncated.
    pub fn recv<'a>(&'a self, buf: &'a mut [u8]) -> impl Future<Output = io::Result<usize>> + 'a {
        self.io.recv(buf)
    }

    /// Polls [`recv`](Self::recv).
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io.poll_recv(cx, buf)
    }

    /// [`recv`](Self::recv) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_recv(buf)
    }

    /// Receives a datagram and its source address.
    pub fn recv_from<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<(usize, SocketAddr)>> + 'a {
        self.io.recv_from(buf)
    }

    /// As [`UdpSocket::recv_from_with`](crate::net::UdpSocket::recv_from_with):
    /// `f` gets the datagram in the thread's buffer and its source.
    pub fn recv_from_with<R, F>(&self, f: F) -> impl Future<Output = io::Result<R>> + use<'_, R, F>
    where
        F: FnOnce(&[u8], SocketAddr) -> R,
    {
        self.io.recv_from_with(f)
    }

    /// [`recv_from_with`](Self::recv_from_with) without the source.
    pub fn recv_with<R, F>(&self, f: F) -> impl Future<Output = io::Result<R>> + use<'_, R, F>
    where
        F: FnOnce(&[u8]) -> R,
    {
        self.io.recv_with(f)
    }

    /// Polls [`recv_from`](Self::recv_from).
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io.poll_recv_from(cx, buf)
    }

    /// [`recv_from`](Self::recv_from) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_recv_from(buf)
    }

    /// As [`UdpSocket::recv_many`](crate::net::UdpSocket::recv_many).
    pub async fn recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.io.recv_many(batch).await
    }

    /// Polls [`recv_many`](Self::recv_many).
    pub fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut RecvBatch,
    ) -> Poll<io::Result<usize>> {
        self.io.poll_recv_many(cx, batch)
    }

    /// [`recv_many`](Self::recv_many) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.io.try_recv_many(batch)
    }

    /// As [`UdpSocket::send_many`](crate::net::UdpSocket::send_many).
    pub async fn send_many(&self, batch: &mut SendBatch) -> io::Result<usize> {
        self.io.send_many(batch).await
    }

    /// Polls [`send_many`](Self::send_many).
    pub fn poll_send_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut SendBatch,
    ) -> Poll<io::Result<usize>> {
        self.io.poll_send_many(cx, batch)
    }

    /// [`send_many`](Self::send_many) now (always one syscall), or fails with `WouldBlock`.
    pub fn try_send_many(&self, batch: &mut SendBatch) -> io::Result<usize> {
        self.io.try_send_many(batch)
    }

    /// Sends to the socket at `path` and returns the bytes sent.
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, path))
            .await
    }

    /// Polls a send to `path`.
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

    /// Waits until the socket is ready for any part of `interest` and
    /// returns the readiness found, as tokio's `ready`; follow with `try_*`
    /// operations, whose `WouldBlock` makes the next `ready` wait.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.ready(interest).await
    }

    /// Receives a datagram from the connected peer into `buf`'s spare
    /// capacity (at most its current `chunk_mut`; a longer datagram is
    /// truncated) and returns its length. Available with feature `bytes`.
    #[cfg(feature = "bytes")]
    pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.io.recv_buf(buf).await
    }

    /// [`recv_buf`](Self::recv_buf) now (always one syscall), or fails with
    /// `WouldBlock`. Available with feature `bytes`.
    #[cfg(feature = "bytes")]
    pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.io.try_recv_buf(buf)
    }

    /// Receives a datagram into `buf`'s spare capacity (at most its
    /// current `chunk_mut`; a longer datagram is truncated) and returns
    /// its length and source. Available with feature `bytes`.
    #[cfg(feature = "bytes")]
    pub async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        self.io.recv_buf_from(buf).await
    }

    /// [`recv_buf_from`](Self::recv_buf_from) now, or fails with
    /// `WouldBlock`. Available with feature `bytes`.
    #[cfg(feature = "bytes")]
    pub fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        self.io.try_recv_buf_from(buf)
    }
}
