//! The receive-ahead rule of datagram sockets: one receive syscall per
//! datagram at steady state, in one place.
//!
//! # Why
//!
//! A receiver that loops `recv_from().await` until `WouldBlock` pays, per
//! datagram, one `recvfrom` that returns it and one that finds the socket
//! empty (tokio does). Under a throttling scheduler, at one datagram per
//! socket per tick, that second call is always wasted. The earlier remedy
//! (defer the second receive to the next tick) still paid 1.5 `recvfrom`
//! per datagram and held a backlog for a tick.
//!
//! # The rule
//!
//! When [on](RecvAheadMode::set_enabled) (the runtime turns it on under
//! throttling), a `recv` / `recv_from` / `poll_recv*` that has nothing held
//! makes **one `recvmmsg` asking for two datagrams**: the first into the
//! caller's buffer, the second into a buffer of the socket's own.
//!
//! * **One arrived**: the socket was drained by that very call. The
//!   operation records the readiness event sequence number it saw before
//!   the call (`drained_seq`) and clears the socket's read readiness. The
//!   next receive, if no readiness event came since, returns `Pending`
//!   **without a syscall** (an edge-triggered event will come with the
//!   next datagram). At one datagram per socket per tick: one syscall per
//!   datagram.
//! * **Two arrived**: the second is *held*. The next receive (`recv`,
//!   `recv_from`, their `poll_*` and `try_*` forms, `recv_many`) returns it
//!   first, **without a syscall**, and `peek*` shows it. A task that awaits
//!   a receive is never parked while a datagram is held: a held datagram
//!   makes every receive ready at once, and `readable()` too. The receive
//!   after it makes the next `recvmmsg`, so a backlog is drained in the
//!   same tick, two datagrams per syscall, with no added tick of latency.
//!
//! # The invariant
//!
//! **A datagram is never stranded**: a receive either returns a held
//! datagram, or makes the syscall, or skips it only when its own last
//! `recvmmsg` found the queue empty and no readiness event was dispatched
//! since (so any datagram that arrived since has an event on its way, and
//! the waker is stored before readiness is re-checked). Held datagrams stay
//! in arrival order: nothing is received from the kernel while one is held.
//!
//! # Memory
//!
//! Every registration carries one pointer-sized slot (plus its mutex
//! byte). Per socket, at its first receive: a boxed state of 272 bytes (the
//! held source address is a `sockaddr_storage`) and 448 bytes of `mmsghdr`
//! scratch, about 0.7 KiB, plus, once the rule is on, a buffer as long as
//! the largest receive buffer the caller passed (capped at 65,536 bytes):
//! about 2.7 KiB per socket with a 2,048-byte receive buffer, 22 MiB at
//! 8,000 sockets. The buffer has the caller's size so that a held datagram
//! is cut exactly as `recvfrom` into that buffer would cut it. A later
//! receive with a *larger* buffer than every earlier one still gets a held
//! datagram as the earlier buffer size cut it (the only way this rule
//! differs from `recvfrom`; a receiver that always passes the same buffer
//! never sees it). `try_recv*` and zero-length buffers make a plain
//! one-datagram call.
//!
//! When off (the basic scheduler), receives make one one-datagram call
//! each and loops drain until `WouldBlock`, as tokio does; a held datagram
//! (left from when the rule was on) is still returned first.
//!
//! # Batch receives
//!
//! `recv_many` follows the same rule with a caller's
//! [`RecvBatch`](crate::net::RecvBatch): a held datagram fills slot 0 and
//! the `recvmmsg` fills the rest in the same call; fewer arrivals than
//! slots means drained, recorded as above, whether or not the rule is on.
//!
//! # Counting
//!
//! The rule makes no driver work of its own: it adds nothing to
//! [`DriverStats::io_events`](tempo_park::DriverStats::io_events).

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::net::RecvBatch;
use crate::sys::mmsg::{self, RawAddr, RecvTarget};

/// The largest receive-ahead buffer (the largest datagram).
const MAX_AHEAD_BUF: usize = 65_536;

/// The driver-wide switch of the rule.
#[derive(Debug)]
pub(crate) struct RecvAheadMode {
    enabled: AtomicBool,
}

impl RecvAheadMode {
    /// Off.
    pub(crate) fn new() -> RecvAheadMode {
        RecvAheadMode {
            enabled: AtomicBool::new(false),
        }
    }

    /// Turns the rule on or off.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Relaxed);
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.load(Relaxed)
    }
}

/// How one receive attempt may use the drained knowledge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecvAttempt {
    /// The registration's event sequence number, read before the attempt.
    pub(crate) event_seq: usize,
    /// Whether the attempt may skip the syscall when the socket is known
    /// drained (`false` for `try_*`, which always tries).
    pub(crate) may_skip: bool,
    /// Whether the rule is on (two datagrams per call).
    pub(crate) ahead: bool,
}

/// A received datagram: its length in the caller's buffer, source
/// address, and whether the call left the socket known drained.
#[derive(Debug)]
pub(crate) struct Got {
    pub(crate) len: usize,
    pub(crate) addr: RawAddr,
    pub(crate) drained: bool,
}

