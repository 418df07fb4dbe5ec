//! Hand-written mio event loops, no runtime at all: the floor for any
//! epoll-based design.
//!
//! `mio-loop`: one `Poll`, every socket registered edge-triggered; on each
//! readiness event, drain that socket until `WouldBlock`.
//!
//! `mio-throttled:T`: the same loop, but after handling an iteration's events
//! it sleeps until T has passed since the iteration began (threadshare's
//! `context-wait`). Datagrams that arrive during the sleep queue in the
//! socket buffers and are read together by the next iteration: one
//! `epoll_wait` per T instead of one per datagram. Like Tempo's I/O driver,
//! an iteration serves every socket that was ready when it began: a poll
//! that fills the events buffer is followed by zero-timeout polls (at most
//! `streams / capacity + 1`). With one 1,024-event poll per T, sockets past
//! 1,024 would wait a tick and each socket would be served every other
//! tick, paying its per-socket costs half as often at twice the latency:
//! not the baseline a throttled runtime is judged against.
//!
//! `mio-throttled-mmsg:T`: the throttled loop, draining each ready socket
//! with `recvmmsg` calls that ask for two datagrams (raw syscalls, as
//! Tempo's receive path makes them) until a call returns fewer than two.
//! At one datagram per socket per tick that is one receive syscall per
//! datagram: what the kernel charges a receiver making one receive syscall
//! per datagram, with no runtime at all.
//!
//! `mio-throttled-lt:T`: the throttled loop with every socket switched to
//! *level-triggered* read readiness (`epoll_ctl(EPOLL_CTL_MOD)` without
//! `EPOLLET` on mio's epoll), one `recvfrom` per report and no empty call;
//! after serving an iteration's events it polls again with a zero timeout,
//! while that still reports sockets (at most [`MAX_LT_LOOKS`] times), so a
//! socket with a backlog is drained in the tick: the floor of a
//! level-triggered receive regime, one receive syscall per
//! datagram without the second message slot of `recvmmsg`.
//!
//! `mio-throttled-lt-streambuf:T`: the level-triggered loop receiving each
//! stream's datagrams into that stream's own buffer (allocated per
//! stream, as Tempo's and tokio's plain receivers allocate one per task),
//! where the other loops reuse one: the like-for-like floor of a receiver
//! that keeps a buffer per socket. The kernel then writes every datagram
//! into cold memory, and the loop reads it there.

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use std::os::fd::{AsRawFd, RawFd};

use mio::net::UdpSocket as MioUdpSocket;
use mio::{Events, Interest, Poll, Token};

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Readiness events fetched per `epoll_wait`.
const EVENTS_CAPACITY: usize = 1024;

/// How the loop reads a ready socket until it is drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drain {
    /// `recvfrom` until `WouldBlock`: two syscalls for a lone datagram.
    RecvFrom,
    /// `recvmmsg` for two datagrams until a call returns fewer: one
    /// syscall for a lone datagram.
    Mmsg2,
    /// Level-triggered readiness: one `recvfrom` per report, then
    /// zero-timeout polls while sockets are still reported.
    LevelOnce,
}

/// Where the loop receives each datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffers {
    /// One buffer, reused for every datagram.
    Shared,
    /// One buffer per stream (not with [`Drain::Mmsg2`], which has its
    /// own pair).
    PerStream,
}

/// Zero-timeout polls a level-triggered iteration makes at most after its
/// first, to drain backlogs (a socket with `k` datagrams queued needs `k`).
pub const MAX_LT_LOOKS: usize = 8;

/// Switches `fd`'s registration on `epoll` to level-triggered read
/// readiness, keeping mio's token (mio stores it in the event's data).
fn level_triggered(epoll: RawFd, fd: RawFd, token: Token) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
        u64: token.0 as u64,
    };
    // SAFETY: `epoll` and `fd` are open descriptors owned by the caller
    // (mio's `Poll` and a registered socket); the kernel only reads `event`.
    let rc = unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_MOD, fd, &mut event) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Runs the loop until `window` ends; `throttle` = `Some(T)` for
