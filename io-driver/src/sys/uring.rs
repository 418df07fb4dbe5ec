//! io_uring, as far as a datagram receive on it needs: the ring, multishot
//! `recvmsg`s that draw their buffers from provided-buffer groups, their
//! cancellation, an eventfd that tells a blocked poller the ring has
//! receives to run, and [`ThreadBound`], which lets a driver that may be
//! moved between threads own a ring that may not.
//!
//! The kernel's structures are declared here from `linux/io_uring.h`
//! (`libc` has the syscall numbers, not the structures), and every
//! `unsafe` of the completion backend is in this file, behind a safe
//! interface whose rules are:
//!
//! * the ring is made with `IORING_SETUP_SINGLE_ISSUER |
//!   IORING_SETUP_DEFER_TASKRUN`: it belongs to the thread that made it
//!   (the type is `!Send`), and the receives that arrivals queue run in
//!   that thread's [`Ring::enter`], nowhere else;
//! * a provided buffer is the kernel's from its [`BufGroup`]'s start (or
//!   its return) until a completion names it; the completion hands the
//!   caller a [`Bid`], which is not `Copy` and is consumed by
//!   [`BufGroup::read`] or [`BufGroup::discard`], both of which give the
//!   buffer back (count it with [`BufGroup::lent`] first: the group's
//!   exhaustion bookkeeping). So user space reads a buffer only while it
//!   owns it, and gives each back exactly once;
//! * a [`BufGroup`] must outlive every receive that may still write into
//!   its buffers: its owner drops it only after the last receive drawing
//!   on it reported its final completion, or after the ring is closed
//!   with no receive in flight (see `completion/recv_ring.rs`).

use std::cell::Cell;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::thread::{self, ThreadId};
use std::time::SystemTime;

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use super::mmsg::{timestamp_in, TIMESTAMP_CONTROL_LEN};

const IORING_SETUP_CQSIZE: u32 = 1 << 3;
const IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const IORING_FEAT_SINGLE_MMAP: u32 = 1 << 0;
const IORING_FEAT_EXT_ARG: u32 = 1 << 8;
const IORING_OFF_SQ_RING: libc::off_t = 0;
const IORING_OFF_SQES: libc::off_t = 0x1000_0000;
const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
const IORING_OP_RECVMSG: u8 = 10;
const IORING_OP_ASYNC_CANCEL: u8 = 14;
const IORING_RECV_MULTISHOT: u16 = 1 << 1;
const IOSQE_BUFFER_SELECT: u8 = 1 << 5;
const IORING_CQE_F_BUFFER: u32 = 1 << 0;
const IORING_CQE_F_MORE: u32 = 1 << 1;
const IORING_CQE_BUFFER_SHIFT: u32 = 16;
const IORING_REGISTER_EVENTFD: libc::c_long = 4;
const IORING_REGISTER_PBUF_RING: libc::c_long = 22;

const OUT_LEN: usize = 16;
const NAME_LEN: usize = std::mem::size_of::<libc::sockaddr_in6>();

/// What a multishot `recvmsg` writes before the payload in its buffer:
/// the `io_uring_recvmsg_out` header and room for the source address (an
/// IPv6 one at most), and room for control messages if asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecvLayout {
    /// Header and source address.
    #[default]
    Plain,
    /// Header, source address and the kernel's receive timestamp
    /// (`SCM_TIMESTAMPNS`, sent when the socket has `SO_TIMESTAMPNS` on).
    Timestamped,
}

impl RecvLayout {
    const fn control_len(self) -> usize {
        match self {
            RecvLayout::Plain => 0,
            RecvLayout::Timestamped => TIMESTAMP_CONTROL_LEN,
        }
    }

    /// Bytes of a buffer before the payload.
    pub const fn header_len(self) -> usize {
        OUT_LEN + NAME_LEN + self.control_len()
    }
}

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

/// `struct io_uring_params`.
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

/// `struct io_uring_sqe`, as a receive or a cancellation fills it.
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
    op_flags: u32,
    user_data: u64,
    buf_group: u16,
    personality: u16,
    file_index: u32,
    addr3: u64,
    pad2: u64,
}

