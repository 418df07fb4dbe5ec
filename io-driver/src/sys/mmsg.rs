//! The `recvmmsg` / `recvmsg` / `recvfrom` / `sendmmsg` calls and the
//! socket addresses they carry. Every `unsafe` of those lives here, behind
//! safe functions whose arguments cannot dangle: every pointer handed to
//! the kernel is made from a borrow that outlives the call.
//!
//! The calls go through `libc::syscall`, not glibc's wrappers: those are
//! pthread cancellation points and toggle asynchronous cancellation around
//! every call. Tempo never uses pthread cancellation and the calls are
//! non-blocking (`MSG_DONTWAIT`), so the raw syscall does the same kernel
//! work and reports errors the same way (`-1` and `errno`).

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
pub const MAX_BATCH: usize = libc::UIO_MAXIOV as usize;

/// A socket address as the kernel writes and reads it.
///
/// Only the first `len` bytes of `storage` are ever read: the ones the
/// kernel (or a constructor here) wrote; the rest stays uninitialized (no
/// zeroing per receive). `repr(C)`, the length first, next to the bytes.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct RawAddr {
    len: libc::socklen_t,
    storage: MaybeUninit<libc::sockaddr_storage>,
}

impl std::fmt::Debug for RawAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawAddr")
            .field("family", &self.family())
            .field("len", &self.len)
            .finish()
    }
}

impl RawAddr {
    /// No address (length 0), room for any.
    pub(crate) fn empty() -> RawAddr {
        RawAddr {
            storage: MaybeUninit::uninit(),
            len: 0,
        }
    }

    /// An address made of `sockaddr` (a `sockaddr_in`, `sockaddr_in6` or
    /// `sockaddr_un`, whole).
    fn from_sockaddr<T: Copy>(sockaddr: T, len: usize) -> RawAddr {
        debug_assert!(len <= size_of::<T>());
        let mut raw = RawAddr::empty();
        // SAFETY: `sockaddr_storage` is larger than and as aligned as every
        // sockaddr type (its definition's purpose), so the write stays in
        // `raw.storage`.
        unsafe { raw.storage.as_mut_ptr().cast::<T>().write(sockaddr) };
        raw.len = len as libc::socklen_t;
        raw
    }

