//! The readiness types of the sockets' `ready` methods, as tokio's
//! `tokio::io::{Interest, Ready}` ([`tempo_io`]'s, re-exported).
//!
//! ```
//! use tempo::io::Interest;
//!
//! # tempo::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
//! let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
//! // A fresh socket can be written to at once.
//! let ready = socket.ready(Interest::READABLE | Interest::WRITABLE).await?;
//! assert!(ready.is_writable());
//! # Ok::<(), std::io::Error>(()) }).unwrap();
//! ```

pub use tempo_io::{Interest, Ready};

/// Unix-only I/O: [`AsyncFd`](unix::AsyncFd) waits for readiness on any
/// file descriptor, as tokio's `tokio::io::unix`.
pub mod unix {
    pub use tempo_io::unix::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
}
