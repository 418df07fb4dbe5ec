//! The completion backend: datagram receives on io_uring, next to the
//! readiness reactor (`readiness/`).
//!
//! # Why a second backend
//!
//! On epoll a throttled receiver pays, per datagram, a readiness report,
//! its dispatch and one `recvfrom`: a syscall, a file lookup and the
//! socket's re-check, whoever makes the call. No epoll regime measured
//! was cheaper than one `recvfrom` per report (benches README). On
//! io_uring a multishot `recvmsg` per socket receives every datagram into
//! a provided buffer without a syscall of its own, and with
//! `IORING_SETUP_DEFER_TASKRUN` the kernel does those receives in one
//! batch when the thread enters it: once per tick under throttling.
//!
//! # Why one ring per thread
//!
//! A ring with `DEFER_TASKRUN` has one issuer: the thread that made it
//! submits, and its receives run in that thread's calls. Tempo's driver
//! parks on the runtime's thread, and a receiver (`UdpRingReceiver`) is
//! `!Send`, so the receivers of a thread, their ring and the driver that
//! turns it are all on one thread: no lock, no atomic between them. The
//! ring lives as long as a receiver holds it (`thread_ring.rs`).
//!
//! # How the driver serves it
//!
//! After each poll, [`Driver`](crate::Driver) turns its thread's ring
//! (one `io_uring_enter`: submit, run the queued receives, reap) and
//! counts the completions it handed as I/O events; before a poll it asks
//! how long it may block (not at all while a turn is due), which also
//! moves the ring's eventfd to its poller: while it blocks, an arrival
//! wakes it.

mod slot;
mod thread_ring;

pub(crate) use slot::Arrival;
pub(crate) use thread_ring::{
    size_class, turn_this_thread, wait_limit_on_this_thread, Taken, ThreadRing,
};
