//! [`TcpStream`]: a connected TCP socket.

use std::io;
use std::net::{Shutdown, SocketAddr};

use crate::net::addr::{no_address, resolve};
use crate::net::tcp::split::{split, split_owned};
use crate::net::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ToSocketAddrs, WriteHalf};
use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async TCP stream.
///
/// Reading and writing take `&self`, so one task may read while another
/// writes (see [`into_split`](TcpStream::into_split)).
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// let stream = TcpStream::connect(listener.local_addr()?).await?;
/// let (server, _) = listener.accept().await?;
///
/// stream.write_all(b"ping").await?;
/// let mut buf = [0u8; 4];
/// let mut filled = 0;
/// while filled < buf.len() {
///     filled += server.read(&mut buf[filled..]).await?;
/// }
/// assert_eq!(&buf, b"ping");
/// # Ok(()) }).unwrap();
/// ```
///
/// # The I/O traits
///
/// With the `futures-io` feature (on by default) the stream implements
/// `futures_io::AsyncRead` / `AsyncWrite`, so the `futures` crate's
/// extension methods (`read_to_end`, `copy`, ...) work on it; with the
/// `tokio-io` feature (off by default), tokio's `AsyncRead` /
/// `AsyncWrite`, for tokio-util codecs and tokio-based protocol crates:
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use futures::io::{AsyncReadExt, AsyncWriteExt};
/// use tempo_io::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0").await?;
/// let mut stream = TcpStream::connect(listener.local_addr()?).await?;
/// let (mut server, _) = listener.accept().await?;
///
/// AsyncWriteExt::write_all(&mut stream, b"hello").await?;
/// stream.close().await?; // shuts down the write side
/// let mut received = Vec::new();
/// server.read_to_end(&mut received).await?;
/// assert_eq!(received, b"hello");
/// # Ok(()) }).unwrap();
/// ```
pub struct TcpStream {
    io: PollIo<mio::net::TcpStream>,
}

impl_fd_traits!(TcpStream);

impl TcpStream {
    pub(crate) fn from_mio(stream: mio::net::TcpStream, handle: Handle) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the first address of `addr` that accepts (a host name
    /// is resolved off the runtime's thread, see [`ToSocketAddrs`]). A
    /// refused connection fails with [`io::ErrorKind::ConnectionRefused`].
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::{TcpListener, TcpStream};
    ///
    /// let listener = TcpListener::bind("127.0.0.1:0").await?;
    /// let stream = TcpStream::connect(listener.local_addr()?).await?;
    /// stream.write_all(b"hello").await?;
    /// assert_eq!(stream.peer_addr()?, listener.local_addr()?);
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let handle = Handle::try_current()?;
        let mut last_error = None;
        for addr in resolve(&addr, Some(&handle)).await? {
            let connected = match mio::net::TcpStream::connect(addr) {
                Ok(stream) => TcpStream::connected(stream, handle.clone()).await,
                Err(e) => Err(e),
            };
            match connected {
                Ok(stream) => return Ok(stream),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(no_address))
    }

    /// Registers a stream whose non-blocking connect is under way and
    /// waits for the outcome.
    pub(crate) async fn connected(
        stream: mio::net::TcpStream,
        handle: Handle,
    ) -> io::Result<TcpStream> {
        let stream = TcpStream::from_mio(stream, handle)?;
        stream
            .io
            .registration
            .io(Direction::Write, || stream.connect_result())
            .await?;
        Ok(stream)
    }

    /// The outcome of a non-blocking connect once writable: `SO_ERROR`,
    /// then `getpeername` (mio's documented sequence); `WouldBlock` while
    /// still in progress.
    fn connect_result(&self) -> io::Result<()> {
        if let Some(e) = self.io.take_error()? {
            return Err(e);
        }
        match self.io.peer_addr() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                Err(io::ErrorKind::WouldBlock.into())
            }
            Err(e) => Err(e),
        }
    }

    /// Registers a connected std stream with the current driver (and makes
    /// it non-blocking).
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::from_mio(
            mio::net::TcpStream::from_std(stream),
            Handle::try_current()?,
        )
    }

    /// Deregisters the stream and returns it as a std stream.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        self.io.into_inner().map(Into::into)
    }

    forward_to_source! {
        /// The local address.
        fn local_addr(&self) -> io::Result<SocketAddr> => local_addr();
        /// The peer's address.
        fn peer_addr(&self) -> io::Result<SocketAddr> => peer_addr();
        /// Sets `TCP_NODELAY`.
        fn set_nodelay(&self, nodelay: bool) -> io::Result<()> => set_nodelay(nodelay);
        /// Gets `TCP_NODELAY`.
        fn nodelay(&self) -> io::Result<bool> => nodelay();
        /// Sets `IP_TTL`.
        fn set_ttl(&self, ttl: u32) -> io::Result<()> => set_ttl(ttl);
        /// Gets `IP_TTL`.
        fn ttl(&self) -> io::Result<u32> => ttl();
        /// Takes the pending `SO_ERROR`.
        fn take_error(&self) -> io::Result<Option<io::Error>> => take_error();
    }

    readiness_methods!(TcpStream, poll_read_ready, poll_write_ready);

    stream_methods!(TcpStream);

    io_operation! {
        /// Reads without consuming.
        io Read fn peek / poll_peek / try_peek (buf: &mut [u8]) -> usize = |io| io.peek(buf)
    }

    /// Shuts down the write side (the peer reads end of stream).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.shutdown_std(Shutdown::Write)
    }

    pub(crate) fn shutdown_std(&self, how: Shutdown) -> io::Result<()> {
        self.io.shutdown(how)
    }

    #[allow(dead_code)] // used by the I/O trait features only
    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.shutdown_std(Shutdown::Write)
    }

    /// Splits into halves that borrow the stream, to read and write in
    /// one task at once (with `join!` or `select!`).
    ///
    /// ```
    #[doc = doc_pair!(TcpStream)]
    ///
    /// let mut a = a;
    /// let (reader, writer) = a.split();
    /// writer.write_all(b"ping").await?;
    /// b.write_all(b"pong").await?;
    /// let mut buf = [0u8; 4];
    /// let mut filled = 0;
    /// while filled < buf.len() {
    ///     filled += reader.read(&mut buf[filled..]).await?;
    /// }
    /// assert_eq!(&buf, b"pong");
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        split(self)
    }

    /// Splits into owned halves that can move to different tasks; dropping
    /// the write half shuts down the write side.
    /// [`reunite`](OwnedReadHalf::reunite) puts them back together.
    ///
    /// ```
    #[doc = doc_pair!(TcpStream)]
    ///
    /// let (reader, writer) = a.into_split();
    /// writer.write_all(b"ping").await?;
    /// drop(writer); // b reads end of stream after "ping"
    ///
    /// let mut received = Vec::new();
    /// let mut buf = [0u8; 1024];
    /// loop {
    ///     let n = b.read(&mut buf).await?;
    ///     if n == 0 {
    ///         break;
    ///     }
    ///     received.extend_from_slice(&buf[..n]);
    /// }
    /// assert_eq!(received, b"ping");
    /// # drop(reader);
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }

    ready_method!(TcpStream);

    stream_buf_methods!(TcpStream);
}
