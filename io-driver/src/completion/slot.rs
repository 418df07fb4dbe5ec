//! A receiver's slot in its driver's ring ([`Slot`]), what a receive
//! brings it ([`Arrival`]) and its states ([`SlotState`]). The slot owns
//! the receiver's socket, so the fd stays open as long as a receive may
//! use it. States:
//!
//! * `Queued`: its multishot receive is submitted by the next turn;
//! * `Armed`: the receive is in the kernel;
//! * `Paused`: no receive, as the slot holds [`MAX_HELD`] arrivals not
//!   taken; the poll that empties it queues it again, so an unread
//!   receiver holds a bounded number of buffers and the rest waits in its
//!   socket, as on epoll;
//! * `Cancelling`: a cancellation is submitted (paused while armed,
//!   receiver dropped, or group refilled), the final completion is due;
//! * `Starved`: the receive ended for want of buffers; queued again when
//!   buffers come back to its group.

use std::collections::VecDeque;
use std::task::Waker;

use crate::sys::uring::{Bid, RecvLayout};

/// Arrivals a slot holds before its receive is paused.
pub(crate) const MAX_HELD: usize = 32;

/// What a receive brought a slot.
#[derive(Debug)]
pub(crate) enum Arrival {
    /// A datagram in buffer `bid` of the slot's group, `used` bytes of it.
    Datagram { bid: Bid, used: u32 },
    /// The receive failed (its error), and is queued again.
    Error(i32),
}

/// Where a slot's receive is (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotState {
    Queued,
    Armed,
    Paused,
    Cancelling,
    Starved,
}

/// A receiver's slot (see the module docs), compact: a throttled tick
/// touches one line of it per datagram.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) waker: Option<Waker>,
    /// The oldest arrival not taken (the usual one), inline ...
    pub(crate) first: Option<Arrival>,
    /// ... and the later ones, in order, out of line: made with the slot
    /// with room for [`MAX_HELD`] in all, so that no datagram allocates
    /// (only the arrivals of one turn past the hold, before its receive is
    /// cancelled, can grow it, once), boxed so that a slot (40 bytes)
    /// rarely straddles two cache lines.
    #[allow(clippy::box_collection)]
    pub(crate) more: Box<VecDeque<Arrival>>,
    pub(crate) socket: std::net::UdpSocket,
    /// The `bgid` of the buffer group it draws on.
    pub(crate) group: u16,
    /// How its receive lays a datagram out in a buffer.
    pub(crate) layout: RecvLayout,
    pub(crate) state: SlotState,
    /// The receiver is gone: the slot goes at its final completion.
    pub(crate) closed: bool,
    /// Its receive is cancelled to be armed again at once (its group ran
    /// out of buffers; see `restart_starved`).
    pub(crate) kicked: bool,
    /// Its task waits, its slot empty, while its group is exhausted (see
    /// `wait_starving`).
    pub(crate) starving: bool,
}

impl Slot {
    /// The slot of a new receiver of `socket` drawing on buffer group
    /// `group` with buffers laid out as `layout`, queued to be armed.
    pub(crate) fn new(socket: std::net::UdpSocket, group: u16, layout: RecvLayout) -> Slot {
        Slot {
            waker: None,
            first: None,
            more: Box::new(VecDeque::with_capacity(MAX_HELD - 1)),
            socket,
            group,
            layout,
            state: SlotState::Queued,
            closed: false,
            kicked: false,
            starving: false,
        }
    }

    /// Adds an arrival after those held.
    pub(crate) fn push(&mut self, arrival: Arrival) {
        if self.first.is_none() {
            self.first = Some(arrival);
        } else {
            self.more.push_back(arrival);
        }
    }

    /// Takes the oldest arrival held.
    pub(crate) fn pop(&mut self) -> Option<Arrival> {
        let next = self.more.pop_front();
        std::mem::replace(&mut self.first, next)
    }

    /// How many arrivals the slot holds.
    pub(crate) fn held(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }
}
