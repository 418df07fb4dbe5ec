//! Plumbing shared by Tempo's test suites and benchmarks, written once.
//!
//! Today that is the counting global allocator ([`alloc`]) behind every
//! "allocates nothing per datagram / wake / re-arm" claim: the runtime's,
//! the timer driver's and the I/O driver's allocation tests and the
//! benchmarks' "allocations per packet" column all install it; and
//! [`net::wait_until_queued`] and [`net::sent_and_queued`], for tests that
//! need datagrams queued before one tick, park or receive; and
//! [`fd::raise_fd_limit`], for tests that hold thousands of sockets.
//!
//! The crate depends on no Tempo crate on purpose: a crate's own tests can
//! use it as a dev-dependency without building a second copy of that crate.
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

pub mod alloc;
pub mod fd;
pub mod net;