    /// An IPv4 or IPv6 address.
    pub(crate) fn from_inet(addr: SocketAddr) -> RawAddr {
        match addr {
            SocketAddr::V4(a) => RawAddr::from_sockaddr(
                libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                },
                size_of::<libc::sockaddr_in>(),
            ),
            SocketAddr::V6(a) => RawAddr::from_sockaddr(
                libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    // Not byte-swapped: std and mio pass `flowinfo()` to
                    // the kernel as it is, and so must every address here.
                    sin6_flowinfo: a.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                },
                size_of::<libc::sockaddr_in6>(),
            ),
        }
    }

    /// A Unix socket path (fails if longer than `sun_path` allows).
    pub(crate) fn from_path(path: &Path) -> io::Result<RawAddr> {
        let bytes = path.as_os_str().as_bytes();
        // SAFETY: `sockaddr_un` is a C struct of an integer and a byte
        // array, for which all-zero bytes are a valid value.
        let mut sun: libc::sockaddr_un = unsafe { MaybeUninit::zeroed().assume_init() };
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
        Ok(RawAddr::from_sockaddr(
            sun,
            sun_path_offset() + bytes.len() + 1,
        ))
    }

    /// The address as a pointer and length for a call that reads it
    /// (`bind`, `connect`): valid while `self` is borrowed.
    pub(crate) fn as_sockaddr(&self) -> (*const libc::sockaddr, libc::socklen_t) {
        (self.storage.as_ptr().cast(), self.len)
    }

    /// The bytes of the address that were written: the first `len`
    /// (never more than the storage, whatever length the kernel reported).
    #[inline]
    fn bytes(&self) -> &[u8] {
        let len = (self.len as usize).min(size_of::<libc::sockaddr_storage>());
        // SAFETY: the first `len` bytes of `storage` were written, by the
        // kernel (which writes as many as the length it reports, cut to the
        // storage) or by `from_sockaddr`; they lie within `storage`, which
        // this borrow keeps alive.
        unsafe { std::slice::from_raw_parts(self.storage.as_ptr().cast::<u8>(), len) }
    }

    /// The address family, if the address is long enough to have one.
    #[inline]
    fn family(&self) -> Option<libc::c_int> {
        let bytes = self.bytes();
        let family = bytes.get(..size_of::<libc::sa_family_t>())?;
        Some(libc::sa_family_t::from_ne_bytes(family.try_into().ok()?) as libc::c_int)
    }

    /// The first `size_of::<T>()` bytes of the address as a `T`, if that
    /// many were written.
    #[inline]
    fn read_as<T: Copy>(&self) -> Option<T> {
        if self.bytes().len() < size_of::<T>() {
            return None;
        }
        // SAFETY: the first `size_of::<T>()` bytes of `storage` were
        // written (checked just above), and `storage` fits and aligns
        // every sockaddr type `T` this is called with; `T` is a C struct
        // of integers, valid for any bytes.
        Some(unsafe { self.storage.as_ptr().cast::<T>().read() })
    }

    /// The address as an IP socket address.
    #[inline]
    pub(crate) fn inet_addr(&self) -> io::Result<SocketAddr> {
        let not_ip = || {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "the kernel returned a non-IP source address",
            )
        };
        match self.family() {
            Some(libc::AF_INET) => {
                let sin: libc::sockaddr_in = self.read_as().ok_or_else(not_ip)?;
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Ok(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
            }
            Some(libc::AF_INET6) => {
                let sin6: libc::sockaddr_in6 = self.read_as().ok_or_else(not_ip)?;
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Ok(SocketAddrV6::new(
                    ip,
                    u16::from_be(sin6.sin6_port),
                    sin6.sin6_flowinfo,
                    sin6.sin6_scope_id,
                )
                .into())
            }
            _ => Err(not_ip()),
        }
    }

    /// The address as a Unix socket address (path, abstract name, or
    /// unnamed).
    pub(crate) fn unix_addr(&self) -> io::Result<std::os::unix::net::SocketAddr> {
        let bytes = self.bytes();
        let bytes = &bytes[..bytes.len().min(size_of::<libc::sockaddr_un>())];
        let Some(name) = bytes
            .get(sun_path_offset()..)
            .filter(|name| !name.is_empty())
        else {
            return unnamed_unix_addr();
        };
        if name[0] == 0 {
            std::os::unix::net::SocketAddr::from_abstract_name(&name[1..])
        } else {
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
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
    #[inline]
    pub(crate) fn set_len(&mut self, len: libc::socklen_t) {
        self.len = len;
    }
}

/// Space a control buffer needs for one `SCM_TIMESTAMPNS` message
/// (`CMSG_SPACE` of a `timespec`).
pub(crate) const TIMESTAMP_CONTROL_LEN: usize =
    cmsg_align(size_of::<libc::cmsghdr>()) + cmsg_align(size_of::<libc::timespec>());

/// `CMSG_ALIGN`: control messages start at multiples of a `size_t`.
const fn cmsg_align(len: usize) -> usize {
    (len + size_of::<libc::size_t>() - 1) & !(size_of::<libc::size_t>() - 1)
}

/// The scratch arrays of a large call (`mmsghdr` and `iovec` per
/// message), kept by the caller so that a call allocates nothing once they
/// have grown to the batch size. Receives of up to [`STACK_BATCH`]
/// messages need none: their arrays are on the stack.
#[derive(Debug, Default)]
pub(crate) struct MmsgScratch {
    headers: Vec<libc::mmsghdr>,
    iovecs: Vec<libc::iovec>,
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
    }
}

/// The most messages a receive builds its `mmsghdr` / `iovec` arrays for
/// on the stack (1.25 KiB, left uninitialized beyond the entries used)
/// rather than in a [`MmsgScratch`], whose heap lines would be cold on
/// every call of a batch reused across many sockets.
pub(crate) const STACK_BATCH: usize = 16;

