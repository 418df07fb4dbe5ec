//! Readiness bits, and the interest a direction of I/O cares about.
//!
//! The driver turns each mio event into a [`Ready`] set and ORs it into the
//! registration's readiness word; operations test it against the mask of
//! their [`Direction`].

/// A set of readiness bits (a `usize` so that it packs into the readiness
/// word of a registration next to its event sequence number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Every bit: what fits in the low bits of the readiness word.
    pub const ALL: Ready = Ready((1 << 5) - 1);
    /// The bits that operations clear on `WouldBlock`; closed and error
    /// states are final and stay set.
    pub const CLEARABLE: Ready = Ready(1 | (1 << 1));

    /// The readiness in the low bits of `bits`.
    pub const fn from_bits(bits: usize) -> Ready {
        Ready(bits & Self::ALL.0)
    }

    /// The raw bits.
    pub const fn bits(self) -> usize {
        self.0
    }

    /// Whether no bit is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Bits set in either.
    pub const fn union(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }

    /// Bits set in both.
    pub const fn intersection(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }

    #[cfg_attr(not(test), allow(dead_code))]
    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Ready) -> bool {
        self.0 & other.0 == other.0
    }

    /// The readiness a mio event reports.
    pub fn from_event(event: &mio::event::Event) -> Ready {
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
}
