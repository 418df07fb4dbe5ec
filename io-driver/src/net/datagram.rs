//! [`DatagramIo`]: the operations [`UdpSocket`](crate::net::UdpSocket) and
//! [`UnixDatagram`](crate::net::UnixDatagram) share, written once as
//! generic code over [`DatagramSource`], and the state they share: the
//! receive-ahead rule's held datagram (`net/recv_ahead.rs`).
//!
//! Each public method of the two types is a documented one-line forward
//! to the method of the same name here. A receive reads top-down: the
//! public method, the method here, the socket's
//! [`Registration`](crate::readiness::Registration) loop (budget, readiness,
//! waiting) with this module's receive attempt as its operation, then
//! [`RecvAhead`] (the held datagram, or the syscall in `sys/mmsg.rs`).
//! The source address goes the other way, as a decoder
//! ([`DatagramSource::decode`], or none for `recv`): it is decoded at the
//! bottom, where the kernel wrote it, and only the decoded address (32
//! bytes for UDP) travels back up. Carried up raw, its 136 bytes cost a
//! `memcpy` in every layer.
//!
//! # Which operations see a held datagram first
//!
//! A datagram received ahead and held (see `recv_ahead`) has left the
//! kernel: only these see it, before any syscall.
//!
//! * `recv`, `recv_from`, `recv_many`, `recv_buf`, `recv_buf_from`, in
//!   every form (async, `poll_*`, `try_*`), return it first and release it
//!   (`recv_many` puts it in slot 0).
//! * `peek_from` and `peek_sender` (UDP) show it without releasing it.
//! * `readable()`, `poll_recv_ready` and `ready(Interest::READABLE ..)` are
//!   ready at once while one is held.
//! * [`discard_held`](DatagramIo::discard_held) drops it (a media flush).
//! * `into_std` drops it with the Tempo socket.
//!
//! Sends, `connect` and the socket options never touch it.

use std::future::Future;
use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use mio::event::Source;

use crate::net::recv_ahead::{RecvAhead, RecvAttempt};
use crate::net::thread_buf::with_thread_buf;
use crate::net::{RecvBatch, SendBatch};
use crate::poll_io::PollIo;
use crate::readiness::ReadyEvent;
use crate::ready::{Direction, Interest, Ready};
use crate::sys::epoll::EpollInterest;
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
/// for the type-specific methods), its receive-ahead state, and the
/// shared datagram operations.
#[derive(Debug)]
pub(crate) struct DatagramIo<S: DatagramSource> {
    io: PollIo<S>,
    /// The held datagram, the drained knowledge and whether the socket
    /// is registered level-triggered (`recv_ahead`), inline.
    ahead: RecvAhead,
}

impl<S: DatagramSource> Deref for DatagramIo<S> {
    type Target = PollIo<S>;

    fn deref(&self) -> &PollIo<S> {
        &self.io
    }
}

impl<S: DatagramSource> DatagramIo<S> {
    /// The datagram socket of `io`: registered level-triggered for
    /// reading if the receive-ahead rule is on (see `net/recv_ahead.rs`).
    pub(crate) fn new(io: PollIo<S>) -> io::Result<DatagramIo<S>> {
        let level = io.settings().recv_ahead.is_enabled();
        if level {
            let fd = io.as_raw_fd();
            io.registration.make_level_triggered(|epoll, token| {
                Box::new(EpollInterest { epoll, fd, token })
            })?;
        }
        Ok(DatagramIo {
            io,
            ahead: RecvAhead::new(level),
        })
    }

    /// Before a batch receive: a level-triggered socket goes back to the
    /// edge-triggered registration, for good. A batch receive knows by
    /// itself when the socket is drained (fewer datagrams than it asked
    /// for), so a level-triggered report would only add the poller's
    /// re-check of the socket at every poll after one that reported it
    /// (measured: `recv_many` cost 10-20 % more per datagram with it).
    fn edge_for_batches(&self) -> io::Result<()> {
        if self.ahead.is_level() {
            let to_edge = || self.registration.make_edge_triggered();
            self.ahead.leave_level(to_edge)?;
        }
        Ok(())
    }

    /// Deregisters and returns the source (for `into_std`); a held
    /// datagram is dropped.
    pub(crate) fn into_inner(self) -> io::Result<S> {
        self.io.into_inner()
    }

