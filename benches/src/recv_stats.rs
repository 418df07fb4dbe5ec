//! Per-datagram accounting for the receivers: sequence gaps per stream and
//! one-way latency, kept per OS thread so that recording costs no contention.
//!
//! Each receive loop owns a [`StreamTracker`] for its socket (the expected
//! next sequence number) and feeds it every datagram with the time it got
//! it. Counts go into the calling thread's [`RecvStats`]: single-thread
//! runtimes share one (one histogram, hot in cache), thread-per-stream gets
//! one per thread. Every thread's stats are registered process-wide so that
//! [`collect`] can merge them after the window. A thread's stats sit behind an
//! uncontended mutex: only `collect` ever takes it from another thread.

use crate::latency::LatencyHistogram;
use crate::packet::PacketHeader;
use crate::window::{MeasureWindow, Phase};

/// What a receiver counted over the measured window.
#[derive(Debug, Clone, Default)]
pub struct RecvStats {
    /// Datagrams received inside the window.
    pub received: u64,
    /// Datagrams missing between consecutive received ones of a stream.
    pub seq_gaps: u64,
    /// Datagrams with a sequence number at or below one already seen.
    pub out_of_order: u64,
    /// Datagrams too short to carry a header, or for another stream.
    pub malformed: u64,
    /// Receive errors other than "would block" / timeouts.
    pub errors: u64,
    /// One-way latency of the datagrams received inside the window.
    pub latency: LatencyHistogram,
}

impl RecvStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &RecvStats) {
        self.received += other.received;
        self.seq_gaps += other.seq_gaps;
        self.out_of_order += other.out_of_order;
        self.malformed += other.malformed;
        self.errors += other.errors;
        self.latency.merge(&other.latency);
    }
}

/// State of one stream (one socket) in a receive loop.
#[derive(Debug, Clone)]
pub struct StreamTracker {
    stream: u32,
    next_seq: Option<u64>,
    window: MeasureWindow,
}

impl StreamTracker {
    /// A tracker for stream index `stream`, counting inside `window`.
    pub fn new(stream: u32, window: MeasureWindow) -> StreamTracker {
        StreamTracker {
            stream,
            next_seq: None,
            window,
        }
    }

    /// Accounts one datagram received at `now_ns` into `stats`; returns where
    /// `now_ns` falls, so that the loop can stop at [`Phase::Done`]. Sequence
    /// numbers are followed during warm-up too, so the first datagrams of the
    /// window are not mistaken for gaps.
    pub fn on_datagram_at(&mut self, datagram: &[u8], now_ns: u64, stats: &mut RecvStats) -> Phase {
        let phase = self.window.phase(now_ns);
        if phase == Phase::Done {
            return phase;
        }
        let measured = phase == Phase::Measured;
        let Some(header) = PacketHeader::read_from(datagram).filter(|h| h.stream == self.stream)
        else {
            if measured {
                stats.malformed += 1;
            }
            return phase;
        };
        match self.next_seq {
            Some(next) if header.seq < next => {
                if measured {
                    stats.out_of_order += 1;
                }
                return phase;
            }
            Some(next) if measured => stats.seq_gaps += header.seq - next,
            _ => {}
        }
        self.next_seq = Some(header.seq + 1);
        if measured {
            stats.received += 1;
            stats
                .latency
                .record_ns(now_ns.saturating_sub(header.sent_ns));
        }
        phase
    }

    /// Accounts one datagram received now into this thread's registered stats.
    pub fn on_datagram(&mut self, datagram: &[u8]) -> Phase {
        let now = crate::clock::monotonic_ns();
        with_thread_stats(|stats| self.on_datagram_at(datagram, now, stats))
    }

    /// Counts a receive error (in the window or not) in this thread's stats.
    pub fn on_error(&self) {
        with_thread_stats(|stats| stats.errors += 1);
    }

    /// Whether a receive loop goes on after one receive that handed its
    /// datagrams to [`on_datagram`](Self::on_datagram) and returned the
    /// last phase: not once the window is over, and not after an error
    /// (counted).
    pub fn goes_on(&self, received: std::io::Result<Phase>) -> bool {
        match received {
            Ok(phase) => phase != Phase::Done,
            Err(_) => {
                self.on_error();
                false
            }
        }
    }
}

crate::per_thread_stats!(RecvStats);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::HEADER_LEN;

    fn datagram(stream: u32, seq: u64, sent_ns: u64) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_LEN + 4];
        PacketHeader {
            seq,
            sent_ns,
            stream,
        }
        .write_to(&mut b);
        b
    }

    const WINDOW: MeasureWindow = MeasureWindow {
        start_ns: 1_000_000,
        end_ns: 2_000_000,
    };

    #[test]
    fn counts_gaps_latency_and_ignores_warmup() {
        let mut t = StreamTracker::new(7, WINDOW);
        let mut s = RecvStats::default();
        // Warm-up: seq 0 and 1, not counted but followed.
        assert_eq!(
            t.on_datagram_at(&datagram(7, 0, 0), 500_000, &mut s),
            Phase::WarmUp
        );
        t.on_datagram_at(&datagram(7, 1, 0), 900_000, &mut s);
        assert_eq!(s.received, 0);
        // Window: 2 (no gap), 5 (gap of 2), 4 (out of order).
        t.on_datagram_at(&datagram(7, 2, 1_000_000), 1_010_000, &mut s);
        t.on_datagram_at(&datagram(7, 5, 1_100_000), 1_150_000, &mut s);
        t.on_datagram_at(&datagram(7, 4, 1_100_000), 1_160_000, &mut s);
        assert_eq!(s.received, 2);
        assert_eq!(s.seq_gaps, 2);
        assert_eq!(s.out_of_order, 1);
        assert_eq!(s.latency.max_us(), 50);
        // After the window: nothing counted, loop told to stop.
        assert_eq!(
            t.on_datagram_at(&datagram(7, 6, 0), 2_000_000, &mut s),
            Phase::Done
        );
        assert_eq!(s.received, 2);
    }

    #[test]
    fn wrong_stream_or_short_datagram_is_malformed() {
        let mut t = StreamTracker::new(1, WINDOW);
        let mut s = RecvStats::default();
        t.on_datagram_at(&datagram(2, 0, 0), 1_500_000, &mut s);
        t.on_datagram_at(&[0u8; 3], 1_500_000, &mut s);
        assert_eq!(s.malformed, 2);
        assert_eq!(s.received, 0);
    }

    #[test]
    fn a_loop_goes_on_until_the_window_ends_or_an_error() {
        let t = StreamTracker::new(0, WINDOW);
        assert!(t.goes_on(Ok(Phase::WarmUp)));
        assert!(t.goes_on(Ok(Phase::Measured)));
        assert!(!t.goes_on(Ok(Phase::Done)));
        let errors = std::thread::spawn(move || {
            let gone_on = t.goes_on(Err(std::io::ErrorKind::ConnectionRefused.into()));
            (gone_on, with_thread_stats(|s| s.errors))
        })
        .join()
        .unwrap();
        assert_eq!(errors, (false, 1), "stops, and counts the error");
    }

    #[test]
    fn thread_stats_are_collected() {
        let before = collect().errors;
        std::thread::spawn(|| StreamTracker::new(0, WINDOW).on_error())
            .join()
            .unwrap();
        assert!(collect().errors > before);
    }
}
