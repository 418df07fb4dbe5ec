//! Networking: UDP, TCP and Unix sockets from [`tempo_io::net`], with
//! tokio's names.
//!
//! Sockets register with the I/O driver of the runtime they are created in:
//! create them inside [`block_on`](crate::runtime::Runtime::block_on), a
//! task, or after [`Runtime::enter`](crate::runtime::Runtime::enter) or
//! [`Handle::enter`](crate::runtime::Handle::enter) (which works from any
//! thread), on a runtime built with
//! [`enable_io`](crate::runtime::Builder::enable_io). Elsewhere the
//! constructors return an error that says so.
//!
//! Host names (in [`lookup_host`], and in `bind`, `connect` and `send_to`
//! through [`ToSocketAddrs`]) are resolved on the runtime's
//! [blocking pool](crate::task::spawn_blocking), as in tokio: a slow DNS
//! server delays only the task that asked, never the runtime's other
//! tasks. Addresses that are already IPs (`SocketAddr`, `(IpAddr, u16)`,
//! `"127.0.0.1:80"`) are used at once, with no thread hop.
//!
//! Unlike tokio, `try_*` methods always attempt the syscall instead of
//! trusting cached readiness: under throttling, readiness is refreshed only
//! once per tick. Under the throttling scheduler a datagram receive loop
//! pays one receive syscall per datagram: the socket is level-triggered
//! and a receive makes one `recvfrom` per readiness report (see the
//! [`tempo_io::net`] docs); `recv_many` / `send_many` take a whole batch
//! per syscall.
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
    lookup_host, RecvBatch, Resolve, Resolving, SendBatch, TcpListener, TcpSocket, ToSocketAddrs,
    UdpRingReceiver, UdpSocket,
};

// Every public item of `tempo_io::net` is re-exported by name, not by a
// glob: rustdoc renders an item reached through a glob with its source docs
// only, ignoring a doc comment on a second, named re-export. The named ones
// below carry a Tempo example, rendered (and doctested) before the
// documentation `tempo_io` gives them. An item added to `tempo_io::net`
// must be added here too.

