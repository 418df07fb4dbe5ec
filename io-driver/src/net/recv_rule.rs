//! A registered datagram socket ([`DatagramIo`], over [`DatagramSource`]),
//! its receive rule, one per scheduler, and the receive operations the
//! registration's loop runs (`readiness/registration.rs`); `datagram.rs`
//! builds the public operations on them.
//!
//! * **Basic scheduler** (driver not throttled): a socket is
//!   edge-triggered and a receive makes one `recvfrom`; a loop drains
//!   until `WouldBlock`, as tokio's does.
//! * **Throttled** ([`set_throttled`](tempo_park::IoDriver::set_throttled)):
//!   a socket made then is **level-triggered** for reading and a receive
//!   makes **one `recvfrom` per readiness report**: it marks the socket
//!   drained at the report it saw ([`DrainedMark`]), so the next receive
//!   waits without a syscall until the poller reports the socket again,
//!   which it does while a datagram is left. A socket reported by two
//!   parks in a row (the tick's poll and its look, see
//!   [`looks_for_backlogs`](tempo_park::IoDriver::looks_for_backlogs))
//!   holds a backlog: its readiness carries the `backlog` flag and its
//!   receives drain until `WouldBlock`.
//! * **Batches** (`recv_many`): a socket goes edge-triggered for good at
//!   its first batch of more than one slot ([`RecvRule::leave_level`]);
//!   fewer datagrams than asked for marks it drained. A **one-slot batch**
//!   is a receive under the socket's rule above (one `recvmsg` per
//!   report when throttled): the way to get a datagram's kernel timestamp
//!   at the price of a plain receive, without the empty second look a
//!   larger batch makes when one datagram waits.
//!
//! Invariant: **no datagram is stranded.** A receive skips its syscall
//! only when the last receive took the datagram of the report it saw, or
//! found the queue empty, and no event was dispatched since: a datagram
//! left is reported again (level-triggered) or brings an event
//! (edge-triggered), and the waker is stored before the readiness is
//! checked again.
//!
//! The switch to edge-triggered clears `level` *before* it changes the
//! poller's interest, and a receive reads `level` *after* its readiness
//! snapshot: a report made after the change (ordered by epoll's lock,
//! published with a release) is seen with `level` clear, and whatever a
//! receive that read it set leaves in the socket is reported by the
//! change itself. Modelled in `loom-tests/tests/io_level_switch.rs`.
//!
//! [`DrainedMark`]: crate::readiness::DrainedMark

use std::io;
use std::marker::PhantomData;
use std::ops::Deref;
use std::os::fd::{AsRawFd, RawFd};

use tempo_park::sync::{AtomicBool, Ordering};

use crate::net::{thread_buf, RecvBatch};
use crate::poll_io::PollIo;
use crate::readiness::{DrainedMark, IoOp, ReadyEvent, Registration};
use crate::sys::epoll::EpollInterest;
use crate::sys::mmsg::{self, RawAddr};

/// A mio datagram socket: what [`DatagramIo`] needs of UDP and Unix
/// datagram sockets beyond their fd.
pub(crate) trait DatagramSource: mio::event::Source + AsRawFd {
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

    #[inline]
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
/// for the type-specific methods), its drained mark and receive state.
#[derive(Debug)]
pub(crate) struct DatagramIo<S: DatagramSource> {
    pub(crate) io: PollIo<S>,
    pub(crate) mark: DrainedMark,
    pub(crate) rule: RecvRule,
}

impl<S: DatagramSource> Deref for DatagramIo<S> {
    type Target = PollIo<S>;

    fn deref(&self) -> &PollIo<S> {
        &self.io
    }
}

/// A datagram socket's receive state (inline in its `DatagramIo`).
#[derive(Debug, Default)]
pub struct RecvRule {
    /// The socket is registered level-triggered for reading; cleared for
    /// good by [`leave_level`](RecvRule::leave_level).
    level: AtomicBool,
    /// `SO_TIMESTAMPNS` is on (turned on by the first batch asking).
    timestamps_on: AtomicBool,
    #[cfg(loom)]
    mutant: Option<RuleMutant>,
}

/// A deliberate fault the loom model `io_level_switch` must catch.
#[cfg(loom)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleMutant {
    /// `leave_level` changes the poller's interest before it clears
    /// `level`.
    EdgeBeforeFlag,
}

impl RecvRule {
    /// Registers `registration` level-triggered for reading if `throttled`.
    pub(crate) fn new(
        registration: &Registration,
        fd: RawFd,
        throttled: bool,
    ) -> io::Result<RecvRule> {
        if throttled {
            registration.make_level_triggered(|epoll, token| {
                Box::new(EpollInterest { epoll, fd, token })
            })?;
        }
        Ok(RecvRule {
            level: AtomicBool::new(throttled),
            ..RecvRule::default()
        })
    }

    /// A level-triggered rule with `mutant` (loom models).
    #[cfg(loom)]
    pub fn level_triggered(mutant: Option<RuleMutant>) -> RecvRule {
        RecvRule {
            level: AtomicBool::new(true),
            mutant,
            ..RecvRule::default()
        }
    }

