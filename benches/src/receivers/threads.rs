//! One blocking std thread per socket: GStreamer's classic udpsrc model.
//!
//! Each datagram wakes its own thread: a context switch per datagram, and as
//! many OS threads as streams. The read timeout only bounds the loop (so that
//! every thread sees the end of the window); at steady state a datagram
//! arrives long before it expires.

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Longest a thread blocks in `recv_from` before looking at the clock.
const READ_TIMEOUT: Duration = Duration::from_millis(100);

/// Stack of each receive thread: the loop needs little, and thousands of
/// threads with the 2 MiB default reserve gigabytes of address space.
const STACK_SIZE: usize = 128 * 1024;

/// Runs one thread per socket until `window` ends, then joins them all.
pub fn run(sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
    let mut threads = Vec::with_capacity(sockets.len());
    for (i, sock) in sockets.into_iter().enumerate() {
        sock.set_read_timeout(Some(READ_TIMEOUT))?;
        let tracker = StreamTracker::new(i as u32, window);
        threads.push(
            std::thread::Builder::new()
                .name(format!("udp-{i}"))
                .stack_size(STACK_SIZE)
                .spawn(move || receive_loop(sock, tracker, window))?,
        );
    }
    for t in threads {
        t.join()
            .map_err(|_| io::Error::other("a receive thread panicked"))?;
    }
    Ok(())
}

fn receive_loop(sock: UdpSocket, mut tracker: StreamTracker, window: MeasureWindow) {
    let mut buf = vec![0u8; RECV_BUF_LEN];
    // Bounded: every pass either gets a datagram (Done after the window) or
    // times out within READ_TIMEOUT and checks the clock.
    while window.phase(crate::clock::monotonic_ns()) != Phase::Done {
        match sock.recv_from(&mut buf) {
            Ok((n, _from)) => {
                if tracker.on_datagram(&buf[..n]) == Phase::Done {
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}
