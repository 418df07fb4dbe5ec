//! `accept` of [`TcpListener`](crate::net::TcpListener) and
//! [`UnixListener`](crate::net::UnixListener), written once as generic
//! code on [`PollIo`] over [`Listener`]: each accepted stream is
//! registered with the listener's own driver.

use std::io;
use std::task::{ready, Context, Poll};

use mio::event::Source;

use crate::poll_io::PollIo;
use crate::ready::Direction;
use crate::Handle;

/// A mio listener and the Tempo stream type its connections become.
pub(crate) trait Listener: Source {
    /// The accepted mio stream.
    type Accepted;
    /// The Tempo stream an accepted one is registered as.
    type Stream;
    /// The peer address type.
    type Addr;

    /// One `accept` syscall.
    fn accept_one(&self) -> io::Result<(Self::Accepted, Self::Addr)>;

    /// Registers an accepted stream with `handle`'s driver.
    fn register_accepted(accepted: Self::Accepted, handle: Handle) -> io::Result<Self::Stream>;
}

impl Listener for mio::net::TcpListener {
    type Accepted = mio::net::TcpStream;
    type Stream = crate::net::TcpStream;
    type Addr = std::net::SocketAddr;

    fn accept_one(&self) -> io::Result<(Self::Accepted, Self::Addr)> {
        self.accept()
    }

    fn register_accepted(accepted: Self::Accepted, handle: Handle) -> io::Result<Self::Stream> {
        crate::net::TcpStream::from_mio(accepted, handle)
    }
}

impl Listener for mio::net::UnixListener {
    type Accepted = mio::net::UnixStream;
    type Stream = crate::net::UnixStream;
    type Addr = std::os::unix::net::SocketAddr;

    fn accept_one(&self) -> io::Result<(Self::Accepted, Self::Addr)> {
        self.accept()
    }

    fn register_accepted(accepted: Self::Accepted, handle: Handle) -> io::Result<Self::Stream> {
        crate::net::UnixStream::from_mio(accepted, handle)
    }
}

impl<L: Listener> PollIo<L> {
    pub(crate) async fn accept(&self) -> io::Result<(L::Stream, L::Addr)> {
        let op = || self.accept_one();
        let accepted = self.registration.io(Direction::Read, op).await;
        self.registered(accepted)
    }

    pub(crate) fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(L::Stream, L::Addr)>> {
        let op = || self.accept_one();
        let accepted = ready!(self.registration.poll_io(cx, Direction::Read, op));
        Poll::Ready(self.registered(accepted))
    }

    /// Registers an accepted stream with this listener's driver.
    fn registered(
        &self,
        accepted: io::Result<(L::Accepted, L::Addr)>,
    ) -> io::Result<(L::Stream, L::Addr)> {
        let (stream, addr) = accepted?;
        let handle = self.handle();
        L::register_accepted(stream, handle).map(|stream| (stream, addr))
    }
}
