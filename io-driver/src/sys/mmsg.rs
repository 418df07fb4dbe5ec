//! The `recvmmsg` / `sendmmsg` calls and the socket addresses they carry:
//! the only place in tempo-io that talks to libc directly.
//!
//! mio and std offer one datagram per syscall. Two things need more: the
//! receive-ahead rule (`recv_ahead`: one `recvmmsg` asking for two
//! datagrams tells "drained" from "more queued") and the batch API
//! ([`RecvBatch`](crate::net::RecvBatch) / [`SendBatch`](crate::net::SendBatch)).
//! Everything `unsafe` of those lives here, behind safe functions whose
//! arguments cannot dangle: every pointer handed to the kernel is made from
//! a borrow that outlives the call.
//!
//! `libc` is a normal dependency of tempo-io for this (it was already in
//! the tree through mio).
//!
//! # Raw syscalls
//!
//! The receive and send calls go through `libc::syscall` (`SYS_recvmmsg`,
//! `SYS_recvfrom`, `SYS_sendmmsg`), not glibc's `recvmmsg` / `recvfrom` /
//! `sendmmsg` wrappers. Those wrappers are pthread cancellation points:
//! around every call they enable and then disable asynchronous
//! cancellation, bookkeeping that cost more user-space time than the
//! receive itself on a receiver making one call per datagram (about 6% of
//! its samples). Tempo never uses pthread cancellation, and the calls are
//! non-blocking (`MSG_DONTWAIT`), so there is nothing to cancel: the raw
//! syscall does the same kernel work and reports errors the same way
//! (`-1` and `errno`). tempo-io is Linux-only, so the syscall numbers are
//! always there.

use std::ffi::OsStr;
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The most datagrams one `recvmmsg` / `sendmmsg` takes (`UIO_MAXIOV` on
/// Linux; the kernel silently shortens a longer vector).
///
/// ```
/// use tempo_io::net::{RecvBatch, MAX_BATCH};
///
/// assert_eq!(MAX_BATCH, 1024);
/// let batch = RecvBatch::new(MAX_BATCH, 1500)?; // the largest batch
/// assert_eq!(batch.capacity(), MAX_BATCH);
/// # Ok::<(), std::io::Error>(())
/// ```
pub const MAX_BATCH: usize = libc::UIO_MAXIOV as usize;

/// A socket address as the kernel writes and reads it.
#[derive(Clone, Copy)]
pub(crate) struct RawAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl std::fmt::Debug for RawAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawAddr")
            .field("family", &self.storage.ss_family)
            .field("len", &self.len)
            .finish()
    }
}

impl RawAddr {
    /// No address (length 0), room for any.
    pub(crate) fn empty() -> RawAddr {
        RawAddr {
            // SAFETY: `sockaddr_storage` is a C struct of integers and byte
            // arrays, for which all-zero bytes are a valid value.
            storage: unsafe { MaybeUninit::zeroed().assume_init() },
            len: 0,
        }
    }