    fn fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }

    /// Whether a datagram is held (a receive is ready without a syscall).
    pub(crate) fn has_held(&self) -> bool {
        self.ahead.has_held()
    }

    /// Drops the held datagram, if any, and forgets that the socket was
    /// found drained, so the next receive makes the syscall. Returns
    /// whether a datagram was dropped.
    pub(crate) fn discard_held(&self) -> bool {
        self.ahead.discard()
    }

    /// The held datagram copied into `buf` without releasing it, with its
    /// source (for `peek*`).
    pub(crate) fn peek_held(&self, buf: &mut [u8]) -> Option<(usize, io::Result<S::Addr>)> {
        self.ahead.peek_held(buf, S::decode)
    }

    pub(crate) async fn readable(&self) -> io::Result<()> {
        let held = || self.has_held();
        self.registration.ready_or(Direction::Read, held).await
    }

    pub(crate) fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let held = || self.has_held();
        self.registration.poll_ready_or(cx, Direction::Read, held)
    }

    pub(crate) async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        let held = || self.has_held();
        self.registration.ready_for_or(interest, held).await
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

    /// One receive attempt under the rule, from the readiness `seen`
    /// before it: `receive` takes the held datagram or makes the syscall,
    /// and says whether it left the socket drained; then the read
    /// readiness it saw is cleared, so that `readable()` waits for the
    /// next event and the next receive, skipping its syscall, waits too.
    /// `may_skip` is `false` for `try_*`, which always try; `hold` is
    /// `false` for a receive into the thread's buffer, which never holds
    /// a second datagram (see [`RecvAttempt`]).
    #[inline]
    fn attempt<T>(
        &self,
        seen: ReadyEvent,
        may_skip: bool,
        hold: bool,
        receive: impl FnOnce(RecvAttempt, &RecvAhead) -> io::Result<(T, bool)>,
    ) -> io::Result<T> {
        let attempt = RecvAttempt {
            event_seq: seen.event_seq(),
            may_skip,
            ahead: self.settings().recv_ahead.is_enabled(),
            backlog: seen.backlog(),
            hold,
        };
        let (value, drained) = receive(attempt, &self.ahead)?;
        if drained {
            self.registration.clear_readiness(seen, Direction::Read);
        }
        Ok(value)
    }

    /// The operation loop's `skips` test of the receives that may skip
    /// their syscall: the socket was found drained at the readiness seen
    /// and nothing is held, so the receive waits without trying.
    fn skips(&self) -> impl Fn(ReadyEvent) -> bool + '_ {
        |seen| self.ahead.skips_at(seen.event_seq())
    }

    /// One receive into `buf`: its length and what `decode` makes of the
    /// source, decoded where the kernel wrote it (see `Got`). A decode
    /// error comes after the attempt, which has cleared the readiness
    /// if the socket was drained.
    fn recv_op<'a, A>(
        &'a self,
        buf: &'a mut [u8],
        may_skip: bool,
        decode: impl Fn(&RawAddr) -> io::Result<A> + 'a,
    ) -> impl FnMut(ReadyEvent) -> io::Result<(usize, A)> + 'a {
        let fd = self.fd();
        move |seen| {
            let (len, addr) = self.attempt(seen, may_skip, true, |attempt, ahead| {
                let got = ahead.recv(fd, attempt, buf, &decode)?;
                Ok(((got.len, got.addr), got.drained))
            })?;
            Ok((len, addr?))
        }
    }

    /// Not `async fn`s, `recv` and `recv_from`: their futures are the
    /// registration's `IoSeen` itself (`readiness/registration.rs` says
    /// why), as for the closure receives below.
    pub(crate) fn recv<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + 'a {
        let mut op = self.recv_op(buf, true, no_source);
        let op = move |seen| op(seen).map(|(len, ())| len);
        self.registration.io_seen(Direction::Read, self.skips(), op)
    }

    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let op = self.recv_op(buf, true, no_source);
        let received = self
            .registration
            .poll_io_seen(cx, Direction::Read, self.skips(), op);
        received.map_ok(|(len, ())| len)
    }

    pub(crate) fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = self.recv_op(buf, false, no_source);
        let (len, ()) = self.registration.try_io_seen(Direction::Read, op)?;
        Ok(len)
    }

    pub(crate) fn recv_from<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<(usize, S::Addr)>> + 'a {
        let op = self.recv_op(buf, true, S::decode);
        self.registration.io_seen(Direction::Read, self.skips(), op)
    }

    pub(crate) fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, S::Addr)>> {
        let op = self.recv_op(buf, true, S::decode);
        self.registration
            .poll_io_seen(cx, Direction::Read, self.skips(), op)
    }

    pub(crate) fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_op(buf, false, S::decode);
        self.registration.try_io_seen(Direction::Read, op)
    }

    /// One receive into the thread's buffer (`net/thread_buf.rs`), whose
    /// datagram and decoded source go to `f` (kept in the operation's own
    /// slot and taken once: the operation ends with the first datagram).
    /// The rule is `recv_op`'s, except that nothing is held.
    fn recv_with_op<A, R, F, D>(
        &self,
        f: F,
        decode: D,
    ) -> impl FnMut(ReadyEvent) -> io::Result<R> + use<'_, A, R, F, D, S>
    where
        F: FnOnce(&[u8], A) -> R,
        D: Fn(&RawAddr) -> io::Result<A>,
    {
        let fd = self.fd();
        let mut f = Some(f);
        move |seen| {
            with_thread_buf(|buf| {
                let (len, addr) = self.attempt(seen, true, false, |attempt, ahead| {
                    let got = ahead.recv(fd, attempt, buf, &decode)?;
                    Ok(((got.len, got.addr), got.drained))
                })?;
                let addr = addr?;
                let f = f.take().expect("a closure receive ends at its datagram");
                Ok(f(&buf[..len], addr))
            })
        }
    }

    /// Not an `async fn`: the returned future is the registration's
    /// `IoSeen` (`readiness/registration.rs`) itself, the closure inside its
    /// operation, with no generator around it (see `IoSeen` for why).
    pub(crate) fn recv_with<R, F>(
        &self,
        f: F,
    ) -> impl Future<Output = io::Result<R>> + use<'_, R, F, S>
    where
        F: FnOnce(&[u8]) -> R,
    {
        let op = self.recv_with_op(move |datagram: &[u8], ()| f(datagram), no_source);
        self.registration.io_seen(Direction::Read, self.skips(), op)
    }

    /// As [`recv_with`](Self::recv_with), with the source.
    pub(crate) fn recv_from_with<R, F>(
        &self,
        f: F,
    ) -> impl Future<Output = io::Result<R>> + use<'_, R, F, S>
    where
        F: FnOnce(&[u8], S::Addr) -> R,
    {
        let op = self.recv_with_op(f, S::decode);
        self.registration.io_seen(Direction::Read, self.skips(), op)
    }

    /// One batch receive into `batch`.
    fn recv_many_op<'a>(
        &'a self,
        batch: &'a mut RecvBatch,
        may_skip: bool,
    ) -> impl FnMut(ReadyEvent) -> io::Result<usize> + 'a {
        let fd = self.fd();
        move |seen| {
            self.attempt(seen, may_skip, true, |attempt, ahead| {
                ahead.recv_batch(fd, attempt, batch)
            })
        }
    }

    pub(crate) async fn recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.edge_for_batches()?;
        let op = self.recv_many_op(batch, true);
        self.registration
            .io_seen(Direction::Read, self.skips(), op)
            .await
    }

    pub(crate) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        batch: &mut RecvBatch,
    ) -> Poll<io::Result<usize>> {
        self.edge_for_batches()?;
        let op = self.recv_many_op(batch, true);
        self.registration
            .poll_io_seen(cx, Direction::Read, self.skips(), op)
    }

    pub(crate) fn try_recv_many(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        self.edge_for_batches()?;
        let op = self.recv_many_op(batch, false);
        self.registration.try_io_seen(Direction::Read, op)
    }

    /// One receive into `buf`'s spare capacity (feature `bytes`, see
    /// `net/buf.rs`), its source decoded as in [`recv_op`](Self::recv_op).
    #[cfg(feature = "bytes")]
    fn recv_buf_op<'a, B: bytes::BufMut, A>(
        &'a self,
        buf: &'a mut B,
        may_skip: bool,
        decode: impl Fn(&RawAddr) -> io::Result<A> + 'a,
    ) -> impl FnMut(ReadyEvent) -> io::Result<(usize, A)> + 'a {
        let fd = self.fd();
        move |seen| {
            let (len, addr) = self.attempt(seen, may_skip, true, |attempt, ahead| {
                let got = crate::net::buf::recv_into(ahead, fd, attempt, buf, &decode)?;
                Ok(((got.len, got.addr), got.drained))
            })?;
            Ok((len, addr?))
        }
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let op = self.recv_buf_op(buf, true, no_source);
        let (len, ()) = self
            .registration
            .io_seen(Direction::Read, self.skips(), op)
            .await?;
        Ok(len)
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let op = self.recv_buf_op(buf, false, no_source);
        let (len, ()) = self.registration.try_io_seen(Direction::Read, op)?;
        Ok(len)
    }

    #[cfg(feature = "bytes")]
    pub(crate) async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_buf_op(buf, true, S::decode);
        self.registration
            .io_seen(Direction::Read, self.skips(), op)
            .await
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, S::Addr)> {
        let op = self.recv_buf_op(buf, false, S::decode);
        self.registration.try_io_seen(Direction::Read, op)
    }
}

/// The decoder of a receive that drops the source.
fn no_source(_: &RawAddr) -> io::Result<()> {
    Ok(())
}
