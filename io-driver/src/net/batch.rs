//! [`RecvBatch`] and [`SendBatch`]: many datagrams per syscall.
//!
//! Both types own everything a call needs (buffers, addresses, control
//! space, the kernel's arrays): once built, a call allocates nothing, and
//! a receive touches a slot's memory only if a datagram lands in it (up
//! to 16 slots, the kernel's headers are on the stack). A batch holds 1 to
//! [`MAX_BATCH`] datagrams (`UIO_MAXIOV`); a longer datagram is cut to its
//! buffer, as `recvfrom` cuts it, and [`RecvBatch::truncated`] says so.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::path::Path;
use std::time::SystemTime;

pub use crate::sys::mmsg::MAX_BATCH;
use crate::sys::mmsg::{self, MmsgScratch, RawAddr, Received, RecvTarget, SendSlot, STACK_BATCH};

fn invalid(message: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A reusable batch of receive buffers for
/// [`UdpSocket::recv_many`](crate::net::UdpSocket::recv_many) and
/// [`UnixDatagram::recv_many`](crate::net::UnixDatagram::recv_many).
///
/// After a receive, entries `0..len()` hold the datagrams in arrival order:
/// payload, source address, whether it was truncated, and (with
/// [`with_timestamps`](Self::with_timestamps)) the kernel's receive time.
/// Accessors panic on an index `>= len()`, as slice indexing does.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{RecvBatch, UdpSocket};
///
/// let socket = UdpSocket::bind("127.0.0.1:0").await?;
/// # let sender = UdpSocket::bind("127.0.0.1:0").await?;
/// # for payload in [&b"one"[..], b"two", b"three"] {
/// #     sender.send_to(payload, socket.local_addr()?).await?;
/// # }
/// let mut batch = RecvBatch::new(32, 1500)?.with_timestamps();
/// let mut received = 0;
/// while received < 3 {
///     let n = socket.recv_many(&mut batch).await?;
///     for i in 0..n {
///         let (payload, from) = (batch.payload(i), batch.source(i));
///         println!("{} bytes from {from:?} at {:?}", payload.len(), batch.timestamp(i));
///     }
///     received += n;
/// }
/// # Ok(()) }).unwrap();
/// ```
///
/// The tasks of one thread never run at once, so one batch (say, in a
/// `thread_local!`) can serve all its sockets (`docs/networking.md`).
#[derive(Debug)]
pub struct RecvBatch {
    buf_size: usize,
    /// `capacity * buf_size` bytes, slot `i` at `i * buf_size`.
    data: Vec<u8>,
    addrs: Vec<RawAddr>,
    /// Per slot, what the last receive reported (valid for `0..len`).
    results: Vec<Received>,
    /// `capacity * control_len` bytes when timestamps are asked for.
    control: Vec<u8>,
    control_len: usize,
    len: usize,
    scratch: MmsgScratch,
}

impl RecvBatch {
    /// A batch of `count` buffers of `buf_size` bytes each (allocated
    /// here, once).
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] if `count` is 0 or more
    /// than [`MAX_BATCH`], or if `buf_size` is 0.
    pub fn new(count: usize, buf_size: usize) -> io::Result<RecvBatch> {
        if count == 0 {
            return Err(invalid("a receive batch needs at least one buffer"));
        }
        if count > MAX_BATCH {
            return Err(invalid(
                "a receive batch holds at most MAX_BATCH (UIO_MAXIOV = 1024) datagrams",
            ));
        }
        if buf_size == 0 {
            return Err(invalid("a receive batch's buffers need at least one byte"));
        }
        let mut scratch = MmsgScratch::default();
        if count > STACK_BATCH {
            scratch.reserve(count);
        }
        Ok(RecvBatch {
            buf_size,
            data: vec![0; count * buf_size],
            addrs: vec![RawAddr::empty(); count],
            results: vec![Received::default(); count],
            control: Vec::new(),
            control_len: 0,
            len: 0,
            scratch,
        })
    }

    /// Asks for the kernel's receive timestamps (`SO_TIMESTAMPNS`, turned
    /// on for the socket at its first batch receive with this batch).
    pub fn with_timestamps(mut self) -> RecvBatch {
        self.control_len = mmsg::TIMESTAMP_CONTROL_LEN;
        self.control = vec![0; self.capacity() * self.control_len];
        self
    }

    /// Whether this batch asks for receive timestamps.
    pub fn wants_timestamps(&self) -> bool {
        self.control_len != 0
    }

    /// How many datagrams one receive can take.
    pub fn capacity(&self) -> usize {
        self.addrs.len()
    }

    /// The size of each buffer.
    pub fn buf_size(&self) -> usize {
        self.buf_size
    }

    /// How many datagrams the last receive took.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the last receive took none (or there was none yet).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn check(&self, i: usize) {
        assert!(
            i < self.len,
            "datagram index {i} out of range for a batch of {}",
            self.len
        );
    }

    /// The payload of datagram `i` (cut to [`buf_size`](Self::buf_size) if
    /// it was longer: see [`truncated`](Self::truncated)).
    pub fn payload(&self, i: usize) -> &[u8] {
        self.check(i);
        let start = i * self.buf_size;
        &self.data[start..start + self.results[i].len]
    }

    /// Whether datagram `i` was longer than the buffer and cut
    /// (`MSG_TRUNC`); its tail is lost, as with `recvfrom`.
    pub fn truncated(&self, i: usize) -> bool {
        self.check(i);
        self.results[i].truncated
    }

    /// The IP source address of datagram `i` (`None` for a Unix socket's
    /// datagrams: see [`unix_source`](Self::unix_source)).
    pub fn source(&self, i: usize) -> Option<SocketAddr> {
        self.check(i);
        self.addrs[i].inet_addr().ok()
    }

    /// The source address of datagram `i` received on a Unix socket
    /// (`None` for an IP socket's datagrams).
    pub fn unix_source(&self, i: usize) -> Option<std::os::unix::net::SocketAddr> {
        self.check(i);
        self.addrs[i].unix_addr().ok()
    }

    /// The kernel's receive time of datagram `i`: `None` without
    /// [`with_timestamps`](Self::with_timestamps).
    pub fn timestamp(&self, i: usize) -> Option<SystemTime> {
        self.check(i);
        self.results[i].timestamp
    }

    /// One `recvmmsg` (a `recvmsg` for one slot) on `fd` into every slot,
    /// replacing the last receive's datagrams; returns how many arrived
    /// and how many were asked for.
    pub(crate) fn recv_on(&mut self, fd: RawFd) -> io::Result<(usize, usize)> {
        self.len = 0;
        let asked = self.capacity();
        let buf_size = self.buf_size;
        let control_len = self.control_len;
        let mut controls = self.control.chunks_mut(control_len.max(1));
        let targets = self
            .data
            .chunks_mut(buf_size)
            .zip(&mut self.addrs[..])
            .map(|(buf, addr)| RecvTarget {
                buf,
                addr,
                control: if control_len == 0 {
                    None
                } else {
                    controls.next()
                },
            });
        let results = &mut self.results[..];
        let n = mmsg::recv_mmsg(fd, targets, &mut self.scratch, |i, received| {
            results[i] = received;
        })?;
        for (addr, received) in self.addrs[..n].iter_mut().zip(&results[..n]) {
            addr.set_len(received.addr_len);
        }
        self.len = n;
        Ok((n, asked))
    }
}