/// One non-blocking `recvmmsg` (the raw syscall, see the module docs; a
/// `recvmsg` for a single target) into `targets` (1 to [`MAX_BATCH`]):
/// `each(i, result)` is called for each message received, in order, and
/// the count is returned. The kernel's arrays are on the stack for up to
/// [`STACK_BATCH`] targets (only the entries used are written), in
/// `scratch` beyond. `WouldBlock` if nothing was queued.
pub(crate) fn recv_mmsg<'a>(
    fd: RawFd,
    targets: impl ExactSizeIterator<Item = RecvTarget<'a>>,
    scratch: &mut MmsgScratch,
    each: impl FnMut(usize, Received),
) -> io::Result<usize> {
    let count = targets.len();
    if count <= STACK_BATCH {
        let mut headers = [MaybeUninit::<libc::mmsghdr>::uninit(); STACK_BATCH];
        let mut iovecs = [MaybeUninit::<libc::iovec>::uninit(); STACK_BATCH];
        return recv_mmsg_into(fd, targets, &mut headers, &mut iovecs, each);
    }
    scratch.headers.clear();
    scratch.iovecs.clear();
    scratch.reserve(count);
    recv_mmsg_into(
        fd,
        targets,
        &mut scratch.headers.spare_capacity_mut()[..count],
        &mut scratch.iovecs.spare_capacity_mut()[..count],
        each,
    )
}

/// The one `recvmmsg` call: builds a header and an iovec in `headers[i]`
/// and `iovecs[i]` for each target (the targets' own memory is not
/// touched, only pointed at), makes the call, and reports each message
/// received to `each`. At most `headers.len()` targets are used.
fn recv_mmsg_into<'a>(
    fd: RawFd,
    targets: impl Iterator<Item = RecvTarget<'a>>,
    headers: &mut [MaybeUninit<libc::mmsghdr>],
    iovecs: &mut [MaybeUninit<libc::iovec>],
    mut each: impl FnMut(usize, Received),
) -> io::Result<usize> {
    let room = headers.len().min(iovecs.len());
    // Every access below goes through these two pointers, so that the
    // `msg_iov` pointers stored in the headers stay valid (no reborrow of
    // the slices in between).
    let header_base = headers.as_mut_ptr().cast::<libc::mmsghdr>();
    let iovec_base = iovecs.as_mut_ptr().cast::<libc::iovec>();
    let mut count = 0;
    for target in targets.take(room) {
        // SAFETY: `count < room`, so both writes stay in their slices
        // (`MaybeUninit<T>` has `T`'s layout); the header's pointers are
        // made from the target's borrows, which outlive this function.
        unsafe {
            let iov = iovec_base.add(count);
            iov.write(libc::iovec {
                iov_base: target.buf.as_mut_ptr().cast(),
                iov_len: target.buf.len(),
            });
            // All-zero is a valid `mmsghdr` (null pointers, zero lengths);
            // the fields the call uses are set below.
            let mut header: libc::mmsghdr = MaybeUninit::zeroed().assume_init();
            header.msg_hdr.msg_name = target.addr.storage.as_mut_ptr().cast();
            header.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            header.msg_hdr.msg_iov = iov;
            header.msg_hdr.msg_iovlen = 1;
            if let Some(control) = target.control {
                header.msg_hdr.msg_control = control.as_mut_ptr().cast();
                header.msg_hdr.msg_controllen = control.len() as _;
            }
            header_base.add(count).write(header);
        }
        count += 1;
    }
    debug_assert!(count > 0 && count <= MAX_BATCH);
    let n = if count == 1 {
        // One message: `recvmsg` on the same header receives what a
        // one-slot `recvmmsg` would, for less kernel work (no vector to
        // walk, no `msg_len` written back to user memory).
        // SAFETY: header 0 was written above and points into the target
        // (borrowed mutably for 'a, which outlives this call) and into
        // `iovecs` (borrowed for this function, not touched during the
        // call). The arguments are those of `recvmsg(2)`, in its order,
        // widened to `c_long`.
        let len = cvt(unsafe {
            libc::syscall(
                libc::SYS_recvmsg,
                fd as libc::c_long,
                std::ptr::addr_of_mut!((*header_base).msg_hdr),
                libc::MSG_DONTWAIT as libc::c_long,
            )
        })?;
        // SAFETY: header 0 was written above and the call has returned:
        // nothing else refers to it. `msg_len` as `recvmmsg` sets it.
        unsafe { (*header_base).msg_len = len as libc::c_uint };
        1
    } else {
        // SAFETY: the first `count` headers were written above and point
        // into the targets (buffers, addresses, control buffers, all
        // borrowed mutably for 'a, which outlives this call) and into
        // `iovecs`, which is borrowed for this function and not touched
        // during the call; each length given is that of its borrow. The
        // arguments are those of `recvmmsg(2)`, in its order, widened to
        // `c_long` (the null timeout: none).
        cvt(unsafe {
            libc::syscall(
                libc::SYS_recvmmsg,
                fd as libc::c_long,
                header_base,
                count as libc::c_long,
                libc::MSG_DONTWAIT as libc::c_long,
                std::ptr::null_mut::<libc::timespec>(),
            )
        })?
    };
    for i in 0..n.min(count) {
        // SAFETY: `i < count`: header and iovec `i` were written above (the
        // kernel has since updated the header's lengths and flags), and no
        // other reference to them exists.
        let (header, iov_len) = unsafe { (&*header_base.add(i), (*iovec_base.add(i)).iov_len) };
        let msg = &header.msg_hdr;
        each(
            i,
            Received {
                len: (header.msg_len as usize).min(iov_len),
                truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
                addr_len: msg.msg_namelen,
                timestamp: if msg.msg_control.is_null() {
                    None
                } else {
                    read_timestamp(msg)
                },
            },
        );
    }
    Ok(n)
}