/// The per-socket side (lives in the socket's
/// [`ScheduledIo`](crate::scheduled_io::ScheduledIo)).
#[derive(Debug, Default)]
pub(crate) struct RecvAhead {
    /// Boxed and made at the first receive, so that sockets that never
    /// receive (TCP, send-only) pay one pointer.
    state: parking_lot::Mutex<Option<Box<AheadState>>>,
}

#[derive(Debug)]
struct AheadState {
    /// Where the second datagram of a call lands.
    buf: Vec<u8>,
    held: Option<Held>,
    /// The event sequence number seen before the last call that found the
    /// socket drained.
    drained_seq: Option<usize>,
    /// `SO_TIMESTAMPNS` was turned on for the socket.
    timestamps_on: bool,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    /// Bytes in `AheadState::buf`.
    len: usize,
    addr: RawAddr,
}

fn would_block() -> io::Error {
    io::ErrorKind::WouldBlock.into()
}

impl AheadState {
    fn new() -> Box<AheadState> {
        Box::new(AheadState {
            buf: Vec::new(),
            held: None,
            drained_seq: None,
            timestamps_on: false,
        })
    }

    fn known_drained(&self, attempt: RecvAttempt) -> bool {
        attempt.may_skip && self.drained_seq == Some(attempt.event_seq)
    }

    /// Copies the held datagram into `buf` (cut to it) and releases it.
    fn take_held(&mut self, buf: &mut [u8]) -> Option<Got> {
        let held = self.held.take()?;
        let len = held.len.min(buf.len());
        buf[..len].copy_from_slice(&self.buf[..len]);
        Some(Got {
            len,
            addr: held.addr,
            drained: false,
        })
    }
}

impl RecvAhead {
    /// Whether a datagram is held (a receive is ready without a syscall).
    pub(crate) fn has_held(&self) -> bool {
        self.state.lock().as_ref().is_some_and(|s| s.held.is_some())
    }

    /// One receive into `buf` under the rule (see the module docs).
    pub(crate) fn recv(&self, fd: RawFd, attempt: RecvAttempt, buf: &mut [u8]) -> io::Result<Got> {
        let mut guard = self.state.lock();
        let state: &mut AheadState = guard.get_or_insert_with(AheadState::new);
        if let Some(got) = state.take_held(buf) {
            return Ok(got);
        }
        if state.known_drained(attempt) {
            return Err(would_block());
        }
        let mut first = RawAddr::empty();
        let two = attempt.ahead && attempt.may_skip && !buf.is_empty();
        if !two {
            let len = mmsg::recv_from(fd, buf, &mut first)?;
            return Ok(Got {
                len,
                addr: first,
                drained: false,
            });
        }
        let mut second = RawAddr::empty();
        let ahead_len = buf.len().min(MAX_AHEAD_BUF);
        if state.buf.len() < ahead_len {
            state.buf.resize(ahead_len, 0);
        }
        let targets = [
            RecvTarget {
                buf,
                addr: &mut first,
                control: None,
            },
            RecvTarget {
                buf: &mut state.buf[..ahead_len],
                addr: &mut second,
                control: None,
            },
        ];
        let (n, received) = mmsg::recv_mmsg_array(fd, targets)?;
        first.set_len(received[0].addr_len);
        let got = Got {
            len: received[0].len,
            addr: first,
            drained: n == 1,
        };
        if n == 2 {
            second.set_len(received[1].addr_len);
            state.held = Some(Held {
                len: received[1].len,
                addr: second,
            });
        } else if got.drained {
            state.drained_seq = Some(attempt.event_seq);
        }
        Ok(got)
    }

    /// The held datagram copied into `buf` without releasing it, if one is
    /// held (for `peek*`).
    pub(crate) fn peek_held(&self, buf: &mut [u8]) -> Option<(usize, RawAddr)> {
        let guard = self.state.lock();
        let state = guard.as_ref()?;
        let held = state.held.as_ref()?;
        let len = held.len.min(buf.len());
        buf[..len].copy_from_slice(&state.buf[..len]);
        Some((len, held.addr))
    }

    /// One batch receive into `batch` under the rule: the held datagram
    /// first, then one `recvmmsg` for the remaining slots. Returns how many
    /// datagrams the batch holds and whether the socket is known drained.
    pub(crate) fn recv_batch(
        &self,
        fd: RawFd,
        attempt: RecvAttempt,
        batch: &mut RecvBatch,
    ) -> io::Result<(usize, bool)> {
        let mut guard = self.state.lock();
        let state: &mut AheadState = guard.get_or_insert_with(AheadState::new);
        batch.reset();
        if let Some(held) = state.held.take() {
            batch.set_first(&state.buf[..held.len], held.addr);
            if batch.capacity() == 1 {
                return Ok((1, false));
            }
        } else if state.known_drained(attempt) {
            return Err(would_block());
        }
        if batch.wants_timestamps() && !state.timestamps_on {
            mmsg::enable_timestamps(fd)?;
            state.timestamps_on = true;
        }
        match batch.recv_more(fd) {
            Ok((n, asked)) => {
                let drained = n < asked;
                if drained {
                    state.drained_seq = Some(attempt.event_seq);
                }
                Ok((batch.len(), drained))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && !batch.is_empty() => {
                state.drained_seq = Some(attempt.event_seq);
                Ok((batch.len(), true))
            }
            Err(e) => Err(e),
        }
    }
}
