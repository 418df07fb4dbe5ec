//! Loopback helpers for tests that need a datagram *queued* on a socket
//! before the step under test (a tick, a park) runs.

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

/// Waits until `socket` has a datagram queued, without taking it (a peek),
/// for at most about ten seconds, then panics.
///
/// Loopback delivery is all but immediate, but `send_to`'s return does not
/// promise it (the kernel may finish it in a softirq thread on a busy
/// machine). Peek on a clone (`try_clone`) of a socket that a driver owns:
/// a peek leaves the datagram and the driver's readiness event in place.
pub fn wait_until_queued(socket: &UdpSocket) {
    let mut buf = [0u8; 4];
    for _ in 0..10_000 {
        match socket.peek_from(&mut buf) {
            Ok(_) => return,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("peek failed: {e}"),
        }
    }
    panic!("a datagram sent on loopback never arrived");
}
