//! [`Turn`]: what one scheduler iteration did.

use std::time::Duration;

/// The report of one [`Runtime::turn`](crate::runtime::Runtime::turn): how
/// many tasks ran, whether and how long the driver blocked, and what the
/// driver dispatched.
///
/// ```
/// use std::time::Duration;
///
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.spawn(async {});
/// let turn = rt.turn(Duration::ZERO);
/// assert_eq!(turn.tasks_polled(), 1);
/// assert!(!turn.parked());
/// assert!(!turn.tasks_remaining());
/// ```
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

    /// Throttling scheduler: this tick ran past its period or left ready
    /// tasks behind, so it did not sleep (the next tick is due at once).
    /// Always `false` for the basic scheduler.
    pub fn overrun(&self) -> bool {
        self.overrun
    }
}