/// `struct io_uring_cqe`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

/// `struct io_uring_buf`: one entry of a provided-buffer ring (the first
/// entry's `resv` is the ring's tail).
#[repr(C)]
struct Buf {
    addr: u64,
    len: u32,
    bid: u16,
    resv: u16,
}

/// `struct io_uring_buf_reg`.
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

fn syscall_result(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A shared mapping of the ring's fd, or anonymous memory for buffers;
/// unmapped on drop.
struct Map {
    ptr: NonNull<u8>,
    len: usize,
}

impl Map {
    fn new(fd: Option<RawFd>, offset: libc::off_t, len: usize) -> io::Result<Map> {
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED | libc::MAP_POPULATE, fd),
            None => (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1),
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
        if fd < 0 && len >= 2 << 20 {
            // Transparent huge pages for large buffer groups, where the
            // system allows them: a tick's datagrams spread over megabytes
            // of 4 KiB pages cost the kernel's copies a TLB miss each.
            // Advice only.
            // SAFETY: advice on the mapping just made, `len` bytes long.
            unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
        }
        Ok(Map {
            ptr: NonNull::new(ptr.cast()).expect("mmap returned null"),
            len,
        })
    }

    /// A pointer `offset` bytes into the mapping, in bounds.
    fn at<T>(&self, offset: usize) -> *mut T {
        self.array(offset, 1)
    }

    /// A pointer to an array of `count` `T`s `offset` bytes into the
    /// mapping, all in bounds (checked once for the whole array).
    fn array<T>(&self, offset: usize, count: usize) -> *mut T {
        assert!(offset + count * std::mem::size_of::<T>() <= self.len);
        // SAFETY: in bounds, checked above.
        unsafe { self.ptr.as_ptr().add(offset).cast() }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One completion, as [`Ring::reap`] hands it.
#[derive(Debug)]
pub struct Completion {
    /// The submission's `user_data`.
    pub user_data: u64,
    /// Bytes the receive used in its buffer, or `-errno`.
    pub res: i32,
    /// Whether the multishot receive goes on after this completion.
    pub more: bool,
    /// The provided buffer the completion used, now the caller's.
    pub buffer: Option<Bid>,
}

/// A provided buffer the kernel handed over with a completion: consumed by
/// [`BufGroup::read`] or [`BufGroup::discard`], which give it back.
#[derive(Debug)]
pub struct Bid(u16);

/// One io_uring instance with its rings mapped, owned by the thread that
/// made it.
pub struct Ring {
    // Field order is drop order: the fd is closed before the maps go.
    fd: OwnedFd,
    rings: Map,
    sqes: Map,
    params: Params,
    /// Local submission tail (published by `enter`).
    sq_tail: u32,
    /// Submissions queued since the last `enter`.
    unsubmitted: u32,
    /// The `msghdr`s multishot `recvmsg`s read their layout from, one per
    /// [`RecvLayout`] at its index.
    msghdrs: Box<[libc::msghdr; 2]>,
    /// Single issuer: the ring never leaves its thread.
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("fd", &self.fd)
            .finish_non_exhaustive()
    }
}

impl Ring {
    /// A ring with `sq_entries` submission and `cq_entries` completion
    /// entries (powers of two). Fails with the OS error where io_uring is
    /// missing or forbidden (`ENOSYS`, `EPERM`), or lacks a feature this
    /// backend needs (`EINVAL`, or `Unsupported`).
    pub(crate) fn new(sq_entries: u32, cq_entries: u32) -> io::Result<Ring> {
        let mut params = Params {
            flags: IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
            cq_entries,
            ..Params::default()
        };
        // SAFETY: `params` is a valid `io_uring_params`, written by the kernel.
        let fd = syscall_result(unsafe {
            libc::syscall(libc::SYS_io_uring_setup, sq_entries, &mut params)
        })? as RawFd;
        // SAFETY: a new fd the kernel just returned, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let needed = IORING_FEAT_SINGLE_MMAP | IORING_FEAT_EXT_ARG;
        if params.features & needed != needed {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "io_uring without IORING_FEAT_SINGLE_MMAP or IORING_FEAT_EXT_ARG",
            ));
        }
        let sq_len = params.sq_off.array as usize + params.sq_entries as usize * 4;
        let cq_len =
            params.cq_off.cqes as usize + params.cq_entries as usize * std::mem::size_of::<Cqe>();
        let raw = fd.as_raw_fd();
        let rings = Map::new(Some(raw), IORING_OFF_SQ_RING, sq_len.max(cq_len))?;
        let sqes = Map::new(
            Some(raw),
            IORING_OFF_SQES,
            params.sq_entries as usize * std::mem::size_of::<Sqe>(),
        )?;
        // SAFETY: a zeroed `msghdr` is valid (null pointers); the kernel
        // reads only `msg_namelen` and `msg_controllen` of a multishot one.
        let mut msghdrs: Box<[libc::msghdr; 2]> = Box::new(unsafe { std::mem::zeroed() });
        for layout in [RecvLayout::Plain, RecvLayout::Timestamped] {
            let msghdr = &mut msghdrs[layout as usize];
            msghdr.msg_namelen = NAME_LEN as libc::socklen_t;
            msghdr.msg_controllen = layout.control_len() as _;
        }
        Ok(Ring {
            fd,
            rings,
            sqes,
            params,
            sq_tail: 0,
            unsubmitted: 0,
            msghdrs,
            _not_send: PhantomData,
        })
    }

    /// Makes the kernel signal `eventfd` whenever the ring has completions
    /// to post or deferred receives to run: what wakes a poller that
    /// waits for it.
    pub(crate) fn register_eventfd(&self, eventfd: RawFd) -> io::Result<()> {
        // SAFETY: io_uring_register(2) with a pointer to one fd, read
        // during the call.
        syscall_result(unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.fd.as_raw_fd(),
                IORING_REGISTER_EVENTFD,
                &eventfd as *const RawFd,
                1,
            )
        })?;
        Ok(())
    }

    /// A ring with `sq_entries` submission and `cq_entries` completion
    /// entries (powers of two), for code outside tempo-io (feature
    /// `unstable-sys`); fails with the OS error where io_uring is missing
    /// or forbidden.
    ///
    /// # Safety
    ///
    /// The ring's other methods are safe only under this module's rules,
    /// which the caller keeps for this ring and every [`BufGroup`]
    /// registered with it: a group outlives every receive drawing on it
    /// (until that receive's final completion is reaped), a receive's fd
    /// stays open as long, and a [`Bid`] is read or discarded only by the
    /// group whose completion handed it over.
    #[cfg(feature = "unstable-sys")]
    pub unsafe fn new_unchecked(sq_entries: u32, cq_entries: u32) -> io::Result<Ring> {
        Ring::new(sq_entries, cq_entries)
    }

    /// Whether a submission can be queued without an `enter` first.
    pub fn has_room(&self) -> bool {
        self.unsubmitted < self.params.sq_entries
    }

    /// Queues a multishot `recvmsg` on `fd` drawing buffers from `group`
    /// and laid out in them as `layout` says, its completions tagged
    /// `user_data`. The caller keeps `fd` open until the receive's final
    /// completion. Panics without room (see [`has_room`](Self::has_room)).
    pub fn push_recv(&mut self, fd: RawFd, group: &BufGroup, layout: RecvLayout, user_data: u64) {
        self.push(Sqe {
            opcode: IORING_OP_RECVMSG,
            flags: IOSQE_BUFFER_SELECT,
            ioprio: IORING_RECV_MULTISHOT,
            fd,
            addr: &self.msghdrs[layout as usize] as *const libc::msghdr as u64,
            len: 1,
            user_data,
            buf_group: group.bgid,
            ..Sqe::default()
        });
    }

    /// Queues the cancellation of the request tagged `target`; its own
    /// completion is tagged `user_data`. Panics without room.
    pub(crate) fn push_cancel(&mut self, target: u64, user_data: u64) {
        self.push(Sqe {
            opcode: IORING_OP_ASYNC_CANCEL,
            fd: -1,
            addr: target,
            user_data,
            ..Sqe::default()
        });
    }

    fn push(&mut self, sqe: Sqe) {
        assert!(self.has_room(), "io_uring submission queue full");
        let index = self.sq_tail & (self.params.sq_entries - 1);
        let array: *mut u32 = self
            .rings
            .at(self.params.sq_off.array as usize + index as usize * 4);
        let slot: *mut Sqe = self.sqes.at(index as usize * std::mem::size_of::<Sqe>());
        // SAFETY: the slot and its array entry are past the kernel's head
        // (at most `sq_entries` are queued between two `enter`s, and every
        // `enter` submits them all), so the kernel does not read them
        // until the tail is published.
        unsafe {
            slot.write(sqe);
            array.write(index);
        }
        self.sq_tail = self.sq_tail.wrapping_add(1);
        self.unsubmitted += 1;
    }

    /// Publishes the queued submissions and enters the kernel once: it
    /// submits them and runs receives that arrivals queued for this
    /// thread (`GETEVENTS`), never blocking.
    ///
    /// The kernel runs the queued receives, oldest first, until about
    /// `min_complete` completions are posted (at least 20, up to about
    /// twice as many; `min_complete` is capped at the completion queue's
    /// size), and leaves the rest queued for later calls: seen on 6.18,
    /// whose calls bound their deferred work.
    pub fn enter(&mut self, min_complete: u32) -> io::Result<()> {
        let tail: *mut AtomicU32 = self.rings.at(self.params.sq_off.tail as usize);
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
        let to_submit = std::mem::take(&mut self.unsubmitted);
        loop {
            // SAFETY: io_uring_enter(2) with an `io_uring_getevents_arg`
            // (no signal mask, the `zero` timeout), both alive across the
            // call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_enter,
                    self.fd.as_raw_fd(),
                    to_submit,
                    min_complete.min(self.params.cq_entries),
                    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                    &arg as *const GeteventsArg,
                    std::mem::size_of::<GeteventsArg>(),
                )
            };
            match syscall_result(rc) {
                Ok(_) => return Ok(()),
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EBUSY)) => {
                    // No completion came in time (the usual case), or the
                    // completion queue is full: the caller reaps, then
                    // enters again.
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether completions are waiting to be reaped.
    pub(crate) fn has_completions(&self) -> bool {
        let head: *mut AtomicU32 = self.rings.at(self.params.cq_off.head as usize);
        let tail: *mut AtomicU32 = self.rings.at(self.params.cq_off.tail as usize);
        // SAFETY: the ring's aligned u32 head and tail, shared with the kernel.
        unsafe { (*head).load(Ordering::Relaxed) != (*tail).load(Ordering::Acquire) }
    }

    /// Calls `f` with every completion posted so far, in order.
    pub fn reap(&mut self, mut f: impl FnMut(Completion)) {
        let head: *mut AtomicU32 = self.rings.at(self.params.cq_off.head as usize);
        let tail: *mut AtomicU32 = self.rings.at(self.params.cq_off.tail as usize);
        let mask = self.params.cq_entries - 1;
        let cqes: *mut Cqe = self.rings.array(
            self.params.cq_off.cqes as usize,
            self.params.cq_entries as usize,
        );
        // SAFETY: the ring's aligned u32 head and tail; the entries between
        // them were written by the kernel before it published the tail
        // (acquire), and are not reused before the head moves past them.
        let (mut at, end) = unsafe {
            (
                (*head).load(Ordering::Relaxed),
                (*tail).load(Ordering::Acquire),
            )
        };
        while at != end {
            // SAFETY: an entry between head and tail (see above); `at & mask`
            // is below `cq_entries`, the array's length.
            let cqe = unsafe { cqes.add((at & mask) as usize).read() };
            at = at.wrapping_add(1);
            // The entry is copied out: release it before `f` runs.
            // SAFETY: as above; the kernel reads the head, user space writes it.
            unsafe { (*head).store(at, Ordering::Release) };
            f(Completion {
                user_data: cqe.user_data,
                res: cqe.res,
                more: cqe.flags & IORING_CQE_F_MORE != 0,
                buffer: (cqe.flags & IORING_CQE_F_BUFFER != 0)
                    .then_some(Bid((cqe.flags >> IORING_CQE_BUFFER_SHIFT) as u16)),
            });
        }
    }
}

