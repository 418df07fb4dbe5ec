//! [`UdpSocket`]: many low-rate datagram streams on one thread.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use crate::net::addr::{each_addr, first_addr};
use crate::net::datagram::DatagramIo;
use crate::net::{RecvBatch, SendBatch, ToSocketAddrs};
use crate::poll_io::PollIo;
use crate::ready::{Direction, Interest, Ready};
use crate::Handle;

/// An async UDP socket, registered with the current thread's I/O driver.
/// Its methods take `&self`, so one socket can be shared (`Arc`).
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::UdpSocket;
///
/// let server = UdpSocket::bind("127.0.0.1:0").await?;
/// let client = UdpSocket::bind("127.0.0.1:0").await?;
/// client.send_to(b"ping", server.local_addr()?).await?;
///
/// // the server's loop, once: receive a datagram, send it back
/// let mut buf = [0u8; 1500];
/// let (len, from) = server.recv_from(&mut buf).await?;
/// server.send_to(&buf[..len], from).await?;
///
/// let (len, from) = client.recv_from(&mut buf).await?;
/// assert_eq!((&buf[..len], from), (&b"ping"[..], server.local_addr()?));
/// # Ok(()) }).unwrap();
/// ```
pub struct UdpSocket {
    io: DatagramIo<mio::net::UdpSocket>,
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl UdpSocket {
    /// Binds a socket to the first address of `addr` that works (a host
    /// name is resolved off the runtime's thread, see
    /// [`ToSocketAddrs`]).
    ///
    /// Fails with [`io::ErrorKind::AddrInUse`] if the port is taken, and if
    /// no I/O driver is current on this thread.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        let handle = Handle::try_current()?;
        each_addr(&addr, handle.settings(), |addr| {
            let socket = mio::net::UdpSocket::bind(addr)?;
            Ok(UdpSocket {
                io: DatagramIo::new(PollIo::with_handle(socket, handle.clone())?)?,
            })
        })
        .await
    }

