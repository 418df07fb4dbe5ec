//! `uring-throttled:T`: a hand-written throttled loop on io_uring, no
//! runtime and no epoll: the floor of a receive regime with *no syscall
//! per datagram* (issue 20's moonshot: "fewer or cheaper syscalls").
//!
//! Each socket gets one multishot `recvmsg` (`IORING_OP_RECVMSG` with
//! `IORING_RECV_MULTISHOT`) drawing its buffers from one provided-buffer
//! ring. The ring is made with `IORING_SETUP_DEFER_TASKRUN`: a datagram's
//! arrival only queues work for this thread, and the receives themselves
//! run when the loop asks for completions. So, like `mio-throttled:T`,
//! the loop wakes once per period; it then makes **one `io_uring_enter`
//! per tick**, in which the kernel receives every datagram that arrived
//! since the last tick into ring buffers and posts one completion each;
//! the loop reads the completions, hands each payload to its stream's
//! tracker, gives the buffers back, and sleeps until the next tick. A
//! multishot receive that ends (no buffer was free) is submitted again
//! with the next tick's call.
//!
//! The kernel takes the ring's buffers in order and this loop gives them
//! back in order, so a tick's datagrams land in as many distinct buffers,
//! cycling through the whole ring: with
//! [`RECV_BUF_LEN`](super::RECV_BUF_LEN) (2 KiB) buffers that is 8 MiB,
//! written cold like a buffer per socket.
//! `uring-throttled-dense:T` uses [`DENSE_BUF_LEN`]-byte buffers (1 MiB,
//! in the second-level cache), which only fit datagrams of up to 212
//! bytes: what the kernel's side costs when the receive memory is dense.
//! Both ask for transparent huge pages (see `uring.rs`, which holds the
//! ring and every `unsafe` of the loop).
//!
//! It is a measurement of the kernel's side, not a design for Tempo: a
//! runtime on it would add its per-datagram task work on top, as Tempo
//! does on epoll.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::recv_stats::StreamTracker;
use crate::uring::Ring;
use crate::window::{MeasureWindow, Phase};

/// The buffers of `uring-throttled-dense:T`: room for the benchmark's
/// 160-byte datagrams and the receive's header and address.
pub const DENSE_BUF_LEN: usize = 256;

/// Runs the loop with period `throttle` until `window` ends, its
/// buffers `buf_len` bytes long ([`RECV_BUF_LEN`](super::RECV_BUF_LEN) for `uring-throttled:T`,
/// [`DENSE_BUF_LEN`] for `uring-throttled-dense:T`).
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
    buf_len: usize,
) -> io::Result<()> {
    let mut ring = Ring::new(buf_len)?;
    let mut streams = Vec::with_capacity(sockets.len());
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
        // Re-arm what ended, at most a submission ring's worth per call.
        loop {
            let batch = rearm.len().min(ring.submission_entries());
            for stream in rearm.drain(..batch) {
                ring.push_recv(streams[stream].0.as_raw_fd(), stream);
            }
            ring.enter(batch as u32)?;
            if rearm.is_empty() {
                break;
            }
        }
        ring.reap(|ring, cqe| {
            let stream = cqe.user_data as usize;
            if !cqe.more() {
                rearm.push(stream);
            }
            if let Some(bid) = cqe.buffer() {
                if cqe.res > 0 {
                    match ring.payload(bid, cqe.res as usize) {
                        Some(payload) => {
                            streams[stream].1.on_datagram(payload);
                        }
                        None => streams[stream].1.on_error(),
                    }
                }
                ring.give_back(bid);
            } else if cqe.res < 0 && cqe.res != -libc::ENOBUFS {
                streams[stream].1.on_error();
            }
        });
        ring.publish_buffers();
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