/// A value owned by something `Send + Sync` (a driver, its handles) but
/// reached and dropped only on the thread that made it: a ring's single
/// issuer, and the `!Send` state around it. Dropped on another thread,
/// the value is leaked rather than touched there.
pub(crate) struct ThreadBound<T> {
    thread: ThreadId,
    value: Option<T>,
}

// SAFETY: the value is reached (`get` checks the thread) and dropped
// (`Drop` checks it) only on `thread`, so no `!Send` or `!Sync` value is
// ever touched by a second thread; `&T` leaves that thread only if
// `T: Sync`.
unsafe impl<T> Send for ThreadBound<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for ThreadBound<T> {}

impl<T> ThreadBound<T> {
    /// Binds `value` to the calling thread.
    pub(crate) fn new(value: T) -> ThreadBound<T> {
        ThreadBound {
            thread: thread::current().id(),
            value: Some(value),
        }
    }

    /// The value, on its thread; `None` on any other.
    pub(crate) fn get(&self) -> Option<&T> {
        if thread::current().id() == self.thread {
            self.value.as_ref()
        } else {
            None
        }
    }
}

impl<T> Drop for ThreadBound<T> {
    fn drop(&mut self) {
        if thread::current().id() != self.thread {
            std::mem::forget(self.value.take());
        }
    }
}

