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
//! Both ask for transparent huge pages (see `Map::new`).
//!
//! The system headers' structures are declared here (`libc` has the
//! syscall numbers, not the structures); only this loop uses them. It is
//! a measurement of the kernel's side, not a design for Tempo: a runtime
//! on it would add its per-datagram task work on top, as Tempo does on
//! epoll.

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::time::Duration;

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

/// The buffers of `uring-throttled-dense:T`: room for the benchmark's
/// 160-byte datagrams and the receive's header and address.
pub const DENSE_BUF_LEN: usize = 256;

const IORING_SETUP_CQSIZE: u32 = 1 << 3;
const IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const IORING_FEAT_SINGLE_MMAP: u32 = 1 << 0;
const IORING_OFF_SQ_RING: libc::off_t = 0;
const IORING_OFF_SQES: libc::off_t = 0x1000_0000;
const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
const IORING_OP_RECVMSG: u8 = 10;
const IORING_RECV_MULTISHOT: u16 = 1 << 1;
const IOSQE_BUFFER_SELECT: u8 = 1 << 5;
const IORING_CQE_F_BUFFER: u32 = 1 << 0;
const IORING_CQE_F_MORE: u32 = 1 << 1;
const IORING_CQE_BUFFER_SHIFT: u32 = 16;
const IORING_REGISTER_PBUF_RING: libc::c_long = 22;

/// Submission entries (enough to arm every socket in a few calls).
const SQ_ENTRIES: u32 = 1024;
/// Completion entries: more than a tick's datagrams at 8,000 streams.
const CQ_ENTRIES: u32 = 16_384;
/// Provided buffers (a power of two, more than a tick's datagrams).
const BUFFERS: u32 = 4096;
/// Bytes before a multishot `recvmsg`'s payload in its buffer: the
/// `io_uring_recvmsg_out` header, then the source address.
const NAME_LEN: usize = std::mem::size_of::<libc::sockaddr_in6>();
const OUT_LEN: usize = 16;

#[repr(C)]
#[derive(Default)]
struct SqringOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    resv2: u64,
}

#[repr(C)]
#[derive(Default)]
struct CqringOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    resv2: u64,
}

#[repr(C)]
#[derive(Default)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqringOffsets,
    cq_off: CqringOffsets,
}

/// `struct io_uring_sqe`, as a receive fills it.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    msg_flags: u32,
    user_data: u64,
    buf_group: u16,
    personality: u16,
    file_index: u32,
    addr3: u64,
    pad2: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

/// `struct io_uring_buf`: one entry of the provided-buffer ring (the
/// first entry's `resv` is the ring's tail).
#[repr(C)]
struct Buf {
    addr: u64,
    len: u32,
    bid: u16,
    resv: u16,
}

#[repr(C)]
struct BufReg {
    ring_addr: u64,
    ring_entries: u32,
    bgid: u16,
    pad: u16,
    resv: [u64; 3],
}

/// `struct io_uring_getevents_arg`: here only its timeout.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// An anonymous or ring mapping, unmapped on drop.
struct Map {
    ptr: NonNull<u8>,
    len: usize,
}

impl Map {
    fn new(fd: RawFd, offset: libc::off_t, len: usize) -> io::Result<Map> {
        let (flags, fd) = if fd < 0 {
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
        } else {
            (libc::MAP_SHARED | libc::MAP_POPULATE, fd)
        };
        // SAFETY: a fresh mapping of `len` bytes at an address the kernel
        // picks; nothing else is affected.
        let ptr = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        if fd < 0 {
            // Transparent huge pages for the buffers, where the system
            // allows them (`madvise` mode): a tick's datagrams spread over
            // megabytes of 4 KiB pages cost the kernel's copies a TLB miss
            // each (measured: 2 KiB buffers 1.18 / 0.98x the
            // level-triggered loop without, 1.00 / 0.96x with). Advice
            // only: a refusal changes nothing.
            // SAFETY: advice on the mapping just made, `len` bytes long.
            unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
        }
        Ok(Map {
            ptr: NonNull::new(ptr.cast()).expect("mmap returned null"),
            len,
        })
    }