    /// An IPv4 or IPv6 address.
    pub(crate) fn from_inet(addr: SocketAddr) -> RawAddr {
        let mut raw = RawAddr::empty();
        let storage = &mut raw.storage as *mut libc::sockaddr_storage;
        match addr {
            SocketAddr::V4(a) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: `sockaddr_storage` is larger than and as aligned
                // as every sockaddr type (its definition's purpose).
                unsafe { storage.cast::<libc::sockaddr_in>().write(sin) };
                raw.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
            }
            SocketAddr::V6(a) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    sin6_flowinfo: a.flowinfo().to_be(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                };
                // SAFETY: as above, `sockaddr_storage` fits `sockaddr_in6`.
                unsafe { storage.cast::<libc::sockaddr_in6>().write(sin6) };
                raw.len = size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            }
        }
        raw
    }

    /// A Unix socket path (fails if longer than `sun_path` allows).
    pub(crate) fn from_path(path: &Path) -> io::Result<RawAddr> {
        let bytes = path.as_os_str().as_bytes();
        let mut raw = RawAddr::empty();
        // SAFETY: `sockaddr_storage` fits and aligns `sockaddr_un`, and the
        // reference lives no longer than `raw`, which is not otherwise used
        // until it ends.
        let sun = unsafe { &mut *(&mut raw.storage as *mut _ as *mut libc::sockaddr_un) };
        if bytes.len() >= sun.sun_path.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "path longer than a Unix socket address allows (sun_path)",
            ));
        }
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in sun.sun_path.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        raw.len = (sun_path_offset() + bytes.len() + 1) as libc::socklen_t;
        Ok(raw)
    }

    /// The address as an IP socket address.
    pub(crate) fn inet_addr(&self) -> io::Result<SocketAddr> {
        let storage = &self.storage as *const libc::sockaddr_storage;
        match self.storage.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the family says the kernel wrote a `sockaddr_in`,
                // which `sockaddr_storage` fits and aligns.
                let sin = unsafe { &*storage.cast::<libc::sockaddr_in>() };
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Ok(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
            }
            libc::AF_INET6 => {
                // SAFETY: as above, for `sockaddr_in6`.
                let sin6 = unsafe { &*storage.cast::<libc::sockaddr_in6>() };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Ok(SocketAddrV6::new(
                    ip,
                    u16::from_be(sin6.sin6_port),
                    u32::from_be(sin6.sin6_flowinfo),
                    sin6.sin6_scope_id,
                )
                .into())
            }
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the kernel returned a non-IP source address",
            )),
        }
    }

    /// The address as a Unix socket address (path, abstract name, or
    /// unnamed).
    pub(crate) fn unix_addr(&self) -> io::Result<std::os::unix::net::SocketAddr> {
        let offset = sun_path_offset();
        let len = self.len as usize;
        if len <= offset {
            return unnamed_unix_addr();
        }
        // SAFETY: `sockaddr_storage` fits and aligns `sockaddr_un`; the
        // kernel wrote `len` bytes of one.
        let sun = unsafe { &*(&self.storage as *const _ as *const libc::sockaddr_un) };
        let n = (len - offset).min(sun.sun_path.len());
        let mut name = [0u8; 108];
        for (dst, src) in name.iter_mut().zip(&sun.sun_path[..n]) {
            *dst = *src as u8;
        }
        if name[0] == 0 {
            std::os::unix::net::SocketAddr::from_abstract_name(&name[1..n])
        } else {
            let end = name[..n].iter().position(|&b| b == 0).unwrap_or(n);
            std::os::unix::net::SocketAddr::from_pathname(Path::new(OsStr::from_bytes(
                &name[..end],
            )))
        }
    }
}

/// Where `sun_path` starts in a `sockaddr_un`.
fn sun_path_offset() -> usize {
    std::mem::offset_of!(libc::sockaddr_un, sun_path)
}

/// An unnamed Unix address (std has no constructor for one): made once
/// per process from an unbound socket.
fn unnamed_unix_addr() -> io::Result<std::os::unix::net::SocketAddr> {
    static UNNAMED: OnceLock<std::os::unix::net::SocketAddr> = OnceLock::new();
    if let Some(addr) = UNNAMED.get() {
        return Ok(addr.clone());
    }
    let addr = std::os::unix::net::UnixDatagram::unbound()?.local_addr()?;
    Ok(UNNAMED.get_or_init(|| addr).clone())
}

/// Where one message of a `recvmmsg` call goes.
#[derive(Debug)]
pub(crate) struct RecvTarget<'a> {
    pub(crate) buf: &'a mut [u8],
    pub(crate) addr: &'a mut RawAddr,
    /// Control buffer for ancillary data (timestamps), if any.
    pub(crate) control: Option<&'a mut [u8]>,
}

/// What the kernel reported for one received message.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Received {
    /// Bytes stored (at most the buffer's length).
    pub(crate) len: usize,
    /// The datagram was longer than the buffer (`MSG_TRUNC`); the rest is
    /// lost, as with `recvfrom`.
    pub(crate) truncated: bool,
    /// Length of the source address the kernel wrote.
    pub(crate) addr_len: libc::socklen_t,
    /// The `SCM_TIMESTAMPNS` receive time, if the control buffer had one.
    pub(crate) timestamp: Option<SystemTime>,
}

impl RawAddr {
    /// Records the length the kernel wrote into this address.
    pub(crate) fn set_len(&mut self, len: libc::socklen_t) {
        self.len = len;
    }
}

