//! Networking: UDP, TCP and Unix sockets from [`tempo_io::net`], with
//! tokio's names.
//!
//! Sockets register with the I/O driver of the runtime they are created in
//! (inside [`block_on`](crate::runtime::Runtime::block_on), a task, or after
//! [`Handle::enter`](crate::runtime::Handle::enter), on a runtime built with
//! [`enable_io`](crate::runtime::Builder::enable_io)); elsewhere the
//! constructors return an error. Host names are resolved on the blocking
//! pool, so a slow DNS server delays only the task that asked. `try_*`
//! methods always attempt the syscall, because under throttling readiness is
//! refreshed once per tick; `docs/networking.md` explains the datagram path.
//!
//! ```
//! use tempo::net::UdpSocket;
//!
//! let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
//! rt.block_on(async {
//!     let server = UdpSocket::bind("127.0.0.1:0").await?;
//!     let client = UdpSocket::bind("127.0.0.1:0").await?;
//!     client.connect(server.local_addr()?).await?;
//!     client.send(b"ping").await?;
//!     let mut buf = [0u8; 1500];
//!     let (n, from) = server.recv_from(&mut buf).await?;
//!     assert_eq!((&buf[..n], from), (&b"ping"[..], client.local_addr()?));
//!     Ok::<(), std::io::Error>(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

use crate::blocking::BlockingPool;
use crate::runtime::Runtime;
pub use tempo_io::net::{
    lookup_host, RecvBatch, Resolve, Resolving, RingDatagram, SendBatch, TcpListener, TcpSocket,
    ToSocketAddrs, UdpRingReceiver, UdpSocket,
};

// Named re-exports, not a glob: rustdoc ignores a doc comment on a glob
// re-export. An item added to `tempo_io::net` must be added here too.

/// A TCP connection; its documentation from [`tempo_io::net`] follows.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _peer) = listener.accept().await?;
///     client.write_all(b"ping").await?;
///     let mut buf = [0u8; 4];
///     let mut got = 0;
///     while got < buf.len() {
///         got += server.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"ping");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::TcpStream;

/// The reading half of a borrowed [`TcpStream::split`]; see [`TcpStream`]
/// for an example.
pub use tempo_io::net::ReadHalf;

/// The writing half of a borrowed [`TcpStream::split`].
pub use tempo_io::net::WriteHalf;

/// The owned reading half of [`TcpStream::into_split`], to move into a task.
pub use tempo_io::net::OwnedReadHalf;

/// The owned writing half of [`TcpStream::into_split`].
pub use tempo_io::net::OwnedWriteHalf;

/// The error of [`OwnedReadHalf::reunite`] given halves of two different
/// streams; it hands both back.
pub use tempo_io::net::ReuniteError;

/// A Unix stream socket, used as [`TcpStream`] is (see its example).
pub use tempo_io::net::UnixStream;

/// A Unix listening socket, used as [`TcpListener`] is (see [`TcpStream`]).
pub use tempo_io::net::UnixListener;

/// A Unix datagram socket, used as [`UdpSocket`] is (see the module example).
pub use tempo_io::net::UnixDatagram;

/// The largest batch one [`UdpSocket::recv_many`] / `send_many` call takes
/// (`UIO_MAXIOV`).
pub use tempo_io::net::MAX_BATCH;

/// Resolves host names on a runtime's blocking pool: the [`Resolve`] the
/// runtime installs on its I/O driver.
struct BlockingResolver {
    pool: BlockingPool,
}

impl Resolve for BlockingResolver {
    fn resolve(&self, host_and_port: String) -> Resolving {
        let join = self.pool.spawn(move || {
            std::net::ToSocketAddrs::to_socket_addrs(&host_and_port).map(Iterator::collect)
        });
        Box::pin(async move {
            join.await.unwrap_or_else(|error| {
                Err(io::Error::other(format!(
                    "host-name resolution on the blocking pool did not complete: {error}"
                )))
            })
        })
    }
}

/// Makes `io`'s sockets resolve host names on `pool`.
pub(crate) fn resolve_on_pool(io: &tempo_io::Handle, pool: &BlockingPool) {
    io.set_resolver(Arc::new(BlockingResolver { pool: pool.clone() }));
}

impl Runtime {
    /// The I/O driver's pollable fd, for a host that runs its own poll loop
    /// (`None` without [`enable_io`](crate::runtime::Builder::enable_io)).
    ///
    /// It becomes readable on a socket event or an unpark; the host then
    /// calls [`turn(Duration::ZERO)`](Runtime::turn). Timers are not in it,
    /// so the host also wakes by the next deadline or tick. See
    /// `examples/foreign_poll.rs`.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_io().build()?;
    /// assert!(rt.io_fd().is_some());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn io_fd(&self) -> Option<BorrowedFd<'_>> {
        self.handle().shared.handles.io.as_ref().map(AsFd::as_fd)
    }
}
