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
//! When [on](crate::Driver::set_recv_ahead) (the runtime turns it on under
//! throttling), a datagram socket is made **level-triggered** for reading
//! (`sys/epoll.rs`; `readiness/scheduled_io.rs`, "Level-triggered
//! registrations"), and a `recv` / `recv_from` / `poll_recv*` makes **one
//! `recvfrom` per readiness report**:
//!
//! * It records the readiness event sequence number it saw before the
//!   call (`drained_seq`) and clears the socket's read readiness, as if
//!   the socket were drained. The next receive, if no readiness event came
//!   since, returns `Pending` **without a syscall**. The poller says
//!   whether it was right: level-triggered, it reports the socket again
//!   at its next poll while a datagram is left. At one datagram per socket
//!   per tick: one syscall per datagram, and no empty one.
//! * **A backlog drains in the tick that finds it.** After running its
//!   tasks, a throttled tick takes a *look* (a zero-timeout poll; see
//!   `tempo_park::IoDriver::looks_for_backlogs`). A socket the look
//!   reports *again* (the tick's poll reported it too) was served in the
//!   tick and still holds a datagram: its readiness carries the `backlog`
//!   flag, and its receives then make a `recvfrom` each until
//!   `WouldBlock` (the flag is cleared with the readiness), as a drain
//!   loop does. A socket the look reports first (a datagram that came
//!   while the tick ran) takes one datagram, as at any report; if one is
//!   left, the next look reports it again. The rule is the driver's (two
//!   parks in a row), so it holds under a host's driver that wraps the
//!   I/O driver and makes the looks itself.
//!
//! Why level-triggered and one `recvfrom`, measured (issue 20, benches
//! README): the kernel charges one `recvmmsg` asking for two datagrams
//! more than two `recvfrom`, and a level-triggered `recvfrom` per report
//! less than either; the look's extra `epoll_wait` per tick costs less
//! than the saved receives.
//!
//! ## The two-datagram form (edge-triggered sockets)
//!
//! A socket made while the rule was off is edge-triggered and stays so;
//! if the rule is turned on later, its receives follow the rule's
//! earlier form, **one `recvmmsg` asking for two datagrams**: the first
//! into the caller's buffer, the second into a buffer of the socket's own.
//!
//! * **One arrived**: the socket was drained by that very call, recorded
//!   as above (an edge-triggered event will come with the next datagram).
//! * **Two arrived**: the second is *held*. The next receive (`recv`,
//!   `recv_from`, their `poll_*` and `try_*` forms, `recv_many`) returns it
//!   first, **without a syscall**, and `peek*` shows it. A task that awaits
//!   a receive is never parked while a datagram is held: a held datagram
//!   makes every receive ready at once, and `readable()` too. The receive
//!   after it makes the next `recvmmsg`, so a backlog is drained in the
//!   same tick, two datagrams per syscall, with no added tick of latency.
//!
//! A level-triggered socket never holds a datagram: what it has not
//! received stays in the kernel. Nor does it after its first batch
//! receive made it edge-triggered (see "The level-triggered receive"):
//! its receives then make one `recvfrom` each and drain until
//! `WouldBlock`. Nor does a receive into the thread's
//! buffer (`recv_with`, `recv_from_with`: `net/thread_buf.rs`), whose
//! held datagram would need a 64 KiB buffer per socket: on an
//! edge-triggered socket it makes one `recvfrom` and does not mark the
//! socket drained, so its next receive makes the syscall (a drain loop's
//! two per datagram).