/// One queued datagram of a [`SendBatch`].
#[derive(Debug)]
struct SendEntry {
    start: usize,
    len: usize,
    target: Option<RawAddr>,
}

/// A reusable batch of datagrams for
/// [`UdpSocket::send_many`](crate::net::UdpSocket::send_many) and
/// [`UnixDatagram::send_many`](crate::net::UnixDatagram::send_many).
///
/// `push*` copies each payload into the batch's own buffer; after
/// [`clear`](Self::clear) the memory is reused, so a sender that builds a
/// batch per tick allocates nothing once the batch has reached its largest
/// size.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{SendBatch, UdpSocket};
///
/// let socket = UdpSocket::bind("127.0.0.1:0").await?;
/// # let receivers = [UdpSocket::bind("127.0.0.1:0").await?, UdpSocket::bind("127.0.0.1:0").await?];
/// # let peers = [receivers[0].local_addr()?, receivers[1].local_addr()?];
/// // one 160-byte packet to each peer, in one `sendmmsg`
/// let mut batch = SendBatch::with_capacity(peers.len(), peers.len() * 160);
/// for peer in peers {
///     batch.push(&[0u8; 160], peer)?;
/// }
/// while !batch.is_empty() {
///     socket.send_many(&mut batch).await?; // sent ones leave the batch
/// }
/// batch.clear(); // ready for the next round, memory kept
/// # let mut buf = [0u8; 1500];
/// # assert_eq!(receivers[1].recv(&mut buf).await?, 160);
/// # Ok(()) }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct SendBatch {
    data: Vec<u8>,
    entries: Vec<SendEntry>,
    /// Entries before this one were sent.
    sent: usize,
    scratch: MmsgScratch,
}

