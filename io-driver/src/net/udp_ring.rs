//! [`UdpRingReceiver`]: a UDP socket that receives on its driver's
//! io_uring (the completion backend, `completion/`): no syscall per
//! datagram, for the throttled many-streams receiver.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};
use std::time::SystemTime;

use tempo_park::coop;

use crate::completion::{size_class, Arrival, RecvRing, Taken};
use crate::net::addr::each_addr;
use crate::net::{RecvBatch, ToSocketAddrs, UdpSocket};
use crate::readiness::shutdown_error;
use crate::sys::mmsg;
use crate::sys::uring::RecvLayout;
use crate::Handle;

/// A UDP socket that only receives, on its driver's io_uring: every
/// datagram lands in a buffer of the ring without a syscall of its own,
/// and the driver takes a tick's worth of them in one `io_uring_enter`.
///
/// Where io_uring is missing or forbidden (a kernel before 6.1, a
/// seccomp profile) it receives through the epoll driver with the same
/// results; [`is_on_ring`](Self::is_on_ring) says which.
///
/// A datagram longer than `max_datagram` is cut to it, as by `recv_from`
/// into a buffer of that size; when receivers that do not read hold all
/// of a size class's buffers, a reading task takes its datagrams with one
/// `recvmsg` each, nothing lost or reordered. A receiver made by
/// [`from_std_with_timestamps`](Self::from_std_with_timestamps) also
/// hands over the time each datagram reached the socket. The ring is the driver's
/// and has one issuing thread, so a receiver is `!Send`: use it in
/// [`spawn_local`] tasks or the `block_on` future. It holds at most 32
/// datagrams its task has not taken. Buffer classes and the ring's life
/// are in `docs/networking.md`.
///
/// ```compile_fail
/// fn send_to_another_thread<T: Send>(_: T) {}
/// # tempo_io::__doc_block_on(async {
/// let receiver = tempo_io::net::UdpRingReceiver::bind("127.0.0.1:0", 1500).await?;
/// send_to_another_thread(receiver); // a ring receiver stays on its thread
/// # Ok(()) }).unwrap();
/// ```
///
/// [`spawn_local`]: https://docs.rs/tempo/latest/tempo/fn.spawn_local.html
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{UdpRingReceiver, UdpSocket};
///
/// let receiver = UdpRingReceiver::bind("127.0.0.1:0", 1500).await?;
/// let sender = UdpSocket::bind("127.0.0.1:0").await?;
/// sender.send_to(b"ping", receiver.local_addr()?).await?;
///
/// // The payload in place, in the ring's buffer ...
/// let len = receiver.recv_from_with(|datagram, _from| datagram.len()).await?;
/// assert_eq!(len, 4);
/// // ... or copied into a buffer of the caller's.
/// sender.send_to(b"pong", receiver.local_addr()?).await?;
/// let mut buf = [0u8; 1500];
/// let (n, from) = receiver.recv_from(&mut buf).await?;
/// assert_eq!((&buf[..n], from), (&b"pong"[..], sender.local_addr()?));
/// # Ok(()) }).unwrap();
/// ```
pub struct UdpRingReceiver {
    inner: Inner,
    max_datagram: usize,
    local_addr: SocketAddr,
    layout: RecvLayout,
    /// A one-slot batch for receives off the ring (the epoll fallback, a
    /// direct receive), made at the first; out of its cell while in use.
    batch: Cell<Option<Box<RecvBatch>>>,
}

/// A datagram a [`UdpRingReceiver`] received, lent in place to the
/// closure of [`recv_with`](UdpRingReceiver::recv_with).
#[derive(Debug, Clone, Copy)]
pub struct RingDatagram<'a> {
    /// The payload, cut to [`max_datagram`](UdpRingReceiver::max_datagram)
    /// bytes.
    pub payload: &'a [u8],
    /// Where it came from.
    pub source: SocketAddr,
    /// It was longer than `max_datagram` and has been cut.
    pub truncated: bool,
    /// When it reached the socket (the kernel's `SO_TIMESTAMPNS`, in the
    /// system's real time), on a receiver made by
    /// [`from_std_with_timestamps`](UdpRingReceiver::from_std_with_timestamps);
    /// `None` on others, or if the kernel gave none.
    pub timestamp: Option<SystemTime>,
}

