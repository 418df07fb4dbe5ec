//! The basic scheduler: run ready tasks until none is left, then park the
//! driver until an event. It has no state beyond the shared
//! [`SchedulerCore`].
//!
//! # One iteration
//!
//! [`SchedulerCore::run_ready`] moves injected tasks to the local run
//! queue, then polls tasks from its front until the queue is empty or the
//! budget (`event_interval`, 61 by default) is spent; a task woken while it
//! runs goes to the back, so [`yield_now`](crate::task::yield_now) is fair.
//! [`SchedulerCore::park_driver`] then parks the driver: for the caller's
//! timeout if nothing is ready, with a zero timeout (a poll, never skipped)
//! if work is left. [`block_on`] and [`turn`] are loops over these two
//! calls; the handshake that makes parking safe against remote wakes is in
//! [`core`](super::core).
//!
//! Each park dispatches every I/O event pending when it starts, even more
//! than the driver's events buffer holds (it polls again while the buffer
//! comes back full; see [`tempo_io::Driver`]), as a throttled tick's poll
//! does. tokio's scheduler takes one buffer per park instead; here the
//! ready tasks of a larger burst are all queued at once and still run
//! `event_interval` at a time in arrival order, with a driver poll between
//! chunks, so the only difference is fewer `epoll_wait` calls.

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
    let timeout = if core.has_ready() {
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

/// Runs `future` to completion, running tasks meanwhile.
pub(super) fn block_on<F: Future>(core: &SchedulerCore, future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = core.main_waker();
    let mut cx = Context::from_waker(&waker);
    let mut start = Instant::now();
    loop {
        if let Some(Poll::Ready(output)) = core.poll_main(future.as_mut(), &mut cx) {
            core.end_iteration(start, Duration::ZERO);
            return output;
        }
        core.run_ready(core.event_interval);
        let work = core.has_ready() || core.main_woken();
        let timeout = if work { Some(Duration::ZERO) } else { None };
        let parked = core.park_driver(timeout, true);
        start = core.end_iteration(start, parked.parked_for);
    }
}
