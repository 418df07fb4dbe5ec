//! Networking: UDP, TCP and Unix sockets from [`tempo_io::net`], with
//! tokio's names.
//!
//! Sockets register with the I/O driver of the runtime they are created in:
//! create them inside [`block_on`](crate::runtime::Runtime::block_on), a
//! task, or after [`Runtime::enter`](crate::runtime::Runtime::enter) or
//! [`Handle::enter`](crate::runtime::Handle::enter) (which works from any
//! thread), on a runtime built with
//! [`enable_io`](crate::runtime::Builder::enable_io). Elsewhere the
//! constructors return an error that says so.
//!
//! Unlike tokio, `try_*` methods always attempt the syscall instead of
//! trusting cached readiness: under throttling, readiness is refreshed only
//! once per tick. Under the throttling scheduler a datagram receive loop
//! pays one receive syscall per datagram: each receive asks the kernel for
//! two datagrams, holds the second for the next receive, and knows the
//! socket is drained when only one came (see
//! [`tempo_io::Driver::set_recv_ahead`] and the [`tempo_io::net`] docs);
//! `recv_many` / `send_many` take a whole batch per syscall.

pub use tempo_io::net::*;