//! # The invariant
//!
//! **A datagram is never stranded**: a receive either returns a held
//! datagram, or makes the syscall, or skips it only when its own last
//! call found the queue empty (edge-triggered) or took the datagram of the
//! last report (level-triggered) and no readiness event was dispatched
//! since: a datagram that arrived since has an event on its way
//! (edge-triggered), or one left is reported again at the next poll
//! (level-triggered; its wait re-arms the socket's read interest if a
//! report nobody read disarmed it), and the waker is stored before
//! readiness is re-checked. Held datagrams stay
//! in arrival order: nothing is received from the kernel while one is held.
//!
//! # Memory
//!
//! The state lives inline in the datagram socket itself (its
//! `DatagramIo`, `net/datagram.rs`), behind its own mutex: no box, no
//! scratch, no allocation for a level-triggered socket, and nothing in the
//! registrations of sockets that never receive a datagram (TCP,
//! listeners). The skip word (see below) comes first, then the
//! level-triggered flag, the lock and what every receive reads (the
//! drained sequence number, the held flag and length): 48 bytes per
//! datagram socket. A level-triggered socket
//! keeps nothing more.
//!
//! The two-datagram form's second datagram lands in a *held space* made
//! at the socket's first two-datagram receive, out of line: the held
//! datagram's source address (136 bytes, the kernel writes the second
//! datagram's address straight into it) and a buffer as long as the
//! largest receive buffer the caller passed (capped at 65,536 bytes; with
//! a 2,048-byte receive buffer, 17 MiB at 8,000 sockets, which the
//! level-triggered form saves). Inline, the address made every socket's
//! state 192 bytes, and the socket's task future (where the socket
//! lives) two cache lines longer, for a form a throttled runtime's
//! sockets never use. The kernel's `mmsghdr` / `iovec` arrays of the
//! two-datagram call are on the stack. The buffer has the caller's size
//! so that a held datagram is cut exactly as `recvfrom` into that buffer
//! would cut it. A later receive with a *larger* buffer than every earlier one
//! still gets a held datagram as the earlier buffer size cut it (the only
//! way this rule differs from `recvfrom`; a receiver that always passes
//! the same buffer never sees it). `try_recv*` and zero-length buffers make a plain
//! one-datagram call.
//!
//! When off (the basic scheduler), receives make one one-datagram call
//! each and loops drain until `WouldBlock`, as tokio does (also on a
//! level-triggered socket, made while the rule was on: the poller then
//! simply reports it while it holds a datagram); a held datagram (left
//! from when the rule was on) is still returned first.
//!
//! # Batch receives
//!
//! `recv_many` follows the same rule with a caller's
//! [`RecvBatch`](crate::net::RecvBatch): a held datagram fills slot 0 and
//! the `recvmmsg` fills the rest in the same call; fewer arrivals than
//! slots means drained, recorded as above, whether or not the rule is on.
//!
//! # The skip without the lock
//!
//! At one datagram per socket per tick, every datagram costs two receives:
//! the one that gets it (and finds the socket drained) and the next one,
//! which skips its syscall. That second one only reads the drained
//! knowledge, so a copy of it is published in one atomic word next to the
//! lock (`skip`: the drained sequence number when it is known and nothing
//! is held, else 0), rewritten under the lock whenever the state changes,
//! and the skip reads that word instead of taking the lock (two atomic
//! read-modify-writes saved per datagram). A receive that reads a word
//! being replaced decides exactly as it would have had it taken the lock
//! just before the writer: the skip is decided from the state alone and
//! touches nothing, so it is linearised before the writer's critical
//! section.
//!
//! # The level-triggered receive
//!
//! A level-triggered socket never holds a datagram, so its receive needs
//! none of the locked state: it reads the `level` flag, makes its
//! `recvfrom` and publishes its drained mark in the skip word with a
//! plain store, no lock (two atomic read-modify-writes less per
//! datagram, the lock and its release). Two receivers of one socket (two
//! tasks on one `Arc<UdpSocket>`) may store marks in either order: each
//! is the number of a report whose datagram was taken, and the poller
//! reports a socket again while it holds one, so neither can strand a
//! datagram.
//!
//! The one change it must not miss is the switch to edge-triggered
//! ([`RecvAhead::leave_level`], at a socket's first batch receive),
//! after which one datagram no longer proves the socket drained. The
//! switch clears the flag *before* it changes the poller's interest, and
//! a receive reads the flag *after* its readiness snapshot. A report the
//! poller makes after the change is ordered after it (epoll's own lock)
//! and dispatched with a release (the readiness word's update), so a
//! receive whose snapshot shows such a report reads the flag clear. A
//! receive that still reads the flag set saw only reports from before
//! the change, and whatever it leaves in the socket is reported by the
//! change itself (the kernel checks the socket as its interest changes),
//! which moves the event sequence number past its mark. And since a
//! socket made level-triggered never holds a datagram, even later
//! (`AheadState::made_level`), a receive that raced the switch cannot
//! pass a held one. Modelled in `loom-tests/tests/io_level_switch.rs`
//! (which fails if the flag is read before the snapshot).
//!
//! # Counting
//!
//! The rule makes no driver work of its own: it adds nothing to
//! [`DriverStats::io_events`](tempo_park::DriverStats::io_events).

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::net::RecvBatch;
use crate::sys::mmsg::{self, RawAddr, RecvTarget};

