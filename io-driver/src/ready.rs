//! Readiness bits ([`Ready`]), the readiness a caller asks for
//! ([`Interest`]), and the interest a direction of I/O cares about.
//!
//! The driver turns each mio event into a [`Ready`] set and ORs it into the
//! registration's readiness word; operations test it against the mask of
//! their [`Direction`]. `Ready` and `Interest` are public, with the names
//! and meanings of tokio's `tokio::io::{Ready, Interest}`, for the sockets'
//! `ready(Interest)` methods.

use std::fmt;
use std::ops;

/// A set of readiness states of a socket, as returned by the sockets'
/// `ready(Interest)` methods (tokio's `tokio::io::Ready`).
///
/// "Readable" includes a closed read side and "writable" a closed write
/// side, because an operation in that direction then completes (with end of
/// stream or an error) instead of blocking.
///
/// ```
/// use tempo_io::Ready;
///
/// let ready = Ready::READABLE | Ready::READ_CLOSED;
/// assert!(ready.is_readable() && ready.is_read_closed());
/// assert!(!ready.is_writable());
/// assert!((ready - Ready::READABLE).is_readable()); // closed still counts
/// assert!(Ready::EMPTY.is_empty());
/// ```
// A `usize` so that it packs into the readiness word of a registration next
// to its event sequence number.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ready(usize);

impl Ready {
    /// No readiness.
    pub const EMPTY: Ready = Ready(0);
    /// The socket may be readable.
    pub const READABLE: Ready = Ready(1);
    /// The socket may be writable.
    pub const WRITABLE: Ready = Ready(1 << 1);
    /// The read side is closed (the peer shut down or hung up).
    pub const READ_CLOSED: Ready = Ready(1 << 2);
    /// The write side is closed.
    pub const WRITE_CLOSED: Ready = Ready(1 << 3);
    /// The socket has a pending error.
    pub const ERROR: Ready = Ready(1 << 4);
    /// Every state.
    pub const ALL: Ready = Ready((1 << 5) - 1);
    /// The bits that operations clear on `WouldBlock`; closed and error
    /// states are final and stay set.
    pub(crate) const CLEARABLE: Ready = Ready(1 | (1 << 1));

    /// The readiness in the low bits of `bits`.
    pub(crate) const fn from_bits(bits: usize) -> Ready {
        Ready(bits & Self::ALL.0)
    }

    /// The raw bits.
    pub(crate) const fn bits(self) -> usize {
        self.0
    }

    /// Whether no state is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the socket may be read from: readable, or its read side is
    /// closed (a read then returns end of stream or the error).
    pub const fn is_readable(self) -> bool {
        self.0 & (Ready::READABLE.0 | Ready::READ_CLOSED.0) != 0
    }

    /// Whether the socket may be written to: writable, or its write side
    /// is closed (a write then fails at once).
    pub const fn is_writable(self) -> bool {
        self.0 & (Ready::WRITABLE.0 | Ready::WRITE_CLOSED.0) != 0
    }

    /// Whether the read side is closed.
    pub const fn is_read_closed(self) -> bool {
        self.0 & Ready::READ_CLOSED.0 != 0
    }

    /// Whether the write side is closed.
    pub const fn is_write_closed(self) -> bool {
        self.0 & Ready::WRITE_CLOSED.0 != 0
    }

    /// Whether the socket reported an error condition (`take_error` says
    /// which).
    pub const fn is_error(self) -> bool {
        self.0 & Ready::ERROR.0 != 0
    }

    /// States set in either.
    pub(crate) const fn union(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }

    /// States set in both.
    pub(crate) const fn intersection(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }

    #[cfg_attr(not(test), allow(dead_code))]
    /// Whether every state of `other` is set.
    pub(crate) const fn contains(self, other: Ready) -> bool {
        self.0 & other.0 == other.0
    }

