//! Every call tempo-io makes to the OS that neither std nor mio offers,
//! and so every `unsafe` of the crate: one folder behind a small safe
//! interface, in the spirit of mio's `sys/` seam.
//!
//! * `mmsg`: `recvmmsg` / `sendmmsg` and the socket addresses and control
//!   messages they carry (the datagram receives and the batch API);
//! * `epoll`: a datagram socket's level-triggered registration (its
//!   interest changed with `epoll_ctl`, on mio's epoll);
//! * `socket`: `TcpSocket`'s socket options, `bind`, `listen(backlog)` and
//!   non-blocking `connect`;
//! * `uring`: io_uring, for the completion backend's multishot datagram
//!   receives (`completion/`).
//!
//! Each function takes borrows that outlive the call, so no pointer handed
//! to the kernel can dangle; each `unsafe` block names its invariant in a
//! `// SAFETY:` comment.

pub(crate) mod epoll;
pub(crate) mod mmsg;
pub(crate) mod socket;
pub(crate) mod uring;
