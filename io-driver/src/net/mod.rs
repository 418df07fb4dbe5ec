//! Async sockets registered with the current thread's [`Driver`](crate::Driver).
//!
//! Method names and meanings follow tokio's `tokio::net`, so migrating is a
//! change of imports, with these differences:
//!
//! * `try_*` methods always attempt the syscall (see the [crate docs](crate)).
//! * `poll_recv*` / `poll_read` take `&mut [u8]` and return the byte count
//!   (tokio takes its own `ReadBuf`).
//! * Address arguments take [`std::net::ToSocketAddrs`]; name resolution is
//!   synchronous (it blocks the thread for host names: pass IP addresses in
//!   latency-sensitive code). Each resolved address is tried in turn.
//!
//! As in tokio, any number of tasks may await one socket in each direction
//! (for example a receive loop and a request/response helper sharing an
//! `Arc<UdpSocket>`, or many tasks accepting on one listener): a readiness
//! event wakes every one of them. The `poll_*` methods are the exception,
//! with tokio's semantics: they keep one waker per direction, so only the
//! last task to call a `poll_*` method of a direction is woken.

#[macro_use]
mod methods;

mod addr;
mod batch;
pub(crate) mod mmsg;
mod tcp;
mod udp;
mod unix;

pub use batch::{RecvBatch, SendBatch, MAX_BATCH};
pub use tcp::{
    OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, TcpListener, TcpStream, WriteHalf,
};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
