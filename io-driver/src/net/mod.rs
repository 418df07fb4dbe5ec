//! Async sockets registered with the current thread's [`Driver`](crate::Driver).
//!
//! Names and meanings follow `tokio::net`. Differences: `try_*` methods
//! always attempt the syscall (see the [crate docs](crate)); `poll_recv*`
//! / `poll_read` take `&mut [u8]`; host names go to the driver's
//! [`Resolve`] (the `tempo` runtime's blocking pool). Any number of tasks
//! may await one socket in each direction; the `poll_*` methods keep one
//! waker per direction, the last caller's, as tokio's do.
//!
//! # Datagram receives
//!
//! On the basic scheduler a [`UdpSocket`] or [`UnixDatagram`] receive
//! drains until `WouldBlock`; when the driver is
//! [throttled](tempo_park::IoDriver::set_throttled) it makes one `recvfrom`
//! per readiness report. [`UdpSocket::recv_from_with`], `recv_many` /
//! `send_many` ([`RecvBatch`], [`SendBatch`]) and [`UdpRingReceiver`] are
//! the explicit choices; `docs/networking.md` compares the five paths.

mod accept;
mod addr;
mod batch;
#[cfg(feature = "bytes")]
mod buf;
mod byte_stream;
mod datagram;
pub(crate) mod recv_rule;
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
pub use udp_ring::{RingDatagram, UdpRingReceiver};
pub use unix::{UnixDatagram, UnixListener, UnixStream};
