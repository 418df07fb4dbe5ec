//! The driver steps only a throttled tick takes, besides the core's park:
//! a second look at the reactor (I/O only, no timers), whether the last
//! dispatch continues, and the end-of-tick
//! timer pass (the timers registered during the tick for its end, without
//! polling the driver). Each returns what it did as a [`Turn`] with no
//! task polls, and counts it in the core's metrics.

use crate::scheduler::core::SchedulerCore;
use crate::scheduler::turn::Turn;

/// Polls the I/O side of the driver once, without blocking and without
/// firing timers.
pub(super) fn look(core: &SchedulerCore) -> Turn {
    let mut driver = core.driver.borrow_mut();
    let before = driver.stats();
    if let Err(error) = driver.look() {
        panic!("tempo: the runtime's driver failed to poll: {error}");
    }
    let stats = driver.stats() - before;
    core.counters.work(0, stats.io_events, stats.timers_fired);
    Turn {
        io_events: stats.io_events,
        timers_fired: stats.timers_fired,
        ..Turn::default()
    }
}

/// Fires the timers that registered during the tick for its end.
pub(super) fn end_of_tick_timers(core: &SchedulerCore) -> Turn {
    let Some(time) = &core.shared.handles.time else {
        return Turn::default();
    };
    let fired = time.fire_end_of_tick();
    if fired != 0 {
        core.counters.work(0, 0, fired);
    }
    Turn {
        timers_fired: fired,
        ..Turn::default()
    }
}

/// Whether the driver's last I/O dispatch stopped part-way
/// ([`IoDriver::dispatch_continues`](tempo_park::IoDriver::dispatch_continues)).
pub(super) fn dispatch_continues(core: &SchedulerCore) -> bool {
    core.driver.borrow_mut().dispatch_continues()
}

/// The I/O events a dispatch must reach for the tick to take a second look
/// (`None`: no I/O driver, no second looks).
pub(super) fn look_threshold(core: &SchedulerCore) -> Option<u64> {
    core.driver.borrow().look_threshold()
}