/// The largest receive-ahead buffer (the largest datagram).
const MAX_AHEAD_BUF: usize = 65_536;

/// How one receive attempt may use the drained knowledge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecvAttempt {
    /// The registration's event sequence number, read before the attempt.
    pub(crate) event_seq: usize,
    /// Whether the attempt may skip the syscall when the socket is known
    /// drained (`false` for `try_*`, which always tries).
    pub(crate) may_skip: bool,
    /// Whether the rule is on.
    pub(crate) ahead: bool,
    /// The readiness seen says the socket holds a backlog (a look
    /// reported it again): drain it, one `recvfrom` per receive, until
    /// `WouldBlock`.
    pub(crate) backlog: bool,
    /// Whether the attempt may receive a second datagram and hold it
    /// (the two-datagram form of an edge-triggered socket). `false` for
    /// a receive into the thread's buffer (`net/thread_buf.rs`): a held
    /// datagram's buffer has the size of the receiving one, 64 KiB there.
    pub(crate) hold: bool,
}

/// A received datagram: its length in the caller's buffer, what the
/// caller's decoder made of its source address, and whether the call left
/// the socket known drained.
///
/// The source is decoded where the kernel wrote it (on the receive's
/// stack, or in the held address), never carried up as a [`RawAddr`]: at
/// 136 bytes, each layer that moved one (the readiness loop, its `Poll`
/// and `Result` wrappers) paid a `memcpy` per datagram.
#[derive(Debug)]
pub(crate) struct Got<A> {
    pub(crate) len: usize,
    pub(crate) addr: A,
    pub(crate) drained: bool,
}

/// The per-socket side (lives in the socket's `DatagramIo`, inline: see
/// the module docs' "Memory").
#[derive(Debug, Default)]
pub(crate) struct RecvAhead {
    /// The skip word (see the module docs): `skip_word(drained_seq)` when
    /// the socket is known drained and nothing is held, else 0. Written
    /// with `state` locked ([`Locked`]'s drop), and by the level-triggered
    /// receive, which takes no lock (see "The level-triggered receive").
    skip: AtomicUsize,
    /// The socket is registered level-triggered: its receives take the
    /// path without the lock. Cleared for good by
    /// [`leave_level`](RecvAhead::leave_level).
    level: AtomicBool,
    /// parking_lot's mutex keeps its lock byte first, so the lock and the
    /// hot fields of the state share a cache line.
    state: parking_lot::Mutex<AheadState>,
}

/// The skip word that lets a receive seeing `event_seq` skip its syscall
/// (never 0; event sequence numbers have fewer bits than `usize`).
fn skip_word(event_seq: usize) -> usize {
    (event_seq << 1) | 1
}

/// The locked state; publishes the skip word when dropped, before the
/// lock is released.
struct Locked<'a> {
    state: parking_lot::MutexGuard<'a, AheadState>,
    skip: &'a AtomicUsize,
}

