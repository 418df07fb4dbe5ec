//! The throttling scheduler: one wake-up per period `T`, however many
//! streams.
//!
//! A runtime that wakes for every event pays, per event, a context switch,
//! an `epoll_wait` and (for sockets drained until `WouldBlock`) an empty
//! `recvfrom`. With thousands of streams that each send a packet every
//! 20 ms, that is most of the CPU. The throttling scheduler pays them once
//! per *tick* instead:
//!
//! 1. `start = now`; poll the driver once with a zero timeout: dispatch I/O
//!    readiness, wake the receives deferred from the last tick, fire every
//!    timer due by `start + T/2` (the firing window, see below), and
//!    collect the tasks other threads injected;
//! 2. run every ready task, those woken while running included, within the
//!    tick budget ([`Builder::tick_budget`](crate::runtime::Builder::tick_budget))
//!    and within one period of work; a woken `block_on` future is polled
//!    at least every `event_interval` task polls. Each poll has a
//!    [cooperative budget](tempo_park::coop), so a task on an always-ready
//!    resource yields and is requeued in the same tick;
//! 3. if the tick ran past `start + T` or left ready tasks behind (its
//!    budget or its period of work ran out), start the next tick at once: an **overrun** (counted in the metrics);
//! 4. otherwise sleep until `start + T` **without polling the driver**: the
//!    scheduler's state is `SLEEPING`, in which remote spawns and wakes only
//!    queue, costing no syscall and no context switch. Whatever arrives
//!    during the sleep is handled together at the next tick: that is what
//!    batches work. [`Handle::unpark`](crate::runtime::Handle::unpark) cuts
//!    the sleep short for control operations that must not wait;
//! 5. **idle**: when a tick found nothing at all (no I/O event, no timer,
//!    no task), block in the driver until an event, an unpark, or the next
//!    timer's deadline minus `T/2`, in state `PARKED`, where the first remote
//!    wake unparks. An idle runtime costs no CPU and makes no periodic
//!    wake-ups; the tick grid restarts at the first event.
//!
//! Ticks follow a fixed grid (see [`ThrottlePacer`]), so the time spent
//! working does not make the cadence drift.
//!
//! # Timers
//!
//! The timer driver fires, at each tick, every timer due by `now + T/2`:
//! a timer fires at the tick *nearest* its deadline, error within `±T/2`,
//! mean about zero. Plain parking would make every timer late by up to `T`.
//! [`TimerPolicy::NeverEarly`](crate::runtime::TimerPolicy::NeverEarly)
//! (or `sleep_at_least` per timer) gives tokio's rule instead: never early,
//! late by at most `T`. A timer created during a tick with its deadline
//! inside that tick's window is not fired by it (that would complete it in
//! the poll that created it): it fires at the next tick, so a
//! `loop { sleep(d) }` task is polled at most once per tick.
//!
//! [`ThrottlePacer`]: super::pacer::ThrottlePacer

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tempo_park::{coop, DriverStats, Park};

use super::basic::{Core, RUNNING, SLEEPING};
use super::pacer::TickEnd;
use super::turn::Turn;
use crate::sync::Ordering::SeqCst;

/// What happened between the end of a tick's work and the next tick.
struct BetweenTicks {
    /// Slept or blocked (as opposed to starting the next tick at once).
    parked: bool,
    parked_for: Duration,
    overrun: bool,
    /// Driver work done while blocked idle.
    stats: DriverStats,
}

/// The task-running phase of one tick: how much it did, and whether it
/// stopped with work left (the tick budget ran out, or the tick has worked
/// for a whole period).
struct TickWork {
    /// Polls made this tick (tasks, and the block_on future).
    polled: u64,
    /// The tick stopped running tasks with work possibly left: an overrun.
    cut: bool,
    /// `tick_budget`.
    budget: u64,
    /// When the tick has worked for a whole period `T` (real clock: the
    /// work takes real time even when the timer clock is paused).
    period_end: Instant,
}

impl TickWork {
    fn new(core: &Core, start: Instant) -> TickWork {
        TickWork {
            polled: 0,
            cut: false,
            budget: u64::from(core.config.tick_budget),
            period_end: start + core.config.max_throttling,
        }
    }