    /// A pointer `offset` bytes into the mapping (in bounds: callers pass
    /// the kernel's offsets into a mapping of the kernel's size).
    fn at<T>(&self, offset: u32) -> *mut T {
        assert!(offset as usize + std::mem::size_of::<T>() <= self.len);
        // SAFETY: in bounds, checked above.
        unsafe { self.ptr.as_ptr().add(offset as usize).cast() }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One io_uring instance with its rings mapped, and its buffer ring.
struct Ring {
    fd: RawFd,
    ring: Map,
    sqes: Map,
    params: Params,
    bufs: Map,
    buf_ring: Map,
    /// The buffer ring's tail as this loop counts it (published per tick).
    buf_tail: u16,
    /// Local submission tail (published by `submit`).
    sq_tail: u32,
    /// The `msghdr` every multishot `recvmsg` reads its layout from.
    msghdr: Box<libc::msghdr>,
    /// Bytes per provided buffer.
    buf_len: usize,
}

fn syscall_result(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl Ring {
    fn new(buf_len: usize) -> io::Result<Ring> {
        let mut params = Params {
            flags: IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
            cq_entries: CQ_ENTRIES,
            ..Params::default()
        };
        // SAFETY: `params` is a valid `io_uring_params`, written by the kernel.
        let fd = syscall_result(unsafe {
            libc::syscall(libc::SYS_io_uring_setup, SQ_ENTRIES, &mut params)
        })? as RawFd;
        if params.features & IORING_FEAT_SINGLE_MMAP == 0 {
            return Err(io::Error::other("io_uring without IORING_FEAT_SINGLE_MMAP"));
        }
        let sq_len = params.sq_off.array as usize + params.sq_entries as usize * 4;
        let cq_len =
            params.cq_off.cqes as usize + params.cq_entries as usize * std::mem::size_of::<Cqe>();
        let ring = Map::new(fd, IORING_OFF_SQ_RING, sq_len.max(cq_len))?;
        let sqes = Map::new(
            fd,
            IORING_OFF_SQES,
            params.sq_entries as usize * std::mem::size_of::<Sqe>(),
        )?;
        let bufs = Map::new(-1, 0, BUFFERS as usize * buf_len)?;
        let buf_ring = Map::new(-1, 0, BUFFERS as usize * std::mem::size_of::<Buf>())?;
        let reg = BufReg {
            ring_addr: buf_ring.ptr.as_ptr() as u64,
            ring_entries: BUFFERS,
            bgid: 0,
            pad: 0,
            resv: [0; 3],
        };
        // SAFETY: `reg` describes `buf_ring`, page-aligned and as long as
        // the kernel reads; it stays mapped as long as the ring (`Ring`).
        syscall_result(unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                fd,
                IORING_REGISTER_PBUF_RING,
                &reg,
                1,
            )
        })?;
        // SAFETY: zeroed `msghdr` is valid (null pointers); the kernel
        // reads only `msg_namelen` and `msg_controllen` of a multishot one.
        let mut msghdr: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
        msghdr.msg_namelen = NAME_LEN as libc::socklen_t;
        let mut ring = Ring {
            fd,
            ring,
            sqes,
            params,
            bufs,
            buf_ring,
            buf_tail: 0,
            sq_tail: 0,
            msghdr,
            buf_len,
        };
        for bid in 0..BUFFERS as u16 {
            ring.give_back(bid);
        }
        ring.publish_buffers();
        Ok(ring)
    }

    /// Puts buffer `bid` back at the buffer ring's (local) tail.
    fn give_back(&mut self, bid: u16) {
        let slot = (self.buf_tail as u32 & (BUFFERS - 1)) * std::mem::size_of::<Buf>() as u32;
        let entry: *mut Buf = self.buf_ring.at(slot);
        // SAFETY: the slot is past the kernel's head (this loop never has
        // more than BUFFERS buffers out), so the kernel does not read it
        // until the tail is published. Only `addr`, `len` and `bid` are
        // written: entry 0's `resv` is the ring's tail, which only
        // `publish_buffers` writes.
        unsafe {
            ptr::addr_of_mut!((*entry).addr)
                .write(self.bufs.ptr.as_ptr() as u64 + (bid as usize * self.buf_len) as u64);
            ptr::addr_of_mut!((*entry).len).write(self.buf_len as u32);
            ptr::addr_of_mut!((*entry).bid).write(bid);
        }
        self.buf_tail = self.buf_tail.wrapping_add(1);
    }

    /// Publishes the buffers given back (a release store of the tail).
    fn publish_buffers(&self) {
        // The tail is the `resv` field (offset 14) of the first entry.
        let tail: *mut AtomicU16 = self.buf_ring.at(14);
        // SAFETY: an aligned u16 in the shared ring, read by the kernel.
        unsafe { (*tail).store(self.buf_tail, Ordering::Release) };
    }

    /// Queues a multishot `recvmsg` on `fd` for stream `stream`.
    fn push_recv(&mut self, fd: RawFd, stream: usize) {
        let mask = self.params.sq_entries - 1;
        let index = self.sq_tail & mask;
        let sqe = Sqe {
            opcode: IORING_OP_RECVMSG,
            flags: IOSQE_BUFFER_SELECT,
            ioprio: IORING_RECV_MULTISHOT,
            fd,
            addr: &*self.msghdr as *const libc::msghdr as u64,
            len: 1,
            user_data: stream as u64,
            buf_group: 0,
            ..Sqe::default()
        };
        let array: *mut u32 = self.ring.at(self.params.sq_off.array + index * 4);
        let slot: *mut Sqe = self.sqes.at(index * std::mem::size_of::<Sqe>() as u32);
        // SAFETY: the slot and its array entry are past the kernel's head
        // (`submit` hands at most `sq_entries` at a time, and every call
        // consumes them all), so the kernel does not read them until the
        // tail is published.
        unsafe {
            slot.write(sqe);
            array.write(index);
        }
        self.sq_tail = self.sq_tail.wrapping_add(1);
    }

    /// Publishes the queued submissions and enters the kernel: submits
    /// them and runs the receives that arrivals queued (`GETEVENTS`).
    ///
    /// It asks for as many completions as the ring holds, with a zero
    /// timeout: the kernel runs only about `max(20, min_complete)` of the
    /// queued receives per call (seen on this 6.18 kernel: recent kernels
    /// bound a call's deferred work), so a call asking for
    /// none would leave most of a tick's datagrams to later ticks.
    fn enter(&mut self, to_submit: u32) -> io::Result<()> {
        let tail: *mut AtomicU32 = self.ring.at(self.params.sq_off.tail);
        // SAFETY: the ring's aligned u32 tail, shared with the kernel.
        unsafe { (*tail).store(self.sq_tail, Ordering::Release) };
        let zero = KernelTimespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let arg = GeteventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            min_wait_usec: 0,
            ts: &zero as *const KernelTimespec as u64,
        };
        loop {
            // SAFETY: the arguments of io_uring_enter(2) with an
            // `io_uring_getevents_arg` (no signal mask, `zero` timeout),
            // both alive across the call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_enter,
                    self.fd,
                    to_submit,
                    self.params.cq_entries,
                    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                    &arg as *const GeteventsArg,
                    std::mem::size_of::<GeteventsArg>(),
                )
            };
            match syscall_result(rc) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Calls `f` with every completion posted since the last call.
    fn reap(&mut self, mut f: impl FnMut(&mut Ring, Cqe)) {
        let head: *mut AtomicU32 = self.ring.at(self.params.cq_off.head);
        let tail: *mut AtomicU32 = self.ring.at(self.params.cq_off.tail);
        let mask = self.params.cq_entries - 1;
        // SAFETY: the ring's aligned u32 head and tail; the entries
        // between them are written by the kernel before it publishes the
        // tail (acquire) and not reused before this loop moves the head.
        unsafe {
            let mut at = (*head).load(Ordering::Relaxed);
            let end = (*tail).load(Ordering::Acquire);
            while at != end {
                let offset =
                    self.params.cq_off.cqes + (at & mask) * std::mem::size_of::<Cqe>() as u32;
                let cqe = self.ring.at::<Cqe>(offset).read();
                f(self, cqe);
                at = at.wrapping_add(1);
            }
            (*head).store(end, Ordering::Release);
        }
    }

