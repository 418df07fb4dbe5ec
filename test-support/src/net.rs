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

/// `SO_MEMINFO` (`asm-generic/socket.h`; the libc crate has its offsets
/// but not the option).
const SO_MEMINFO: libc::c_int = 55;

/// Bytes the kernel charges to `socket`'s receive queue
/// (`SO_MEMINFO`'s `rmem_alloc`): it grows with every datagram queued and
/// shrinks only when one is received.
pub fn rmem_alloc(socket: &impl std::os::fd::AsRawFd) -> u32 {
    // Room for more fields than any kernel reports; it copies what fits.
    let mut info = [0u32; 16];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` is writable for `len` bytes and `len` is a live
    // socklen_t; the kernel writes at most `len` bytes and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "SO_MEMINFO: {}", std::io::Error::last_os_error());
    info[libc::SK_MEMINFO_RMEM_ALLOC as usize]
}

/// Runs `send`, which sends one datagram to `receiver`, then waits until
/// the kernel has queued it on `receiver`: [`sent_all_and_queued`] with a
/// count of one.
pub fn sent_and_queued<R>(receiver: &impl std::os::fd::AsRawFd, send: impl FnOnce() -> R) -> R {
    let mut send = Some(send);
    let mut sent = None;
    sent_all_and_queued(receiver, 1, || sent = send.take().map(|f| f()));
    sent.expect("sent once")
}

/// Calls `send_one` `count` times, each sending one datagram of the same
/// size to `receiver`, then waits until the kernel has queued all of
/// them on `receiver`.
///
/// Loopback usually delivers within the send syscall, but may leave the
/// datagram to the softirq thread on a busy machine: a test that counts
/// what one receive finds queued must not race that. The wait watches
/// the bytes the kernel charges to the receive queue
/// ([`rmem_alloc`]), which grow by the same amount for each datagram of
/// one size: the first datagram's growth, times `count`. Nothing may
/// receive from `receiver` meanwhile. Panics after 10 s.
///
/// The kernel charges a datagram's memory just before it links the
/// datagram into the queue and signals readiness, in the same
/// non-preemptible softirq section: the wait ends 1 ms after the last
/// charge is seen, for that section to finish.
pub fn sent_all_and_queued(
    receiver: &impl std::os::fd::AsRawFd,
    count: usize,
    mut send_one: impl FnMut(),
) {
    if count == 0 {
        return;
    }
    let before = rmem_alloc(receiver);
    send_one();
    let one = wait_rmem_above(receiver, before) - before;
    for _ in 1..count {
        send_one();
    }
    wait_charged(receiver, before + one * count as u32);
}

/// A wait for datagrams sent to a socket in one call (`send_many`) to be
/// queued on it, as [`sent_all_and_queued`] waits for datagrams sent one
/// per call: made before the send, it measures what one datagram of the
/// size adds to a receive queue's charge on a probe socket;
/// [`wait`](Self::wait) after the send waits until the receiver's charge
/// has grown by that many.
#[derive(Debug)]
pub struct BatchQueued {
    charged: u32,
}

impl BatchQueued {
    /// Before sending `count` datagrams of `len` bytes each to
    /// `receiver`, which nothing may receive from until the wait ends.
    pub fn expect(receiver: &impl std::os::fd::AsRawFd, count: usize, len: usize) -> BatchQueued {
        let probe = UdpSocket::bind("127.0.0.1:0").expect("bind a probe socket");
        let to = probe.local_addr().expect("probe address");
        let before = rmem_alloc(&probe);
        probe.send_to(&vec![0; len], to).expect("send to the probe");
        let one = wait_rmem_above(&probe, before) - before;
        BatchQueued {
            charged: rmem_alloc(receiver) + one * count as u32,
        }
    }

    /// After the send: waits until all are queued on `receiver`. Panics
    /// after 10 s.
    pub fn wait(self, receiver: &impl std::os::fd::AsRawFd) {
        wait_charged(receiver, self.charged);
    }
}

/// Waits until `receiver`'s queue is charged at least `charged` bytes,
/// then 1 ms more: the kernel charges a datagram just before it links it
/// into the queue and signals readiness, in the same non-preemptible
/// softirq section.
fn wait_charged(receiver: &impl std::os::fd::AsRawFd, charged: u32) {
    wait_rmem_above(receiver, charged - 1);
    std::thread::sleep(std::time::Duration::from_millis(1));
}

/// Waits until [`rmem_alloc`] of `receiver` exceeds `floor`; returns it.
fn wait_rmem_above(receiver: &impl std::os::fd::AsRawFd, floor: u32) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = rmem_alloc(receiver);
        if now > floor {
            return now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "datagrams sent over loopback were not queued within 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// How an epoll instance watches a descriptor, read from
/// `/proc/self/fdinfo` (deterministic: no event needs to happen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpollEntry {
    /// `EPOLLIN` is in the interest.
    pub read: bool,
    /// `EPOLLOUT` is in the interest.
    pub write: bool,
    /// `EPOLLET`: edge-triggered (`false`: level-triggered).
    pub edge: bool,
}

/// `fd`'s entry in the epoll instance `epoll`, if it has one.
pub fn epoll_entry(epoll: std::os::fd::RawFd, fd: std::os::fd::RawFd) -> Option<EpollEntry> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{epoll}"))
        .expect("the epoll instance's fdinfo");
    // Lines look like `tfd:        7 events:       19 data: ...`.
    info.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        if words.next() != Some("tfd:") || words.next()?.parse::<i32>().ok()? != fd {
            return None;
        }
        if words.next() != Some("events:") {
            return None;
        }
        let events = u32::from_str_radix(words.next()?, 16).ok()?;
        Some(EpollEntry {
            read: events & libc::EPOLLIN as u32 != 0,
            write: events & libc::EPOLLOUT as u32 != 0,
            edge: events & libc::EPOLLET as u32 != 0,
        })
    })
}