impl<'a> RingDatagram<'a> {
    /// The datagram received as `payload` (cut already if `truncated`),
    /// cut to `max` bytes.
    fn cut(
        payload: &'a [u8],
        source: SocketAddr,
        truncated: bool,
        timestamp: Option<SystemTime>,
        max: usize,
    ) -> Self {
        RingDatagram {
            payload: &payload[..payload.len().min(max)],
            source,
            truncated: truncated || payload.len() > max,
            timestamp,
        }
    }
}

enum Inner {
    /// Slot `key` of the driver's ring.
    Ring {
        ring: Rc<RefCell<RecvRing>>,
        key: usize,
    },
    /// io_uring is not available: the epoll driver's socket.
    Poll(UdpSocket),
    /// [`poll_close`](UdpRingReceiver::poll_close) closed slot `key`:
    /// `done` is set once it is gone with its socket.
    Closing {
        ring: Rc<RefCell<RecvRing>>,
        done: Rc<Cell<bool>>,
    },
    /// Closed, its socket too.
    Closed,
}

impl fmt::Debug for UdpRingReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpRingReceiver")
            .field("local_addr", &self.local_addr)
            .field("max_datagram", &self.max_datagram)
            .field("on_ring", &self.is_on_ring())
            .finish()
    }
}

impl UdpRingReceiver {
    /// Binds a receiver to the first address of `addr` that works, for
    /// datagrams of up to `max_datagram` bytes.
    ///
    /// Fails with [`io::ErrorKind::AddrInUse`] if the port is taken,
    /// `InvalidInput` for a `max_datagram` above 65,507, and if no I/O
    /// driver is current on this thread.
    pub async fn bind<A: ToSocketAddrs>(addr: A, max_datagram: usize) -> io::Result<Self> {
        let handle = Handle::try_current()?;
        let socket = each_addr(&addr, handle.settings(), std::net::UdpSocket::bind).await?;
        UdpRingReceiver::with_handle(socket, max_datagram, RecvLayout::Plain, &handle)
    }

    /// Makes a receiver of a std socket (bound, and connected if the
    /// caller wants a peer filter), for datagrams of up to `max_datagram`
    /// bytes, on the current driver's ring.
    pub fn from_std(socket: std::net::UdpSocket, max_datagram: usize) -> io::Result<Self> {
        let handle = Handle::try_current()?;
        UdpRingReceiver::with_handle(socket, max_datagram, RecvLayout::Plain, &handle)
    }

    /// As [`from_std`](Self::from_std), and turns on the kernel's receive
    /// timestamps for the socket (`SO_TIMESTAMPNS`): each
    /// [`RingDatagram::timestamp`] is when the datagram reached it, not
    /// when the task read it. Its buffers have 32 bytes more before the
    /// payload, so `max_datagram` may land in the next size class.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::{UdpRingReceiver, UdpSocket};
    ///
    /// let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
    /// let receiver = UdpRingReceiver::from_std_with_timestamps(socket, 1500)?;
    /// let sender = UdpSocket::bind("127.0.0.1:0").await?;
    /// sender.send_to(b"ping", receiver.local_addr()?).await?;
    /// let arrived = receiver.recv_with(|datagram| datagram.timestamp).await?;
    /// assert!(arrived.is_some());
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn from_std_with_timestamps(
        socket: std::net::UdpSocket,
        max_datagram: usize,
    ) -> io::Result<Self> {
        mmsg::enable_timestamps(socket.as_raw_fd())?;
        let handle = Handle::try_current()?;
        UdpRingReceiver::with_handle(socket, max_datagram, RecvLayout::Timestamped, &handle)
    }

