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
//! once per tick. Under the throttling scheduler a receive loop skips most
//! empty `recvfrom` calls: the retry after a successful receive is deferred
//! to the next tick, where it usually finds the next datagram; a deferred
//! retry that finds data drains the socket, so no backlog builds up (see
//! [`tempo_io::Driver::set_defer_drain_retry`]).

pub use tempo_io::net::*;
