//! Tempo's I/O driver: a [mio] reactor behind the [`tempo_park::Park`]
//! contract, and async UDP, TCP and Unix sockets ([`net`]).
//!
//! # Example
//!
//! A UDP echo, on a driver this thread drives itself. Under the `tempo`
//! runtime the same code runs inside `Runtime::block_on` or a task, with
//! `tempo::net` in place of `tempo_io::net`. The crate's examples drive
//! their `async` blocks on a bare [`Driver`] with a few hidden lines
//! (tempo-io cannot depend on the runtime): they run as doctests.
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
//! # Pieces
//!
//! * [`Driver`] owns the `mio::Poll`. Each `park*` waits in `epoll_wait` and
//!   dispatches readiness to the registrations in one pass, waking every
//!   task that waits on a ready socket, allocating nothing. A waker that
//!   panics does not stop the others: the whole batch is woken, then the
//!   first panic is re-raised (see [`Driver`]).
//! * Any number of tasks may await one socket in each direction (a receive
//!   loop and a request/response helper on one `Arc<UdpSocket>`, many
//!   tasks accepting on one listener): an event wakes all of them. The
//!   `poll_*` methods keep one waker per direction, the last caller's, as
//!   tokio's do; async methods each keep their own.
//! * [`Handle`] is a cheap, `Send + Sync` reference to a driver. The runtime
//!   [enters](Handle::enter) it on the threads it runs; socket constructors
//!   (`bind`, `connect`, `from_std`) register with [`Handle::current`] and
//!   fail with a message saying what to do when there is none.
//! * Readiness is edge-triggered and cached per socket; it is cleared only
//!   when an operation returns `WouldBlock` *and* no event arrived since the
//!   operation looked at it, so no edge is lost.
//!
//! # `try_*` methods: a difference from tokio
//!
//! tokio's `try_recv` (and every `try_*`) returns `WouldBlock` *without a
//! syscall* when its cached readiness is empty. Tempo's `try_*` methods
//! **always attempt the syscall**: under a throttling scheduler readiness is
//! refreshed only once per tick, so a datagram that arrived since would be
//! invisible to a readiness-gated `try_recv`. A `try_*` that returns
//! `WouldBlock` clears the cached readiness, so `readable()` /
//! `writable()` then wait for the next event, as in tokio.
//!
//! Async receives work the same way: they try the syscall first, and only on
//! `WouldBlock` register the task's waker.
//!
//! # Cargo features
//!
//! Items behind a feature say so on their page ("Available with feature
//! ...").
//!
//! * `futures-io` (**default**; the `futures-io` crate is tiny):
//!   `futures_io::AsyncRead` / `AsyncWrite` for [`net::TcpStream`], its owned
//!   halves and [`net::UnixStream`].
//! * `tokio-io` (off by default): `tokio::io::AsyncRead` / `AsyncWrite` for the
//!   same types, depending on tokio with default features off, so tokio-util
//!   codecs (`Framed`) and tokio-based protocol crates run on Tempo.
//! * `bytes` (off by default): the receive methods that take a
//!   `bytes::BufMut` (`recv_buf`, `recv_buf_from`, `try_recv_buf`,
//!   `try_recv_buf_from` on the datagram sockets, `try_read_buf` on the
//!   streams).
//!
//! `libc` (already in the dependency tree through mio) is a dependency for
//! the calls std and mio lack (`recvmmsg` / `sendmmsg`, [`net::TcpSocket`]'s
//! options, `bind` and `listen(backlog)`); those `unsafe` FFI calls, the
//! crate's only `unsafe`, live in one private folder, `sys/`.
//!
//! # Readiness and the pollable fd
//!
//! The sockets' `ready(Interest)` returns a [`Ready`] set, as tokio's. The
//! [`Driver`] (and its [`Handle`]) implement `AsRawFd`/`AsFd`: a host with
//! its own poll loop waits for that fd, then parks the driver with a zero
//! timeout.
//!
//! # Host names
//!
//! Address arguments take [`net::ToSocketAddrs`]: IP addresses are used at
//! once; host names go to the [`net::Resolve`] installed with
//! [`Handle::set_resolver`] (the `tempo` runtime installs one on its
//! blocking pool), or are resolved inline, blocking, without one.
//!
//! # Datagram receives
//!
//! One rule per scheduler: drain until `WouldBlock` on the basic
//! scheduler, one `recvfrom` per level-triggered readiness report when the
//! driver is [throttled](tempo_park::IoDriver::set_throttled); `recv_many`,
//! `recv_from_with` and [`net::UdpRingReceiver`] are explicit choices (see
//! [`net`]).
//!
//! # Counters, by name
//!
//! * `event_seq`: per registration, the readiness events it received
//!   (packed in its readiness word; guards against lost edges).
//! * `dispatch_round`: per driver, the `park*` calls so far
//!   ([`Driver::dispatch_round`]).
//! * [`DriverStats::io_events`](tempo_park::DriverStats::io_events):
//!   readiness events dispatched.
//!
//! The scheduler's *tick* (throttling period) and the timer wheel's *tick*
//! (1 ms slot) belong to `tempo` and `tempo-time`.
//!
//! The crate's module map and the path of one datagram are in
//! `docs/architecture.md`.
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

/// Internals exposed to the loom models in `loom-tests/` only.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_model {
    pub use crate::readiness::{Arming, LevelInterest, ReadyEvent, ScheduledIo, Waiter};
    pub use crate::ready::{Direction, Ready};
}