/// One datagram with `recvfrom(MSG_DONTWAIT)` (the raw syscall) into
/// `buf`, its source into `addr`; returns the length received (cut to
/// `buf`).
#[inline]
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
            addr.storage.as_mut_ptr(),
            &mut len as *mut libc::socklen_t,
        )
    })?;
    addr.set_len(len);
    Ok(n)
}

/// A raw syscall's return value: the count it returned, or the `errno` it
/// set (`syscall()` returns `-1` and sets `errno` as the wrappers do).
#[inline]
fn cvt(rc: libc::c_long) -> io::Result<usize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// The `SCM_TIMESTAMPNS` of a received message, if present.
fn read_timestamp(msg: &libc::msghdr) -> Option<SystemTime> {
    #[allow(clippy::unnecessary_cast)] // `socklen_t` on some libcs
    let len = msg.msg_controllen as usize;
    // SAFETY: `msg` was filled by the kernel for a control buffer that is
    // still borrowed, of which it wrote the first `msg_controllen` bytes.
    let control = unsafe { std::slice::from_raw_parts(msg.msg_control.cast::<u8>(), len) };
    timestamp_in(control)
}

/// The `SCM_TIMESTAMPNS` among the control messages `control` holds, as
/// the kernel wrote them (at any alignment: a multishot `recvmsg` puts
/// them after the source address in its buffer). Malformed lengths end
/// the walk.
pub(crate) fn timestamp_in(control: &[u8]) -> Option<SystemTime> {
    let header_len = cmsg_align(size_of::<libc::cmsghdr>());
    let mut rest = control;
    while rest.len() >= size_of::<libc::cmsghdr>() {
        // SAFETY: `rest` holds a `cmsghdr`'s bytes, read unaligned; any
        // bits are a valid `cmsghdr` (integers only).
        let cmsg = unsafe { rest.as_ptr().cast::<libc::cmsghdr>().read_unaligned() };
        #[allow(clippy::unnecessary_cast)] // `socklen_t` on some libcs
        let len = cmsg.cmsg_len as usize;
        if len < header_len || len > rest.len() {
            return None;
        }
        if cmsg.cmsg_level == libc::SOL_SOCKET
            && cmsg.cmsg_type == libc::SCM_TIMESTAMPNS
            && len >= header_len + size_of::<libc::timespec>()
        {
            // SAFETY: the message's data holds a `timespec`'s bytes (its
            // length was checked), read unaligned; any bits are valid.
            let ts = unsafe {
                rest[header_len..]
                    .as_ptr()
                    .cast::<libc::timespec>()
                    .read_unaligned()
            };
            return Some(
                SystemTime::UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
            );
        }
        rest = rest.get(cmsg_align(len)..).unwrap_or_default();
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
            header.msg_hdr.msg_name = target.storage.as_ptr().cast_mut().cast();
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

#[cfg(all(test, not(loom)))]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn addresses_read_back_only_their_written_bytes() {
        for addr in ["127.0.0.1:9", "[::1]:9"] {
            let addr: SocketAddr = addr.parse().unwrap();
            assert_eq!(RawAddr::from_inet(addr).inet_addr().unwrap(), addr);
        }
        let path = RawAddr::from_path(Path::new("/tmp/x.sock")).unwrap();
        let unix = path.unix_addr().unwrap();
        assert_eq!(unix.as_pathname(), Some(Path::new("/tmp/x.sock")));
        assert!(path.inet_addr().is_err());
        // Nothing written: no family, an unnamed Unix address.
        assert!(RawAddr::empty().inet_addr().is_err());
        assert!(RawAddr::empty().unix_addr().unwrap().is_unnamed());
    }

    #[test]
    fn ipv6_flowinfo_is_passed_as_std_passes_it() {
        let addr = SocketAddrV6::new(Ipv6Addr::LOCALHOST, 9, 0x0001_2345, 7);
        let raw = RawAddr::from_inet(addr.into());
        let sin6: libc::sockaddr_in6 = raw.read_as().unwrap();
        // std and mio write `flowinfo()` into `sin6_flowinfo` unswapped.
        assert_eq!(sin6.sin6_flowinfo, addr.flowinfo());
        assert_eq!(sin6.sin6_scope_id, addr.scope_id());
        assert_eq!(raw.inet_addr().unwrap(), SocketAddr::V6(addr));
    }

    /// A control message as the kernel writes it: `cmsghdr`, then its data
    /// at `CMSG_ALIGN` of the header.
    pub(crate) fn control_message(level: libc::c_int, kind: libc::c_int, data: &[u8]) -> Vec<u8> {
        let header_len = cmsg_align(size_of::<libc::cmsghdr>());
        // SAFETY: an all-zero `cmsghdr` is valid (integers only).
        let mut cmsg: libc::cmsghdr = unsafe { std::mem::zeroed() };
        cmsg.cmsg_len = (header_len + data.len()) as _;
        cmsg.cmsg_level = level;
        cmsg.cmsg_type = kind;
        // SAFETY: `cmsg` is a live `cmsghdr`, viewed as its bytes.
        let header = unsafe {
            std::slice::from_raw_parts(
                (&cmsg as *const libc::cmsghdr).cast::<u8>(),
                size_of::<libc::cmsghdr>(),
            )
        };
        let mut bytes = header.to_vec();
        bytes.resize(header_len, 0);
        bytes.extend_from_slice(data);
        bytes.resize(cmsg_align(bytes.len()), 0);
        bytes
    }

    /// A `timespec`'s bytes.
    pub(crate) fn timespec_bytes(secs: i64, nanos: i64) -> Vec<u8> {
        let mut bytes = secs.to_ne_bytes().to_vec();
        bytes.extend_from_slice(&nanos.to_ne_bytes());
        bytes.resize(size_of::<libc::timespec>(), 0);
        bytes
    }

    #[test]
    fn the_timestamp_control_space_is_cmsg_space_of_a_timespec() {
        // SAFETY: CMSG_SPACE only computes a size.
        let space = unsafe { libc::CMSG_SPACE(size_of::<libc::timespec>() as libc::c_uint) };
        assert_eq!(TIMESTAMP_CONTROL_LEN, space as usize);
    }

    #[test]
    fn a_timestamp_is_found_after_other_messages_and_at_any_alignment() {
        let stamp = control_message(
            libc::SOL_SOCKET,
            libc::SCM_TIMESTAMPNS,
            &timespec_bytes(7, 5),
        );
        assert_eq!(stamp.len(), TIMESTAMP_CONTROL_LEN);
        let at = SystemTime::UNIX_EPOCH + Duration::new(7, 5);
        assert_eq!(timestamp_in(&stamp), Some(at));
        let mut both = control_message(libc::IPPROTO_IP, libc::IP_TTL, &64i32.to_ne_bytes());
        both.extend_from_slice(&stamp);
        assert_eq!(timestamp_in(&both), Some(at));
        // After a 44-byte header and name area, as in a ring buffer.
        let mut unaligned = vec![0u8; 44];
        unaligned.extend_from_slice(&both);
        assert_eq!(timestamp_in(&unaligned[44..]), Some(at));
    }

    #[test]
    fn no_timestamp_or_a_malformed_length_gives_none() {
        assert_eq!(timestamp_in(&[]), None);
        let other = control_message(libc::IPPROTO_IP, libc::IP_TTL, &64i32.to_ne_bytes());
        assert_eq!(timestamp_in(&other), None);
        // Cut short: the message claims more than the buffer holds.
        let stamp = control_message(
            libc::SOL_SOCKET,
            libc::SCM_TIMESTAMPNS,
            &timespec_bytes(1, 0),
        );
        assert_eq!(timestamp_in(&stamp[..stamp.len() - 1]), None);
        // A zero length would loop forever if it were followed.
        let mut zero = stamp.clone();
        zero[..size_of::<libc::size_t>()].fill(0);
        assert_eq!(timestamp_in(&zero), None);
    }
}
