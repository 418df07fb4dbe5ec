//! [`RecvRing`]: a driver's io_uring, the receives armed on it, and what
//! each receive has brought and its receiver not yet taken.
//!
//! A slot (`slot.rs`) is removed at its receive's final completion when
//! its receiver is gone (at once when none is in flight), never earlier:
//! no completion names a removed slot, and a key is reused only once
//! nothing of the old slot is in flight.
//!
//! # Buffer groups
//!
//! A size class's buffers come in groups (a provided-buffer ring each,
//! registered once) of at most 4,096 buffers and 8 MiB. A new receiver
//! joins its class's least served group, and a class registers one more
//! group when each serves half as many receivers as it has buffers (room
//! for two datagrams a receiver), up to 8 groups: memory grows with the
//! receivers and stays dense.
//!
//! # When a group runs out of buffers
//!
//! Receivers that do not read can hold all of a group's buffers; a
//! receive then ends (`ENOBUFS`, the slot starves) or stays armed without
//! a completion until its socket reports new data. So a task whose slot
//! is empty while its group is exhausted receives directly (one
//! `recvmsg`, in order), waits with its socket looked at every turn if
//! that finds nothing, and when buffers come back every armed receive of
//! the group is restarted and every starved one queued.
//!
//! # A turn hands out a chunk
//!
//! The kernel runs the receives that arrivals queued, oldest first, only
//! when the ring's thread enters it. One turn runs [`TURN_CHUNK`] of them,
//! not all: a tick's receives can take the kernel milliseconds
//! (`docs/gstreamer.md`), and run all at once they would delay the tasks
//! of the oldest arrivals, which have waited longest, by all of it. A turn that reaps a full chunk *continues*: a turn is due,
//! and a throttled tick turns again once the chunk's tasks ran
//! ([`IoDriver::dispatch_continues`](tempo_park::IoDriver::dispatch_continues)).
//!
//! # When a turn is due
//!
//! The driver turns the ring after each poll, and polls without blocking
//! while a turn is *due*: a queued slot has a task waiting, a
//! cancellation or completions wait, the last turn continues, or buffers
//! came back to an exhausted group. Arrivals while the driver blocks wake
//! it through the ring's eventfd, in that driver's poller for the ring's
//! life. Nothing else makes a turn due: an idle driver with armed
//! receivers blocks, and a starved receive is retried when a buffer comes
//! back, not in a loop.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use mio::unix::SourceFd;
use slab::Slab;

use crate::handle::Handle;
use crate::net::RecvBatch;
use crate::readiness::wake_batch;
use crate::readiness::Registration;
use crate::sys::uring::{self, BufGroup, Completion, RecvLayout, Ring};

use super::slot::{Arrival, Slot, SlotState, MAX_HELD};

/// Submission entries: arms for that many receivers per `enter`.
const SQ_ENTRIES: u32 = 1024;
/// Completion entries: more than a 20 ms tick's datagrams at 8,000 streams.
const CQ_ENTRIES: u32 = 16_384;
/// The completions one turn asks the kernel for (see the module docs):
/// about 0.5 ms of its receives, for one more driver poll (an
/// `epoll_wait` and an `io_uring_enter`) per 256 datagrams.
const TURN_CHUNK: u32 = 256;
/// The smallest buffer: a 212-byte datagram with its header and address.
const MIN_BUF_LEN: usize = 256;
/// The longest UDP payload (over IPv4), so the largest buffer is 128 KiB.
const MAX_UDP_PAYLOAD: usize = 65_507;
/// The most memory, and the most buffers, of one buffer group.
const GROUP_BYTES: usize = 8 << 20;
const MAX_GROUP_BUFFERS: usize = 4096;
/// The most buffer groups of one size class (see the module docs).
const MAX_CLASS_GROUPS: usize = 8;
/// `user_data` of cancellations (slot keys are far smaller).
const CANCEL_TAG: u64 = u64::MAX;
/// How often a starving task's socket is looked at (see `wait_starving`).
const STARVING_LOOK: Duration = Duration::from_millis(1);

/// What [`RecvRing::close`] did with a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closing {
    /// Removed, its socket closed.
    Closed,
    /// Its receive is being cancelled; the slot goes at the final
    /// completion (see [`RecvRing::poll_removed`]).
    Cancelling,
}