/// A non-blocking eventfd, for [`Ring::register_eventfd`].
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd(2) takes no pointer; a new fd on success.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fd was just made and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A received datagram, read in its provided buffer.
#[derive(Debug)]
pub struct Datagram<'a> {
    /// The payload, cut to what the buffer held (a longer datagram is
    /// cut, as by `recvfrom` into a buffer of that size).
    pub payload: &'a [u8],
    /// The source address (`None`: not an IP one, never seen on a UDP
    /// socket).
    pub source: Option<SocketAddr>,
    /// The datagram was longer than the buffer held.
    pub truncated: bool,
    /// The kernel's receive time, in a [`RecvLayout::Timestamped`] buffer
    /// of a socket with `SO_TIMESTAMPNS` on.
    pub timestamp: Option<SystemTime>,
}

/// A group of provided buffers (a buffer ring registered with the ring):
/// `count` buffers of `buf_len` bytes, every one the kernel's at first.
pub struct BufGroup {
    // Field order is drop order: both maps go together, after the ring
    // (whose owner guarantees no receive writes into them any more).
    bufs: Map,
    entries: Map,
    /// The buffer ring's tail as user space counts it.
    tail: Cell<u16>,
    count: u16,
    /// Buffers user space holds (lent by completions, not yet given back).
    out: Cell<u16>,
    /// Every buffer was out (or a receive found none): receives of the
    /// group may be starved until buffers come back.
    exhausted: Cell<bool>,
    /// A buffer came back to an exhausted group since the last
    /// [`take_refilled`](Self::take_refilled).
    refilled: Cell<bool>,
    buf_len: usize,
    bgid: u16,
}

