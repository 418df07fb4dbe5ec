//! Hand-written mio event loops, no runtime at all: the floor for any
//! epoll-based design.
//!
//! `mio-loop`: one `Poll`, every socket registered edge-triggered; on each
//! readiness event, drain that socket until `WouldBlock`.
//!
//! `mio-throttled:T`: the same loop, but after handling an iteration's events
//! it sleeps until T has passed since the iteration began (threadshare's
//! `context-wait`). Datagrams that arrive during the sleep queue in the
//! socket buffers and are read together by the next iteration: one
//! `epoll_wait` per T instead of one per datagram. Like Tempo's I/O driver,
//! an iteration serves every socket that was ready when it began: a poll
//! that fills the events buffer is followed by zero-timeout polls (at most
//! `streams / capacity + 1`). With one 1,024-event poll per T, sockets past
//! 1,024 would wait a tick and each socket would be served every other
//! tick, paying its per-socket costs half as often at twice the latency:
//! not the baseline a throttled runtime is judged against.

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use mio::net::UdpSocket as MioUdpSocket;
use mio::{Events, Interest, Poll, Token};

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Readiness events fetched per `epoll_wait`.
const EVENTS_CAPACITY: usize = 1024;

/// Runs the loop until `window` ends; `throttle` = `Some(T)` for
/// `mio-throttled:T`.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Option<Duration>,
) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut streams = Vec::with_capacity(sockets.len());
    for (i, sock) in sockets.into_iter().enumerate() {
        sock.set_nonblocking(true)?;
        let mut sock = MioUdpSocket::from_std(sock);
        poll.registry()
            .register(&mut sock, Token(i), Interest::READABLE)?;
        streams.push((sock, StreamTracker::new(i as u32, window)));
    }
    let mut events = Events::with_capacity(EVENTS_CAPACITY);
    let mut buf = vec![0u8; RECV_BUF_LEN];
    let throttle_ns = throttle.map_or(0, |t| t.as_nanos() as u64);
    // Bounded: each iteration's poll waits at most until the end of the window.
    loop {
        let started = monotonic_ns();
        if window.phase(started) == Phase::Done {
            return Ok(());
        }
        let max_polls = if throttle_ns > 0 {
            streams.len() / EVENTS_CAPACITY + 1
        } else {
            1
        };
        let mut timeout = Some(window.remaining());
        for _ in 0..max_polls {
            match poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => break,
                Err(e) => return Err(e),
            }
            let mut returned = 0;
            for event in events.iter() {
                returned += 1;
                let (sock, tracker) = &mut streams[event.token().0];
                drain(sock, tracker, &mut buf);
            }
            if returned < EVENTS_CAPACITY {
                break;
            }
            timeout = Some(Duration::ZERO);
        }
        if throttle_ns > 0 {
            sleep_until_ns((started + throttle_ns).min(window.end_ns));
        }
    }
}

/// Reads `sock` until it would block (edge-triggered readiness requires it).
fn drain(sock: &MioUdpSocket, tracker: &mut StreamTracker, buf: &mut [u8]) {
    // Bounded in practice: a stream sends one datagram per interval, far
    // slower than this loop reads, so the queue empties within a few reads.
    loop {
        match sock.recv_from(buf) {
            Ok((n, _from)) => {
                tracker.on_datagram(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}
