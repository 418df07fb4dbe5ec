//! One io_uring instance for a receive loop: its submission and
//! completion rings mapped, and one provided-buffer ring its multishot
//! `recvmsg`s draw on (`receivers/uring_loop.rs` is the loop).
//!
//! The kernel's structures are declared here, from `linux/io_uring.h`
//! (`libc` has the syscall numbers, not the structures), as far as a
//! multishot receive uses them; every `unsafe` of the loop is in this
//! file. Made with `IORING_SETUP_DEFER_TASKRUN` and
//! `IORING_SETUP_SINGLE_ISSUER`: the receives that arrivals queue run in
//! the owning thread's [`Ring::enter`], nowhere else.

use std::io;
use std::os::fd::RawFd;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};

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

/// `struct io_uring_cqe`: one completion.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Cqe {
    /// The submission's `user_data` (the loop's stream index).
    pub user_data: u64,
    /// Bytes the receive used in its buffer, or `-errno`.
    pub res: i32,
    flags: u32,
}

impl Cqe {
    /// Whether the multishot receive goes on (no new submission needed).
    pub fn more(&self) -> bool {
        self.flags & IORING_CQE_F_MORE != 0
    }

    /// The provided buffer the completion used, if any.
    pub fn buffer(&self) -> Option<u16> {
        (self.flags & IORING_CQE_F_BUFFER != 0)
            .then_some((self.flags >> IORING_CQE_BUFFER_SHIFT) as u16)
    }
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
pub struct Ring {
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
    /// A ring whose provided buffers are `buf_len` bytes long, every one
    /// given to the kernel.
    pub fn new(buf_len: usize) -> io::Result<Ring> {
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

    /// How many receives one [`enter`](Ring::enter) can submit.
    pub fn submission_entries(&self) -> usize {
        self.params.sq_entries as usize
    }

    /// Puts buffer `bid` back at the buffer ring's (local) tail.
    pub fn give_back(&mut self, bid: u16) {
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
    pub fn publish_buffers(&self) {
        // The tail is the `resv` field (offset 14) of the first entry.
        let tail: *mut AtomicU16 = self.buf_ring.at(14);
        // SAFETY: an aligned u16 in the shared ring, read by the kernel.
        unsafe { (*tail).store(self.buf_tail, Ordering::Release) };
    }

    /// Queues a multishot `recvmsg` on `fd` for stream `stream`.
    pub fn push_recv(&mut self, fd: RawFd, stream: usize) {
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
    pub fn enter(&mut self, to_submit: u32) -> io::Result<()> {
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
    pub fn reap(&mut self, mut f: impl FnMut(&mut Ring, Cqe)) {
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
    pub fn payload(&self, bid: u16, used: usize) -> Option<&[u8]> {
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
