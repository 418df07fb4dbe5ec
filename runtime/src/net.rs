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
//! Host names (in [`lookup_host`], and in `bind`, `connect` and `send_to`
//! through [`ToSocketAddrs`]) are resolved on the runtime's
//! [blocking pool](crate::task::spawn_blocking), as in tokio: a slow DNS
//! server delays only the task that asked, never the runtime's other
//! tasks. Addresses that are already IPs (`SocketAddr`, `(IpAddr, u16)`,
//! `"127.0.0.1:80"`) are used at once, with no thread hop.
//!
//! Unlike tokio, `try_*` methods always attempt the syscall instead of
//! trusting cached readiness: under throttling, readiness is refreshed only
//! once per tick. Under the throttling scheduler a datagram receive loop
//! pays one receive syscall per datagram: each receive asks the kernel for
//! two datagrams, holds the second for the next receive, and knows the
//! socket is drained when only one came (see
//! [`tempo_io::Driver::set_recv_ahead`] and the [`tempo_io::net`] docs);
//! `recv_many` / `send_many` take a whole batch per syscall.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

pub use tempo_io::net::*;

use crate::blocking::BlockingPool;
use crate::runtime::Runtime;

/// Resolves host names on a runtime's blocking pool: the [`Resolve`] the
/// runtime installs on its I/O driver.
struct BlockingResolver {
    pool: BlockingPool,
}

impl Resolve for BlockingResolver {
    fn resolve(&self, host_and_port: String) -> Resolving {
        let join = self.pool.spawn(move || {
            std::net::ToSocketAddrs::to_socket_addrs(&host_and_port).map(Iterator::collect)
        });
        Box::pin(async move {
            join.await.unwrap_or_else(|error| {
                Err(io::Error::other(format!(
                    "host-name resolution on the blocking pool did not complete: {error}"
                )))
            })
        })
    }
}

/// Makes `io`'s sockets resolve host names on `pool`.
pub(crate) fn resolve_on_pool(io: &tempo_io::Handle, pool: &BlockingPool) {
    io.set_resolver(Arc::new(BlockingResolver { pool: pool.clone() }));
}

impl Runtime {
    /// The I/O driver's pollable fd, for a host that runs its own poll loop
    /// (`None` without [`enable_io`](crate::runtime::Builder::enable_io)).
    ///
    /// It is the driver's epoll (kqueue) instance: it becomes readable when
    /// a socket of this runtime has an event, and when the runtime is
    /// unparked (a remote spawn or wake, [`Handle::unpark`](crate::runtime::Handle::unpark)).
    /// The host waits for it among its own sources, then calls
    /// [`turn(Duration::ZERO)`](Runtime::turn), which dispatches the events
    /// and runs the tasks they woke. Timers are not in it: a host that uses
    /// `tempo::time` also wakes at least every throttling period (or by the
    /// deadline it knows of), and so does one that relies on the throttling
    /// scheduler's next tick. See `examples/foreign_poll.rs` for a complete
    /// loop.
    ///
    /// An option rather than `impl AsFd for Runtime`, because a runtime
    /// built without I/O has no such fd.
    ///
    /// ```
    /// use std::os::fd::AsRawFd;
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_io().build()?;
    /// let fd = rt.io_fd().expect("built with enable_io");
    /// assert!(fd.as_raw_fd() >= 0);
    ///
    /// let no_io = tempo::runtime::Builder::new_current_thread().build()?;
    /// assert!(no_io.io_fd().is_none());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn io_fd(&self) -> Option<BorrowedFd<'_>> {
        self.handle().shared.handles.io.as_ref().map(AsFd::as_fd)
    }
}