/// What [`RecvRing::poll_arrival`] found.
pub(crate) enum Taken {
    /// An arrival, in a buffer of this group.
    Arrival(Arrival, Rc<BufGroup>),
    /// Nothing held, and the group has no buffer: receive directly.
    Direct,
    /// Nothing held, and the ring's driver is gone.
    DriverGone,
}

/// Wakes `waker`; a panic is kept in `panic` (the first one) and the
/// caller goes on, so that one panicking waker strands no other task.
fn wake_catching(waker: &Waker, panic: &mut Option<wake_batch::Panic>) {
    let woken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| waker.wake_by_ref()));
    if let Err(payload) = woken {
        panic.get_or_insert(payload);
    }
}

/// A driver's io_uring (see the module docs).
pub(crate) struct RecvRing {
    // Field order is drop order: the ring is closed (after `Drop` drained
    // every receive) before the buffer groups are unmapped.
    ring: Ring,
    /// Every buffer group, at its `bgid`.
    groups: Vec<Group>,
    slots: Slab<Slot>,
    /// Slots to arm at the next turn (keys of `Queued` slots; a stale key
    /// is skipped).
    to_arm: Vec<usize>,
    /// Slots whose receive is to be cancelled at the next turn.
    to_cancel: Vec<usize>,
    /// A turn is due (see the module docs).
    due: bool,
    /// The first panic of a waker woken by the current turn, re-raised
    /// once the ring is free again.
    panic: Option<wake_batch::Panic>,
    /// Completions handed to slots by the current (or last) turn.
    handed: u64,
    /// Completions one turn asks for: [`TURN_CHUNK`] (less in tests).
    chunk: u32,
    /// The last turn reaped a full chunk: the kernel may hold more.
    continues: bool,
    /// Slots whose `starving` is set.
    starving: usize,
    /// The driver was dropped: nothing turns the ring any more.
    driver_gone: bool,
    /// Closed slots whose receiver waits for their socket to close: the
    /// flag is set and the waker woken when the slot goes.
    closing: Vec<(usize, Rc<Cell<bool>>, Option<Waker>)>,
    /// The eventfd the kernel signals, and its registration with the
    /// driver it wakes.
    eventfd: OwnedFd,
    registration: Registration,
}

/// A buffer group, the size class it serves and how many receivers draw
/// on it.
struct Group {
    buffers: Rc<BufGroup>,
    class: usize,
    receivers: usize,
}

impl std::fmt::Debug for RecvRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvRing")
            .field("slots", &self.slots.len())
            .field("due", &self.due)
            .finish_non_exhaustive()
    }
}

/// The size class of a receiver of datagrams of up to `max_datagram`
/// bytes laid out as `layout`: buffers of `MIN_BUF_LEN << class` bytes.
pub(crate) fn size_class(max_datagram: usize, layout: RecvLayout) -> io::Result<usize> {
    if max_datagram > MAX_UDP_PAYLOAD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("max_datagram of {max_datagram} bytes: a UDP datagram carries at most 65,507"),
        ));
    }
    let needed = (max_datagram + layout.header_len())
        .max(MIN_BUF_LEN)
        .next_power_of_two();
    Ok((needed / MIN_BUF_LEN).trailing_zeros() as usize)
}

impl RecvRing {
    /// A ring whose eventfd wakes `handle`'s driver, bound to the
    /// calling thread.
    pub(crate) fn new(handle: &Handle) -> io::Result<RecvRing> {
        let ring = Ring::new(SQ_ENTRIES, CQ_ENTRIES)?;
        let eventfd = uring::eventfd()?;
        ring.register_eventfd(eventfd.as_raw_fd())?;
        let registration = Registration::new(
            &mut SourceFd(&eventfd.as_raw_fd()),
            handle.reactor().clone(),
        )?;
        Ok(RecvRing {
            ring,
            groups: Vec::new(),
            slots: Slab::new(),
            to_arm: Vec::new(),
            to_cancel: Vec::new(),
            due: false,
            panic: None,
            handed: 0,
            chunk: TURN_CHUNK,
            continues: false,
            starving: 0,
            driver_gone: false,
            closing: Vec::new(),
            eventfd,
            registration,
        })
    }