impl SendBatch {
    /// An empty batch.
    pub fn new() -> SendBatch {
        SendBatch::default()
    }

    /// An empty batch with room for `datagrams` datagrams of `bytes` bytes
    /// in all.
    pub fn with_capacity(datagrams: usize, bytes: usize) -> SendBatch {
        let datagrams = datagrams.min(MAX_BATCH);
        let mut scratch = MmsgScratch::default();
        scratch.reserve(datagrams);
        SendBatch {
            data: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(datagrams),
            sent: 0,
            scratch,
        }
    }

    fn push_raw(&mut self, payload: &[u8], target: Option<RawAddr>) -> io::Result<()> {
        if self.entries.len() >= MAX_BATCH {
            return Err(invalid(
                "a send batch holds at most MAX_BATCH (UIO_MAXIOV = 1024) datagrams",
            ));
        }
        self.entries.push(SendEntry {
            start: self.data.len(),
            len: payload.len(),
            target,
        });
        self.data.extend_from_slice(payload);
        Ok(())
    }

    /// Queues `payload` for `target`. Fails with
    /// [`io::ErrorKind::InvalidInput`] if the batch already holds
    /// [`MAX_BATCH`] datagrams.
    pub fn push(&mut self, payload: &[u8], target: SocketAddr) -> io::Result<()> {
        self.push_raw(payload, Some(RawAddr::from_inet(target)))
    }

    /// Queues `payload` for the Unix socket at `path` (fails as
    /// [`push`](Self::push) does, and if the path is too long for a Unix
    /// socket address).
    pub fn push_to_path(&mut self, payload: &[u8], path: impl AsRef<Path>) -> io::Result<()> {
        let target = RawAddr::from_path(path.as_ref())?;
        self.push_raw(payload, Some(target))
    }

    /// Queues `payload` for the socket's connected peer (fails as
    /// [`push`](Self::push) does).
    pub fn push_connected(&mut self, payload: &[u8]) -> io::Result<()> {
        self.push_raw(payload, None)
    }

    /// How many queued datagrams are not sent yet.
    pub fn len(&self) -> usize {
        self.entries.len() - self.sent
    }

    /// Whether every queued datagram was sent (or none was queued).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.data.clear();
        self.entries.clear();
        self.sent = 0;
    }

    /// One `sendmmsg` on `fd` of the datagrams not yet sent; those sent
    /// leave the batch (cleared once all are). `Ok(0)` without a syscall
    /// when it is empty.
    pub(crate) fn send_on(&mut self, fd: RawFd) -> io::Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        let data = &self.data;
        let slots = self.entries[self.sent..].iter().map(|entry| SendSlot {
            payload: &data[entry.start..entry.start + entry.len],
            target: entry.target.as_ref(),
        });
        let n = mmsg::send_mmsg(fd, slots, &mut self.scratch)?;
        self.sent += n;
        if self.sent == self.entries.len() {
            self.clear();
        }
        Ok(n)
    }
}