    /// The payload of a multishot `recvmsg` completion in buffer `bid`
    /// (`used` bytes of it), if the kernel did not truncate it.
    fn payload(&self, bid: u16, used: usize) -> Option<&[u8]> {
        let start = OUT_LEN + NAME_LEN;
        if used < start {
            return None;
        }
        let offset = bid as usize * self.buf_len;
        // SAFETY: buffer `bid` is this loop's again (its completion was
        // read) and the kernel wrote its first `used` bytes.
        let buf = unsafe {
            std::slice::from_raw_parts(self.bufs.ptr.as_ptr().add(offset), used.min(self.buf_len))
        };
        let payload_len = u32::from_ne_bytes(buf[8..12].try_into().expect("4 bytes")) as usize;
        buf.get(start..start + payload_len)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the ring's fd, closed once (pending receives are
        // cancelled with it; the maps are unmapped after, by their drops).
        unsafe { libc::close(self.fd) };
    }
}

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
            let batch = rearm.len().min(ring.params.sq_entries as usize);
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
            if cqe.flags & IORING_CQE_F_MORE == 0 {
                rearm.push(stream);
            }
            if cqe.flags & IORING_CQE_F_BUFFER != 0 {
                let bid = (cqe.flags >> IORING_CQE_BUFFER_SHIFT) as u16;
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
    use crate::packet::{PacketHeader, DEFAULT_SIZE};
    use crate::recv_stats::with_thread_stats;

    /// Datagrams queued before the loop starts are received, each once,
    /// with both buffer sizes (the receive is armed at the first tick and
    /// takes what the sockets hold at once).
    #[test]
    fn the_uring_loop_receives_every_queued_datagram() {
        for buf_len in [super::super::RECV_BUF_LEN, DENSE_BUF_LEN] {
            let sockets: Vec<UdpSocket> = (0..3)
                .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
                .collect();
            let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
            for (stream, sock) in sockets.iter().enumerate() {
                for seq in 0..4 {
                    let mut datagram = [0u8; DEFAULT_SIZE];
                    let sent_ns = monotonic_ns();
                    let stream = stream as u32;
                    PacketHeader {
                        seq,
                        sent_ns,
                        stream,
                    }
                    .write_to(&mut datagram);
                    sender
                        .send_to(&datagram, sock.local_addr().unwrap())
                        .unwrap();
                }
            }
            let before = with_thread_stats(|stats| stats.received);
            // The loop's first tick receives everything, at once: the
            // window only has to outlast the ring's set-up.
            let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_millis(300));
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
