//! [`UnixStream`]: a connected Unix stream socket.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// An async Unix stream socket.
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

    /// Connects to the socket at `path`.
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
