//! Async sockets registered with the current thread's [`Driver`](crate::Driver).
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

#[macro_use]
mod methods;

mod addr;
#[cfg(feature = "bytes")]
mod buf;
mod tcp;
mod udp;
mod unix;

pub(crate) use addr::ResolverSlot;
pub use addr::{lookup_host, Resolve, Resolving, ToSocketAddrs};
pub use tcp::{
    OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, TcpListener, TcpSocket, TcpStream,
    WriteHalf,
};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
