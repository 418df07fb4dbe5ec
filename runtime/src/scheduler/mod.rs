//! Schedulers: what runs tasks on a thread.
//!
//! The files stand in three layers, and each imports only from below:
//!
//! * [`Scheduler`] (this file) chooses the loop the builder's [`Flavor`]
//!   selects and dispatches `block_on` and `turn` to it: the one `match`
//!   on the flavor at run time, once per call, never per task poll.
//! * The loops, each over the core's steps, each with its own state:
//!   [`basic`] runs ready tasks until none is left (within a poll budget),
//!   then parks the driver until an event; [`throttle`] runs one tick per
//!   period `T`, with a sleep between ticks that remote wakes do not
//!   interrupt; all its state is one [`Throttle`] value, and its folder
//!   holds every part of a tick (the pacer's grid, the second looks, the
//!   end-of-tick timer pass).
//! * What the loops share: [`core`] (task queues, owned tasks, the driver,
//!   the metrics, the park handshake with other threads, the core entered
//!   on this thread: [`SchedulerCore`], [`SchedulerShared`](core::SchedulerShared)),
//!   which names no loop;
//!   [`inject`] (the queue other threads push spawns and wakes into);
//!   [`run_next`] (the slot that runs a task woken by the running task
//!   right after it);
//!   [`turn`] (what one iteration, or one step of it, did; public as the
//!   report of [`Runtime::turn`](crate::runtime::Runtime::turn)); and
//!   [`flavor`] (which scheduler, decided once by the builder: plain
//!   values, from which the driver's settings follow too).

pub(crate) mod basic;
pub(crate) mod core;
pub(crate) mod flavor;
pub(crate) mod inject;
pub(crate) mod run_next;
pub(crate) mod throttle;
pub(crate) mod turn;

use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use self::throttle::Throttle;
use crate::blocking::BlockingPool;
use crate::driver::Driver;

pub(crate) use self::core::{SchedulerConfig, SchedulerCore};
pub(crate) use flavor::{Flavor, ThrottleConfig};
pub use turn::Turn;

/// The loop that runs a core, with the loop's own state: the one place
/// that dispatches on the flavor.
#[derive(Debug)]
pub(crate) enum Scheduler {
    /// Run ready tasks, park until an event; no state of its own.
    Basic,
    /// One tick per period; all its state is in [`Throttle`].
    Throttle(Throttle),
}

impl Scheduler {
    /// The loop `config.flavor` selects, and the core it runs over `driver`.
    /// The loop's sleeper (if it waits outside the driver) is handed to the
    /// core, so that [`Handle::unpark`](crate::runtime::Handle::unpark)
    /// reaches it from any thread.
    pub(crate) fn build(
        driver: Driver,
        config: SchedulerConfig,
        blocking: BlockingPool,
    ) -> (Rc<SchedulerCore>, Scheduler) {
        let scheduler = match config.flavor {
            Flavor::Basic => Scheduler::Basic,
            Flavor::Throttle(throttle) => Scheduler::Throttle(Throttle::new(throttle)),
        };
        let sleeper = match &scheduler {
            Scheduler::Basic => None,
            Scheduler::Throttle(throttle) => Some(throttle.sleeper_unpark()),
        };
        let core = SchedulerCore::new(driver, config, blocking, sleeper);
        (core, scheduler)
    }

    /// Runs `future` to completion on `core`, running tasks meanwhile.
    pub(crate) fn block_on<F: Future>(&self, core: &SchedulerCore, future: F) -> F::Output {
        match self {
            Scheduler::Basic => basic::block_on(core, future),
            Scheduler::Throttle(throttle) => throttle.block_on(core, future),
        }
    }

    /// One iteration on `core` for a host loop: one pass of the basic loop,
    /// or one tick.
    pub(crate) fn turn(&self, core: &SchedulerCore, max_wait: Duration) -> Turn {
        match self {
            Scheduler::Basic => basic::turn(core, max_wait),
            Scheduler::Throttle(throttle) => throttle.turn(core, max_wait),
        }
    }
}
