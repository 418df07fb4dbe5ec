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
//! Names and meanings follow `tokio::net`. Differences: `try_*` methods
//! always attempt the syscall (see the [crate docs](crate)); `poll_recv*`
//! / `poll_read` take `&mut [u8]`; host names go to the driver's
//! [`Resolve`] (the `tempo` runtime's blocking pool). Any number of tasks
//! may await one socket in each direction; the `poll_*` methods keep one
//! waker per direction, the last caller's, as tokio's do.
//!
//! # Datagram receives: one rule per scheduler
//!
//! On the basic scheduler a [`UdpSocket`] or [`UnixDatagram`] receive
//! makes one `recvfrom` and a loop drains until `WouldBlock`. When the
//! driver is [throttled](tempo_park::IoDriver::set_throttled) before the
//! socket is made, the socket is level-triggered for reading and a
//! receive makes one `recvfrom` per readiness report; a socket the tick's
//! look reports again drains its backlog until `WouldBlock`. Explicit
//! choices: [`UdpSocket::recv_from_with`] (one 64 KiB buffer per thread,
//! handed to a closure), `recv_many` / `send_many` with a [`RecvBatch`] /
//! [`SendBatch`] (one `recvmmsg` / `sendmmsg`), and [`UdpRingReceiver`].

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