impl std::fmt::Debug for BufGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufGroup")
            .field("bgid", &self.bgid)
            .field("count", &self.count)
            .field("buf_len", &self.buf_len)
            .finish_non_exhaustive()
    }
}

impl BufGroup {
    /// Registers group `bgid` with `ring`: `count` (a power of two, at
    /// most 32,768) buffers of `buf_len` bytes.
    pub fn new(ring: &Ring, bgid: u16, count: u16, buf_len: usize) -> io::Result<BufGroup> {
        assert!(count.is_power_of_two() && count <= 1 << 15);
        let bufs = Map::new(None, 0, count as usize * buf_len)?;
        let entries = Map::new(None, 0, count as usize * std::mem::size_of::<Buf>())?;
        let reg = BufReg {
            ring_addr: entries.ptr.as_ptr() as u64,
            ring_entries: count as u32,
            bgid,
            pad: 0,
            resv: [0; 3],
        };
        // SAFETY: `reg` describes `entries`, page-aligned and as long as
        // the kernel reads; it stays mapped as long as the group, which
        // outlives every receive drawing on it (module rules).
        syscall_result(unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                ring.fd.as_raw_fd(),
                IORING_REGISTER_PBUF_RING,
                &reg as *const BufReg,
                1,
            )
        })?;
        let group = BufGroup {
            bufs,
            entries,
            tail: Cell::new(0),
            count,
            // Every buffer is out until the loop below gives it to the kernel.
            out: Cell::new(count),
            exhausted: Cell::new(false),
            refilled: Cell::new(false),
            buf_len,
            bgid,
        };
        for bid in 0..count {
            group.give_back(Bid(bid));
        }
        Ok(group)
    }

    /// Reads the datagram a multishot `recvmsg` of `layout` wrote into
    /// buffer `bid` (`used` bytes of it) with `f`, then gives the buffer
    /// back. `f` gets `None` for a buffer too short to hold the receive's
    /// header (never seen; the kernel's contract).
    #[inline]
    pub fn read<R>(
        &self,
        bid: Bid,
        used: usize,
        layout: RecvLayout,
        f: impl FnOnce(Option<Datagram<'_>>) -> R,
    ) -> R {
        let offset = bid.0 as usize * self.buf_len;
        // SAFETY: buffer `bid` is user space's (its completion was reaped
        // and `bid` is consumed here, so it goes back once, below, after
        // `f`); the kernel wrote its first `used` bytes; the slice lies in
        // `bufs` and does not outlive this call.
        let buf = unsafe {
            std::slice::from_raw_parts(self.bufs.ptr.as_ptr().add(offset), used.min(self.buf_len))
        };
        // Given back after `f`, also if `f` panics.
        let _give_back = GiveBack(self, Some(bid));
        f(parse_recvmsg(buf, layout))
    }

    /// Gives buffer `bid` back unread.
    pub fn discard(&self, bid: Bid) {
        self.give_back(bid);
    }

    /// Counts a buffer a completion lent user space (its [`Bid`] is then
    /// read or discarded, which counts it back).
    pub fn lent(&self) {
        let out = self.out.get() + 1;
        self.out.set(out);
        if out == self.count {
            self.exhausted.set(true);
        }
    }

    /// A receive found no buffer (`ENOBUFS`).
    pub(crate) fn starved(&self) {
        self.exhausted.set(true);
    }

    /// Whether every buffer is out (or a receive found none) and none came
    /// back since.
    pub(crate) fn is_exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// Whether buffers came back to the group since it was exhausted.
    pub(crate) fn is_refilled(&self) -> bool {
        self.refilled.get()
    }

    /// [`is_refilled`](Self::is_refilled), and forgets it.
    pub(crate) fn take_refilled(&self) -> bool {
        self.refilled.replace(false)
    }

    fn give_back(&self, bid: Bid) {
        self.out.set(self.out.get() - 1);
        if self.exhausted.replace(false) {
            self.refilled.set(true);
        }
        let tail = self.tail.get();
        let entries: *mut Buf = self.entries.array(0, self.count as usize);
        // SAFETY: the index is below `count`, the array's length; the entry
        // is past the kernel's head (user space never has more than
        // `count` buffers, each given back once), so the kernel does not
        // read it until the tail moves. Only `addr`, `len` and `bid` are
        // written: entry 0's `resv` is the ring's tail.
        unsafe {
            let entry = entries.add((tail & (self.count - 1)) as usize);
            ptr::addr_of_mut!((*entry).addr)
                .write(self.bufs.ptr.as_ptr() as u64 + (bid.0 as usize * self.buf_len) as u64);
            ptr::addr_of_mut!((*entry).len).write(self.buf_len as u32);
            ptr::addr_of_mut!((*entry).bid).write(bid.0);
        }
        let tail = tail.wrapping_add(1);
        self.tail.set(tail);
        // SAFETY: the tail is the `resv` field (offset 14) of the first
        // entry: an aligned u16 in the shared ring, read by the kernel; the
        // release store publishes the entry written above.
        unsafe {
            let shared = ptr::addr_of_mut!((*entries).resv).cast::<AtomicU16>();
            (*shared).store(tail, Ordering::Release);
        }
    }
}

