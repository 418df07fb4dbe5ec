//! [`UdpSocket`]: the main use case of Tempo (many low-rate datagram
//! streams on one thread), so a receive that finds a datagram queued costs
//! exactly one `recvfrom`.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};

use crate::net::addr::{each_addr, first_addr};
use crate::net::ToSocketAddrs;
use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async UDP socket, registered with the current thread's I/O driver.
///
/// Its methods take `&self`, so one socket can be shared (`Arc`) by a
/// receive loop and senders. A socket is created inside the runtime
/// (`Runtime::block_on`, a task, or after `Runtime::enter`); the examples
/// here run on a bare [`Driver`](crate::Driver) instead, since tempo-io
/// comes without the runtime.
///
/// An echo server and a client:
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::UdpSocket;
///
/// let server = UdpSocket::bind("127.0.0.1:0").await?;
/// let client = UdpSocket::bind("127.0.0.1:0").await?;
/// client.send_to(b"ping", server.local_addr()?).await?;
///
/// // the server's loop, once: receive a datagram, send it back
/// let mut buf = [0u8; 1500];
/// let (len, from) = server.recv_from(&mut buf).await?;
/// server.send_to(&buf[..len], from).await?;
///
/// let (len, from) = client.recv_from(&mut buf).await?;
/// assert_eq!((&buf[..len], from), (&b"ping"[..], server.local_addr()?));
/// # Ok(()) }).unwrap();
/// ```
pub struct UdpSocket {
    io: PollIo<mio::net::UdpSocket>,
}

impl_fd_traits!(UdpSocket);