impl Drop for Locked<'_> {
    #[inline]
    fn drop(&mut self) {
        let word = if self.state.drained_known && !self.state.held {
            skip_word(self.state.drained_seq)
        } else {
            0
        };
        self.skip.store(word, Ordering::Release);
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = AheadState;

    fn deref(&self) -> &AheadState {
        &self.state
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut AheadState {
        &mut self.state
    }
}

/// Where the two-datagram form's second datagram lands: its buffer and
/// its source address, written there by the kernel. Made at a socket's
/// first two-datagram receive (a level-triggered socket never makes one),
/// out of line, so that the state every receive reads stays small.
#[derive(Debug)]
struct HeldSpace {
    buf: Vec<u8>,
    addr: RawAddr,
}

/// The state of one socket: the fields every receive reads, together.
#[derive(Debug, Default)]
#[repr(C)]
struct AheadState {
    /// The event sequence number seen before the last call that found the
    /// socket drained (meaningful when `drained_known`).
    drained_seq: usize,
    /// Where the second datagram of a call lands (`None` until the first
    /// two-datagram receive).
    space: Option<Box<HeldSpace>>,
    /// Bytes of the held datagram in `space`'s buffer (meaningful when
    /// `held`).
    held_len: u32,
    /// A datagram is held: `space.buf[..held_len]` from `space.addr`.
    held: bool,
    /// `drained_seq` is set.
    drained_known: bool,
    /// `SO_TIMESTAMPNS` was turned on for the socket.
    timestamps_on: bool,
    /// The socket was made level-triggered (it may have left that form
    /// since): it never holds a datagram, even edge-triggered, so that a
    /// level-triggered receive, which looks at no held datagram, cannot
    /// pass one (see "The level-triggered receive").
    made_level: bool,
}

fn would_block() -> io::Error {
    io::ErrorKind::WouldBlock.into()
}

impl AheadState {
    #[inline]
    fn known_drained(&self, attempt: RecvAttempt) -> bool {
        attempt.may_skip && self.drained_known && self.drained_seq == attempt.event_seq
    }

    #[inline]
    fn set_drained(&mut self, event_seq: usize) {
        self.drained_seq = event_seq;
        self.drained_known = true;
    }

    /// The held datagram's bytes and source, if one is held.
    fn held(&self) -> Option<(&[u8], &RawAddr)> {
        let space = self.space.as_deref().filter(|_| self.held)?;
        Some((&space.buf[..self.held_len as usize], &space.addr))
    }

    /// Copies the held datagram (one must be held) into `buf` (cut to
    /// it), decodes its source in place and releases it.
    fn take_held<A>(&mut self, buf: &mut [u8], decode: impl FnOnce(&RawAddr) -> A) -> Got<A> {
        let (held, addr) = self.held().expect("take_held without a held datagram");
        let len = held.len().min(buf.len());
        buf[..len].copy_from_slice(&held[..len]);
        let addr = decode(addr);
        self.held = false;
        Got {
            len,
            addr,
            drained: false,
        }
    }
}

impl RecvAhead {
    /// The state of a socket registered level-triggered (`level`) or
    /// edge-triggered.
    pub(crate) fn new(level: bool) -> RecvAhead {
        RecvAhead {
            skip: AtomicUsize::new(0),
            level: AtomicBool::new(level),
            state: parking_lot::Mutex::new(AheadState {
                made_level: level,
                ..AheadState::default()
            }),
        }
    }

    /// Whether the socket is registered level-triggered.
    #[inline]
    pub(crate) fn is_level(&self) -> bool {
        self.level.load(Ordering::Relaxed)
    }

    /// Leaves the level-triggered form for good: `to_edge` makes the
    /// registration edge-triggered. The flag is cleared first (see "The
    /// level-triggered receive"). The poller reports what the socket
    /// holds when its interest changes, so a receive that took the
    /// datagram of the last level-triggered report and waits is woken if
    /// one is left.
    pub(crate) fn leave_level(&self, to_edge: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let _switching = self.lock();
        if self.level.load(Ordering::Relaxed) {
            // Before the interest change: a receive that sees a report
            // made after it sees this.
            self.level.store(false, Ordering::Relaxed);
            if let Err(e) = to_edge() {
                // Still level-triggered. A receive that saw `false` in
                // between took the edge-triggered path: one datagram, no
                // drained mark (see `made_level`), which is always safe.
                self.level.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    }

    /// The state, locked for a change (the skip word follows it).
    #[inline]
    fn lock(&self) -> Locked<'_> {
        Locked {
            state: self.state.lock(),
            skip: &self.skip,
        }
    }

    /// Whether `attempt` may skip its syscall: the socket was found
    /// drained at its event sequence number and nothing is held (the
    /// state's [`known_drained`](AheadState::known_drained) with no held
    /// datagram, read without the lock).
    #[inline]
    fn skips(&self, attempt: RecvAttempt) -> bool {
        attempt.may_skip && self.skips_at(attempt.event_seq)
    }

    /// Whether a receive that may skip its syscall, seeing `event_seq`,
    /// skips it (returns `WouldBlock` at once): the operation loop's
    /// `skips` test, which lets such a receive wait without trying.
    #[inline]
    pub(crate) fn skips_at(&self, event_seq: usize) -> bool {
        self.skip.load(Ordering::Acquire) == skip_word(event_seq)
    }

    /// Whether a datagram is held (a receive is ready without a syscall).
    pub(crate) fn has_held(&self) -> bool {
        self.state.lock().held
    }

    /// Drops the held datagram, if any, and forgets that the socket was
    /// found drained (the next receive makes the syscall). Returns
    /// whether a datagram was dropped.
    pub(crate) fn discard(&self) -> bool {
        let mut state = self.lock();
        state.drained_known = false;
        std::mem::replace(&mut state.held, false)
    }

    /// One receive into `buf` under the rule (see the module docs); its
    /// source goes through `decode` where the kernel wrote it (`|_| ()`
    /// for a receive that drops it).
    pub(crate) fn recv<A>(
        &self,
        fd: RawFd,
        attempt: RecvAttempt,
        buf: &mut [u8],
        decode: impl FnOnce(&RawAddr) -> A,
    ) -> io::Result<Got<A>> {
        if self.skips(attempt) {
            return Err(would_block());
        }
        // Read after the readiness snapshot `attempt` was made from (see
        // "The level-triggered receive").
        if self.level.load(Ordering::Acquire) {
            return self.recv_level(fd, attempt, buf, decode);
        }
        let mut guard = self.lock();
        let state = &mut *guard;
        if state.held {
            return Ok(state.take_held(buf, decode));
        }
        if state.known_drained(attempt) {
            return Err(would_block());
        }
        let mut first = RawAddr::empty();
        let two = attempt.ahead && attempt.may_skip && !buf.is_empty();
        if !two || !attempt.hold || state.made_level {
            // Edge-triggered, one datagram says nothing: the next receive
            // makes the syscall.
            let len = mmsg::recv_from(fd, buf, &mut first)?;
            return Ok(Got {
                len,
                addr: decode(&first),
                drained: false,
            });
        }
        let ahead_len = buf.len().min(MAX_AHEAD_BUF);
        let space = state.space.get_or_insert_with(|| {
            Box::new(HeldSpace {
                buf: Vec::new(),
                addr: RawAddr::empty(),
            })
        });
        if space.buf.len() < ahead_len {
            space.buf.resize(ahead_len, 0);
        }
        let targets = [
            RecvTarget {
                buf,
                addr: &mut first,
                control: None,
            },
            RecvTarget {
                buf: &mut space.buf[..ahead_len],
                addr: &mut space.addr,
                control: None,
            },
        ];
        let (n, received) = mmsg::recv_mmsg_array(fd, targets)?;
        first.set_len(received[0].addr_len);
        let got = Got {
            len: received[0].len,
            addr: decode(&first),
            drained: n == 1,
        };
        if n == 2 {
            space.addr.set_len(received[1].addr_len);
            // At most MAX_AHEAD_BUF (65,536) bytes: fits.
            state.held_len = received[1].len as u32;
            state.held = true;
        } else if got.drained {
            state.set_drained(attempt.event_seq);
        }
        Ok(got)
    }

    /// The level-triggered receive: one `recvfrom`, no lock (see "The
    /// level-triggered receive"). Under the rule, one receive per report:
    /// the next report (a look's, or the next tick's) says whether one is
    /// left, so the socket counts as drained at the report seen, unless
    /// that report flagged a backlog.
    #[inline]
    fn recv_level<A>(
        &self,
        fd: RawFd,
        attempt: RecvAttempt,
        buf: &mut [u8],
        decode: impl FnOnce(&RawAddr) -> A,
    ) -> io::Result<Got<A>> {
        let mut from = RawAddr::empty();
        let len = mmsg::recv_from(fd, buf, &mut from)?;
        let once = attempt.ahead && attempt.may_skip && !buf.is_empty() && !attempt.backlog;
        if once {
            self.skip
                .store(skip_word(attempt.event_seq), Ordering::Release);
        }
        Ok(Got {
            len,
            addr: decode(&from),
            drained: once,
        })
    }

    /// The held datagram copied into `buf` without releasing it, with its
    /// source decoded, if one is held (for `peek*`).
    pub(crate) fn peek_held<A>(
        &self,
        buf: &mut [u8],
        decode: impl FnOnce(&RawAddr) -> A,
    ) -> Option<(usize, A)> {
        let state = self.state.lock();
        let (held, addr) = state.held()?;
        let len = held.len().min(buf.len());
        buf[..len].copy_from_slice(&held[..len]);
        Some((len, decode(addr)))
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
        if self.skips(attempt) {
            return Err(would_block());
        }
        let mut guard = self.lock();
        let state = &mut *guard;
        batch.reset();
        if let Some((held, addr)) = state.held() {
            batch.set_first(held, *addr);
            state.held = false;
            if batch.capacity() == 1 {
                return Ok((1, false));
            }
        } else if state.known_drained(attempt) {
            return Err(would_block());
        }
        let received = if batch.wants_timestamps() && !state.timestamps_on {
            mmsg::enable_timestamps(fd).and_then(|()| {
                state.timestamps_on = true;
                batch.recv_more(fd)
            })
        } else {
            batch.recv_more(fd)
        };
        match received {
            Ok((n, asked)) => {
                let drained = n < asked;
                if drained {
                    state.set_drained(attempt.event_seq);
                }
                Ok((batch.len(), drained))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && !batch.is_empty() => {
                state.set_drained(attempt.event_seq);
                Ok((batch.len(), true))
            }
            Err(e) => {
                // The call failed (a pending socket error such as
                // `ECONNREFUSED`): the held datagram in slot 0, if any,
                // stays held for the next receive rather than be lost.
                if !batch.is_empty() {
                    state.held = true;
                    batch.reset();
                }
                Err(e)
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    /// A receiver with `queued` datagrams waiting, and its peer.
    fn pair(queued: usize) -> (UdpSocket, UdpSocket) {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver.set_nonblocking(true).unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        for i in 0..queued {
            sender
                .send_to(&[i as u8], receiver.local_addr().unwrap())
                .unwrap();
        }
        (receiver, sender)
    }

    /// The state every receive reads stays small: the two-datagram form's
    /// held space is out of line (see the module docs' "Memory").
    #[test]
    fn the_inline_state_is_small() {
        assert!(std::mem::size_of::<RecvAhead>() <= 48);
    }

    fn attempt(event_seq: usize) -> RecvAttempt {
        RecvAttempt {
            event_seq,
            may_skip: true,
            ahead: true,
            backlog: false,
            hold: true,
        }
    }

    /// An attempt on a level-triggered socket (`backlog`: a look
    /// reported it again).
    fn level_attempt(event_seq: usize, backlog: bool) -> RecvAttempt {
        RecvAttempt {
            backlog,
            ..attempt(event_seq)
        }
    }

    #[test]
    fn a_socket_that_left_the_level_form_takes_one_datagram_and_holds_none() {
        let (receiver, _sender) = pair(2);
        let ahead = RecvAhead::new(true);
        let refused = ahead.leave_level(|| Err(io::Error::other("refused")));
        assert!(refused.is_err());
        assert!(ahead.is_level(), "a refused switch changes nothing");
        ahead.leave_level(|| Ok(())).unwrap();
        assert!(!ahead.is_level());
        let fd = receiver.as_raw_fd();
        let mut buf = [0; 16];
        let got = ahead.recv(fd, attempt(5), &mut buf, |_| ()).unwrap();
        assert_eq!((got.len, buf[0]), (1, 0));
        assert!(!got.drained, "edge-triggered: one datagram proves nothing");
        assert!(!ahead.has_held(), "made level-triggered: never holds");
        assert!(!skipped(&ahead, attempt(5)), "the next receive tries");
        ahead.leave_level(|| panic!("left already")).unwrap();
    }

    /// The level-triggered receive's drained mark is the skip word
    /// itself: a flush (`discard`) forgets it like any other.
    #[test]
    fn a_level_triggered_mark_is_forgotten_by_a_flush() {
        let (receiver, _sender) = pair(1);
        let ahead = RecvAhead::new(true);
        let got = ahead.recv(
            receiver.as_raw_fd(),
            level_attempt(5, false),
            &mut [0; 16],
            |_| (),
        );
        assert!(got.unwrap().drained);
        assert!(skipped(&ahead, level_attempt(5, false)));
        assert!(!ahead.discard(), "nothing was held");
        assert!(!skipped(&ahead, level_attempt(5, false)));
    }

    #[test]
    fn level_triggered_takes_one_datagram_per_report_and_holds_none() {
        let (receiver, _sender) = pair(3);
        let ahead = RecvAhead::new(true);
        let fd = receiver.as_raw_fd();
        let mut buf = [0; 16];
        let got = ahead.recv(fd, level_attempt(5, false), &mut buf, |_| ());
        let got = got.unwrap();
        assert_eq!((got.len, buf[0], got.drained), (1, 0, true));
        assert!(!ahead.has_held(), "the rest stays in the kernel");
        assert!(
            skipped(&ahead, level_attempt(5, false)),
            "one receive per report: the next waits for the next report"
        );
        // The look reports it again, with a backlog: drained to the end.
        for expected in 1..3u8 {
            let got = ahead.recv(fd, level_attempt(6, true), &mut buf, |_| ());
            let got = got.unwrap();
            assert_eq!((got.len, buf[0], got.drained), (1, expected, false));
        }
        let empty = ahead.recv(fd, level_attempt(6, true), &mut buf, |_| ());
        assert_eq!(empty.unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }

    /// A receive on `fd` -1: `WouldBlock` if it skipped the syscall,
    /// `EBADF` if it made one.
    fn skipped(ahead: &RecvAhead, attempt: RecvAttempt) -> bool {
        match ahead.recv(-1, attempt, &mut [0; 16], |_| ()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
            Err(e) if e.raw_os_error() == Some(libc::EBADF) => false,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_skip_follows_the_drained_knowledge_without_the_lock() {
        let (receiver, _sender) = pair(1);
        let ahead = RecvAhead::default();
        assert!(!skipped(&ahead, attempt(5)), "nothing known yet");
        let got = ahead
            .recv(receiver.as_raw_fd(), attempt(5), &mut [0; 16], |_| ())
            .unwrap();
        assert!(got.drained);
        assert!(skipped(&ahead, attempt(5)), "drained at 5, no event since");
        assert!(!skipped(&ahead, attempt(6)), "a new event: the syscall");
        let try_form = RecvAttempt {
            may_skip: false,
            ..attempt(5)
        };
        assert!(!skipped(&ahead, try_form), "try_* always tries");
        ahead.discard();
        assert!(!skipped(&ahead, attempt(5)), "a flush forgets the drain");
    }

    #[test]
    fn a_held_datagram_is_never_skipped() {
        let (receiver, sender) = pair(1);
        let ahead = RecvAhead::default();
        let fd = receiver.as_raw_fd();
        assert!(
            ahead
                .recv(fd, attempt(5), &mut [0; 16], |_| ())
                .unwrap()
                .drained
        );
        assert!(skipped(&ahead, attempt(5)));
        // A new event (6) finds two datagrams: the second is held.
        for i in 1..3u8 {
            sender
                .send_to(&[i], receiver.local_addr().unwrap())
                .unwrap();
        }
        let got = ahead.recv(fd, attempt(6), &mut [0; 16], |_| ()).unwrap();
        assert!(!got.drained && ahead.has_held());
        // A receiver whose snapshot is still 5 gets the held datagram.
        let mut buf = [0; 16];
        let held = ahead.recv(-1, attempt(5), &mut buf, |_| ()).unwrap();
        assert_eq!((held.len, buf[0]), (1, 2));
        assert!(skipped(&ahead, attempt(5)), "the drain at 5 still stands");
    }
}