/// Gives its buffer back when dropped.
struct GiveBack<'a>(&'a BufGroup, Option<Bid>);

impl Drop for GiveBack<'_> {
    fn drop(&mut self) {
        if let Some(bid) = self.1.take() {
            self.0.give_back(bid);
        }
    }
}

/// Splits a multishot `recvmsg`'s buffer laid out as `layout`:
/// `io_uring_recvmsg_out`, the name area, the control area, the payload.
fn parse_recvmsg(buf: &[u8], layout: RecvLayout) -> Option<Datagram<'_>> {
    let word =
        |at: usize| u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes")) as usize;
    let header_len = layout.header_len();
    if buf.len() < header_len {
        return None;
    }
    let (namelen, controllen, payloadlen, flags) = (word(0), word(4), word(8), word(12));
    let payload = &buf[header_len..];
    let payload = &payload[..payloadlen.min(payload.len())];
    let control_at = OUT_LEN + NAME_LEN;
    let timestamp = match layout {
        RecvLayout::Plain => None,
        RecvLayout::Timestamped => {
            timestamp_in(&buf[control_at..control_at + controllen.min(layout.control_len())])
        }
    };
    Some(Datagram {
        payload,
        source: inet_addr(&buf[OUT_LEN..OUT_LEN + namelen.min(NAME_LEN)]),
        truncated: payloadlen > payload.len() || flags & libc::MSG_TRUNC as usize != 0,
        timestamp,
    })
}

