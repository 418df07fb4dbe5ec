//! [`UnixDatagram`]: a Unix datagram socket. Receives follow the same
//! rules as [`UdpSocket`](crate::net::UdpSocket)'s, the receive-ahead
//! rule included.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async Unix datagram socket: a [`UdpSocket`](crate::net::UdpSocket)
/// between processes of one machine, addressed by a path (or unnamed, as
/// [`pair`](Self::pair)'s).
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::UnixDatagram;
///
/// let server_path = std::env::temp_dir().join(format!("tempo-doc-dgram-server-{}.sock", std::process::id()));
/// # let _ = std::fs::remove_file(&server_path);
/// let client_path = std::env::temp_dir().join(format!("tempo-doc-dgram-client-{}.sock", std::process::id()));
/// # let _ = std::fs::remove_file(&client_path);
/// let server = UnixDatagram::bind(&server_path)?;
/// let client = UnixDatagram::bind(&client_path)?;
/// client.send_to(b"ping", &server_path).await?;
///
/// let mut buf = [0u8; 1500];
/// let (len, from) = server.recv_from(&mut buf).await?;
/// assert_eq!(&buf[..len], b"ping");
/// server.send_to(b"pong", from.as_pathname().unwrap()).await?;
/// let len = client.recv(&mut buf).await?;
/// assert_eq!(&buf[..len], b"pong");
/// # std::fs::remove_file(&server_path)?;
/// # std::fs::remove_file(&client_path)?;
/// # Ok(()) }).unwrap();
/// ```
pub struct UnixDatagram {
    io: PollIo<mio::net::UnixDatagram>,
}

impl_fd_traits!(UnixDatagram);

impl UnixDatagram {
    fn from_mio(socket: mio::net::UnixDatagram, handle: Handle) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: PollIo::with_handle(socket, handle)?,
        })
    }

    /// Binds to `path` (which must not exist:
    /// [`io::ErrorKind::AddrInUse`]).
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// let path = std::env::temp_dir().join(format!("tempo-doc-dgram-bind-{}.sock", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let socket = tempo_io::net::UnixDatagram::bind(&path)?;
    /// assert_eq!(socket.local_addr()?.as_pathname(), Some(path.as_path()));
    /// # std::fs::remove_file(&path)?;
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixDatagram> {
        let handle = Handle::try_current()?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::bind(path)?, handle)
    }

    /// A socket bound to no address: it can send, and receive replies
    /// only once [`connect`](Self::connect)ed or through a [`pair`](Self::pair).
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UnixDatagram;
    ///
    /// let path = std::env::temp_dir().join(format!("tempo-doc-dgram-unbound-{}.sock", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let receiver = UnixDatagram::bind(&path)?;
    /// let sender = UnixDatagram::unbound()?;
    /// sender.send_to(b"ping", &path).await?;
    /// let mut buf = [0u8; 64];
    /// let len = receiver.recv(&mut buf).await?;
    /// assert_eq!(&buf[..len], b"ping");
    /// # std::fs::remove_file(&path)?;
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn unbound() -> io::Result<UnixDatagram> {
        let handle = Handle::try_current()?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::unbound()?, handle)
    }

    /// A connected pair, both registered with the current driver.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// let (a, b) = tempo_io::net::UnixDatagram::pair()?;
    /// a.send(b"ping").await?;
    /// let mut buf = [0u8; 64];
    /// let len = b.recv(&mut buf).await?;
    /// assert_eq!(&buf[..len], b"ping");
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let handle = Handle::try_current()?;
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((
            UnixDatagram::from_mio(a, handle.clone())?,
            UnixDatagram::from_mio(b, handle)?,
        ))
    }

    /// Registers a std socket with the current driver.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        UnixDatagram::from_mio(
            mio::net::UnixDatagram::from_std(socket),
            Handle::try_current()?,
        )
    }

    /// Deregisters the socket and returns it as a std socket.
    ///
    /// A datagram held by the receive-ahead rule (see the
    /// [`net`](crate::net) docs: it left the kernel already) is dropped
    /// with the Tempo socket; `readable()` is ready at once while one is
    /// held, so receive it first if it matters.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        self.io.into_inner().map(Into::into)
    }

    /// Sets the default destination (for [`send`](Self::send)) and
    /// filters received datagrams to it.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UnixDatagram;
    ///
    /// let path = std::env::temp_dir().join(format!("tempo-doc-dgram-connect-{}.sock", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let receiver = UnixDatagram::bind(&path)?;
    /// let sender = UnixDatagram::unbound()?;
    /// sender.connect(&path)?;
    /// sender.send(b"ping").await?;
    /// let mut buf = [0u8; 64];
    /// let len = receiver.recv(&mut buf).await?;
    /// assert_eq!(&buf[..len], b"ping");
    /// # std::fs::remove_file(&path)?;
    /// # Ok(()) }).unwrap();
    /// ```
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        self.io.connect(path)
    }

    forward_to_source! {
        /// The local address.
        fn local_addr(&self) -> io::Result<SocketAddr> => local_addr();
        /// The peer's address.
        fn peer_addr(&self) -> io::Result<SocketAddr> => peer_addr();
        /// Takes the pending `SO_ERROR`.
        fn take_error(&self) -> io::Result<Option<io::Error>> => take_error();
        /// Shuts down part of the socket.
        fn shutdown(&self, how: Shutdown) -> io::Result<()> => shutdown(how);
    }

    datagram_readiness_methods!(UnixDatagram);

    datagram_methods!(UnixDatagram, SocketAddr, unix_addr);

    /// Sends to the socket at `path` and returns the bytes sent.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::net::UnixDatagram;
    ///
    /// let path = std::env::temp_dir().join(format!("tempo-doc-dgram-send-to-{}.sock", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let receiver = UnixDatagram::bind(&path)?;
    /// let sender = UnixDatagram::unbound()?;
    /// assert_eq!(sender.send_to(b"ping", &path).await?, 4);
    /// let mut buf = [0u8; 64];
    /// let (len, _) = receiver.recv_from(&mut buf).await?;
    /// assert_eq!(&buf[..len], b"ping");
    /// # std::fs::remove_file(&path)?;
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io
            .registration
            .io(Direction::Write, || self.io.send_to(buf, path))
            .await
    }

    /// Polls a send to `path`.
    ///
    /// Only the last task to call a `poll_*` method of this direction is
    /// woken (as with tokio); the async methods have no such limit.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        path: &Path,
    ) -> Poll<io::Result<usize>> {
        self.io
            .registration
            .poll_io(cx, Direction::Write, || self.io.send_to(buf, path))
    }

    /// Sends to `path` now, or fails with `WouldBlock`.
    pub fn try_send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        self.io
            .registration
            .try_io(Direction::Write, || self.io.send_to(buf, path))
    }

    ready_method!(UnixDatagram);

    datagram_buf_methods!(UnixDatagram, SocketAddr, unix_addr);
}
