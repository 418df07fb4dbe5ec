//! [`UnixListener`]: accepts Unix stream connections; each accepted stream
//! is registered with the listener's driver.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use crate::net::UnixStream;
use crate::poll_io::PollIo;

/// An async Unix stream listener, bound to a path. Each accepted
/// [`UnixStream`] is registered with the listener's driver. The path stays
/// in the file system after the listener is dropped: remove it to bind
/// there again.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use tempo_io::net::{UnixListener, UnixStream};
///
/// let path = std::env::temp_dir().join(format!("tempo-doc-listener-{}.sock", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let listener = UnixListener::bind(&path)?;
/// let client = UnixStream::connect(&path).await?;
///
/// let (stream, _addr) = listener.accept().await?;
/// stream.write_all(b"hello").await?;
/// let mut buf = [0u8; 5];
/// let mut filled = 0;
/// while filled < buf.len() {
///     filled += client.read(&mut buf[filled..]).await?;
/// }
/// assert_eq!(&buf, b"hello");
/// drop(listener);
/// std::fs::remove_file(&path)?;
/// # Ok(()) }).unwrap();
/// ```
pub struct UnixListener {
    io: PollIo<mio::net::UnixListener>,
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl UnixListener {
    /// Binds to `path` (which must not exist: [`io::ErrorKind::AddrInUse`])
    /// and registers the listener with the current driver.
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixListener> {
        Ok(UnixListener {
            io: PollIo::new(mio::net::UnixListener::bind(path)?)?,
        })
    }

    /// Registers a std listener with the current driver.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            io: PollIo::new(mio::net::UnixListener::from_std(listener))?,
        })
    }

    /// Deregisters the listener and returns it as a std listener.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        self.io.into_inner().map(Into::into)
    }

    /// Accepts a connection. Running out of file descriptors fails with
    /// the OS error (`EMFILE`, "Too many open files"); the pending
    /// connection stays queued and a later `accept` can take it.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        self.io.accept().await
    }

    /// Polls an accept.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        self.io.poll_accept(cx)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }
}
