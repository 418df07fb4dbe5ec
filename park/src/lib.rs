//! The park / unpark contract of Tempo, and [`ParkThread`], a driver that
//! has no events of its own.
//!
//! A scheduler alternates between running tasks and *parking*: blocking
//! until there is something to do, which a **driver** defines (the I/O
//! reactor waits on `epoll`, the timer driver for the next deadline, a
//! media framework on its own clock). Drivers stack
//! (`time::Driver<io::Driver>`), each knowing the one under it only through
//! [`Park`], so a framework that implements [`Park`] can put its own driver
//! under Tempo's schedulers (see [`Park`] for an example).
//!
//! # The contract
//!
//! The schedulers rely on every rule:
//!
//! 1. **Work, then return.** [`Park::park`] and [`Park::park_timeout`] block
//!    until an event, an unpark or the timeout, *do the driver's work*
//!    (dispatch I/O readiness, fire due timers), and return; possibly
//!    spuriously, so callers loop.
//! 2. **`park_timeout(Duration::ZERO)` never blocks.** It dispatches what is
//!    pending and returns; it should dispatch *every* event pending when it
//!    starts, or a ready source waits a throttled tick.
//! 3. **No lost wake-up.** An [`Unpark::unpark`] that happens before a
//!    `park*` call makes that call return at once; several collapse into
//!    one; one during a park makes it return promptly.
//! 4. **Unpark from anywhere.** The handle is `Send + Sync + 'static`, and
//!    calling it from any thread, any number of times, even after the driver
//!    is dropped, never panics or blocks for long.
//! 5. **Cheap when not parked.** `unpark` on a driver that is not parked
//!    should cost no syscall where the mechanism allows it.
//! 6. **Cooperative budget.** A ready resource operation consumes one unit
//!    of the task's [`coop`] budget; with none left it returns `Pending`
//!    without doing the work, and wakes the task (or leaves the wake to the
//!    scheduler's deferred list, see [`coop::budget_deferring`]).
//! 7. **Counters.** [`Park::stats`] is cumulative, a wrapping driver's
//!    including its inner one's. A throttled tick that polled no task and
//!    whose counters did not move "found nothing" and blocks until an event,
//!    so a driver must count **every piece of work that may have woken a
//!    task**, and nothing else: [`DriverStats::io_events`], one per readiness
//!    event dispatched to a live registration (not its own unpark
//!    notifications, not stale events); [`DriverStats::timers_fired`], one per
//!    timer whose waker was woken. Drivers without events keep the default
//!    (zero).
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

pub mod coop;
mod io_driver;
#[doc(hidden)]
pub mod scoped;
mod stats;
#[doc(hidden)]
pub mod sync;
mod thread;
mod traits;

pub use io_driver::IoDriver;
pub use stats::DriverStats;
pub use thread::{ParkThread, UnparkThread};
pub use traits::{Park, Unpark};