    /// Adds a slot for `socket` with buffers of size class `class` laid
    /// out as `layout`, queued to be armed; returns its key.
    pub(crate) fn add(
        &mut self,
        socket: std::net::UdpSocket,
        class: usize,
        layout: RecvLayout,
    ) -> io::Result<usize> {
        let group = self.group_for(class)?;
        self.groups[group].receivers += 1;
        let key = self.slots.insert(Slot::new(socket, group as u16, layout));
        self.to_arm.push(key);
        Ok(key)
    }

    /// The group a new receiver of `class` draws on: the class's group
    /// with the fewest receivers, or a new one when each serves its share
    /// (see the module docs).
    fn group_for(&mut self, class: usize) -> io::Result<usize> {
        let buf_len = MIN_BUF_LEN << class;
        let count = (GROUP_BYTES / buf_len).clamp(1, MAX_GROUP_BUFFERS);
        let share = (count / 2).max(1);
        let mut of_class = 0;
        let mut least: Option<(usize, usize)> = None;
        for (bgid, group) in self.groups.iter().enumerate() {
            if group.class == class {
                of_class += 1;
                if least.is_none_or(|(_, receivers)| group.receivers < receivers) {
                    least = Some((bgid, group.receivers));
                }
            }
        }
        match least {
            Some((bgid, receivers)) if receivers < share || of_class == MAX_CLASS_GROUPS => {
                return Ok(bgid)
            }
            _ => {}
        }
        let bgid = self.groups.len();
        let registered = BufGroup::new(&self.ring, bgid as u16, count as u16, buf_len);
        let buffers = match (registered, least) {
            (Ok(buffers), _) => buffers,
            // A class that cannot grow (no memory) shares what it has.
            (Err(_), Some((least_served, _))) => return Ok(least_served),
            (Err(e), None) => return Err(e),
        };
        self.groups.push(Group {
            buffers: Rc::new(buffers),
            class,
            receivers: 0,
        });
        Ok(bgid)
    }