/// Space a control buffer needs for one `SCM_TIMESTAMPNS` message.
pub(crate) fn timestamp_control_len() -> usize {
    // SAFETY: CMSG_SPACE only computes a size.
    unsafe { libc::CMSG_SPACE(size_of::<libc::timespec>() as libc::c_uint) as usize }
}

/// The scratch arrays of one call (`mmsghdr`, `iovec` and result per
/// message), kept by the caller so that a call allocates nothing once they
/// have grown to the batch size.
#[derive(Debug, Default)]
pub(crate) struct MmsgScratch {
    headers: Vec<libc::mmsghdr>,
    iovecs: Vec<libc::iovec>,
    /// The last `recv_mmsg`'s results, one per message received.
    pub(crate) received: Vec<Received>,
}

// SAFETY: the raw pointers in the scratch arrays are written afresh before
// each call, from borrows that outlive it, and read only during that call:
// between calls they are never dereferenced, so moving or sharing the
// (inert) arrays across threads is harmless.
unsafe impl Send for MmsgScratch {}
// SAFETY: as above; `&MmsgScratch` gives no access to the pointers.
unsafe impl Sync for MmsgScratch {}

impl MmsgScratch {
    /// Room for `n` messages (the only allocation of a batch's calls).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.headers.reserve(n.saturating_sub(self.headers.len()));
        self.iovecs.reserve(n.saturating_sub(self.iovecs.len()));
        self.received.reserve(n.saturating_sub(self.received.len()));
    }
}

/// One non-blocking `recvmmsg` (the raw syscall, see the module docs) into
/// `targets` (1 to [`MAX_BATCH`]).
/// Returns how many were filled; their results are in
/// `scratch.received`. `WouldBlock` if nothing was queued.
pub(crate) fn recv_mmsg<'a>(
    fd: RawFd,
    targets: impl Iterator<Item = RecvTarget<'a>>,
    scratch: &mut MmsgScratch,
) -> io::Result<usize> {
    scratch.headers.clear();
    scratch.iovecs.clear();
    scratch.received.clear();
    for target in targets {
        scratch.iovecs.push(libc::iovec {
            iov_base: target.buf.as_mut_ptr().cast(),
            iov_len: target.buf.len(),
        });
        // SAFETY: all-zero is a valid `mmsghdr` (null pointers, zero lengths).
        let mut header: libc::mmsghdr = unsafe { MaybeUninit::zeroed().assume_init() };
        header.msg_hdr.msg_name = (&mut target.addr.storage as *mut libc::sockaddr_storage).cast();
        header.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        header.msg_hdr.msg_iovlen = 1;
        if let Some(control) = target.control {
            header.msg_hdr.msg_control = control.as_mut_ptr().cast();
            header.msg_hdr.msg_controllen = control.len() as _;
        }
        scratch.headers.push(header);
    }
    debug_assert!(!scratch.headers.is_empty() && scratch.headers.len() <= MAX_BATCH);
    // The iovec array is complete: it no longer moves, so point at it now.
    for (header, iov) in scratch.headers.iter_mut().zip(scratch.iovecs.iter_mut()) {
        header.msg_hdr.msg_iov = iov;
    }
    // SAFETY: every header points into the targets (buffers, addresses,
    // control buffers, all borrowed mutably for 'a, which outlives this
    // call) and into `scratch.iovecs`, which is not touched during the
    // call; each length given is that of its borrow. The arguments are
    // those of `recvmmsg(2)`, in its order, widened to `c_long` (the null
    // timeout: none).
    let n = cvt(unsafe {
        libc::syscall(
            libc::SYS_recvmmsg,
            fd as libc::c_long,
            scratch.headers.as_mut_ptr(),
            scratch.headers.len() as libc::c_long,
            libc::MSG_DONTWAIT as libc::c_long,
            std::ptr::null_mut::<libc::timespec>(),
        )
    })?;
    for (header, iov) in scratch.headers.iter().zip(&scratch.iovecs).take(n) {
        let msg = &header.msg_hdr;
        scratch.received.push(Received {
            len: (header.msg_len as usize).min(iov.iov_len),
            truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
            addr_len: msg.msg_namelen,
            timestamp: if msg.msg_control.is_null() {
                None
            } else {
                read_timestamp(msg)
            },
        });
    }
    Ok(n)
}