    fn with_handle(
        socket: std::net::UdpSocket,
        max_datagram: usize,
        layout: RecvLayout,
        handle: &Handle,
    ) -> io::Result<Self> {
        let class = size_class(max_datagram, layout)?;
        let local_addr = socket.local_addr()?;
        socket.set_nonblocking(true)?;
        let inner = match handle.ring().get_or_make(handle)? {
            Some(ring) => {
                let key = ring.borrow_mut().add(socket, class, layout)?;
                Inner::Ring { ring, key }
            }
            None => {
                let _enter = handle.enter();
                Inner::Poll(UdpSocket::from_std(socket)?)
            }
        };
        Ok(UdpRingReceiver {
            inner,
            max_datagram,
            local_addr,
            layout,
            batch: Cell::new(None),
        })
    }

    /// Closes the receiver; ready once its socket is closed and its port
    /// free: on the ring, when the kernel has confirmed the cancellation
    /// of its receive (a turn or two of the driver); on the epoll
    /// fallback, at once. A receive after the first call fails. Dropping a
    /// receiver closes it as well, but its socket may outlive the drop
    /// until that confirmation.
    pub fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &self.inner {
            Inner::Ring { ring, key } => {
                let done = Rc::new(Cell::new(false));
                ring.borrow_mut().close_watched(*key, &done);
                let ring = ring.clone();
                self.inner = Inner::Closing { ring, done };
            }
            Inner::Poll(_) => self.inner = Inner::Closed,
            Inner::Closing { .. } | Inner::Closed => {}
        }
        if let Inner::Closing { ring, done } = &self.inner {
            ready!(ring.borrow_mut().poll_removed(done, cx));
        }
        self.inner = Inner::Closed;
        Poll::Ready(())
    }

    /// [`poll_close`](Self::poll_close) as a future.
    pub async fn close(mut self) {
        std::future::poll_fn(|cx| self.poll_close(cx)).await;
    }

    /// Whether the receiver is on io_uring (`false`: on the epoll driver,
    /// as io_uring is not available, or its driver's ring is another
    /// thread's).
    pub fn is_on_ring(&self) -> bool {
        matches!(self.inner, Inner::Ring { .. })
    }

    /// The longest datagram it returns whole.
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local_addr)
    }

    /// Receives one datagram and hands it to `f` in place (in the ring's
    /// buffer, cut to [`max_datagram`](Self::max_datagram) bytes) with its
    /// source, truncation and timestamp, returning what `f` returns: no
    /// copy. Cancel safe: a datagram is taken only by the poll that
    /// returns it.
    pub fn recv_with<R, F>(&self, f: F) -> impl Future<Output = io::Result<R>> + use<'_, R, F>
    where
        F: FnOnce(RingDatagram<'_>) -> R,
    {
        RecvWith {
            receiver: self,
            f: Some(f),
        }
    }

    /// Receives one datagram and hands it to `f` in place with its source,
    /// as [`recv_with`](Self::recv_with) does.
    pub fn recv_from_with<R, F>(&self, f: F) -> impl Future<Output = io::Result<R>> + use<'_, R, F>
    where
        F: FnOnce(&[u8], SocketAddr) -> R,
    {
        self.recv_with(move |datagram| f(datagram.payload, datagram.source))
    }

    /// Receives one datagram into `buf` (cut to `buf`'s length and to
    /// [`max_datagram`](Self::max_datagram)): its length and source.
    pub fn recv_from<'a>(
        &'a self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<(usize, SocketAddr)>> + 'a {
        self.recv_with(move |datagram| (copy_cut(datagram.payload, buf), datagram.source))
    }

    /// Polls for one datagram, copied into `buf` as by
    /// [`recv_from`](Self::recv_from); for hand-written futures. The
    /// receiver keeps one waker (the last caller's), as `UdpSocket`'s
    /// `poll_*` methods do.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.poll_recv_with(
            cx,
            &mut Some(|datagram: RingDatagram<'_>| {
                (copy_cut(datagram.payload, buf), datagram.source)
            }),
        )
    }

    /// One poll of a receive: the next datagram to `f` (taken out of its
    /// option once, when the poll is ready).
    fn poll_recv_with<R>(
        &self,
        cx: &mut Context<'_>,
        f: &mut Option<impl FnOnce(RingDatagram<'_>) -> R>,
    ) -> Poll<io::Result<R>> {
        match &self.inner {
            Inner::Ring { ring, key } => self.poll_ring(ring, *key, cx, f),
            Inner::Poll(socket) => self.with_batch(|batch| {
                ready!(socket.poll_recv_many(cx, batch))?;
                Poll::Ready(hand_over(batch, self.max_datagram, f))
            }),
            Inner::Closing { .. } | Inner::Closed => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the ring receiver was closed",
            ))),
        }
    }

    /// One poll of a ring receiver: a unit of the task's budget, then the
    /// slot's next arrival handed to `f` (taken once) outside the ring's
    /// borrow, its buffer given back after.
    fn poll_ring<R>(
        &self,
        ring: &Rc<RefCell<RecvRing>>,
        key: usize,
        cx: &mut Context<'_>,
        f: &mut Option<impl FnOnce(RingDatagram<'_>) -> R>,
    ) -> Poll<io::Result<R>> {
        let progress = ready!(coop::poll_proceed(cx));
        let polled = ring.borrow_mut().poll_arrival(key, cx);
        let (arrival, group) = match ready!(polled) {
            Taken::Arrival(arrival, group) => (arrival, group),
            Taken::DriverGone => return Poll::Ready(Err(driver_gone())),
            Taken::Direct => {
                let received = self.with_batch(|batch| {
                    ring.borrow().recv_direct(key, batch)?;
                    hand_over(batch, self.max_datagram, f)
                });
                return match received {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ring.borrow_mut().wait_starving(key, cx);
                        Poll::Pending
                    }
                    received => {
                        progress.made_progress();
                        Poll::Ready(received)
                    }
                };
            }
        };
        progress.made_progress();
        let (bid, used) = match arrival {
            Arrival::Datagram { bid, used } => (bid, used),
            Arrival::Error(errno) => return Poll::Ready(Err(io::Error::from_raw_os_error(errno))),
        };
        let max = self.max_datagram;
        let result = group.read(bid, used as usize, self.layout, |datagram| {
            let datagram = datagram.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "io_uring returned a receive without its header",
                )
            })?;
            let source = datagram.source.ok_or_else(non_ip_source)?;
            let f = f.take().expect("a ring receive polled after it completed");
            Ok(f(RingDatagram::cut(
                datagram.payload,
                source,
                datagram.truncated,
                datagram.timestamp,
                max,
            )))
        });
        Poll::Ready(result)
    }

    /// Runs `f` with the receiver's one-slot batch, taken out of its cell
    /// (a nested receive makes its own) and put back after.
    fn with_batch<R>(&self, f: impl FnOnce(&mut RecvBatch) -> R) -> R {
        let mut batch = match self.batch.take() {
            Some(batch) => batch,
            None => {
                let batch = RecvBatch::new(1, self.max_datagram.max(1))
                    .expect("a one-slot batch of at most 65,507 bytes");
                Box::new(match self.layout {
                    RecvLayout::Plain => batch,
                    RecvLayout::Timestamped => batch.with_timestamps(),
                })
            }
        };
        let result = f(&mut batch);
        self.batch.set(Some(batch));
        result
    }
}