/// A `sockaddr_in` or `sockaddr_in6` as the kernel wrote it (native-endian
/// family, network-endian port), read field by field: no copy into a
/// 128-byte `sockaddr_storage` per datagram.
fn inet_addr(name: &[u8]) -> Option<SocketAddr> {
    let family = u16::from_ne_bytes(name.get(..2)?.try_into().ok()?);
    let port = u16::from_be_bytes(name.get(2..4)?.try_into().ok()?);
    match family as libc::c_int {
        libc::AF_INET => {
            let ip: [u8; 4] = name.get(4..8)?.try_into().ok()?;
            Some(SocketAddrV4::new(Ipv4Addr::from(ip), port).into())
        }
        libc::AF_INET6 => {
            let flowinfo = u32::from_ne_bytes(name.get(4..8)?.try_into().ok()?);
            let ip: [u8; 16] = name.get(8..24)?.try_into().ok()?;
            let scope_id = u32::from_ne_bytes(name.get(24..28)?.try_into().ok()?);
            Some(SocketAddrV6::new(Ipv6Addr::from(ip), port, flowinfo, scope_id).into())
        }
        _ => None,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A multishot `recvmsg` buffer as the kernel lays it out: header,
    /// name area (`NAME_LEN` bytes, `namelen` of them used), the control
    /// area of `layout` (`control` at its start), payload.
    fn recvmsg_buffer(
        name: &[u8],
        layout: RecvLayout,
        control: &[u8],
        payload: &[u8],
        payloadlen: u32,
    ) -> Vec<u8> {
        let mut buf = Vec::new();
        buf.extend_from_slice(&(name.len() as u32).to_ne_bytes());
        buf.extend_from_slice(&(control.len() as u32).to_ne_bytes());
        buf.extend_from_slice(&payloadlen.to_ne_bytes());
        let flags = if payloadlen as usize > payload.len() {
            libc::MSG_TRUNC
        } else {
            0
        };
        buf.extend_from_slice(&(flags as u32).to_ne_bytes());
        let mut area = [0u8; NAME_LEN];
        area[..name.len()].copy_from_slice(name);
        buf.extend_from_slice(&area);
        let mut area = vec![0u8; layout.control_len()];
        area[..control.len()].copy_from_slice(control);
        buf.extend_from_slice(&area);
        buf.extend_from_slice(payload);
        buf
    }

    fn plain_buffer(name: &[u8], payload: &[u8], payloadlen: u32) -> Vec<u8> {
        recvmsg_buffer(name, RecvLayout::Plain, &[], payload, payloadlen)
    }

    fn sockaddr_in(port: u16, ip: [u8; 4]) -> Vec<u8> {
        let mut name = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        name.extend_from_slice(&port.to_be_bytes());
        name.extend_from_slice(&ip);
        name.extend_from_slice(&[0; 8]);
        name
    }

    #[test]
    fn an_ipv4_datagram_is_split_into_source_and_payload() {
        let buf = plain_buffer(&sockaddr_in(4242, [127, 0, 0, 1]), b"hello", 5);
        let datagram = parse_recvmsg(&buf, RecvLayout::Plain).expect("a whole header");
        assert_eq!(datagram.payload, b"hello");
        assert_eq!(datagram.source, Some("127.0.0.1:4242".parse().unwrap()));
        assert!(!datagram.truncated);
        assert_eq!(datagram.timestamp, None);
    }

    #[test]
    fn an_ipv6_source_keeps_its_flow_and_scope() {
        let mut name = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        name.extend_from_slice(&9u16.to_be_bytes());
        name.extend_from_slice(&7u32.to_ne_bytes());
        name.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        name.extend_from_slice(&3u32.to_ne_bytes());
        let buf = plain_buffer(&name, b"", 0);
        let source = parse_recvmsg(&buf, RecvLayout::Plain).unwrap().source;
        assert_eq!(
            source,
            Some(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 9, 7, 3).into())
        );
    }

    #[test]
    fn a_cut_datagram_keeps_what_the_buffer_held() {
        // The kernel reports the whole length; the buffer held 3 bytes.
        let buf = plain_buffer(&sockaddr_in(1, [10, 0, 0, 1]), b"abc", 300);
        let datagram = parse_recvmsg(&buf, RecvLayout::Plain).unwrap();
        assert_eq!(datagram.payload, b"abc");
        assert!(datagram.truncated);
    }

    #[test]
    fn a_timestamped_buffer_gives_the_timestamp_and_the_payload_after_it() {
        use crate::sys::mmsg::tests::{control_message, timespec_bytes};
        let stamp = control_message(
            libc::SOL_SOCKET,
            libc::SCM_TIMESTAMPNS,
            &timespec_bytes(9, 8),
        );
        let name = sockaddr_in(5004, [127, 0, 0, 1]);
        let buf = recvmsg_buffer(&name, RecvLayout::Timestamped, &stamp, b"rtp", 3);
        let datagram = parse_recvmsg(&buf, RecvLayout::Timestamped).unwrap();
        assert_eq!(datagram.payload, b"rtp");
        assert_eq!(datagram.source, Some("127.0.0.1:5004".parse().unwrap()));
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::new(9, 8);
        assert_eq!(datagram.timestamp, Some(at));
        // No control message written (timestamps off): no timestamp, and
        // the payload still after the control area.
        let buf = recvmsg_buffer(&name, RecvLayout::Timestamped, &[], b"rtp", 3);
        let datagram = parse_recvmsg(&buf, RecvLayout::Timestamped).unwrap();
        assert_eq!((datagram.payload, datagram.timestamp), (&b"rtp"[..], None));
    }

    #[test]
    fn a_short_buffer_or_a_foreign_family_is_refused() {
        for layout in [RecvLayout::Plain, RecvLayout::Timestamped] {
            assert!(parse_recvmsg(&vec![0; layout.header_len() - 1], layout).is_none());
        }
        let unix = (libc::AF_UNIX as u16).to_ne_bytes();
        assert_eq!(inet_addr(&unix), None);
        assert_eq!(inet_addr(&[]), None);
    }
}