/// One datagram with `recvfrom(MSG_DONTWAIT)` (the raw syscall, see the
/// module docs) into `buf`, its source into
/// `addr`; returns the length received (cut to `buf`). The receive when the
/// receive-ahead rule is off (the basic scheduler, `try_*`): a one-slot
/// `recvmmsg` does the same work with more set-up in the kernel.
pub(crate) fn recv_from(fd: RawFd, buf: &mut [u8], addr: &mut RawAddr) -> io::Result<usize> {
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `buf`, `addr.storage` and `len` are borrowed mutably for the
    // whole call and the lengths given are theirs; the kernel writes at
    // most `len` bytes of address and `buf.len()` bytes of payload. The
    // arguments are those of `recvfrom(2)`, in its order, widened to
    // `c_long`.
    let n = cvt(unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd as libc::c_long,
            buf.as_mut_ptr(),
            buf.len() as libc::c_long,
            libc::MSG_DONTWAIT as libc::c_long,
            &mut addr.storage as *mut libc::sockaddr_storage,
            &mut len as *mut libc::socklen_t,
        )
    })?;
    addr.set_len(len);
    Ok(n)
}

/// A raw syscall's return value: the count it returned, or the `errno` it
/// set (`syscall()` returns `-1` and sets `errno` as the wrappers do).
fn cvt(rc: libc::c_long) -> io::Result<usize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// The `SCM_TIMESTAMPNS` of a received message, if present.
fn read_timestamp(msg: &libc::msghdr) -> Option<SystemTime> {
    // SAFETY: `msg` was filled by the kernel for a control buffer that is
    // still borrowed; the CMSG macros walk within `msg_controllen`.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts = libc::CMSG_DATA(cmsg)
                    .cast::<libc::timespec>()
                    .read_unaligned();
                return Some(
                    SystemTime::UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
                );
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    None
}

/// One datagram to send: payload and destination (`None`: the connected
/// peer).
pub(crate) struct SendSlot<'a> {
    pub(crate) payload: &'a [u8],
    pub(crate) target: Option<&'a RawAddr>,
}

/// One non-blocking `sendmmsg` (the raw syscall) of `slots` (at most [`MAX_BATCH`]): how
/// many were sent. `WouldBlock` if none could be.
pub(crate) fn send_mmsg<'a>(
    fd: RawFd,
    slots: impl Iterator<Item = SendSlot<'a>> + Clone,
    scratch: &mut MmsgScratch,
) -> io::Result<usize> {
    scratch.headers.clear();
    scratch.iovecs.clear();
    for slot in slots.clone() {
        scratch.iovecs.push(libc::iovec {
            iov_base: slot.payload.as_ptr() as *mut libc::c_void,
            iov_len: slot.payload.len(),
        });
    }
    for (slot, iov) in slots.zip(scratch.iovecs.iter_mut()) {
        // The iovec array is complete: it no longer moves.
        // SAFETY: all-zero is a valid `mmsghdr`.
        let mut header: libc::mmsghdr = unsafe { MaybeUninit::zeroed().assume_init() };
        if let Some(target) = slot.target {
            header.msg_hdr.msg_name = (&target.storage as *const libc::sockaddr_storage
                as *mut libc::sockaddr_storage)
                .cast();
            header.msg_hdr.msg_namelen = target.len;
        }
        header.msg_hdr.msg_iov = iov;
        header.msg_hdr.msg_iovlen = 1;
        scratch.headers.push(header);
    }
    debug_assert!(scratch.headers.len() <= MAX_BATCH);
    // SAFETY: every header points into payloads and addresses borrowed for
    // this call (the kernel only reads them despite the `*mut` types) and
    // into `scratch.iovecs`, not moved during the call. The arguments are
    // those of `sendmmsg(2)`, in its order, widened to `c_long`.
    cvt(unsafe {
        libc::syscall(
            libc::SYS_sendmmsg,
            fd as libc::c_long,
            scratch.headers.as_mut_ptr(),
            scratch.headers.len() as libc::c_long,
            libc::MSG_DONTWAIT as libc::c_long,
        )
    })
}

/// Turns on `SO_TIMESTAMPNS` (kernel receive timestamps) for `fd`.
pub(crate) fn enable_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a live c_int and its size is passed with it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
