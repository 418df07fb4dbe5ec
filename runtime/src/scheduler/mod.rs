//! Schedulers: what runs tasks on a thread.
//!
//! * [`core`]: what both share: task queues, owned tasks, the driver, the
//!   metrics, the park handshake with other threads ([`SchedulerCore`],
//!   [`SchedulerShared`]), and [`Flavor`], which loop runs.
//! * [`basic`]: run ready tasks until none is left (within a poll budget),
//!   then park the driver until an event.
//! * [`throttle`]: the throttling scheduler: one tick per period `T`, a
//!   sleep between ticks that remote wakes do not interrupt; its state is
//!   one [`Throttle`](throttle::Throttle) value.
//! * [`pacer`]: when the next tick starts (fixed grid, overruns).
//! * [`inject`]: the queue other threads push spawns and wakes into.
//! * [`turn`]: what one iteration (or one step of it) did; public as the
//!   report of [`Runtime::turn`](crate::runtime::Runtime::turn).

pub(crate) mod basic;
pub(crate) mod core;
pub(crate) mod flavor;
pub(crate) mod inject;
pub(crate) mod pacer;
pub(crate) mod throttle;
pub(crate) mod turn;

pub(crate) use self::core::{SchedulerConfig, SchedulerCore, SchedulerShared};
pub(crate) use flavor::{Flavor, ThrottleConfig};
pub use turn::Turn;
