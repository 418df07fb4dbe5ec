//! [`DatagramIo`]: the operations [`UdpSocket`](crate::net::UdpSocket) and
//! [`UnixDatagram`](crate::net::UnixDatagram) share, written once as
//! generic code over [`DatagramSource`].
//!
//! Each public method of the two types is a documented one-line forward
//! to the method of the same name here; the method here runs its
//! operation through the socket's [`Registration`](crate::registration)
//! loop: `send*` through the plain loop, `recv*` through the receive loop
//! of the receive-ahead rule (`recv_ahead`), each in the async, `poll_*`
//! and `try_*` forms.

use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use mio::event::Source;

use crate::net::{RecvBatch, SendBatch};
use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::recv_ahead::{RecvAhead, RecvAttempt};
use crate::sys::mmsg::RawAddr;

/// A mio datagram socket: what [`DatagramIo`] needs of UDP and Unix
/// datagram sockets beyond their fd.
pub(crate) trait DatagramSource: Source + AsRawFd {
    /// The peer address type.
    type Addr;

    /// One `send` to the connected peer.
    fn send_connected(&self, buf: &[u8]) -> io::Result<usize>;

    /// The peer address a receive syscall wrote.
    fn decode(addr: &RawAddr) -> io::Result<Self::Addr>;
}

impl DatagramSource for mio::net::UdpSocket {
    type Addr = std::net::SocketAddr;

    fn send_connected(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }

    fn decode(addr: &RawAddr) -> io::Result<Self::Addr> {
        addr.inet_addr()
    }
}

impl DatagramSource for mio::net::UnixDatagram {
    type Addr = std::os::unix::net::SocketAddr;

    fn send_connected(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }

    fn decode(addr: &RawAddr) -> io::Result<Self::Addr> {
        addr.unix_addr()
    }
}

/// A registered datagram socket: its [`PollIo`] (reached through `Deref`,
/// for the type-specific methods) and the shared datagram operations.
#[derive(Debug)]
pub(crate) struct DatagramIo<S: DatagramSource> {
    io: PollIo<S>,
}

impl<S: DatagramSource> Deref for DatagramIo<S> {
    type Target = PollIo<S>;

    fn deref(&self) -> &PollIo<S> {
        &self.io
    }
}

/// The value of one receive attempt, and whether it left the socket known
/// drained (see `recv_ahead`).
type Received<T> = io::Result<(T, bool)>;

impl<S: DatagramSource> DatagramIo<S> {
    pub(crate) fn new(io: PollIo<S>) -> DatagramIo<S> {
        DatagramIo { io }
    }

    /// Deregisters and returns the source (for `into_std`).
    pub(crate) fn into_inner(self) -> io::Result<S> {
        self.io.into_inner()
    }

    fn fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }

    pub(crate) async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        let op = || self.io.send_connected(buf);
        self.registration.io(Direction::Write, op).await
    }

    pub(crate) fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let op = || self.io.send_connected(buf);
        self.registration.poll_io(cx, Direction::Write, op)
    }

    pub(crate) fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        let op = || self.io.send_connected(buf);
        self.registration.try_io(Direction::Write, op)
    }

    pub(crate) async fn send_many(&self, batch: &mut SendBatch) -> io::Result<usize> {
        let fd = self.fd();
        let op = || batch.send_on(fd);
        self.registration.io(Direction::Write, op).await
    }

    pub(crate) fn poll_send_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut SendBatch,
    ) -> Poll<io::Result<usize>> {
        let fd = self.fd();
        let op = || batch.send_on(fd);
        self.registration.poll_io(cx, Direction::Write, op)
    }

    pub(crate) fn try_send_many(&self, batch: &mut SendBatch) -> io::Result<usize> {
        let fd = self.fd();
        let op = || batch.send_on(fd);
        self.registration.try_io(Direction::Write, op)
    }

    /// One receive into `buf` under the rule: its length, the source as
    /// the kernel wrote it.
    fn recv_op<'a>(
        &self,
        buf: &'a mut [u8],
    ) -> impl FnMut(RecvAttempt, &RecvAhead) -> Received<(usize, RawAddr)> + 'a {
        let fd = self.fd();
        move |attempt, ahead| {
            let got = ahead.recv(fd, attempt, buf)?;
            Ok(((got.len, got.addr), got.drained))
        }
    }

    pub(crate) async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let (len, _) = self.registration.recv_io(self.recv_op(buf)).await?;
        Ok(len)
    }

    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let received = self.registration.poll_recv_io(cx, self.recv_op(buf));
        received.map_ok(|(len, _)| len)
    }

    pub(crate) fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let (len, _) = self.registration.try_recv_io(self.recv_op(buf))?;
        Ok(len)
    }

    pub(crate) async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, S::Addr)> {
        let received = self.registration.recv_io(self.recv_op(buf)).await;
        with_source::<S>(received)
    }

    pub(crate) fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, S::Addr)>> {
        let received = std::task::ready!(self.registration.poll_recv_io(cx, self.recv_op(buf)));
        Poll::Ready(with_source::<S>(received))
    }

    pub(crate) fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, S::Addr)> {
        with_source::<S>(self.registration.try_recv_io(self.recv_op(buf)))
    }

    /// One batch receive into `batch` under the rule.
    fn recv_many_op<'a>(
        &self,
        batch: &'a mut RecvBatch,
    ) -> impl FnMut(RecvAttempt, &RecvAhead) -> Received<usize> + 'a {
        let fd = self.fd();
        move |attempt, ahead| ahead.recv_batch(fd, attempt, batch)
    }

    pub(crate) async fn recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.registration.recv_io(self.recv_many_op(batch)).await
    }

    pub(crate) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut RecvBatch,
    ) -> Poll<io::Result<usize>> {
        self.registration.poll_recv_io(cx, self.recv_many_op(batch))
    }

    pub(crate) fn try_recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.registration.try_recv_io(self.recv_many_op(batch))
    }

    /// One receive into `buf`'s spare capacity under the rule (feature
    /// `bytes`, see `net/buf.rs`).
    #[cfg(feature = "bytes")]
    fn recv_buf_op<'a, B: bytes::BufMut>(
        &self,
        buf: &'a mut B,
    ) -> impl FnMut(RecvAttempt, &RecvAhead) -> Received<(usize, RawAddr)> + 'a {
        crate::net::buf::recv_op(self.fd(), buf)
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let (len, _) = self.registration.recv_io(self.recv_buf_op(buf)).await?;
        Ok(len)
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let (len, _) = self.registration.try_recv_io(self.recv_buf_op(buf))?;
        Ok(len)
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        with_source::<S>(self.registration.recv_io(self.recv_buf_op(buf)).await)
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        with_source::<S>(self.registration.try_recv_io(self.recv_buf_op(buf)))
    }
}

/// A receive's length with its source decoded.
fn with_source<S: DatagramSource>(
    received: io::Result<(usize, RawAddr)>,
) -> io::Result<(usize, S::Addr)> {
    let (len, addr) = received?;
    Ok((len, S::decode(&addr)?))
}