    /// Runs up to `event_interval` ready tasks (within the tick budget).
    /// Returns `true` if the tick should go on: the chunk was full, and
    /// neither the budget nor the period is spent. `main`: a woken
    /// block_on future also makes the tick go on.
    ///
    /// Why a tick ends after a period of work: timers fire and I/O is
    /// polled only at the start of a tick. Each task poll is bounded by its
    /// cooperative budget, but a task that is always ready (a flooded
    /// socket) is requeued in the same tick, so only the tick budget would
    /// end it: thousands of polls, seconds of starved timers. Cutting the
    /// tick after `T` (an overrun: the next one starts at once) keeps
    /// timers and I/O within about a period. The clock is read once per
    /// full chunk only, which a tick of one poll per stream rarely fills.
    fn run_chunk(&mut self, core: &Core, main: bool) -> bool {
        let left = self.budget.saturating_sub(self.polled);
        let chunk = left.min(u64::from(core.config.event_interval));
        let chunk = u32::try_from(chunk).unwrap_or(u32::MAX);
        let ran = core.run_ready(chunk);
        self.polled += ran;
        if self.polled >= self.budget {
            self.cut = true;
            return false;
        }
        if ran < u64::from(chunk) {
            // The run queue is empty.
            return main && core.shared.main_woken.load(SeqCst);
        }
        if Instant::now() >= self.period_end {
            self.cut = true;
            return false;
        }
        true
    }
}

