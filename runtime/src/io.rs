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

/// Unix-only I/O: [`AsyncFd`](unix::AsyncFd), waiting for readiness on any
/// file descriptor (an ALSA or V4L2 device, an eventfd, a timerfd, a pipe),
/// as tokio's `tokio::io::unix` ([`tempo_io`]'s, re-exported).
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
/// use tempo::io::unix::AsyncFd;
///
/// # tempo::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
/// let (mut tx, rx) = UnixStream::pair()?;
/// rx.set_nonblocking(true)?;
/// let rx = AsyncFd::new(rx)?;
/// tx.write_all(b"ping")?;
///
/// let mut buf = [0u8; 4];
/// let len = loop {
///     let mut guard = rx.readable().await?;
///     if let Ok(result) = guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
///         break result?;
///     }
/// };
/// assert_eq!(&buf[..len], b"ping");
/// # Ok::<(), std::io::Error>(()) }).unwrap();
/// ```
pub mod unix {
    pub use tempo_io::unix::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
}