impl UdpSocket {
    /// Binds a socket to the first address of `addr` that works (a host
    /// name is resolved off the runtime's thread, see
    /// [`ToSocketAddrs`]).
    ///
    /// Fails with [`io::ErrorKind::AddrInUse`] if the port is taken, and if
    /// no I/O driver is current on this thread.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UdpSocket;
    ///
    /// let socket = UdpSocket::bind("127.0.0.1:0").await?; // port 0: any free port
    /// println!("listening on {}", socket.local_addr()?);
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        let handle = Handle::try_current()?;
        each_addr(&addr, &handle, |addr| {
            let socket = mio::net::UdpSocket::bind(addr)?;
            Ok(UdpSocket {
                io: PollIo::with_handle(socket, handle.clone())?,
            })
        })
        .await
    }

    /// Registers a std socket with the current driver (and makes it
    /// non-blocking).
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// let std_socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
    /// let socket = tempo_io::net::UdpSocket::from_std(std_socket)?;
    /// # let _ = socket;
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: PollIo::new(mio::net::UdpSocket::from_std(socket))?,
        })
    }

    /// Deregisters the socket and returns it as a std socket (still
    /// non-blocking), e.g. to move it to another runtime.
    ///
    /// A datagram held by the receive-ahead rule (see the
    /// [`net`](crate::net) docs: it left the kernel already) is dropped
    /// with the Tempo socket; `readable()` is ready at once while one is
    /// held, so receive it first if it matters.
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        self.io.into_inner().map(Into::into)
    }

    forward_to_source! {
        /// The local address.
        fn local_addr(&self) -> io::Result<SocketAddr> => local_addr();
        /// The address of the connected peer.
        fn peer_addr(&self) -> io::Result<SocketAddr> => peer_addr();
    }

    /// Sets the default destination and filters received datagrams to it
    /// (for [`send`](Self::send) and [`recv`](Self::recv)).
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UdpSocket;
    ///
    /// let peer = UdpSocket::bind("127.0.0.1:0").await?;
    /// let socket = UdpSocket::bind("127.0.0.1:0").await?;
    /// socket.connect(peer.local_addr()?).await?;
    /// socket.send(b"ping").await?;
    /// assert_eq!(socket.peer_addr()?, peer.local_addr()?);
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(&addr, self.io.registration.handle(), |addr| {
            self.io.connect(addr)
        })
        .await
    }

    datagram_readiness_methods!(UdpSocket);

    datagram_methods!(UdpSocket, SocketAddr, inet_addr);

    /// Sends to `target` (its first address; a host name is resolved off
    /// the runtime's thread, see [`ToSocketAddrs`]) and returns the bytes
    /// sent.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UdpSocket;
    ///
    /// let receiver = UdpSocket::bind("127.0.0.1:0").await?;
    /// let sender = UdpSocket::bind("127.0.0.1:0").await?;
    /// let sent = sender.send_to(b"ping", receiver.local_addr()?).await?;
    /// assert_eq!(sent, 4);
    ///
    /// let mut buf = [0u8; 1500];
    /// let (len, from) = receiver.recv_from(&mut buf).await?;
    /// assert_eq!((&buf[..len], from), (&b"ping"[..], sender.local_addr()?));
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let target = first_addr(&target, self.io.registration.handle()).await?;
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, target))
            .await
    }

    /// Polls a send to `target`.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || self.io.send_to(buf, target))
    }

    /// Sends to `target` now, or fails with `WouldBlock`.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send_to(buf, target))
    }

    /// Receives a datagram without removing it from the queue (the held
    /// datagram, without a syscall, if one is held: see the `net` module
    /// docs).
    ///
    /// ```
    #[doc = doc_pair!(UdpSocket)]
    ///
    /// a.send(b"ping").await?;
    /// let mut buf = [0u8; 1500];
    /// let (len, _) = b.peek_from(&mut buf).await?;
    /// assert_eq!(&buf[..len], b"ping");
    /// let len = b.recv(&mut buf).await?; // still there
    /// assert_eq!(&buf[..len], b"ping");
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .io(Direction::Read, || self.peek_op(buf))
            .await
    }

    /// Polls [`peek_from`](Self::peek_from).
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .registration
            .poll_io(cx, Direction::Read, || self.peek_op(buf))
    }

    /// [`peek_from`](Self::peek_from) now (the held datagram, else always
    /// one syscall), or fails with `WouldBlock`.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .registration
            .try_io(Direction::Read, || self.peek_op(buf))
    }

    /// One peek attempt: the held datagram copied into `buf` if one is
    /// held, else the `peek_from` syscall. Checked on every attempt, not
    /// once before waiting: another task's receive may hold a datagram
    /// (and leave the kernel queue empty) while this peek waits.
    fn peek_op(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self.io.registration.recv_ahead().peek_held(buf) {
            Some((len, addr)) => addr.inet_addr().map(|addr| (len, addr)),
            None => self.io.peek_from(buf),
        }
    }

    forward_to_source! {
        /// Sets `IP_TTL`.
        fn set_ttl(&self, ttl: u32) -> io::Result<()> => set_ttl(ttl);
        /// Gets `IP_TTL`.
        fn ttl(&self) -> io::Result<u32> => ttl();
        /// Sets `SO_BROADCAST`.
        fn set_broadcast(&self, on: bool) -> io::Result<()> => set_broadcast(on);
        /// Gets `SO_BROADCAST`.
        fn broadcast(&self) -> io::Result<bool> => broadcast();
        /// Sets `IP_MULTICAST_LOOP`.
        fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> => set_multicast_loop_v4(on);
        /// Gets `IP_MULTICAST_LOOP`.
        fn multicast_loop_v4(&self) -> io::Result<bool> => multicast_loop_v4();
        /// Sets `IP_MULTICAST_TTL`.
        fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> => set_multicast_ttl_v4(ttl);
        /// Gets `IP_MULTICAST_TTL`.
        fn multicast_ttl_v4(&self) -> io::Result<u32> => multicast_ttl_v4();
        /// Sets `IPV6_MULTICAST_LOOP`.
        fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> => set_multicast_loop_v6(on);
        /// Gets `IPV6_MULTICAST_LOOP`.
        fn multicast_loop_v6(&self) -> io::Result<bool> => multicast_loop_v6();
        /// Joins an IPv4 multicast group on `interface`.
        fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()>
            => join_multicast_v4(&multiaddr, &interface);
        /// Joins an IPv6 multicast group on interface index `interface`.
        fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()>
            => join_multicast_v6(multiaddr, interface);
        /// Leaves an IPv4 multicast group.
        fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()>
            => leave_multicast_v4(&multiaddr, &interface);
        /// Leaves an IPv6 multicast group.
        fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()>
            => leave_multicast_v6(multiaddr, interface);
        /// Takes the pending `SO_ERROR` (e.g. an ICMP "port unreachable").
        fn take_error(&self) -> io::Result<Option<io::Error>> => take_error();
    }

    ready_method!(UdpSocket);

    /// The source address of the next datagram, without removing it
    /// from the queue (tokio's `peek_sender`): a zero-length
    /// `recvfrom(MSG_PEEK)`, so the datagram's contents are not copied (or the
    /// held datagram's source, without a syscall, if one is held).
    /// Use it to decide where a datagram goes before receiving it into
    /// the right buffer.
    ///
    /// ```
    #[doc = doc_pair!(UdpSocket)]
    ///
    /// a.send(b"ping").await?;
    /// let from = b.peek_sender().await?;
    /// let mut buf = [0u8; 1500];
    /// let (len, same) = b.recv_from(&mut buf).await?;
    /// assert_eq!(from, same); // the peeked datagram is still the next one
    /// # let _ = len; Ok(()) }).unwrap();
    /// ```
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        self.peek_from(&mut []).await.map(|(_, from)| from)
    }

    /// Polls [`peek_sender`](Self::peek_sender).
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.poll_peek_from(cx, &mut []).map_ok(|(_, from)| from)
    }

    /// [`peek_sender`](Self::peek_sender) now (the held datagram's source,
    /// else always one syscall), or fails with `WouldBlock`.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.try_peek_from(&mut []).map(|(_, from)| from)
    }

    datagram_buf_methods!(UdpSocket, SocketAddr, inet_addr);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    use std::time::Duration;

    use futures::task::noop_waker;
    use tempo_park::Park;
    use tempo_test_support::net::sent_and_queued;

    use super::UdpSocket;
    use crate::Driver;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, SeqCst);
        }
    }

    /// A peek that waits while another task's receive holds a datagram
    /// (and so empties the kernel queue) returns the held one when woken,
    /// instead of finding the queue empty and waiting for a later event.
    #[test]
    fn waiting_peek_sees_a_datagram_held_meanwhile() {
        let mut driver = Driver::new().unwrap();
        driver.set_recv_ahead(true);
        let handle = driver.handle();
        let _enter = handle.enter();
        let a = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        let b = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        a.io.connect(b.local_addr().unwrap()).unwrap();

        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut peek_buf = [0u8; 16];
        let peeked = {
            let mut peek = pin!(b.peek_from(&mut peek_buf));
            assert!(peek.as_mut().poll(&mut cx).is_pending());

            // Both queued before the receive below: it must find two.
            sent_and_queued(&b, || a.try_send(b"one").unwrap());
            sent_and_queued(&b, || a.try_send(b"two").unwrap());
            for _ in 0..100 {
                if flag.0.load(SeqCst) {
                    break;
                }
                driver.park_timeout(Duration::from_secs(1)).unwrap();
            }
            assert!(flag.0.load(SeqCst), "the datagrams' event woke the peek");

            // Another task's receive runs first: one datagram returned,
            // the second held, the kernel queue empty.
            let mut recv_buf = [0u8; 16];
            match b.poll_recv(&mut cx, &mut recv_buf) {
                Poll::Ready(Ok(len)) => assert_eq!(&recv_buf[..len], b"one"),
                other => panic!("expected the first datagram, got {other:?}"),
            }
            assert!(b.io.registration.recv_ahead().has_held());

            peek.as_mut().poll(&mut cx)
        };
        match peeked {
            Poll::Ready(Ok((len, from))) => {
                assert_eq!(from, a.local_addr().unwrap());
                assert_eq!(&peek_buf[..len], b"two");
            }
            other => panic!("expected the held datagram, got {other:?}"),
        }
    }

    /// A batch receive whose `recvmmsg` fails (here on the `ECONNREFUSED`
    /// an ICMP port-unreachable left) reports the error and keeps the
    /// datagram held before it for the next receive.
    #[test]
    fn failed_batch_receive_keeps_the_held_datagram() {
        let mut driver = Driver::new().unwrap();
        driver.set_recv_ahead(true);
        let handle = driver.handle();
        let _enter = handle.enter();
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::from_std(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.io.connect(a.local_addr().unwrap()).unwrap();
        sent_and_queued(&b, || a.send(b"one").unwrap());
        sent_and_queued(&b, || a.send(b"two").unwrap());

        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut buf = [0u8; 16];
        let len = loop {
            match b.poll_recv(&mut cx, &mut buf) {
                Poll::Ready(result) => break result.unwrap(),
                Poll::Pending => driver.park_timeout(Duration::from_secs(1)).unwrap(),
            }
        };
        assert_eq!(&buf[..len], b"one");
        assert!(b.io.registration.recv_ahead().has_held());

        // The peer is gone: a send draws an ICMP port-unreachable, which
        // leaves ECONNREFUSED pending on `b`: wait for its error event.
        drop(a);
        b.try_send(b"ping").unwrap();
        let mut error_seen = false;
        for _ in 0..100 {
            driver.park_timeout(Duration::from_millis(100)).unwrap();
            let ready = pin!(b.ready(crate::Interest::WRITABLE)).poll(&mut cx);
            if let Poll::Ready(Ok(ready)) = ready {
                if ready.is_error() {
                    error_seen = true;
                    break;
                }
            }
        }
        assert!(error_seen, "no ICMP error arrived");

        let mut batch = crate::net::RecvBatch::new(4, 16).unwrap();
        let err = b.try_recv_many(&mut batch).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
        assert_eq!(b.try_recv_many(&mut batch).unwrap(), 1);
        assert_eq!(batch.payload(0), b"two");
    }
}