impl Core {
    /// The throttling scheduler's `block_on`.
    pub(crate) fn throttled_block_on<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        let waker = Waker::from(self.shared.clone());
        let mut cx = Context::from_waker(&waker);
        self.shared.main_woken.store(true, SeqCst);
        let mut start = Instant::now();
        loop {
            self.begin_tick();
            let stats = self.park_driver(Some(Duration::ZERO), false).stats;

            let mut tick = TickWork::new(self, start);
            loop {
                if self.shared.main_woken.swap(false, SeqCst) {
                    // Counts against the tick budget and as work found,
                    // but not as a task poll in the metrics: the block_on
                    // future is not a task (as in the basic scheduler).
                    tick.polled += 1;
                    if let Poll::Ready(output) = coop::budget(|| future.as_mut().poll(&mut cx)) {
                        self.end_iteration(start, Duration::ZERO);
                        return output;
                    }
                }
                // A chunk of `event_interval` task polls at most, so that a
                // woken block_on future waits for no more than that.
                if !tick.run_chunk(self, true) {
                    break;
                }
            }

            let found_nothing = tick.polled == 0 && stats == DriverStats::default();
            let between = self.between_ticks(found_nothing, tick.cut, None, true);
            start = self.end_iteration(start, between.parked_for);
        }
    }

    /// The throttling scheduler's `turn`: exactly one tick.
    pub(crate) fn throttled_turn(&self, max_wait: Duration) -> Turn {
        let start = Instant::now();
        self.begin_tick();
        let stats = self.park_driver(Some(Duration::ZERO), false).stats;
        let mut tick = TickWork::new(self, start);
        while tick.run_chunk(self, false) {}
        let tasks_polled = tick.polled;
        let found_nothing = tasks_polled == 0 && stats == DriverStats::default();
        let between = self.between_ticks(found_nothing, tick.cut, Some(max_wait), false);
        self.end_iteration(start, between.parked_for);
        let stats = stats + between.stats;
        Turn {
            tasks_polled,
            parked: between.parked,
            parked_for: between.parked_for,
            io_events: stats.io_events,
            timers_fired: stats.timers_fired,
            tasks_remaining: self.has_ready(),
            overrun: between.overrun,
        }
    }

    /// Starts a tick on the pacer's grid, with the firing window that suits
    /// it.
    ///
    /// Nearest-tick timers fire when due by `now + window`; the window is
    /// half the distance to the next tick. Between regular ticks that is
    /// `T/2`. While ticks run back to back (the last one overran), the next
    /// tick is only about one tick's length away, so the window narrows to
    /// half the last tick spacing: a `T/2` window would fire timers up to
    /// `T/2` early with the next tick about to come anyway.
    fn begin_tick(&self) {
        let now = self.clock_now();
        let spacing = self
            .last_tick
            .replace(Some(now))
            .map(|last| now.saturating_duration_since(last));
        let base = self.config.firing_window;
        let window = match spacing {
            Some(spacing) if self.overran.get() => base.min(spacing / 2),
            _ => base,
        };
        if window != self.tick_window.replace(window) {
            if let Some(time) = &self.shared.handles.time {
                time.set_firing_window(window);
            }
        }
        if let Some(pacer) = &self.pacer {
            pacer.borrow_mut().begin_tick(now);
        }
    }

    /// Ends a tick: blocks idle in the driver if the tick found nothing,
    /// else sleeps until the next tick is due, or starts it at once
    /// (overrun). `budget_spent` says whether the tick stopped running
    /// tasks because its budget ran out; `max_wait` bounds the wait
    /// (`None`: unbounded); `main` says whether a pending `block_on` wake
    /// counts as work.
    ///
    /// Only work the tick *left behind* (its budget ran out) makes an
    /// overrun. Tasks other threads injected while the tick ran are like
    /// those injected during the sleep: they wait for the next tick.
    /// Counting them as leftover work made every tick that a remote wake
    /// happened to land in overrun, so a steady trickle of cross-thread
    /// wakes defeated throttling (back-to-back ticks, inflated overruns).
    fn between_ticks(
        &self,
        found_nothing: bool,
        budget_spent: bool,
        max_wait: Option<Duration>,
        main: bool,
    ) -> BetweenTicks {
        let pacer = self
            .pacer
            .as_ref()
            .expect("throttling scheduler without a pacer");
        if found_nothing {
            pacer.borrow_mut().restart();
            self.overran.set(false);
            let parked = self.park_driver(max_wait, main);
            return BetweenTicks {
                parked: parked.parked,
                parked_for: parked.parked_for,
                overrun: false,
                stats: parked.stats,
            };
        }
        let work_remains = budget_spent
            && (self.has_local_ready() || (main && self.shared.main_woken.load(SeqCst)));
        let end = pacer.borrow_mut().end_tick(self.clock_now(), work_remains);
        match end {
            TickEnd::Overrun => {
                self.overran.set(true);
                self.counters.overrun();
                BetweenTicks {
                    parked: false,
                    parked_for: Duration::ZERO,
                    overrun: true,
                    stats: DriverStats::default(),
                }
            }
            TickEnd::SleepUntil(next) => {
                self.overran.set(false);
                let parked_for = self.sleep_until(next, max_wait);
                BetweenTicks {
                    parked: true,
                    parked_for,
                    overrun: false,
                    stats: DriverStats::default(),
                }
            }
        }
    }

    /// Sleeps until `deadline` (at most `max_wait`) without polling the
    /// driver, in state `SLEEPING`: remote wakes only queue. A paused clock
    /// is advanced instead of sleeping. Returns the time slept.
    ///
    /// A [`Handle::unpark`](crate::runtime::Handle::unpark) made since the
    /// last sleep makes this one return at once, on either clock: the
    /// sleeper's unpark token is the one record of it (checked here for the
    /// virtual sleep of a paused clock, which would otherwise jump a whole
    /// period after an unpark; honoured by the real sleep itself).
    fn sleep_until(&self, deadline: Instant, max_wait: Option<Duration>) -> Duration {
        let mut duration = deadline.saturating_duration_since(self.clock_now());
        if let Some(max_wait) = max_wait {
            duration = duration.min(max_wait);
        }
        if duration.is_zero() {
            return Duration::ZERO;
        }
        if self.sleeper.borrow_mut().take_notification() {
            return Duration::ZERO;
        }
        // SLEEPING on a paused clock too: the protocol is the same, only
        // the wait is virtual (and loom can explore it).
        self.shared.park_state.store(SLEEPING, SeqCst);
        let paused = self
            .shared
            .handles
            .clock()
            .filter(|clock| clock.is_paused());
        let slept = match paused {
            Some(clock) => {
                clock.advance(duration);
                duration
            }
            None => {
                let start = Instant::now();
                let result = self.sleeper.borrow_mut().park_timeout(duration);
                if let Err(never) = result {
                    match never {}
                }
                start.elapsed()
            }
        };
        self.shared.park_state.store(RUNNING, SeqCst);
        slept
    }

    /// The runtime's notion of now: the timer driver's clock (virtual when
    /// paused) if time is enabled, else the real clock.
    pub(crate) fn clock_now(&self) -> Instant {
        match self.shared.handles.clock() {
            Some(clock) => clock.now().into_std(),
            None => Instant::now(),
        }
    }
}
