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
//! # Receive-ahead
//!
//! [`Driver::set_recv_ahead`] turns on the receive-ahead rule: a
//! throttled receiver pays one receive syscall per datagram (a
//! drain-until-`WouldBlock` loop pays two) plus one `epoll_wait` per tick,
//! and drains a backlog in the same tick. The rule, its invariant and its
//! memory cost live in one module, `net/recv_ahead.rs`, owned by the
//! datagram sockets (`net/datagram.rs`); the batch forms
//! ([`net::RecvBatch`], [`net::SendBatch`]) take many datagrams per
//! syscall.
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
//! # Module map
//!
//! * `readiness/`: the mio reactor and what it dispatches to, knowing
//!   nothing of datagrams, throttling or names: `reactor` (poll, one
//!   dispatch pass per `park*`, shutdown), `registration` (one socket's
//!   entry and its operation loop: budget, syscall, readiness, waiting),
//!   `registration_set` (the slab, generation-tagged tokens),
//!   `scheduled_io` (the readiness word and the waiters of one
//!   registration), `wake_batch` (waking a batch when one waker may
//!   panic), `sync` (std or loom primitives). It imports only `ready`.
//! * `completion/`: the second backend, datagram receives on io_uring:
//!   `thread_ring` (one ring per thread, its receivers' slots, the turn
//!   the driver makes after each poll; see its module docs for why per
//!   thread). Serves [`net::UdpRingReceiver`].
//! * `socket_settings`: what a driver's sockets share besides the reactor
//!   (the receive-ahead switch, the resolver).
//! * `driver`: [`Driver`], the reactor plus those settings; [`tempo_park::Park`]
//!   forwarded to the reactor, then the thread's ring turned.
//! * `handle`: [`Handle`] (the reactor's shared state plus the settings),
//!   the thread's current reactor, [`EnterGuard`].
//! * `poll_io`: a mio source plus its registration and the settings, the
//!   net types' (and `AsyncFd`'s) field.
//! * `ready`: readiness bits ([`Ready`]), [`Interest`], directions.
//! * [`net`]: the socket types. Each public method is a documented
//!   forward to generic code written once: `net/datagram.rs`
//!   (`DatagramIo`, the datagram sockets' operations and their
//!   receive-ahead state, `net/recv_ahead.rs`), `net/byte_stream.rs`
//!   (the streams' reads and writes), `net/accept.rs` (the listeners'
//!   `accept`); `net/batch.rs` holds the batch types, `net/addr.rs`
//!   address resolution, `net/tcp/socket.rs` [`net::TcpSocket`],
//!   `net/buf.rs` the `*_buf` receives.
//! * `sys`: every OS call std and mio lack, and so every `unsafe` of the
//!   crate (`sys/mmsg.rs`: `recvmmsg` / `sendmmsg`; `sys/epoll.rs`: a
//!   datagram socket's level-triggered interest; `sys/socket.rs`:
//!   `TcpSocket`'s calls; `sys/uring.rs`: io_uring).
//! * `compat`: `futures-io` and `tokio-io` trait impls.
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
    pub use crate::sys::uring::{Bid, BufGroup, Completion, Datagram, Ring};
}

/// Internals exposed to the loom models in `loom-tests/` only.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_model {
    pub use crate::readiness::{Arming, LevelInterest, ReadyEvent, ScheduledIo, Waiter};
    pub use crate::ready::{Direction, Ready};
}