    /// Makes the registration edge-triggered for good through `edge` (its
    /// `make_edge_triggered`), before a batch receive, which knows by
    /// itself when the socket is drained. `level` is cleared first (see
    /// the module docs); on failure it is set again.
    pub fn leave_level(&self, edge: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        #[cfg(loom)]
        if self.mutant == Some(RuleMutant::EdgeBeforeFlag) && self.level.load(Ordering::Relaxed) {
            edge()?;
            self.level.store(false, Ordering::Relaxed);
            return Ok(());
        }
        if self
            .level
            .compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            if let Err(e) = edge() {
                self.level.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    }

    /// One receive `syscall` at the readiness `seen`: its output, and
    /// whether the socket counts as drained at `seen` (level-triggered,
    /// `may_mark`, and not a backlog). `level` is read after `seen` was
    /// taken and before the syscall (see the module docs).
    #[inline]
    pub fn receive<T>(
        &self,
        seen: ReadyEvent,
        may_mark: bool,
        syscall: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<(T, bool)> {
        let level = self.level.load(Ordering::Acquire);
        let out = syscall()?;
        Ok((out, level && may_mark && !seen.backlog()))
    }
}

/// What a receive returns besides the length: nothing, or the source.
pub(crate) trait Source<S: DatagramSource> {
    /// The decoded source (`()` without one).
    type Addr;
    /// The receive's output, made of the length and the source.
    type Out;
    /// Decodes the address the kernel wrote.
    fn decode(from: &RawAddr) -> io::Result<Self::Addr>;
    /// The output of a receive of `len` bytes from `addr`.
    fn out(len: usize, addr: Self::Addr) -> Self::Out;
}

/// `recv`: the length only.
#[derive(Debug)]
pub(crate) enum NoSource {}

/// `recv_from`: the length and the source.
#[derive(Debug)]
pub(crate) enum WithSource {}

impl<S: DatagramSource> Source<S> for NoSource {
    type Addr = ();
    type Out = usize;

    #[inline]
    fn decode(_: &RawAddr) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn out(len: usize, (): ()) -> usize {
        len
    }
}

impl<S: DatagramSource> Source<S> for WithSource {
    type Addr = S::Addr;
    type Out = (usize, S::Addr);

    #[inline]
    fn decode(from: &RawAddr) -> io::Result<S::Addr> {
        S::decode(from)
    }

    #[inline]
    fn out(len: usize, addr: S::Addr) -> (usize, S::Addr) {
        (len, addr)
    }
}

/// One `recvfrom` of `io`'s socket into `buf` under the rule: the length,
/// and whether the socket counts as drained at `seen` (level-triggered,
/// throttled, not a backlog, not a `try_*`).
#[inline]
fn recv_one<S: DatagramSource>(
    io: &DatagramIo<S>,
    fd: RawFd,
    seen: ReadyEvent,
    may_skip: bool,
    buf: &mut [u8],
    from: &mut RawAddr,
) -> io::Result<(usize, bool)> {
    let throttled = io.io.handle.settings.throttled.load(Ordering::Relaxed);
    let may_mark = throttled && may_skip && !buf.is_empty();
    io.rule
        .receive(seen, may_mark, || mmsg::recv_from(fd, buf, from))
}

/// `recv` / `recv_from` into the caller's buffer. `may_skip` is `false`
/// for `try_*`, which never marks the socket drained.
#[derive(Debug)]
pub(crate) struct RecvOp<'a, S: DatagramSource, K> {
    pub(crate) io: &'a DatagramIo<S>,
    pub(crate) fd: RawFd,
    pub(crate) buf: &'a mut [u8],
    pub(crate) may_skip: bool,
    pub(crate) source: PhantomData<K>,
}

impl<S: DatagramSource, K: Source<S>> IoOp for RecvOp<'_, S, K> {
    type Output = K::Out;

    #[inline]
    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<(K::Out, bool)> {
        let mut from = RawAddr::empty();
        let (len, drained) = recv_one(self.io, self.fd, seen, self.may_skip, self.buf, &mut from)?;
        Ok((K::out(len, K::decode(&from)?), drained))
    }
}

/// `recv_with` / `recv_from_with`: one datagram into the thread's buffer
/// (`net/thread_buf.rs`), handed to `f` (taken once: the operation ends
/// with the first datagram).
pub(crate) struct RecvWithOp<'a, S: DatagramSource, K, F> {
    pub(crate) io: &'a DatagramIo<S>,
    pub(crate) fd: RawFd,
    pub(crate) f: Option<F>,
    pub(crate) source: PhantomData<K>,
}

impl<S: DatagramSource, K: Source<S>, R, F> IoOp for RecvWithOp<'_, S, K, F>
where
    F: FnOnce(&[u8], K::Addr) -> R,
{
    type Output = R;

    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<(R, bool)> {
        let mut buf = thread_buf::take();
        let output = self.receive_into(seen, &mut buf);
        thread_buf::put_back(buf);
        output
    }
}