/// A TCP connection: [`tempo_io::net::TcpStream`], whose documentation
/// follows this example.
///
/// An echo round trip on 127.0.0.1 with a [`TcpListener`]:
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let server = tempo::spawn(async move {
///         let (stream, _peer) = listener.accept().await?;
///         let mut buf = [0u8; 64];
///         let n = stream.read(&mut buf).await?;
///         stream.write_all(&buf[..n]).await?; // echo it back
///         Ok::<(), std::io::Error>(())
///     });
///
///     let stream = TcpStream::connect(addr).await?;
///     stream.write_all(b"ping").await?;
///     let mut buf = [0u8; 4];
///     let mut got = 0;
///     while got < buf.len() {
///         got += stream.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"ping");
///     server.await.unwrap()?;
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::TcpStream;

/// The two halves of a borrowed [`TcpStream::split`], to read and write
/// at once in one task without moving the stream. The reading half
/// is [`tempo_io::net::ReadHalf`], whose documentation follows this example.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///
///     let (reader, writer) = client.split();
///     server.write_all(b"hi").await?;
///     writer.write_all(b"yo").await?;
///     let mut buf = [0u8; 2];
///     let mut got = 0;
///     while got < 2 {
///         got += reader.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"hi");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::ReadHalf;

/// The writing half of a borrowed [`TcpStream::split`]:
/// [`tempo_io::net::WriteHalf`], whose documentation follows this example.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///
///     let (_reader, writer) = client.split();
///     writer.write_all(b"yo").await?;
///     writer.shutdown().await?; // the server reads end-of-stream after "yo"
///     let mut buf = [0u8; 8];
///     let mut got = 0;
///     loop {
///         let n = server.read(&mut buf[got..]).await?;
///         if n == 0 {
///             break;
///         }
///         got += n;
///     }
///     assert_eq!(&buf[..got], b"yo");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::WriteHalf;

/// The owned reading half of [`TcpStream::into_split`], to move into a
/// task of its own: [`tempo_io::net::OwnedReadHalf`], whose documentation
/// follows this example.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///
///     let (reader, writer) = client.into_split();
///     let reading = tempo::spawn(async move {
///         let mut buf = [0u8; 2];
///         let mut got = 0;
///         while got < 2 {
///             got += reader.read(&mut buf[got..]).await?;
///         }
///         Ok::<_, std::io::Error>((reader, buf))
///     });
///     server.write_all(b"hi").await?;
///     let (reader, buf) = reading.await.unwrap()?;
///     assert_eq!(&buf, b"hi");
///     // Both halves of the same stream: they reunite.
///     let _client: TcpStream = reader.reunite(writer).unwrap();
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::OwnedReadHalf;

/// The owned writing half of [`TcpStream::into_split`]:
/// [`tempo_io::net::OwnedWriteHalf`], whose documentation follows this
/// example.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///
///     let (_reader, writer) = client.into_split();
///     tempo::spawn(async move { writer.write_all(b"from a task").await })
///         .await
///         .unwrap()?;
///     let mut buf = [0u8; 11];
///     let mut got = 0;
///     while got < buf.len() {
///         got += server.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"from a task");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::OwnedWriteHalf;

/// The error of [`OwnedReadHalf::reunite`] given halves of two different
/// streams; it hands both back: [`tempo_io::net::ReuniteError`], whose
/// documentation follows this example.
///
/// ```
/// use tempo::net::{TcpListener, TcpStream};
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let a = TcpStream::connect(listener.local_addr()?).await?;
///     let b = TcpStream::connect(listener.local_addr()?).await?;
///     let (a_read, _a_write) = a.into_split();
///     let (_b_read, b_write) = b.into_split();
///     let err = a_read.reunite(b_write).unwrap_err();
///     let (_a_read, _b_write) = (err.0, err.1); // both halves come back
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::ReuniteError;

/// A Unix stream socket: [`tempo_io::net::UnixStream`], whose
/// documentation follows this example.
///
/// ```
/// use tempo::net::UnixStream;
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let (a, b) = UnixStream::pair()?;
///     a.write_all(b"over a socketpair").await?;
///     let mut buf = [0u8; 17];
///     let mut got = 0;
///     while got < buf.len() {
///         got += b.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"over a socketpair");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::UnixStream;

/// A Unix listening socket: [`tempo_io::net::UnixListener`], whose
/// documentation follows this example.
///
/// ```
/// use tempo::net::{UnixListener, UnixStream};
///
/// let dir = std::env::temp_dir().join(format!("tempo-doc-listener-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("sock");
/// # let _ = std::fs::remove_file(&path);
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = UnixListener::bind(&path)?;
///     let client = UnixStream::connect(&path).await?;
///     let (server, _addr) = listener.accept().await?;
///     client.write_all(b"hello").await?;
///     let mut buf = [0u8; 5];
///     let mut got = 0;
///     while got < buf.len() {
///         got += server.read(&mut buf[got..]).await?;
///     }
///     assert_eq!(&buf, b"hello");
///     Ok::<(), std::io::Error>(())
/// })?;
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::UnixListener;

/// A Unix datagram socket: [`tempo_io::net::UnixDatagram`], whose
/// documentation follows this example.
///
/// ```
/// use tempo::net::UnixDatagram;
///
/// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let (a, b) = UnixDatagram::pair()?;
///     a.send(b"one datagram").await?;
///     let mut buf = [0u8; 64];
///     let n = b.recv(&mut buf).await?;
///     assert_eq!(&buf[..n], b"one datagram");
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_io::net::UnixDatagram;

/// The largest batch one [`UdpSocket::recv_many`] / [`send_many`] call
/// takes (`UIO_MAXIOV`): [`tempo_io::net::MAX_BATCH`].
///
/// [`send_many`]: UdpSocket::send_many
///
/// ```
/// use tempo::net::{RecvBatch, MAX_BATCH};
///
/// assert!(RecvBatch::new(MAX_BATCH, 1500).is_ok());
/// assert!(RecvBatch::new(MAX_BATCH + 1, 1500).is_err());
/// ```
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
    /// It is the driver's epoll (kqueue) instance: it becomes readable when
    /// a socket of this runtime has an event, and when the runtime is
    /// unparked (a remote spawn or wake, [`Handle::unpark`](crate::runtime::Handle::unpark)).
    /// The host waits for it among its own sources, then calls
    /// [`turn(Duration::ZERO)`](Runtime::turn), which dispatches the events
    /// and runs the tasks they woke. Timers are not in it: a host that uses
    /// `tempo::time` also wakes at least every throttling period (or by the
    /// deadline it knows of), and so does one that relies on the throttling
    /// scheduler's next tick. See `examples/foreign_poll.rs` for a complete
    /// loop.
    ///
    /// An option rather than `impl AsFd for Runtime`, because a runtime
    /// built without I/O has no such fd.
    ///
    /// ```
    /// use std::os::fd::AsRawFd;
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_io().build()?;
    /// let fd = rt.io_fd().expect("built with enable_io");
    /// assert!(fd.as_raw_fd() >= 0);
    ///
    /// let no_io = tempo::runtime::Builder::new_current_thread().build()?;
    /// assert!(no_io.io_fd().is_none());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn io_fd(&self) -> Option<BorrowedFd<'_>> {
        self.handle().shared.handles.io.as_ref().map(AsFd::as_fd)
    }
}
