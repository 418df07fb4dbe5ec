//! TCP: [`TcpListener`], [`TcpStream`] and its halves.

mod listener;
mod split;
mod stream;

pub use listener::TcpListener;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
