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
//! # Datagram receives: one syscall per datagram
//!
//! Under a throttling runtime (or [`Driver::set_recv_ahead`](crate::Driver::set_recv_ahead)),
//! [`UdpSocket`] and [`UnixDatagram`] receives follow the *receive-ahead*
//! rule. A socket made under it is registered **level-triggered** for
//! reading, and a `recv` / `recv_from` makes one `recvfrom` per readiness
//! report: the next receive waits, without a syscall, for the next
//! report, which the poller makes while a datagram is left. After running
//! its tasks a throttled tick takes a look (a zero-timeout poll): a
//! socket it reports again holds a backlog, which the receives drain
//! until `WouldBlock`. A receive loop pays one receive syscall per datagram (a
//! drain-until-`WouldBlock` loop, tokio's, pays two), and a backlog drains
//! in the tick it is found; nothing is held in user space, and no buffer
//! is kept per socket.
//!
//! A socket made *before* the rule was turned on (a host's
//! `tempo_io::Driver`, `set_recv_ahead(true)` after the socket) stays
//! edge-triggered, and its receives follow the rule's two-datagram form:
//! with nothing held, one `recvmmsg` asking for two datagrams. One
//! arrived: the socket is drained, and the next receive waits for the
//! next readiness event without a syscall. Two arrived: the second is
//! **held** in a buffer of the socket's own and returned by the next
//! receive without a syscall.
//!
//! What a held datagram means for each method (the list is kept with the
//! code, in `net/datagram.rs`; [`UdpSocket::discard_held`] drops it):
//!
//! * `recv`, `recv_from`, their `poll_*` and `try_*` forms and `recv_many`
//!   return it first (`recv` drops its address); it is received once.
//! * `peek_from` (UDP) shows it without releasing it; `readable()` and
//!   `poll_recv_ready` are ready at once while one is held, so a task is
//!   never parked while a datagram waits in user space.
//! * `try_recv*` with nothing held always makes the syscall (one datagram,
//!   no receive-ahead), as every `try_*` method does.
//! * Truncation: the held datagram's buffer has the size of the buffer of
//!   the call that received it ahead (at most 64 KiB), so it is cut exactly
//!   as `recvfrom` into that buffer would cut it. Only a later receive
//!   with a *larger* buffer than every earlier one can tell the difference.
//!
//! Memory: per socket, 48 bytes of state inline in the socket (no
//! allocation of its own), plus, in the two-datagram form only, from its
//! first receive, the held datagram's address (136 bytes) and a buffer
//! as large as the largest receive buffer passed
//! (2 KiB for a 2,048-byte buffer: about 17 MiB in all for 8,000
//! sockets). The basic scheduler leaves the rule off (receives make one
//! one-datagram call each, as tokio's do, and no buffer is made).
//!
//! # Receiving into the thread's buffer
//!
//! [`UdpSocket::recv_from_with`] / [`recv_with`](UdpSocket::recv_with)
//! (and [`UnixDatagram`]'s) receive into one 64 KiB buffer per thread
//! and hand the datagram to a closure: no buffer per socket, never a cut
//! datagram, and at one datagram per socket per tick a buffer the
//! previous receive left in cache where a per-task buffer is cold at
//! every datagram (one per thread: 7-15 % less CPU per datagram under
//! throttling, measured; see
//! `net/thread_buf.rs`). They follow the rule above, except that they
//! never hold a datagram ahead.
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
mod recv_ahead;
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