impl<S: DatagramSource, K: Source<S>, F> RecvWithOp<'_, S, K, F> {
    #[inline]
    fn receive_into<R>(&mut self, seen: ReadyEvent, buf: &mut [u8]) -> io::Result<(R, bool)>
    where
        F: FnOnce(&[u8], K::Addr) -> R,
    {
        let mut from = RawAddr::empty();
        let (len, drained) = recv_one(self.io, self.fd, seen, true, buf, &mut from)?;
        let addr = K::decode(&from)?;
        let f = self
            .f
            .take()
            .expect("a closure receive ends at its datagram");
        Ok((f(&buf[..len], addr), drained))
    }
}

/// `recv_buf` / `recv_buf_from` (feature `bytes`): one datagram into
/// `buf`'s spare capacity (`net/buf.rs`).
#[cfg(feature = "bytes")]
pub(crate) struct RecvBufOp<'a, S: DatagramSource, K, B> {
    pub(crate) io: &'a DatagramIo<S>,
    pub(crate) fd: RawFd,
    pub(crate) buf: &'a mut B,
    pub(crate) may_skip: bool,
    pub(crate) source: PhantomData<K>,
}

#[cfg(feature = "bytes")]
impl<S: DatagramSource, K: Source<S>, B: bytes::BufMut> IoOp for RecvBufOp<'_, S, K, B> {
    type Output = K::Out;

    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<(K::Out, bool)> {
        let mut from = RawAddr::empty();
        let (len, drained) = crate::net::buf::read_into(self.buf, |dst| {
            recv_one(self.io, self.fd, seen, self.may_skip, dst, &mut from)
        })?;
        Ok((K::out(len, K::decode(&from)?), drained))
    }
}

/// `recv_many`: one `recvmmsg` into `batch`; fewer datagrams than asked
/// for marks the socket drained.
pub(crate) struct RecvManyOp<'a, S: DatagramSource> {
    pub(crate) io: &'a DatagramIo<S>,
    pub(crate) fd: RawFd,
    pub(crate) batch: &'a mut RecvBatch,
}

impl<S: DatagramSource> IoOp for RecvManyOp<'_, S> {
    type Output = usize;

    fn attempt(&mut self, seen: ReadyEvent) -> io::Result<(usize, bool)> {
        let timestamps_on = &self.io.rule.timestamps_on;
        if self.batch.wants_timestamps() && !timestamps_on.load(Ordering::Relaxed) {
            mmsg::enable_timestamps(self.fd)?;
            timestamps_on.store(true, Ordering::Relaxed);
        }
        // After the readiness snapshot `seen` (see the module docs).
        let level = self.io.rule.level.load(Ordering::Acquire);
        let (n, asked) = self.batch.recv_on(self.fd)?;
        let drained = if level {
            // A one-slot batch on a level-triggered socket (the others
            // left the rule): drained at the report, as `recv_one`.
            let throttled = self.io.io.handle.settings.throttled.load(Ordering::Relaxed);
            throttled && !seen.backlog()
        } else {
            n < asked
        };
        Ok((n, drained))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::readiness::{Arming, LevelInterest};

    /// A poller interest whose switch to edge-triggered succeeds or fails.
    #[derive(Debug)]
    struct Interest(bool);

    impl LevelInterest for Interest {
        fn set(&self, _arming: Arming) -> io::Result<()> {
            Ok(())
        }

        fn edge(&self) -> io::Result<()> {
            if self.0 {
                Ok(())
            } else {
                Err(io::Error::other("refused"))
            }
        }
    }

    /// A level-triggered registration of a fresh UDP socket on `driver`.
    fn level_registration(driver: &crate::Driver, edge_ok: bool) -> Registration {
        let mut socket = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let reactor = driver.handle().reactor().clone();
        let registration = Registration::new(&mut socket, reactor).unwrap();
        registration
            .make_level_triggered(|_, _| Box::new(Interest(edge_ok)))
            .unwrap();
        registration
    }

    #[test]
    fn a_refused_switch_changes_nothing_and_a_done_one_is_for_good() {
        let driver = crate::Driver::new().unwrap();
        let rule = RecvRule {
            level: AtomicBool::new(true),
            timestamps_on: AtomicBool::new(false),
        };
        let refusing = level_registration(&driver, false);
        assert!(rule.leave_level(|| refusing.make_edge_triggered()).is_err());
        assert!(rule.level.load(Ordering::Relaxed), "still level-triggered");
        let accepting = level_registration(&driver, true);
        rule.leave_level(|| accepting.make_edge_triggered())
            .unwrap();
        assert!(!rule.level.load(Ordering::Relaxed));
        // Left for good: a later switch does not ask the poller again.
        rule.leave_level(|| refusing.make_edge_triggered()).unwrap();
    }

    /// The state every receive reads stays small: inline in the socket,
    /// no allocation.
    #[test]
    fn the_inline_state_is_small() {
        assert!(std::mem::size_of::<RecvRule>() <= 8);
    }
}