    /// Takes the next arrival of slot `key` with the buffer group it is
    /// in; or, with none and the group exhausted, tells the caller to
    /// receive directly ([`Taken::Direct`], see [`recv_direct`](Self::recv_direct));
    /// or keeps the task's waker and returns `Pending`.
    pub(crate) fn poll_arrival(&mut self, key: usize, cx: &mut Context<'_>) -> Poll<Taken> {
        let slot = &mut self.slots[key];
        if let Some(arrival) = slot.pop() {
            if slot.first.is_none() && slot.state == SlotState::Paused {
                slot.state = SlotState::Queued;
                self.to_arm.push(key);
                self.due = true;
            }
            let group = self.groups[usize::from(slot.group)].buffers.clone();
            return Poll::Ready(Taken::Arrival(arrival, group));
        }
        if self.driver_gone {
            return Poll::Ready(Taken::DriverGone);
        }
        if self.groups[usize::from(slot.group)].buffers.is_exhausted() {
            return Poll::Ready(Taken::Direct);
        }
        match slot.state {
            SlotState::Armed | SlotState::Starved => {}
            SlotState::Paused => {
                slot.state = SlotState::Queued;
                self.to_arm.push(key);
                self.due = true;
            }
            // A task waits on a receive not in the kernel: the next
            // poll must not block before the turn that arms it.
            SlotState::Queued | SlotState::Cancelling => self.due = true,
        }
        match &slot.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Receives one datagram of slot `key` with a plain `recvmsg` into
    /// `batch`, beside its armed receive, for a task whose slot is empty
    /// while its group's buffers are all out. The ring receives only in
    /// turns, each handing over all it got before tasks run, so the
    /// socket's order is kept.
    pub(crate) fn recv_direct(&self, key: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        batch
            .recv_on(self.slots[key].socket.as_raw_fd())
            .map(|(n, _)| n)
    }

    /// A direct receive found the socket empty: the task waits, and each
    /// turn looks at the socket while the group stays exhausted (the
    /// kernel does not retry the starved receive: see `restart_starved`).
    pub(crate) fn wait_starving(&mut self, key: usize, cx: &mut Context<'_>) {
        let slot = &mut self.slots[key];
        if !std::mem::replace(&mut slot.starving, true) {
            self.starving += 1;
        }
        match &slot.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
    }

    /// Wakes the starving slots' tasks whose sockets hold a datagram, or
    /// whose group has buffers again (their receives restart).
    fn look_at_starving(&mut self) {
        if self.starving == 0 {
            return;
        }
        let groups = &self.groups;
        let mut starving = 0;
        for (_, slot) in self.slots.iter_mut().filter(|(_, slot)| slot.starving) {
            let exhausted = groups[usize::from(slot.group)].buffers.is_exhausted();
            let mut peek = [0u8; 0];
            let ready = !exhausted || slot.socket.peek_from(&mut peek).is_ok();
            if ready {
                slot.starving = false;
                if let Some(waker) = &slot.waker {
                    wake_catching(waker, &mut self.panic);
                }
            } else {
                starving += 1;
            }
        }
        self.starving = starving;
    }

    /// The receiver of slot `key` is gone: gives its buffers back and
    /// removes the slot, at once or at its receive's final completion.
    pub(crate) fn close(&mut self, key: usize) -> Closing {
        let slot = &mut self.slots[key];
        slot.closed = true;
        slot.waker = None;
        let group = &mut self.groups[usize::from(slot.group)];
        group.receivers -= 1;
        let group = &group.buffers;
        while let Some(arrival) = slot.pop() {
            if let Arrival::Datagram { bid, .. } = arrival {
                group.discard(bid);
            }
        }
        match slot.state {
            SlotState::Armed => {
                slot.state = SlotState::Cancelling;
                self.to_cancel.push(key);
                self.due = true;
            }
            SlotState::Cancelling => {}
            SlotState::Queued | SlotState::Paused | SlotState::Starved => {
                self.slots.remove(key);
                return Closing::Closed;
            }
        }
        Closing::Cancelling
    }

    /// Closes slot `key` as [`close`](Self::close) does; while its
    /// receive is being cancelled, `done` is set when the slot goes (see
    /// [`poll_removed`](Self::poll_removed)).
    pub(crate) fn close_watched(&mut self, key: usize, done: &Rc<Cell<bool>>) {
        match self.close(key) {
            Closing::Closed => done.set(true),
            Closing::Cancelling => self.closing.push((key, done.clone(), None)),
        }
    }

    /// Polls until the slot watched by `done` (see
    /// [`close_watched`](Self::close_watched)) is gone with its socket.
    /// Ready at once if the driver is gone: the socket then closes with
    /// the ring.
    pub(crate) fn poll_removed(&mut self, done: &Rc<Cell<bool>>, cx: &Context<'_>) -> Poll<()> {
        if done.get() || self.driver_gone {
            return Poll::Ready(());
        }
        match self
            .closing
            .iter_mut()
            .find(|(_, d, _)| Rc::ptr_eq(d, done))
        {
            Some((_, _, waker)) => match waker {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                _ => *waker = Some(cx.waker().clone()),
            },
            None => return Poll::Ready(()),
        }
        // The close made a turn due; the final completion then wakes the
        // driver through the eventfd.
        Poll::Pending
    }

    /// The ring's driver is gone: every waiting task is woken, and a
    /// receive that finds nothing held fails from now on (the receives
    /// in flight are drained when the last receiver drops the ring).
    pub(super) fn driver_gone(&mut self) {
        self.driver_gone = true;
        for (_, slot) in self.slots.iter_mut() {
            if let Some(waker) = slot.waker.take() {
                wake_catching(&waker, &mut self.panic);
            }
        }
    }

    /// Takes the first panic of a waker the last turn (or
    /// [`driver_gone`](Self::driver_gone)) woke.
    pub(super) fn take_panic(&mut self) -> Option<wake_batch::Panic> {
        self.panic.take()
    }

    /// Completions the last turn handed to slots.
    pub(super) fn handed(&self) -> u64 {
        self.handed
    }

    /// Whether the last turn reaped a full chunk, so the kernel may hold
    /// more receives or completions (see the module docs).
    pub(super) fn continues(&self) -> bool {
        self.continues
    }

    /// Makes a turn ask for `chunk` completions (at least 1).
    #[cfg(test)]
    pub(super) fn set_chunk(&mut self, chunk: u32) {
        self.chunk = chunk.max(1);
    }

    /// How long the driver may block before the ring's next turn: not at
    /// all while a turn is due, a millisecond while a task starves (its
    /// socket is looked at every turn), else as long as it likes (`None`).
    pub(super) fn wait_limit(&self) -> Option<Duration> {
        if self.due
            || self.ring.has_completions()
            || self.groups.iter().any(|group| group.buffers.is_refilled())
        {
            Some(Duration::ZERO)
        } else if self.starving > 0 {
            Some(STARVING_LOOK)
        } else {
            None
        }
    }

    /// Submits the queued arms and cancellations, enters the kernel (which
    /// runs a chunk of the receives that arrivals queued), hands every
    /// completion to its slot, and wakes the slot's task (with the ring
    /// borrowed: a waker that polls a ring receiver in place panics; a
    /// waker's panic is caught and kept in `panic`, the turn goes on).
    /// Without slots or completions there is nothing to enter for.
    pub(super) fn turn(&mut self) -> io::Result<()> {
        self.handed = 0;
        self.continues = false;
        if self.slots.is_empty() && !self.ring.has_completions() {
            return Ok(());
        }
        self.due = false;
        self.restart_starved();
        while let Some(key) = self.to_cancel.pop() {
            self.make_room()?;
            self.ring.push_cancel(key as u64, CANCEL_TAG);
        }
        let mut to_arm = std::mem::take(&mut self.to_arm);
        for key in to_arm.drain(..) {
            if !matches!(self.slots.get(key), Some(slot) if slot.state == SlotState::Queued) {
                continue;
            }
            self.make_room()?;
            let slot = &mut self.slots[key];
            let group = &self.groups[usize::from(slot.group)].buffers;
            self.ring
                .push_recv(slot.socket.as_raw_fd(), group, slot.layout, key as u64);
            slot.state = SlotState::Armed;
        }
        // Keys queued meanwhile (by the reaps that made room) stay queued;
        // the vector keeps its capacity.
        to_arm.append(&mut self.to_arm);
        self.to_arm = to_arm;
        self.ring.enter(self.chunk)?;
        // A full chunk (or a full completion queue, which is larger) may
        // have left receives queued in the kernel: the next turn is due.
        self.continues = self.reap() >= self.chunk as usize;
        self.due |= self.continues;
        self.look_at_starving();
        Ok(())
    }

    /// Cancels, to arm them again at once, the armed receives of every
    /// group that buffers came back to after it ran out: a multishot
    /// receive that found no buffer is not retried by the kernel until
    /// its socket reports new data (seen on 6.18), so the datagrams left
    /// in the socket would wait. Which receives starved is not known, so
    /// every armed one of the group restarts (a rare path).
    fn restart_starved(&mut self) {
        for (bgid, group) in self.groups.iter().enumerate() {
            if !group.buffers.take_refilled() {
                continue;
            }
            for (key, slot) in self.slots.iter_mut() {
                if usize::from(slot.group) != bgid {
                    continue;
                }
                match slot.state {
                    SlotState::Armed => {
                        slot.state = SlotState::Cancelling;
                        slot.kicked = true;
                        self.to_cancel.push(key);
                    }
                    SlotState::Starved => {
                        slot.state = SlotState::Queued;
                        self.to_arm.push(key);
                    }
                    SlotState::Queued | SlotState::Paused | SlotState::Cancelling => {}
                }
            }
        }
    }

    /// Enters the kernel (and reaps) if the submission queue is full.
    fn make_room(&mut self) -> io::Result<()> {
        if !self.ring.has_room() {
            self.ring.enter(self.chunk)?;
            self.reap();
        }
        Ok(())
    }

    /// Hands the completions posted so far to their slots; returns how
    /// many it reaped.
    fn reap(&mut self) -> usize {
        let mut reaped = 0;
        let RecvRing {
            ring,
            groups,
            slots,
            to_arm,
            to_cancel,
            due,
            panic,
            handed,
            closing,
            ..
        } = self;
        ring.reap(|completion| {
            reaped += 1;
            let Completion {
                user_data,
                res,
                more,
                buffer,
            } = completion;
            if user_data == CANCEL_TAG {
                return;
            }
            let key = user_data as usize;
            let Some(slot) = slots.get_mut(key) else {
                debug_assert!(false, "a completion for no slot");
                return;
            };
            let group = &groups[usize::from(slot.group)].buffers;
            let arrival = match buffer {
                Some(bid) if res > 0 && !slot.closed => {
                    group.lent();
                    Some(Arrival::Datagram {
                        bid,
                        used: res as u32,
                    })
                }
                Some(bid) => {
                    group.lent();
                    group.discard(bid);
                    None
                }
                None if res < 0
                    && !slot.closed
                    && res != -libc::ENOBUFS
                    && res != -libc::ECANCELED =>
                {
                    Some(Arrival::Error(-res))
                }
                None => None,
            };
            if let Some(arrival) = arrival {
                slot.push(arrival);
                *handed += 1;
                // The waker stays: the task's next wait needs no clone.
                if let Some(waker) = &slot.waker {
                    wake_catching(waker, panic);
                }
                if more && slot.state == SlotState::Armed && slot.held() >= MAX_HELD {
                    slot.state = SlotState::Cancelling;
                    to_cancel.push(key);
                    *due = true;
                }
            }
            if more {
                return;
            }
            // The receive's final completion.
            let kicked = std::mem::take(&mut slot.kicked);
            if slot.closed {
                slots.remove(key);
                if let Some(at) = closing.iter().position(|(k, _, _)| *k == key) {
                    let (_, done, waker) = closing.swap_remove(at);
                    done.set(true);
                    if let Some(waker) = waker {
                        wake_catching(&waker, panic);
                    }
                }
            } else if slot.held() >= MAX_HELD {
                slot.state = SlotState::Paused;
            } else if res == -libc::ENOBUFS {
                // Armed again when buffers come back (`restart_starved`):
                // armed before, it would fail again at once, and its
                // completion would wake the driver for nothing.
                group.starved();
                slot.state = SlotState::Starved;
            } else {
                // Armed again by the next turn, at once if a task waits.
                slot.state = SlotState::Queued;
                to_arm.push(key);
                if kicked || slot.waker.is_some() || slot.first.is_some() {
                    *due = true;
                }
            }
        });
        reaped
    }
}

impl Drop for RecvRing {
    /// Cancels every receive still in flight and reaps its final
    /// completion before the ring is closed and the buffers unmapped, so
    /// that no receive writes into freed memory. Bounded: a receive that
    /// never ends (never seen) leaves its group's buffers mapped (leaked)
    /// rather than freed under the kernel.
    fn drop(&mut self) {
        let _ = self
            .registration
            .deregister(&mut SourceFd(&self.eventfd.as_raw_fd()));
        let in_flight: Vec<usize> = self
            .slots
            .iter_mut()
            .filter(|(_, slot)| matches!(slot.state, SlotState::Armed | SlotState::Cancelling))
            .map(|(key, slot)| {
                slot.closed = true;
                if slot.state == SlotState::Armed {
                    slot.state = SlotState::Cancelling;
                }
                key
            })
            .collect();
        self.to_cancel = in_flight;
        for _ in 0..1000 {
            if self.slots.is_empty() || self.turn().is_err() {
                break;
            }
            std::thread::yield_now();
        }
        if !self.slots.is_empty() {
            for group in self.groups.drain(..) {
                std::mem::forget(group.buffers);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Driver;

    fn socket() -> std::net::UdpSocket {
        std::net::UdpSocket::bind("127.0.0.1:0").unwrap()
    }

    /// The receivers of each of `class`'s groups, in `bgid` order.
    fn receivers_of(ring: &RecvRing, class: usize) -> Vec<usize> {
        let groups = ring.groups.iter().filter(|group| group.class == class);
        groups.map(|group| group.receivers).collect()
    }

    /// A class registers a group per share of receivers (32 in the
    /// largest class: 64 buffers of 128 KiB), a new receiver joins the
    /// least served group, a closed one leaves room, and a class stops at
    /// `MAX_CLASS_GROUPS`, its later receivers sharing them.
    #[test]
    fn a_class_adds_a_group_per_share_of_receivers_up_to_its_cap() {
        let driver = Driver::new().unwrap();
        let Ok(mut ring) = RecvRing::new(&driver.handle()) else {
            eprintln!("io_uring is not available here: nothing to check");
            return;
        };
        let plain = RecvLayout::Plain;
        let large = size_class(65_507, plain).unwrap();
        let mut keys: Vec<usize> = (0..33)
            .map(|_| ring.add(socket(), large, plain).unwrap())
            .collect();
        assert_eq!(receivers_of(&ring, large), [32, 1]);
        let class_160 = size_class(160, plain).unwrap();
        let small = ring.add(socket(), class_160, plain).unwrap();
        assert_eq!(receivers_of(&ring, class_160), [1]);
        assert_eq!(receivers_of(&ring, large), [32, 1], "classes apart");
        ring.close(keys.remove(0));
        keys.push(ring.add(socket(), large, plain).unwrap());
        assert_eq!(receivers_of(&ring, large), [31, 2], "the least served");
        while keys.len() < MAX_CLASS_GROUPS * 32 + 1 {
            let layout = if keys.len() % 2 == 0 {
                plain
            } else {
                RecvLayout::Timestamped
            };
            keys.push(ring.add(socket(), large, layout).unwrap());
        }
        let mut served = receivers_of(&ring, large);
        served.sort_unstable();
        assert_eq!(served.len(), MAX_CLASS_GROUPS);
        assert_eq!(served.iter().sum::<usize>(), keys.len());
        assert_eq!((served[0], served[MAX_CLASS_GROUPS - 1]), (32, 33));
        for key in keys.into_iter().chain([small]) {
            ring.close(key);
        }
        assert!(ring.slots.is_empty());
        assert_eq!(receivers_of(&ring, large), [0; MAX_CLASS_GROUPS]);
    }

    /// A turn hands out one chunk of the kernel's queued receives, the
    /// oldest arrivals first, and continues (a turn is due) until a turn
    /// reaps less than a chunk: every datagram arrives once.
    #[test]
    fn a_turn_hands_out_the_oldest_chunk_and_continues_with_the_rest() {
        const RECEIVERS: usize = 100;
        const CHUNK: u32 = 32;
        let driver = Driver::new().unwrap();
        let Ok(mut ring) = RecvRing::new(&driver.handle()) else {
            eprintln!("io_uring is not available here: nothing to check");
            return;
        };
        ring.set_chunk(CHUNK);
        let plain = RecvLayout::Plain;
        let class = size_class(160, plain).unwrap();
        let sockets: Vec<_> = (0..RECEIVERS).map(|_| socket()).collect();
        let addrs: Vec<_> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
        let keys: Vec<usize> = sockets
            .into_iter()
            .map(|socket| ring.add(socket, class, plain).unwrap())
            .collect();
        ring.turn().unwrap();
        assert!(!ring.continues(), "nothing arrived yet");
        let sender = socket();
        for addr in &addrs {
            sender.send_to(&[1; 160], addr).unwrap();
        }
        let mut handed = Vec::new();
        let mut oldest_first = true;
        loop {
            ring.turn().unwrap();
            handed.push(ring.handed());
            if handed.len() == 1 {
                let first = handed[0] as usize;
                let holding = |key: &usize| ring.slots[*key].held() == 1;
                oldest_first =
                    keys[..first].iter().all(holding) && !keys[first..].iter().any(holding);
            }
            if !ring.continues() {
                break;
            }
            assert_eq!(ring.wait_limit(), Some(Duration::ZERO), "a turn is due");
            assert!(handed.len() < RECEIVERS, "turns go on: {handed:?}");
        }
        let first = handed[0] as usize;
        assert!(
            (CHUNK as usize..RECEIVERS).contains(&first),
            "one chunk first: {handed:?}"
        );
        assert!(oldest_first, "the oldest arrivals first: {handed:?}");
        let held: Vec<usize> = keys.iter().map(|&key| ring.slots[key].held()).collect();
        assert_eq!(held, [1; RECEIVERS], "each datagram once: {handed:?}");
        assert_eq!(handed.iter().sum::<u64>(), RECEIVERS as u64);
        for key in keys {
            ring.close(key);
        }
    }
}