/// Hands the datagram a one-slot batch holds to `f` (taken once), cut
/// to `max` bytes (the batch's buffer has at least one).
fn hand_over<R>(
    batch: &RecvBatch,
    max: usize,
    f: &mut Option<impl FnOnce(RingDatagram<'_>) -> R>,
) -> io::Result<R> {
    let source = batch.source(0).ok_or_else(non_ip_source)?;
    let f = f.take().expect("a ring receive polled after it completed");
    Ok(f(RingDatagram::cut(
        batch.payload(0),
        source,
        batch.truncated(0),
        batch.timestamp(0),
        max,
    )))
}

#[cold]
fn non_ip_source() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the kernel returned a non-IP source address",
    )
}

/// The error of a receive whose driver was dropped; out of line, off the
/// per-datagram path.
#[cold]
#[inline(never)]
fn driver_gone() -> io::Error {
    shutdown_error()
}

/// Copies what fits of `datagram` into `buf`: the bytes copied.
fn copy_cut(datagram: &[u8], buf: &mut [u8]) -> usize {
    let n = datagram.len().min(buf.len());
    buf[..n].copy_from_slice(&datagram[..n]);
    n
}

/// The future of [`UdpRingReceiver::recv_with`].
struct RecvWith<'a, F> {
    receiver: &'a UdpRingReceiver,
    f: Option<F>,
}

