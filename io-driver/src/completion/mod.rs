//! The completion backend: datagram receives on io_uring, beside the
//! readiness reactor (`readiness/`).
//!
//! On epoll a throttled receiver pays, per datagram, a readiness report,
//! its dispatch and one `recvfrom`. On io_uring a multishot `recvmsg` per
//! socket receives every datagram into a provided buffer without a
//! syscall of its own, and with `IORING_SETUP_DEFER_TASKRUN` the kernel
//! runs those receives in one batch when the ring's thread enters it:
//! once per tick under throttling. Such a ring has one issuer, so it is
//! owned by the driver that turns it ([`RingHome`], made by the driver's
//! first ring receiver) and used only on that driver's thread; its
//! receivers are `!Send`, so the receivers, their ring and the park that
//! turns it share one thread and need no lock. Each park asks the ring
//! how long the poll may block, polls, then turns the ring (one
//! `io_uring_enter`: submit, run the queued receives, reap) and counts
//! the completions it handed as I/O events.

mod home;
mod recv_ring;
mod slot;

pub(crate) use home::RingHome;
pub(crate) use recv_ring::{size_class, RecvRing, Taken};
pub(crate) use slot::Arrival;
