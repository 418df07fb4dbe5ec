//! [`ThrottlePacer`]: when the throttling scheduler's next tick starts;
//! pure arithmetic, tested without threads or clocks. Ticks are due on a
//! fixed grid `anchor + k * T` (work time does not drift the cadence). A
//! tick that ends past the next slot, or with work left, is an *overrun*:
//! the next starts at once and keeps its slot only if less than a period
//! late (at most one catch-up tick), else the grid re-anchors at `now`.
//! After an idle block in the driver the grid restarts at the wake-up.

use std::time::{Duration, Instant};

/// What the scheduler does between two ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TickEnd {
    /// Sleep (without polling the driver) until this instant, then tick.
    SleepUntil(Instant),
    /// Start the next tick at once: this tick overran its period or left
    /// ready work behind.
    Overrun,
}

/// The grid slot a tick stands for, from [`ThrottlePacer::begin_tick`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TickSlot {
    /// The grid instant the tick stands for: its timers' window is
    /// measured from it, not from the instant it began.
    pub(crate) due: Instant,
    /// The tick filled its due grid slot; `false` if it anchored a new grid
    /// (first tick, idle restart, early start).
    pub(crate) on_grid: bool,
}

/// Paces the ticks of a throttling scheduler on a fixed grid of period `T`.
#[derive(Debug)]
pub(crate) struct ThrottlePacer {
    period: Duration,
    /// When the tick in progress (or the last one) was due on the grid.
    due: Option<Instant>,
}

impl ThrottlePacer {
    /// A pacer of period `period` (must be non-zero).
    pub(crate) fn new(period: Duration) -> ThrottlePacer {
        debug_assert!(!period.is_zero());
        ThrottlePacer { period, due: None }
    }

    /// The period `T`.
    pub(crate) fn period(&self) -> Duration {
        self.period
    }

    /// A tick begins at `now`; returns the grid slot it stands for (the
    /// first tick, and the first after a restart, anchor the grid).
    pub(crate) fn begin_tick(&mut self, now: Instant) -> TickSlot {
        let slot = match self.due {
            // On time or late: the tick fills its grid slot (lateness is
            // judged by `end_tick`).
            Some(next) if next <= now => TickSlot {
                due: next,
                on_grid: true,
            },
            // First tick, idle restart or early start: anchors the grid at `now`.
            _ => TickSlot {
                due: now,
                on_grid: false,
            },
        };
        self.due = Some(slot.due);
        slot
    }

    /// The tick that began with [`begin_tick`](Self::begin_tick) has done its
    /// work at `now`; `work_remains` says whether ready tasks were left over.
    pub(crate) fn end_tick(&mut self, now: Instant, work_remains: bool) -> TickEnd {
        let due = self.due.unwrap_or(now);
        let next = due + self.period;
        if now < next && !work_remains {
            self.due = Some(next);
            return TickEnd::SleepUntil(next);
        }
        // Overrun. Keep the grid slot only if it is less than one period in
        // the past: at most one catch-up tick, then re-anchor.
        self.due = Some(if now < next + self.period { next } else { now });
        TickEnd::Overrun
    }

    /// Forget the grid: the scheduler was idle and blocked in the driver; the
    /// next [`begin_tick`](Self::begin_tick) anchors a new grid.
    pub(crate) fn restart(&mut self) {
        self.due = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(20);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn grid_does_not_drift_with_work_time() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        assert_eq!(p.begin_tick(t0).due, t0);
        // Work takes 7 ms: the sleep ends at t0 + T, not t0 + 7 + T.
        assert_eq!(p.end_tick(t0 + ms(7), false), TickEnd::SleepUntil(t0 + T));
        // Woken 1 ms late: the tick still stands for slot t0 + T.
        let slot = p.begin_tick(t0 + ms(21));
        assert_eq!((slot.due, slot.on_grid), (t0 + T, true));
        assert_eq!(
            p.end_tick(t0 + ms(30), false),
            TickEnd::SleepUntil(t0 + 2 * T)
        );
        for k in 2..100u32 {
            p.begin_tick(t0 + T * k + ms(1));
            assert_eq!(
                p.end_tick(t0 + T * k + ms(5), false),
                TickEnd::SleepUntil(t0 + T * (k + 1))
            );
        }
    }

    #[test]
    fn overrun_starts_next_tick_at_once_with_one_catch_up() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        p.begin_tick(t0);
        // Work took 25 ms (> T): overrun, the next tick keeps slot t0 + T.
        assert_eq!(p.end_tick(t0 + ms(25), false), TickEnd::Overrun);
        let slot = p.begin_tick(t0 + ms(25));
        assert_eq!(
            (slot.due, slot.on_grid),
            (t0 + T, true),
            "a late tick keeps its slot"
        );
        // That catch-up tick is quick: sleep until t0 + 2T, back on the grid.
        assert_eq!(
            p.end_tick(t0 + ms(27), false),
            TickEnd::SleepUntil(t0 + 2 * T)
        );
    }

    #[test]
    fn falling_far_behind_reanchors_instead_of_bursting() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        p.begin_tick(t0);
        // A 100 ms tick misses 4 slots: no burst, the grid re-anchors.
        assert_eq!(p.end_tick(t0 + ms(100), false), TickEnd::Overrun);
        assert_eq!(p.begin_tick(t0 + ms(100)).due, t0 + ms(100));
        assert_eq!(
            p.end_tick(t0 + ms(101), false),
            TickEnd::SleepUntil(t0 + ms(120))
        );
    }

    #[test]
    fn leftover_work_is_an_overrun() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        p.begin_tick(t0);
        assert_eq!(p.end_tick(t0 + ms(1), true), TickEnd::Overrun);
        // Starting before its slot, the tick anchors a new grid.
        let slot = p.begin_tick(t0 + ms(1));
        assert_eq!((slot.due, slot.on_grid), (t0 + ms(1), false));
    }

    #[test]
    fn idle_restart_anchors_a_new_grid() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        p.begin_tick(t0);
        p.end_tick(t0 + ms(1), false);
        p.restart();
        let woke = t0 + ms(537);
        assert_eq!(p.begin_tick(woke).due, woke);
        assert_eq!(
            p.end_tick(woke + ms(2), false),
            TickEnd::SleepUntil(woke + T)
        );
    }

    #[test]
    fn early_wake_reanchors_the_grid() {
        let t0 = Instant::now();
        let mut p = ThrottlePacer::new(T);
        p.begin_tick(t0);
        assert_eq!(p.end_tick(t0 + ms(2), false), TickEnd::SleepUntil(t0 + T));
        // An unpark cut the sleep at t0 + 5 ms: the grid re-anchors there.
        assert_eq!(p.begin_tick(t0 + ms(5)).due, t0 + ms(5));
        assert_eq!(
            p.end_tick(t0 + ms(6), false),
            TickEnd::SleepUntil(t0 + ms(25))
        );
    }
}
