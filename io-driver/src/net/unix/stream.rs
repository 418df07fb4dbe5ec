//! [`UnixStream`]: a connected Unix stream socket.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async Unix stream socket: a [`TcpStream`](crate::net::TcpStream)
/// between processes of one machine. With the `futures-io` feature (on by
/// default) it implements `futures_io::AsyncRead` / `AsyncWrite`; with
/// `tokio-io`, tokio's traits.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{UnixListener, UnixStream};
///
/// let path = std::env::temp_dir().join(format!("tempo-doc-stream-{}.sock", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let listener = UnixListener::bind(&path)?;
/// let stream = UnixStream::connect(&path).await?;
/// let (server, _) = listener.accept().await?;
///
/// stream.write_all(b"ping").await?;
/// let mut buf = [0u8; 4];
/// let mut filled = 0;
/// while filled < buf.len() {
///     filled += server.read(&mut buf[filled..]).await?;
/// }
/// assert_eq!(&buf, b"ping");
/// # std::fs::remove_file(&path)?;
/// # Ok(()) }).unwrap();
/// ```
pub struct UnixStream {
    io: PollIo<mio::net::UnixStream>,
}

impl_fd_traits!(UnixStream);

impl UnixStream {
    pub(crate) fn from_mio(stream: mio::net::UnixStream, handle: Handle) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollIo::with_handle(stream, handle)?,
        })
    }

    /// Connects to the socket at `path`. Nothing listening there fails
    /// with [`io::ErrorKind::ConnectionRefused`] or
    /// [`io::ErrorKind::NotFound`].
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::{UnixListener, UnixStream};
    ///
    /// let path = std::env::temp_dir().join(format!("tempo-doc-stream-connect-{}.sock", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let listener = UnixListener::bind(&path)?;
    /// let stream = UnixStream::connect(&path).await?;
    /// stream.write_all(b"hello").await?;
    /// # drop(listener);
    /// # std::fs::remove_file(&path)?;
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn connect<P: AsRef<Path>>(path: P) -> io::Result<UnixStream> {
        let stream =
            UnixStream::from_mio(mio::net::UnixStream::connect(path)?, Handle::try_current()?)?;
        stream
            .io
            .registration
            .io(Direction::Write, || match stream.io.take_error()? {
                Some(e) => Err(e),
                None => Ok(()),
            })
            .await?;
        Ok(stream)
    }

    /// A connected pair, both registered with the current driver.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// let (a, b) = tempo_io::net::UnixStream::pair()?;
    /// a.write_all(b"ping").await?;
    /// let mut buf = [0u8; 4];
    /// let mut filled = 0;
    /// while filled < buf.len() {
    ///     filled += b.read(&mut buf[filled..]).await?;
    /// }
    /// assert_eq!(&buf, b"ping");
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let handle = Handle::try_current()?;
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((
            UnixStream::from_mio(a, handle.clone())?,
            UnixStream::from_mio(b, handle)?,
        ))
    }

    /// Registers a std stream with the current driver.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        UnixStream::from_mio(
            mio::net::UnixStream::from_std(stream),
            Handle::try_current()?,
        )
    }

    /// Deregisters the stream and returns it as a std stream.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        self.io.into_inner().map(Into::into)
    }

    forward_to_source! {
        /// The local address.
        fn local_addr(&self) -> io::Result<SocketAddr> => local_addr();
        /// The peer's address.
        fn peer_addr(&self) -> io::Result<SocketAddr> => peer_addr();
        /// Takes the pending `SO_ERROR`.
        fn take_error(&self) -> io::Result<Option<io::Error>> => take_error();
    }

    readiness_methods!(UnixStream, poll_read_ready, poll_write_ready);

    stream_methods!(UnixStream);

    /// Shuts down the write side (the peer reads end of stream).
    pub async fn shutdown(&self) -> io::Result<()> {
        self.shutdown_write()
    }

    pub(crate) fn shutdown_write(&self) -> io::Result<()> {
        self.io.shutdown(Shutdown::Write)
    }

    ready_method!(UnixStream);

    stream_buf_methods!(UnixStream);
}
