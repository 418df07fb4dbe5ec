//! Unix domain sockets: [`UnixStream`], [`UnixListener`], [`UnixDatagram`].

mod datagram;
mod listener;
mod stream;

pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use stream::UnixStream;
