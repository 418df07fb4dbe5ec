//! [`UnixListener`]: accepts Unix stream connections; each accepted stream
//! is registered with the listener's driver.

use std::io;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::net::UnixStream;
use crate::poll_io::PollIo;

/// An async Unix stream listener.
pub struct UnixListener {
    io: PollIo<mio::net::UnixListener>,
}

impl_fd_traits!(UnixListener);

impl UnixListener {
    /// Binds to `path` (which must not exist: [`io::ErrorKind::AddrInUse`]).
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

    accept_methods!(UnixStream, mio::net::UnixStream, SocketAddr);

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }
}