// `f` is never pinned (it is only taken out and called), so the future can
// move whatever `F` is.
impl<F> Unpin for RecvWith<'_, F> {}

impl<R, F> Future for RecvWith<'_, F>
where
    F: FnOnce(RingDatagram<'_>) -> R,
{
    type Output = io::Result<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let this = self.get_mut();
        this.receiver.poll_recv_with(cx, &mut this.f)
    }
}

impl Drop for UdpRingReceiver {
    fn drop(&mut self) {
        if let Inner::Ring { ring, key } = &self.inner {
            ring.borrow_mut().close(*key);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A receiver on the epoll fallback (as where io_uring is missing),
    /// with timestamps turned on for a timestamped layout.
    fn on_epoll(max_datagram: usize, layout: RecvLayout) -> io::Result<UdpRingReceiver> {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
        if layout == RecvLayout::Timestamped {
            mmsg::enable_timestamps(socket.as_raw_fd())?;
        }
        Ok(UdpRingReceiver {
            local_addr: socket.local_addr()?,
            inner: Inner::Poll(UdpSocket::from_std(socket)?),
            max_datagram,
            layout,
            batch: Cell::new(None),
        })
    }

    /// The epoll fallback keeps the ring's rules: the payload cut to
    /// `max_datagram`, then to the caller's buffer.
    #[test]
    fn the_epoll_fallback_cuts_datagrams_as_the_ring_does() {
        crate::__doc_block_on(async {
            let receiver = on_epoll(100, RecvLayout::Plain)?;
            let local_addr = receiver.local_addr()?;
            assert!(!receiver.is_on_ring());
            let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
            sender.send_to(&[7; 300], local_addr)?;
            sender.send_to(&[8; 300], local_addr)?;
            let (len, from) = receiver.recv_from_with(|d, from| (d.len(), from)).await?;
            assert_eq!((len, from), (100, sender.local_addr()?));
            let mut small = [0u8; 10];
            let (n, _) = receiver.recv_from(&mut small).await?;
            assert_eq!((n, small), (10, [8; 10]));
            Ok(())
        })
        .unwrap();
    }

    /// A receiver for datagrams of 0 bytes cuts every payload to nothing
    /// on the fallback too (its batch's buffer has one byte).
    #[test]
    fn the_epoll_fallback_cuts_to_a_max_datagram_of_zero() {
        crate::__doc_block_on(async {
            let receiver = on_epoll(0, RecvLayout::Plain)?;
            let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
            sender.send_to(&[5; 10], receiver.local_addr()?)?;
            let got = receiver
                .recv_with(|d| (d.payload.len(), d.truncated))
                .await?;
            assert_eq!(got, (0, true));
            Ok(())
        })
        .unwrap();
    }

    /// The epoll fallback of a timestamped receiver hands over the
    /// kernel's timestamps and marks a cut datagram, as the ring does.
    #[test]
    fn the_epoll_fallback_keeps_timestamps_and_truncation() {
        crate::__doc_block_on(async {
            let receiver = on_epoll(100, RecvLayout::Timestamped)?;
            let local_addr = receiver.local_addr()?;
            let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
            let sent_after = SystemTime::now();
            sender.send_to(&[7; 300], local_addr)?;
            let (len, truncated, stamp) = receiver
                .recv_with(|d| (d.payload.len(), d.truncated, d.timestamp))
                .await?;
            assert_eq!((len, truncated), (100, true));
            assert!(stamp.is_some_and(|stamp| stamp >= sent_after), "{stamp:?}");
            Ok(())
        })
        .unwrap();
    }
}
