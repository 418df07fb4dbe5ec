//! The readiness layer: the mio reactor and what it dispatches to, and
//! nothing else. It knows nothing of datagrams, throttling, names or the
//! public socket types; the socket layer (`poll_io.rs`, `net/`,
//! `async_fd.rs`) builds on it, never the other way round.
//!
//! # Why one module
//!
//! These files form one mechanism: the [`Reactor`] polls and dispatches
//! each event to a slot of the `registration_set`, whose `scheduled_io`
//! holds the readiness word and the waiters; a [`Registration`] is a
//! socket's end of that slot and runs the operation loop (budget,
//! readiness, waiting); `wake_batch` wakes what a dispatch or a drop
//! collected. A second backend (a completion one) would be a sibling of
//! this module, not a change inside it.
//!
//! * `reactor`: [`Reactor`] (mio `Poll`, one dispatch pass per round,
//!   shutdown), [`ReactorShared`] (what registrations share with it),
//!   [`UnparkDriver`].
//! * `registration`: [`Registration`], one socket's entry and its
//!   operation loop.
//! * `registration_set`: the slab of registrations, generation-tagged
//!   tokens.
//! * `scheduled_io`: the readiness word and the waiters of one
//!   registration ([`ReadyEvent`]), and a level-triggered registration's
//!   interest (`LevelInterest`, which the socket layer implements with
//!   `sys/epoll.rs`).
//! * `wake_batch`: waking a batch of wakers when one may panic.
//! * `sync`: std or loom primitives (the loom models in `loom-tests/`
//!   check `scheduled_io` itself).
//!
//! It imports only `ready` from the rest of the crate.

mod reactor;
mod registration;
mod registration_set;
mod scheduled_io;
mod sync;
pub(crate) mod wake_batch;

pub use reactor::UnparkDriver;
pub(crate) use reactor::{Reactor, ReactorShared};
pub(crate) use registration::Registration;
pub(crate) use scheduled_io::shutdown_error;
pub use scheduled_io::ReadyEvent;
#[cfg(not(loom))]
pub(crate) use scheduled_io::{Arming, LevelInterest};
#[cfg(loom)]
pub use scheduled_io::{Arming, LevelInterest};
#[cfg(loom)]
pub use scheduled_io::{ScheduledIo, Waiter};
