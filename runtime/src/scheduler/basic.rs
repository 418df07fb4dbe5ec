//! The basic scheduler: [`SchedulerCore::run_ready`] (at most
//! `event_interval` polls), then [`SchedulerCore::park_driver`] for the
//! caller's timeout if nothing is ready, or a zero timeout if work (or a
//! deferred task) is left; no state of its own. The park handshake is in
//! [`core`](super::core).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::core::SchedulerCore;
use super::turn::Turn;

/// One iteration for a host loop: run ready tasks, then park the driver for
/// at most `max_wait` (or poll it, if tasks are still ready).
pub(super) fn turn(core: &SchedulerCore, max_wait: Duration) -> Turn {
    let start = Instant::now();
    let tasks_polled = core.run_ready(core.event_interval);
    let timeout = if core.has_ready() || core.has_deferred() {
        Duration::ZERO
    } else {
        max_wait
    };
    let parked = core.park_driver(Some(timeout), false);
    core.end_iteration(start, parked.parked_for);
    Turn {
        tasks_polled,
        tasks_remaining: core.has_ready(),
        ..parked
    }
}

/// Runs `future` to completion, running tasks meanwhile. The driver is
/// polled when nothing is left to run, and otherwise once per
/// `event_interval` polls (the `block_on` future's included), so tasks
/// waking each other skip the per-poll bookkeeping yet I/O keeps its turn.
pub(super) fn block_on<F: Future>(core: &SchedulerCore, future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = core.main_waker();
    let mut cx = Context::from_waker(&waker);
    let mut start = Instant::now();
    // Polls (tasks and the `block_on` future) since the driver's last poll.
    let mut since_driver: u32 = 0;
    loop {
        if let Some(poll) = core.poll_main(future.as_mut(), &mut cx) {
            if let Poll::Ready(output) = poll {
                core.end_iteration(start, Duration::ZERO);
                return output;
            }
            since_driver = since_driver.saturating_add(1);
        }
        let budget = core.event_interval.saturating_sub(since_driver);
        let polled = core.run_ready(budget);
        since_driver = since_driver.saturating_add(u32::try_from(polled).unwrap_or(u32::MAX));
        let work = core.has_ready() || core.main_woken();
        if work && since_driver < core.event_interval {
            continue;
        }
        // Deferred tasks wait for this very poll: poll, do not block.
        let poll = work || core.has_deferred();
        let timeout = if poll { Some(Duration::ZERO) } else { None };
        let parked = core.park_driver(timeout, true);
        since_driver = 0;
        start = core.end_iteration(start, parked.parked_for);
    }
}
