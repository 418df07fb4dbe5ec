//! Tempo's I/O driver: a [mio] reactor behind the [`tempo_park::Park`]
//! contract, and async UDP, TCP and Unix sockets ([`net`]).
//!
//! # Example
//!
//! A UDP echo. Under the `tempo` runtime the same code runs in a task,
//! with `tempo::net`; these examples drive a bare [`Driver`] through a few
//! hidden lines, as tempo-io cannot depend on the runtime.
//!
//! ```
//! # tempo_io::__doc_block_on(async {
//! use tempo_io::net::UdpSocket;
//!
//! let server = UdpSocket::bind("127.0.0.1:0").await?;
//! let client = UdpSocket::bind("127.0.0.1:0").await?;
//! client.send_to(b"ping", server.local_addr()?).await?;
//!
//! let mut buf = [0u8; 1500];
//! let (len, from) = server.recv_from(&mut buf).await?;
//! server.send_to(&buf[..len], from).await?;
//! let len = client.recv(&mut buf).await?;
//! assert_eq!(&buf[..len], b"ping");
//! # Ok(()) }).unwrap();
//! ```
//!
//! [`Driver`] owns the `mio::Poll` and wakes every waiting task per
//! `park*`; [`Handle`] registers sockets with it from any thread.
//! Readiness is cleared only when an operation returns `WouldBlock` and no
//! event arrived since it looked, so no edge is lost. Unlike tokio's,
//! `try_*` methods always attempt the syscall. Every `unsafe` FFI call
//! lives in the private `sys/` folder.
//!
//! Features: `futures-io` (default) and `tokio-io` implement those
//! crates' `AsyncRead` / `AsyncWrite` for the stream types; `bytes` adds
//! receives into a `bytes::BufMut`. The receive rules are in
//! `docs/networking.md`; the module map in `docs/architecture.md`.
#![deny(missing_docs)]
#![warn(rust_2018_idioms, missing_debug_implementations)]

mod async_fd;
mod compat;
mod completion;
#[cfg(not(loom))]
mod doc_support;
mod driver;
mod handle;
mod poll_io;
mod readiness;
mod ready;
mod socket_settings;
mod sys;

pub mod net;

/// Unix-only I/O: [`AsyncFd`](unix::AsyncFd), waiting on any file
/// descriptor (a device, an eventfd, a timerfd, a pipe).
pub mod unix {
    pub use crate::async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
}

#[cfg(not(loom))]
#[doc(hidden)]
pub use doc_support::__doc_block_on;
pub use driver::{Driver, UnparkDriver};
pub use handle::{EnterGuard, Handle};
pub use ready::{Interest, Ready};

/// The io_uring calls of the completion backend, for Tempo's own
/// benchmarks (feature `unstable-sys`), not covered by semver. A ring is
/// made with the `unsafe` [`Ring::new_unchecked`], whose caller keeps the
/// rules that make the rest safe: a [`BufGroup`] outlives every receive
/// drawing on it, and each buffer a completion hands over goes back once,
/// to its own group (by [`BufGroup::read`] or [`BufGroup::discard`]).
///
/// [`Ring::new_unchecked`]: unstable_sys::Ring::new_unchecked
/// [`BufGroup`]: unstable_sys::BufGroup
/// [`BufGroup::read`]: unstable_sys::BufGroup::read
/// [`BufGroup::discard`]: unstable_sys::BufGroup::discard
#[cfg(feature = "unstable-sys")]
pub mod unstable_sys {
    pub use crate::sys::uring::{Bid, BufGroup, Completion, Datagram, RecvLayout, Ring};
}

/// Internals exposed to the loom models in `loom-tests/` only.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_model {
    pub use crate::net::recv_rule::{RecvRule, RuleMutant};
    pub use crate::readiness::{
        attempt_at, Arming, DrainedMark, IoOp, LevelInterest, ReadyEvent, ScheduledIo, Waiter,
    };
    pub use crate::ready::{Direction, Ready};
}
