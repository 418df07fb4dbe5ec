//! Schedulers: what runs tasks on a thread. [`Scheduler`] dispatches
//! `block_on` and `turn` to the loop the builder's [`Flavor`] selects (the
//! one `match` on the flavor, once per call); the loops ([`basic`],
//! [`throttle`]) run over [`core`], which names no loop. Each layer imports
//! only from below; the file map is in `docs/architecture.md`.

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
    /// The loop `config.flavor` selects, and its core over `driver`; the
    /// loop's sleeper, if any, is handed to the core for `Handle::unpark`.
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
