//! The readiness layer: the mio reactor and what it dispatches to, and
//! nothing else. It knows nothing of datagrams, throttling, names or the
//! public socket types; the socket layer (`poll_io.rs`, `net/`,
//! `async_fd.rs`) builds on it, never the other way round.
//!
//! A second backend is a sibling of this module, not a change inside it;
//! the map of its files is in `docs/architecture.md`.

mod reactor;
mod registration;
mod registration_set;
mod scheduled_io;
mod sync;
pub(crate) mod wake_batch;

pub use reactor::UnparkDriver;
pub(crate) use reactor::{Reactor, ReactorShared};
// `pub` items of a private module: crate-visible, and reachable by the
// loom models through `loom_model`.
#[cfg(loom)]
pub use registration::attempt_at;
pub use registration::{DrainedMark, IoOp};
pub(crate) use registration::{Receive, Registration};
pub(crate) use scheduled_io::shutdown_error;
pub use scheduled_io::{Arming, LevelInterest, ReadyEvent};
#[cfg(loom)]
pub use scheduled_io::{ScheduledIo, Waiter};
