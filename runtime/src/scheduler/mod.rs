//! Schedulers: what runs tasks on a thread.
//!
//! * [`basic`]: run ready tasks until none is left (within a poll budget),
//!   then park the driver until an event.
//! * [`throttle`]: the throttling scheduler: one tick per period `T`, a
//!   sleep between ticks that remote wakes do not interrupt.
//! * [`pacer`]: when the next tick starts (fixed grid, overruns).
//! * [`inject`]: the queue other threads push spawns and wakes into.
//! * [`turn`]: the report of one iteration, for host loops.

pub(crate) mod basic;
pub(crate) mod inject;
pub(crate) mod pacer;
pub(crate) mod throttle;
pub(crate) mod turn;

pub use turn::Turn;
