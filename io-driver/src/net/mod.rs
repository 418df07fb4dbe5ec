//! Async sockets registered with the current thread's [`Driver`](crate::Driver).
//!
//! ```
//! # tempo_io::__doc_block_on(async {
//! use tempo_io::net::{TcpListener, TcpStream};
//!
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! let client = TcpStream::connect(listener.local_addr()?).await?;
//! let (server, peer) = listener.accept().await?;
//! assert_eq!(peer, client.local_addr()?);
//!
//! client.write_all(b"ping").await?;
//! let mut buf = [0u8; 4];
//! let mut filled = 0;
//! while filled < buf.len() {
//!     filled += server.read(&mut buf[filled..]).await?;
//! }
//! assert_eq!(&buf, b"ping");
//! # Ok(()) }).unwrap();
//! ```
//!
//! Method names and meanings follow tokio's `tokio::net`, so migrating is a
//! change of imports, with these differences:
//!
//! * `try_*` methods always attempt the syscall (see the [crate docs](crate)).
//! * `poll_recv*` / `poll_read` take `&mut [u8]` and return the byte count
//!   (tokio takes its own `ReadBuf`).
//! * Address arguments take this module's sealed [`ToSocketAddrs`] (as
//!   tokio's): IP addresses are used at once, host names go to the driver's
//!   [`Resolve`] (the `tempo` runtime's blocking pool), or are resolved
//!   inline when tempo-io is used without one. Each address is tried in
//!   turn.
//!
//! As in tokio, any number of tasks may await one socket in each direction
//! (for example a receive loop and a request/response helper sharing an
//! `Arc<UdpSocket>`, or many tasks accepting on one listener): a readiness
//! event wakes every one of them. The `poll_*` methods are the exception,
//! with tokio's semantics: they keep one waker per direction, so only the
//! last task to call a `poll_*` method of a direction is woken.
//!
//! # Datagram receives: one rule per scheduler
//!
//! On the basic scheduler a [`UdpSocket`] or [`UnixDatagram`] receive
//! makes one `recvfrom` and a loop drains until `WouldBlock`, as tokio's
//! does. Under a throttling runtime (or a driver
//! [set throttled](tempo_park::IoDriver::set_throttled) before the socket
//! is made) the socket is **level-triggered** for reading and a receive
//! makes one `recvfrom` per readiness report: the next receive waits,
//! without a syscall, for the next report, which the poller makes while a
//! datagram is left. A socket the tick's look reports again holds a
//! backlog, which its receives drain until `WouldBlock`. One receive
//! syscall per datagram, nothing held in user space, no buffer per socket.
//!
//! # Receiving into the thread's buffer
//!
//! [`UdpSocket::recv_from_with`] / [`recv_with`](UdpSocket::recv_with)
//! (and [`UnixDatagram`]'s) receive into one 64 KiB buffer per thread
//! and hand the datagram to a closure: no buffer per socket, never a cut
//! datagram, and at one datagram per socket per tick a buffer the
//! previous receive left in cache where a per-task buffer is cold at
//! every datagram. They follow the rule above.
//!
//! # Batches
//!
//! `recv_many` fills a [`RecvBatch`] with one `recvmmsg` (optionally with
//! kernel receive timestamps) and `send_many` sends a [`SendBatch`] with one
//! `sendmmsg`; both allocate nothing once the batch is built. See
//! [`RecvBatch`] for the limits ([`MAX_BATCH`]) and errors.

mod accept;
mod addr;
mod batch;
#[cfg(feature = "bytes")]
mod buf;
mod byte_stream;
mod datagram;
mod recv_rule;
mod thread_buf;

mod tcp;
mod udp;
mod udp_ring;
mod unix;

pub use addr::{lookup_host, Resolve, Resolving, ToSocketAddrs};
pub use batch::{RecvBatch, SendBatch, MAX_BATCH};
pub use tcp::{
    OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, TcpListener, TcpSocket, TcpStream,
    WriteHalf,
};
pub use udp::UdpSocket;
pub use udp_ring::UdpRingReceiver;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
