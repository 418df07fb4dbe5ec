//! [`UdpSocket`]: the main use case of Tempo (many low-rate datagram
//! streams on one thread), so a receive that finds a datagram queued costs
//! exactly one `recvfrom`.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use crate::net::addr::{each_addr, first_addr};
use crate::poll_io::PollIo;
use crate::ready::Direction;

/// An async UDP socket, registered with the current thread's I/O driver.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use tempo_io::net::UdpSocket;
///
/// let socket = UdpSocket::bind("127.0.0.1:0").await?;
/// let mut buf = [0u8; 1500];
/// loop {
///     let (len, from) = socket.recv_from(&mut buf).await?;
///     socket.send_to(&buf[..len], from).await?;
/// }
/// # }
/// ```
pub struct UdpSocket {
    io: PollIo<mio::net::UdpSocket>,
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl UdpSocket {
    /// Binds a socket to the first address of `addr` that works.
    ///
    /// Fails with [`io::ErrorKind::AddrInUse`] if the port is taken, and if
    /// no I/O driver is current on this thread.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        each_addr(addr, |addr| {
            let socket = mio::net::UdpSocket::bind(addr)?;
            Ok(UdpSocket {
                io: PollIo::new(socket)?,
            })
        })
    }

    /// Registers a std socket with the current driver (and makes it
    /// non-blocking).
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: PollIo::new(mio::net::UdpSocket::from_std(socket))?,
        })
    }

    /// Deregisters the socket and returns it as a std socket (still
    /// non-blocking), e.g. to move it to another runtime.
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

    /// Sets the default destination and filters received datagrams to it.
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(addr, |addr| self.io.connect(addr))
    }

    /// Waits until the socket may be readable. A `try_recv*` that returns
    /// `WouldBlock` makes the next call wait for a new event.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Read).await
    }

    /// Waits until the socket may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.registration.ready(Direction::Write).await
    }

    /// Polls for read readiness without receiving.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration.poll_ready(cx, Direction::Read)
    }

    /// Polls for write readiness without sending.
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

    /// Sends to the connected peer now, or fails with `WouldBlock`.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send(buf))
    }

    /// Receives from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration.recv_io(|| self.io.recv(buf)).await
    }

    /// Polls a receive from the connected peer (subject to the driver's
    /// deferred drain retry).
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

    /// Sends to `target` (resolved synchronously; its first address is used).
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let target = first_addr(target)?;
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, target))
            .await
    }

    /// Polls a send to `target`.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
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

    /// Receives a datagram and its source address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .recv_io(|| self.io.recv_from(buf))
            .await
    }

    /// Polls a receive with source address (subject to the driver's
    /// deferred drain retry).
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

    /// Receives a datagram without removing it from the queue.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .io(Direction::Read, || self.io.peek_from(buf))
            .await
    }

    /// Polls a peek.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .registration
            .poll_io(cx, Direction::Read, || self.io.peek_from(buf))
    }

    /// Peeks now (always one syscall), or fails with `WouldBlock`.
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
