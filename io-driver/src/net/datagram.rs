//! [`DatagramIo`]: the operations [`UdpSocket`](crate::net::UdpSocket) and
//! [`UnixDatagram`](crate::net::UnixDatagram) share, written once over
//! [`DatagramSource`]. Each public method of the two types forwards to the
//! method of the same name here, which hands the socket's
//! [`Registration`](crate::readiness::Registration) loop a receive
//! operation of `net/recv_rule.rs`.

use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::task::{Context, Poll};

use std::marker::PhantomData;
use std::sync::atomic::Ordering;

#[cfg(feature = "bytes")]
use crate::net::recv_rule::RecvBufOp;
pub(crate) use crate::net::recv_rule::{DatagramIo, DatagramSource};
use crate::net::recv_rule::{NoSource, RecvManyOp, RecvOp, RecvRule, RecvWithOp, WithSource};
use crate::net::{RecvBatch, SendBatch};
use crate::poll_io::PollIo;
use crate::readiness::{DrainedMark, Receive};
use crate::ready::{Direction, Interest, Ready};

impl<S: DatagramSource> DatagramIo<S> {
    /// The datagram socket of `io`: level-triggered for reading if the
    /// driver is throttled (see `net/recv_rule.rs`).
    pub(crate) fn new(io: PollIo<S>) -> io::Result<DatagramIo<S>> {
        let throttled = io.settings().throttled.load(Ordering::Relaxed);
        let rule = RecvRule::new(&io.registration, io.as_raw_fd(), throttled)?;
        Ok(DatagramIo {
            io,
            mark: DrainedMark::default(),
            rule,
        })
    }

    /// Deregisters and returns the source (for `into_std`).
    pub(crate) fn into_inner(self) -> io::Result<S> {
        self.io.into_inner()
    }

    #[inline]
    fn fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }

    pub(crate) async fn readable(&self) -> io::Result<()> {
        self.registration.ready(Direction::Read).await
    }

    pub(crate) fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.registration.poll_ready(cx, Direction::Read)
    }

    pub(crate) async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.registration.ready_for(interest).await
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

    #[inline]
    fn recv_op<'a, K>(&'a self, buf: &'a mut [u8], may_skip: bool) -> RecvOp<'a, S, K> {
        RecvOp {
            io: self,
            fd: self.fd(),
            buf,
            may_skip,
            source: PhantomData,
        }
    }

    /// Not `async fn`s, the receives: their futures are the registration's
    /// [`Receive`] itself, which holds only what a poll reads.
    #[inline]
    pub(crate) fn recv<'a>(&'a self, buf: &'a mut [u8]) -> Receive<'a, RecvOp<'a, S, NoSource>> {
        self.io
            .registration
            .receive(&self.mark, self.recv_op(buf, true))
    }

    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut op = self.recv_op::<NoSource>(buf, true);
        self.registration.poll_receive(cx, &self.mark, &mut op)
    }

    pub(crate) fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = self.recv_op::<NoSource>(buf, false);
        self.registration.try_receive(&self.mark, op)
    }

    #[inline]
    pub(crate) fn recv_from<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> Receive<'a, RecvOp<'a, S, WithSource>> {
        self.io
            .registration
            .receive(&self.mark, self.recv_op(buf, true))
    }

    pub(crate) fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, S::Addr)>> {
        let mut op = self.recv_op::<WithSource>(buf, true);
        self.registration.poll_receive(cx, &self.mark, &mut op)
    }

    pub(crate) fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_op::<WithSource>(buf, false);
        self.registration.try_receive(&self.mark, op)
    }

    #[inline]
    fn recv_with_op<K, F>(&self, f: F) -> RecvWithOp<'_, S, K, F> {
        RecvWithOp {
            io: self,
            fd: self.fd(),
            f: Some(f),
            source: PhantomData,
        }
    }

    pub(crate) fn recv_with<R, F>(
        &self,
        f: F,
    ) -> impl Future<Output = io::Result<R>> + use<'_, R, F, S>
    where
        F: FnOnce(&[u8]) -> R,
    {
        let op = self.recv_with_op::<NoSource, _>(move |datagram: &[u8], ()| f(datagram));
        self.io.registration.receive(&self.mark, op)
    }

    /// As [`recv_with`](Self::recv_with), with the source.
    pub(crate) fn recv_from_with<R, F>(
        &self,
        f: F,
    ) -> impl Future<Output = io::Result<R>> + use<'_, R, F, S>
    where
        F: FnOnce(&[u8], S::Addr) -> R,
    {
        let op = self.recv_with_op::<WithSource, _>(f);
        self.io.registration.receive(&self.mark, op)
    }

    fn recv_many_op<'a>(&'a self, batch: &'a mut RecvBatch) -> RecvManyOp<'a, S> {
        RecvManyOp {
            io: self,
            fd: self.fd(),
            batch,
        }
    }

    /// A batch of more than one slot knows by itself when the socket is
    /// drained, so it leaves the level-triggered rule; a one-slot batch is
    /// a receive under it (see `recv_rule.rs`).
    fn batch_rule(&self, batch: &RecvBatch) -> io::Result<()> {
        if batch.capacity() > 1 {
            self.rule
                .leave_level(|| self.registration.make_edge_triggered())?;
        }
        Ok(())
    }

    pub(crate) async fn recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.batch_rule(batch)?;
        let op = self.recv_many_op(batch);
        self.registration.receive(&self.mark, op).await
    }

    pub(crate) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut RecvBatch,
    ) -> Poll<io::Result<usize>> {
        self.batch_rule(batch)?;
        let mut op = self.recv_many_op(batch);
        self.registration.poll_receive(cx, &self.mark, &mut op)
    }

    pub(crate) fn try_recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.batch_rule(batch)?;
        let op = self.recv_many_op(batch);
        self.registration.try_receive(&self.mark, op)
    }

    #[cfg(feature = "bytes")]
    fn recv_buf_op<'a, B: bytes::BufMut, K>(
        &'a self,
        buf: &'a mut B,
        may_skip: bool,
    ) -> RecvBufOp<'a, S, K, B> {
        RecvBufOp {
            io: self,
            fd: self.fd(),
            buf,
            may_skip,
            source: PhantomData,
        }
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let op = self.recv_buf_op::<B, NoSource>(buf, true);
        self.registration.receive(&self.mark, op).await
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let op = self.recv_buf_op::<B, NoSource>(buf, false);
        self.registration.try_receive(&self.mark, op)
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_buf_op::<B, WithSource>(buf, true);
        self.registration.receive(&self.mark, op).await
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_buf_op::<B, WithSource>(buf, false);
        self.registration.try_receive(&self.mark, op)
    }
}
