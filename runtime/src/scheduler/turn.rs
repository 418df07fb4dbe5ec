//! [`Turn`]: what one scheduler iteration did, or one step of it; the
//! schedulers build it step by step with [`Turn::then`].

use std::time::Duration;

/// The report of one [`Runtime::turn`](crate::runtime::Runtime::turn): how
/// many tasks ran, whether and how long the driver blocked, and what the
/// driver dispatched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Turn {
    pub(crate) tasks_polled: u64,
    pub(crate) parked: bool,
    pub(crate) parked_for: Duration,
    pub(crate) io_events: u64,
    pub(crate) timers_fired: u64,
    pub(crate) tasks_remaining: bool,
    pub(crate) overrun: bool,
}

impl Turn {
    /// This step, followed by `later`: counts add up, the two waits add up,
    /// and the end state (`tasks_remaining`, `overrun`) is `later`'s.
    pub(crate) fn then(self, later: Turn) -> Turn {
        Turn {
            tasks_polled: self.tasks_polled + later.tasks_polled,
            parked: self.parked || later.parked,
            parked_for: self.parked_for + later.parked_for,
            io_events: self.io_events.wrapping_add(later.io_events),
            timers_fired: self.timers_fired.wrapping_add(later.timers_fired),
            tasks_remaining: later.tasks_remaining,
            overrun: later.overrun,
        }
    }

    /// The driver dispatched nothing (no I/O event, no timer) in this step.
    pub(crate) fn found_nothing(&self) -> bool {
        self.io_events == 0 && self.timers_fired == 0
    }

    /// Task polls in this turn (a task polled twice counts twice).
    pub fn tasks_polled(&self) -> u64 {
        self.tasks_polled
    }

    /// `true` if the driver was parked with a non-zero timeout (the thread
    /// may have blocked); `false` if it was only polled.
    pub fn parked(&self) -> bool {
        self.parked
    }

    /// Time spent inside the driver's park, when [`parked`](Self::parked).
    pub fn parked_for(&self) -> Duration {
        self.parked_for
    }

    /// I/O events the driver dispatched during this turn.
    pub fn io_events(&self) -> u64 {
        self.io_events
    }

    /// Timers the driver fired during this turn.
    pub fn timers_fired(&self) -> u64 {
        self.timers_fired
    }

    /// `true` if tasks were still ready at the end of the turn (the budget
    /// ran out, or the driver woke some): call `turn` again soon.
    pub fn tasks_remaining(&self) -> bool {
        self.tasks_remaining
    }

    /// Throttling only: this tick overran (ran past its period or left
    /// ready tasks), so the next one is due at once.
    pub fn overrun(&self) -> bool {
        self.overrun
    }
}