    /// The readiness a mio event reports.
    pub(crate) fn from_event(event: &mio::event::Event) -> Ready {
        let mut ready = Ready::EMPTY;
        if event.is_readable() {
            ready = ready.union(Ready::READABLE);
        }
        if event.is_writable() {
            ready = ready.union(Ready::WRITABLE);
        }
        if event.is_read_closed() {
            ready = ready.union(Ready::READ_CLOSED);
        }
        if event.is_write_closed() {
            ready = ready.union(Ready::WRITE_CLOSED);
        }
        if event.is_error() {
            ready = ready.union(Ready::ERROR);
        }
        ready
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;
    fn bitor(self, other: Ready) -> Ready {
        self.union(other)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        *self = self.union(other);
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;
    fn bitand(self, other: Ready) -> Ready {
        self.intersection(other)
    }
}

impl ops::Sub for Ready {
    type Output = Ready;
    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready")
            .field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .field("is_error", &self.is_error())
            .finish()
    }
}

/// The readiness a caller waits for with a socket's `ready(Interest)`
/// (tokio's `tokio::io::Interest`): readable, writable, or either.
///
/// Never empty: the constants are the only way to make one, and
/// [`remove`](Interest::remove) returns `None` rather than an empty set.
/// Unlike tokio, there is no `ERROR` or `PRIORITY` interest: every socket is
/// registered for read and write readiness only (an error condition is
/// reported in both directions anyway, see [`Ready::is_error`]).
///
/// ```
/// use tempo_io::Interest;
///
/// let both = Interest::READABLE | Interest::WRITABLE;
/// assert!(both.is_readable() && both.is_writable());
/// assert_eq!(both.remove(Interest::WRITABLE), Some(Interest::READABLE));
/// assert_eq!(Interest::READABLE.remove(Interest::READABLE), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interest(u8);

impl Interest {
    /// Readable: something to read, or the read side closed.
    pub const READABLE: Interest = Interest(1);
    /// Writable: room to write, or the write side closed.
    pub const WRITABLE: Interest = Interest(1 << 1);

    /// Whether the interest includes readability.
    pub const fn is_readable(self) -> bool {
        self.0 & Interest::READABLE.0 != 0
    }

    /// Whether the interest includes writability.
    pub const fn is_writable(self) -> bool {
        self.0 & Interest::WRITABLE.0 != 0
    }

    /// Both interests (the `|` operator, usable in constants).
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// This interest without `other`, or `None` if nothing is left.
    pub const fn remove(self, other: Interest) -> Option<Interest> {
        match self.0 & !other.0 {
            0 => None,
            bits => Some(Interest(bits)),
        }
    }

    /// The readiness states that satisfy this interest.
    pub(crate) const fn mask(self) -> Ready {
        let mut mask = 0;
        if self.is_readable() {
            mask |= Direction::Read.mask().0;
        }
        if self.is_writable() {
            mask |= Direction::Write.mask().0;
        }
        Ready(mask)
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;
    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => f.write_str("READABLE | WRITABLE"),
            (true, false) => f.write_str("READABLE"),
            _ => f.write_str("WRITABLE"),
        }
    }
}

/// Which side of a socket an operation uses: each has its own waker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Receive, read, accept.
    Read,
    /// Send, write, connect.
    Write,
}

impl Direction {
    /// The readiness bits that let an operation of this direction proceed
    /// (a closed or failed socket lets it proceed to report the condition).
    pub const fn mask(self) -> Ready {
        match self {
            Direction::Read => Ready(Ready::READABLE.0 | Ready::READ_CLOSED.0 | Ready::ERROR.0),
            Direction::Write => Ready(Ready::WRITABLE.0 | Ready::WRITE_CLOSED.0 | Ready::ERROR.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_masks_cover_closed_and_error() {
        assert!(Direction::Read.mask().contains(Ready::READ_CLOSED));
        assert!(Direction::Read.mask().contains(Ready::ERROR));
        assert!(!Direction::Read.mask().contains(Ready::WRITABLE));
        assert!(Direction::Write.mask().contains(Ready::WRITE_CLOSED));
        assert!(!Direction::Write.mask().contains(Ready::READABLE));
        assert_eq!(Ready::from_bits(usize::MAX), Ready::ALL);
        assert!(Ready::EMPTY.is_empty());
        assert_eq!(
            Ready::READABLE
                .union(Ready::WRITABLE)
                .intersection(Ready::CLEARABLE)
                .bits(),
            3
        );
    }

    #[test]
    fn interest_masks_are_the_directions_masks() {
        assert_eq!(Interest::READABLE.mask(), Direction::Read.mask());
        assert_eq!(Interest::WRITABLE.mask(), Direction::Write.mask());
        let both = Interest::READABLE | Interest::WRITABLE;
        assert_eq!(
            both.mask(),
            Direction::Read.mask() | Direction::Write.mask()
        );
        assert!(!(Ready::ERROR).is_readable());
        assert!((Ready::WRITE_CLOSED).is_writable());
        assert_eq!(format!("{both:?}"), "READABLE | WRITABLE");
    }
}
