//! Datagram layout shared by `udp-sender` and `udp-receiver`.
//!
//! ```text
//! offset  size  field
//!      0     8  sequence number of this datagram within its stream (LE u64)
//!      8     8  sender's CLOCK_MONOTONIC at send, nanoseconds (LE u64)
//!     16     4  stream index, 0-based (LE u32)
//!     20   S-20 zero padding up to the datagram size S
//! ```
//!
//! The sequence number lets the receiver count gaps per stream; the timestamp
//! gives one-way latency (same machine, same clock); the stream index lets it
//! check that a datagram arrived on the socket it was meant for.

/// Bytes of header at the start of every datagram; the smallest valid size.
pub const HEADER_LEN: usize = 20;

/// Default datagram size: 20 ms of 8 kHz 8-bit audio.
pub const DEFAULT_SIZE: usize = 160;

/// The header fields of one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    /// Sequence number within the stream, starting at 0.
    pub seq: u64,
    /// Sender's CLOCK_MONOTONIC at send, in nanoseconds.
    pub sent_ns: u64,
    /// Index of the stream (port - base port).
    pub stream: u32,
}

impl PacketHeader {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`; the rest
    /// of `buf` (the padding) is left as is.
    ///
    /// # Panics
    /// If `buf` is shorter than [`HEADER_LEN`].
    pub fn write_to(&self, buf: &mut [u8]) {
        buf[0..8].copy_from_slice(&self.seq.to_le_bytes());
        buf[8..16].copy_from_slice(&self.sent_ns.to_le_bytes());
        buf[16..20].copy_from_slice(&self.stream.to_le_bytes());
    }

    /// Reads the header of a received datagram; `None` if it is too short.
    pub fn read_from(buf: &[u8]) -> Option<PacketHeader> {
        if buf.len() < HEADER_LEN {
            return None;
        }
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let mut s = [0u8; 4];
        s.copy_from_slice(&buf[16..20]);
        Some(PacketHeader {
            seq: u64_at(0),
            sent_ns: u64_at(8),
            stream: u32::from_le_bytes(s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_keeps_padding() {
        let mut buf = vec![0xAAu8; DEFAULT_SIZE];
        let h = PacketHeader {
            seq: 0x0102_0304_0506_0708,
            sent_ns: u64::MAX - 7,
            stream: 3999,
        };
        h.write_to(&mut buf);
        assert_eq!(PacketHeader::read_from(&buf), Some(h));
        assert!(buf[HEADER_LEN..].iter().all(|&b| b == 0xAA));
    }

    #[test]
    fn short_datagram_has_no_header() {
        assert_eq!(PacketHeader::read_from(&[0u8; HEADER_LEN - 1]), None);
    }
}
