//! Cumulative driver counters.

use std::ops::{Add, Sub};

/// Cumulative counters of the work a driver stack did while parked (what
/// they count: rule 7 of the [park contract](crate)). They only grow,
/// wrapping; subtract two readings for what happened in between.
///
/// ```
/// use tempo_park::DriverStats;
///
/// let before = DriverStats { io_events: 10, timers_fired: 2 };
/// let after = DriverStats { io_events: 13, timers_fired: 2 };
/// let turn = after - before; // what happened in between
/// assert_eq!(turn, DriverStats { io_events: 3, timers_fired: 0 });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Readiness events dispatched to live registrations (not unparks).
    pub io_events: u64,
    /// Timers fired (their wakers woken).
    pub timers_fired: u64,
}

impl Add for DriverStats {
    type Output = DriverStats;

    fn add(self, rhs: DriverStats) -> DriverStats {
        DriverStats {
            io_events: self.io_events.wrapping_add(rhs.io_events),
            timers_fired: self.timers_fired.wrapping_add(rhs.timers_fired),
        }
    }
}

impl Sub for DriverStats {
    type Output = DriverStats;

    fn sub(self, rhs: DriverStats) -> DriverStats {
        DriverStats {
            io_events: self.io_events.wrapping_sub(rhs.io_events),
            timers_fired: self.timers_fired.wrapping_sub(rhs.timers_fired),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difference_of_readings() {
        let a = DriverStats {
            io_events: 3,
            timers_fired: 1,
        };
        let b = DriverStats {
            io_events: 10,
            timers_fired: 4,
        };
        assert_eq!(
            b - a,
            DriverStats {
                io_events: 7,
                timers_fired: 3
            }
        );
        assert_eq!(a + (b - a), b);
    }

    #[test]
    fn wraps_instead_of_overflowing() {
        let a = DriverStats {
            io_events: u64::MAX,
            timers_fired: 0,
        };
        let b = DriverStats {
            io_events: 1,
            timers_fired: 0,
        };
        assert_eq!((b - a).io_events, 2);
    }
}