    /// Registers a std socket with the current driver (non-blocking).
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: DatagramIo::new(PollIo::new(mio::net::UdpSocket::from_std(socket))?)?,
        })
    }

    /// Deregisters the socket and returns it as a (non-blocking) std socket.
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        self.io.into_inner().map(Into::into)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// The address of the connected peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr()
    }

    /// Sets the default destination and filters received datagrams to it
    /// (for [`send`](Self::send) and [`recv`](Self::recv)).
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(&addr, self.io.settings(), |addr| self.io.connect(addr)).await
    }

    /// Waits until the socket may be readable. A `try_*` receive that
    /// returns `WouldBlock` makes the next call wait for a new event.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UdpSocket;
    ///
    /// let a = UdpSocket::bind("127.0.0.1:0").await?;
    /// let b = UdpSocket::bind("127.0.0.1:0").await?;
    /// a.connect(b.local_addr()?).await?;
    /// b.connect(a.local_addr()?).await?;
    ///
    /// a.send(b"ping").await?;
    /// let mut buf = [0u8; 1500];
    /// let len = loop {
    ///     b.readable().await?;
    ///     match b.try_recv(&mut buf) {
    ///         Ok(len) => break len,
    ///         // a spurious wake-up: wait for the next event
    ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///         Err(e) => return Err(e),
    ///     }
    /// };
    /// assert_eq!(&buf[..len], b"ping");
    /// # Ok(()) }).unwrap();
    /// ```
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
    #[inline]
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
    #[inline]
    pub fn recv_from<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<(usize, SocketAddr)>> + 'a {
        self.io.recv_from(buf)
    }

    /// Receives a datagram into the thread's 64 KiB receive buffer (never
    /// cut, no buffer per socket) and returns what `f` makes of it and its
    /// source. `f` runs once, in the poll that received the datagram;
    /// dropping the future before that drops `f` uncalled.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UdpSocket;
    ///
    /// let a = UdpSocket::bind("127.0.0.1:0").await?;
    /// let b = UdpSocket::bind("127.0.0.1:0").await?;
    /// a.send_to(b"ping", b.local_addr()?).await?;
    ///
    /// let mut seen = Vec::new();
    /// let from = b.recv_from_with(|datagram, from| {
    ///     seen.extend_from_slice(datagram);
    ///     from
    /// }).await?;
    /// assert_eq!((&seen[..], from), (&b"ping"[..], a.local_addr()?));
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn recv_from_with<R, F>(&self, f: F) -> impl Future<Output = io::Result<R>> + use<'_, R, F>
    where
        F: FnOnce(&[u8], SocketAddr) -> R,
    {
        self.io.recv_from_with(f)
    }

    /// [`recv_from_with`](Self::recv_from_with) without the source
    /// address (for a connected socket, as [`recv`](Self::recv)).
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

    /// Receives as many queued datagrams as `batch` holds with one
    /// `recvmmsg` and returns how many (at least 1); see [`RecvBatch`].
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

    /// Sends the datagrams of `batch` not yet sent with one `sendmmsg` and
    /// returns how many (those leave the batch); see [`SendBatch`].
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

    /// Sends to `target` (its first address; a host name is resolved off
    /// the runtime's thread, see [`ToSocketAddrs`]) and returns the bytes
    /// sent.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let target = first_addr(&target, self.io.settings()).await?;
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, target))
            .await
    }

    /// Polls a send to `target`.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || self.io.send_to(buf, target))
    }

    /// Sends to `target` now, or fails with `WouldBlock`.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send_to(buf, target))
    }

    /// Receives a datagram without removing it from the queue.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .io(Direction::Read, || self.io.peek_from(buf))
            .await
    }

    /// Polls [`peek_from`](Self::peek_from).
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .registration
            .poll_io(cx, Direction::Read, || self.io.peek_from(buf))
    }

    /// [`peek_from`](Self::peek_from) now (always one syscall), or fails
    /// with `WouldBlock`.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .try_io(Direction::Read, || self.io.peek_from(buf))
    }

    /// Sets `IP_TTL`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// Gets `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
    }

    /// Sets `SO_BROADCAST`.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.set_broadcast(on)
    }

    /// Gets `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.broadcast()
    }

    /// Sets `IP_MULTICAST_LOOP`.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.set_multicast_loop_v4(on)
    }

    /// Gets `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.multicast_loop_v4()
    }

    /// Sets `IP_MULTICAST_TTL`.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.set_multicast_ttl_v4(ttl)
    }

    /// Gets `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.multicast_ttl_v4()
    }

    /// Sets `IPV6_MULTICAST_LOOP`.
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.set_multicast_loop_v6(on)
    }

    /// Gets `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.multicast_loop_v6()
    }

    /// Joins an IPv4 multicast group on `interface`.
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.join_multicast_v4(&multiaddr, &interface)
    }

    /// Joins an IPv6 multicast group on interface index `interface`.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.join_multicast_v6(multiaddr, interface)
    }

    /// Leaves an IPv4 multicast group.
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.leave_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves an IPv6 multicast group.
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.leave_multicast_v6(multiaddr, interface)
    }

    /// Takes the pending `SO_ERROR` (e.g. an ICMP "port unreachable").
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }

    /// Waits until the socket is ready for any part of `interest` and
    /// returns the readiness found, as tokio's `ready`; follow with `try_*`
    /// operations, whose `WouldBlock` makes the next `ready` wait.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.ready(interest).await
    }

    /// The source address of the next datagram, without removing it from
    /// the queue (a zero-length `recvfrom(MSG_PEEK)`).
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        self.peek_from(&mut []).await.map(|(_, from)| from)
    }

    /// Polls [`peek_sender`](Self::peek_sender).
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.poll_peek_from(cx, &mut []).map_ok(|(_, from)| from)
    }

    /// [`peek_sender`](Self::peek_sender) now (always one syscall), or
    /// fails with `WouldBlock`.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.try_peek_from(&mut []).map(|(_, from)| from)
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
