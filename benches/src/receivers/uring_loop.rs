//! `uring-throttled:T`: a hand-written throttled loop on io_uring, no
//! runtime and no epoll: the floor of a receive with no syscall per
//! datagram, the kernel's side only.
//!
//! Each socket gets one multishot `recvmsg` drawing on one provided-buffer
//! ring made with `IORING_SETUP_DEFER_TASKRUN`, so arrivals only queue
//! work and the loop makes one `io_uring_enter` per tick, in which the
//! kernel receives every datagram since the last tick; the loop hands each
//! payload to its stream's tracker, gives the buffer back and sleeps. A
//! receive that ended (no free buffer) is submitted again next tick. With
//! [`RECV_BUF_LEN`](super::RECV_BUF_LEN) buffers the ring is 8 MiB,
//! written cold; `uring-throttled-dense:T` uses [`DENSE_BUF_LEN`]-byte
//! ones (1 MiB, in the second-level cache). The ring is tempo-io's own
//! (`unstable-sys`), which holds every `unsafe` of the loop.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::recv_stats::StreamTracker;
use crate::uring::{BufGroup, RecvLayout, Ring};
use crate::window::{MeasureWindow, Phase};

/// The buffers of `uring-throttled-dense:T`: room for the benchmark's
/// 160-byte datagrams and the receive's header and address.
pub const DENSE_BUF_LEN: usize = 256;

/// Submission entries (enough to arm every socket in a few calls).
const SQ_ENTRIES: u32 = 1024;
/// Completion entries: more than a tick's datagrams at 8,000 streams.
const CQ_ENTRIES: u32 = 16_384;
/// Provided buffers (a power of two, more than a tick's datagrams).
const BUFFERS: u16 = 4096;

/// Runs the loop with period `throttle` until `window` ends, its
/// buffers `buf_len` bytes long ([`RECV_BUF_LEN`](super::RECV_BUF_LEN) for `uring-throttled:T`,
/// [`DENSE_BUF_LEN`] for `uring-throttled-dense:T`).
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
    buf_len: usize,
) -> io::Result<()> {
    // Declared first, so dropped last: the sockets and the group outlive
    // the ring, whose drop cancels the receives drawing on them.
    let group;
    let mut streams = Vec::with_capacity(sockets.len());
    // SAFETY: the group and the sockets outlive the ring (above); each
    // `Bid` goes back to the one group, whose completion handed it over.
    let mut ring = unsafe { Ring::new_unchecked(SQ_ENTRIES, CQ_ENTRIES)? };
    group = BufGroup::new(&ring, 0, BUFFERS, buf_len)?;
    let mut rearm: Vec<usize> = Vec::new();
    for (i, sock) in sockets.into_iter().enumerate() {
        sock.set_nonblocking(true)?;
        streams.push((sock, StreamTracker::new(i as u32, window)));
        rearm.push(i);
    }
    let throttle_ns = throttle.as_nanos() as u64;
    // Bounded: each iteration sleeps at most until the end of the window.
    loop {
        let started = monotonic_ns();
        if window.phase(started) == Phase::Done {
            return Ok(());
        }
        // Re-arm what ended (a full submission queue is submitted first;
        // its completions wait in the far larger completion queue), then
        // enter once: submit, and run the receives arrivals queued.
        for stream in rearm.drain(..) {
            if !ring.has_room() {
                ring.enter(u32::MAX)?;
            }
            ring.push_recv(
                streams[stream].0.as_raw_fd(),
                &group,
                RecvLayout::Plain,
                stream as u64,
            );
        }
        ring.enter(u32::MAX)?;
        ring.reap(|completion| {
            let stream = completion.user_data as usize;
            if !completion.more {
                rearm.push(stream);
            }
            let tracker = &mut streams[stream].1;
            if completion.buffer.is_some() {
                group.lent();
            }
            match completion.buffer {
                Some(bid) if completion.res > 0 => group.read(
                    bid,
                    completion.res as usize,
                    RecvLayout::Plain,
                    |datagram| match datagram {
                        Some(datagram) => {
                            tracker.on_datagram(datagram.payload);
                        }
                        None => tracker.on_error(),
                    },
                ),
                Some(bid) => group.discard(bid),
                None if completion.res < 0 && completion.res != -libc::ENOBUFS => {
                    tracker.on_error()
                }
                None => {}
            }
        });
        sleep_until_ns((started + throttle_ns).min(window.end_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recv_stats::with_thread_stats;

    /// Datagrams queued before the loop starts are received, each once,
    /// with both buffer sizes (the receive is armed at the first tick and
    /// takes what the sockets hold at once).
    #[test]
    fn the_uring_loop_receives_every_queued_datagram() {
        for buf_len in [super::super::RECV_BUF_LEN, DENSE_BUF_LEN] {
            let sockets = super::super::sockets_with_queued(3, 4);
            let before = with_thread_stats(|stats| stats.received);
            // The loop's first tick receives everything, at once: the
            // window only has to outlast the ring's set-up (milliseconds;
            // the margin is for a loaded machine).
            let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_secs(1));
            match run(sockets, window, Duration::from_millis(20), buf_len) {
                Ok(()) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                    eprintln!("io_uring is not available here ({e}): nothing to test");
                    return;
                }
                Err(e) => panic!("the io_uring loop failed: {e}"),
            }
            let (received, errors) = with_thread_stats(|stats| (stats.received, stats.errors));
            assert_eq!(received - before, 12, "buffers of {buf_len} bytes");
            assert_eq!(errors, 0);
        }
    }
}