/// `mio-throttled:T` and `mio-throttled-mmsg:T`.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Option<Duration>,
    how: Drain,
    buffers: Buffers,
) -> io::Result<()> {
    assert!(
        buffers == Buffers::Shared || how != Drain::Mmsg2,
        "the two-datagram loop receives into its own pair of buffers"
    );
    let mut poll = Poll::new()?;
    let mut streams = Vec::with_capacity(sockets.len());
    for (i, sock) in sockets.into_iter().enumerate() {
        sock.set_nonblocking(true)?;
        let mut sock = MioUdpSocket::from_std(sock);
        poll.registry()
            .register(&mut sock, Token(i), Interest::READABLE)?;
        if how == Drain::LevelOnce {
            level_triggered(poll.as_raw_fd(), sock.as_raw_fd(), Token(i))?;
        }
        let own = match buffers {
            Buffers::Shared => Vec::new(),
            Buffers::PerStream => vec![0u8; RECV_BUF_LEN],
        };
        streams.push((sock, StreamTracker::new(i as u32, window), own));
    }
    let mut events = Events::with_capacity(EVENTS_CAPACITY);
    let mut buf = vec![0u8; RECV_BUF_LEN];
    let mut pair = MmsgPair::new();
    let throttle_ns = throttle.map_or(0, |t| t.as_nanos() as u64);
    // Bounded: each iteration's poll waits at most until the end of the window.
    loop {
        let started = monotonic_ns();
        if window.phase(started) == Phase::Done {
            return Ok(());
        }
        let max_polls = match (throttle_ns > 0, how) {
            (true, Drain::LevelOnce) => streams.len() / EVENTS_CAPACITY + 1 + MAX_LT_LOOKS,
            (true, _) => streams.len() / EVENTS_CAPACITY + 1,
            (false, _) => 1,
        };
        let mut timeout = Some(window.remaining());
        for _ in 0..max_polls {
            match poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => break,
                Err(e) => return Err(e),
            }
            let mut returned = 0;
            for event in events.iter() {
                returned += 1;
                let (sock, tracker, own) = &mut streams[event.token().0];
                let buf = match buffers {
                    Buffers::Shared => &mut buf,
                    Buffers::PerStream => own,
                };
                match how {
                    Drain::RecvFrom => drain(sock, tracker, buf),
                    Drain::Mmsg2 => pair.drain(sock.as_raw_fd(), tracker),
                    Drain::LevelOnce => recv_once(sock, tracker, buf),
                }
            }
            // Edge-triggered: a poll that did not fill the buffer saw every
            // ready socket. Level-triggered: look again until a poll reports
            // none (each look serves one more datagram of every backlog).
            let done = match how {
                Drain::LevelOnce => returned == 0,
                _ => returned < EVENTS_CAPACITY,
            };
            if done {
                break;
            }
            timeout = Some(Duration::ZERO);
        }
        if throttle_ns > 0 {
            sleep_until_ns((started + throttle_ns).min(window.end_ns));
        }
    }
}

/// Reads `sock` until it would block (edge-triggered readiness requires it).
fn drain(sock: &MioUdpSocket, tracker: &mut StreamTracker, buf: &mut [u8]) {
    // Bounded in practice: a stream sends one datagram per interval, far
    // slower than this loop reads, so the queue empties within a few reads.
    loop {
        match sock.recv_from(buf) {
            Ok((n, _from)) => {
                tracker.on_datagram(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}

/// Reads one datagram from `sock` (level-triggered: the next poll reports
/// it again if more are queued).
fn recv_once(sock: &MioUdpSocket, tracker: &mut StreamTracker, buf: &mut [u8]) {
    match sock.recv_from(buf) {
        Ok((n, _from)) => {
            tracker.on_datagram(&buf[..n]);
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(_) => tracker.on_error(),
    }
}

/// Two receive buffers and their source addresses, allocated once and
/// reused by every `recvmmsg` of the loop. The `iovec`s and `mmsghdr`s
/// pointing into them are rebuilt on the stack for each call (the kernel
/// overwrites `msg_namelen` and `msg_len`).
struct MmsgPair {
    bufs: Box<[[u8; RECV_BUF_LEN]; 2]>,
    addrs: Box<[libc::sockaddr_storage; 2]>,
}

impl MmsgPair {
    fn new() -> MmsgPair {
        MmsgPair {
            bufs: Box::new([[0; RECV_BUF_LEN]; 2]),
            // SAFETY: `sockaddr_storage` is plain old data; all zeroes is a
            // valid (unspecified-family) value.
            addrs: Box::new(unsafe { std::mem::zeroed() }),
        }
    }

    /// Reads `fd` with `recvmmsg` calls for two datagrams until one returns
    /// fewer than two (the queue is then empty).
    fn drain(&mut self, fd: RawFd, tracker: &mut StreamTracker) {
        // Bounded in practice, as `drain` above.
        loop {
            let mut iov: [libc::iovec; 2] = std::array::from_fn(|i| libc::iovec {
                iov_base: self.bufs[i].as_mut_ptr().cast(),
                iov_len: RECV_BUF_LEN,
            });
            // SAFETY: `mmsghdr` is plain old data; all zeroes is a valid
            // value (null pointers, zero lengths), and the fields the call
            // reads are set below.
            let mut hdrs: [libc::mmsghdr; 2] = unsafe { std::mem::zeroed() };
            for (i, hdr) in hdrs.iter_mut().enumerate() {
                hdr.msg_hdr.msg_name = std::ptr::addr_of_mut!(self.addrs[i]).cast();
                hdr.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as _;
                hdr.msg_hdr.msg_iov = &mut iov[i];
                hdr.msg_hdr.msg_iovlen = 1;
            }
            // SAFETY: `hdrs` holds two headers whose name and iovec
            // pointers point into `self.addrs`, `iov` and `self.bufs`, all
            // alive and not otherwise used until the call returns; the
            // lengths given are those of the pointed-to memory. The
            // arguments are those of `recvmmsg(2)`, in its order, widened to
            // `c_long` as tempo-io's call does (the null timeout: none).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_recvmmsg,
                    fd as libc::c_long,
                    hdrs.as_mut_ptr(),
                    hdrs.len() as libc::c_long,
                    libc::MSG_DONTWAIT as libc::c_long,
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if n < 0 {
                match io::Error::last_os_error().kind() {
                    io::ErrorKind::WouldBlock => return,
                    io::ErrorKind::Interrupted => continue,
                    _ => {
                        tracker.on_error();
                        return;
                    }
                }
            }
            for (hdr, buf) in hdrs.iter().zip(self.bufs.iter()).take(n as usize) {
                tracker.on_datagram(&buf[..hdr.msg_len as usize]);
            }
            if n < 2 {
                return;
            }
        }
    }
}
